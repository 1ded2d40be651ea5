import Foundation
import Models
import Tensor
import Train
import WeightsFormat

/// `bench shape`: the shape model's preprocessing, inference and whole path, int8 and f32, from one run.
///
/// Latency rows run one drawing at a time on one thread: rasterizing alone (`rasterize(_:into:)`, into a
/// caller's buffer), the compiled plan alone (batch 1, into a caller's buffer), both together, and
/// `ShapeRecognizer.recognize` (checks, rasterizing, the plan, the decision rule and the answer). Throughput rows
/// run 256 drawings: the plan over a `[256, 16, 16, 1]` batch on one thread, `recognize(batch:threads:)` on every
/// core, and `recognize(batch:threads:)` on 1 and 2 threads (target: ≥ 150k
/// drawings/s on 2), whose allocations are counted per drawing.
struct ShapeBenchmark {
    let plan: TimingPlan
    let weights: BenchWeights

    /// Drawings in a throughput batch.
    static let batch = 256
    /// Issue 13: the batch API on 2 cores passes at least 150,000 drawings a second.
    static let batchTargetThreads = 2
    static let batchTargetPerSecond = 150_000.0
    /// The allocation row of the batch API: per drawing, not per call.
    static let batchAllocationRow = "int8 batch API, per drawing (batch 256, 2 threads)"

    /// The row of the compact batch API on `threads` threads.
    func batchRow(threads: Int) -> String { "shape: int8 batch API, batch \(Self.batch), threads \(threads)" }

    /// The drawings every row cycles through: 256 generated ones (8 people, 32 each, every class).
    static func drawings() -> [Drawing] {
        var generator = ShapeGenerator(seed: 77)
        return Array(generator.samples(people: 8, perPerson: 32).map(\.drawing).prefix(batch))
    }

    func run() throws -> ModelReport {
        BLAS.maxThreads = 1
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let drawings = Self.drawings()
        var report = ModelReport(title: "bench shape")
        report.notes.append(("kernels", kernelsNote))
        report.notes.append(("weights", weights.description))
        let int8 = try ShapeVariant(weights, format: "int8"), f32 = try ShapeVariant(weights, format: "f32")
        for variant in [int8, f32] { report.notes.append(("\(variant.format) plan", planNote(variant.plan.plan))) }
        if int8.plan.plan.integerSteps == 0 {
            report.notes.append(
                (
                    "note",
                    "the int8 file has no activationQuantization header, so its plan runs in float; "
                        + "re-export it with `classify train shape ... --quantize int8`"
                ))
        }

        let rasterizer = int8.rasterizer
        let images = drawings.map(rasterizer.rasterize)
        let count = drawings.count
        var next = 0
        func advance() -> Int {
            next = (next + 1) % count
            return next
        }

        // Preprocessing without allocating: the levelled rasterizer writing into a caller's buffer.
        let pixels = UnsafeMutableBufferPointer<Float>.allocate(capacity: rasterizer.size * rasterizer.size)
        pixels.initialize(repeating: 0)
        defer { pixels.deallocate() }
        func rasterize(_ drawing: Drawing) -> Float {
            rasterizer.rasterize(drawing, into: pixels)
            return pixels[0]
        }
        func rasterizeAndRun(_ drawing: Drawing) -> Float {
            rasterizer.rasterize(drawing, into: pixels)
            return int8.plan.run(UnsafeBufferPointer(pixels))
        }

        report.time(
            plan,
            [
                Workload(name: "shape: rasterize (levelled, \(rasterizer.size)x\(rasterizer.size))") {
                    rasterize(drawings[advance()])
                }
            ])
        report.time(
            plan,
            [
                Workload(name: "shape: int8 plan") { int8.plan.run(images[advance()]) },
                Workload(name: "shape: f32 plan") { f32.plan.run(images[advance()]) },
            ])
        report.time(plan, [Workload(name: "shape: rasterize + int8 plan") { rasterizeAndRun(drawings[advance()]) }])
        report.time(
            plan,
            [int8, f32].map { variant in
                Workload(name: "shape: \(variant.format) recognizer (whole path)") {
                    Float((try? variant.recognizer.recognize(drawings[advance()]))?.confidence ?? 0)
                }
            })
        let batch = Tensor(shape: [count, rasterizer.size, rasterizer.size, 1], scalars: images.flatMap(\.scalars))
        report.time(
            plan,
            [int8, f32].map { variant in
                Workload(name: "shape: \(variant.format) plan, batch \(count)", items: count) { variant.plan.run(batch: batch) }
            })
        // The batch API (a worker per thread) for each variant on every core, and the int8 one on one thread and on 2
        // (the target's figure), sampled in turn so that a busy moment lands on all of them.
        report.time(
            plan,
            [int8, f32].map { variant in
                Workload(name: "shape: \(variant.format) recognizer, batch \(count)", items: count, threads: cores) {
                    variant.recognizer.recognize(batch: drawings, threads: cores).count == count ? 1 : 0
                }
            }
                + [1, Self.batchTargetThreads].map { threads in
                    Workload(name: batchRow(threads: threads), items: count, threads: threads) {
                        Float(int8.recognizer.recognize(batch: drawings, threads: threads).answers[0].confidence)
                    }
                })

        let image = images[0], drawing = drawings[0]
        for variant in [int8, f32] { report.countAllocations("\(variant.format) plan run") { variant.plan.run(image) } }
        report.countAllocations("int8 CompiledModel.run (pooled workspace)") { int8.plan.runPooled(image) }
        report.countAllocations("rasterize into a buffer") { rasterize(drawing) }
        report.countAllocations("rasterize + int8 plan") { rasterizeAndRun(drawing) }
        for variant in [int8, f32] {
            report.countAllocations("\(variant.format) recognizer call") {
                Float((try? variant.recognizer.recognize(drawing))?.confidence ?? 0)
            }
        }
        // Per drawing of a 256-drawing batch on 2 threads: what the call allocates once (the answer arrays, a worker
        // per thread) spread over its drawings.
        report.countAllocations(Self.batchAllocationRow, calls: 20) {
            Float(int8.recognizer.recognize(batch: drawings, threads: Self.batchTargetThreads).answers[0].confidence)
        }
        if let index = report.allocations.firstIndex(where: { $0.name == Self.batchAllocationRow }), let perCall = report.allocations[index].perCall {
            report.allocations[index] = AllocationRow(name: Self.batchAllocationRow, perCall: perCall / Double(count))
        }

        report.targets = [
            report.latencyTarget(
                "rasterize + int8 inference, whole recognizer path",
                row: "shape: int8 recognizer (whole path)", limitMicroseconds: 30),
            report.latencyTarget("rasterize + int8 plan", row: "shape: rasterize + int8 plan", limitMicroseconds: 8),
            report.ratioTarget("int8 plan time / f32 plan time", "shape: int8 plan", over: "shape: f32 plan", limit: 1),
            report.noAllocationTarget("int8 plan run"),
            report.noAllocationTarget("f32 plan run"),
            report.noAllocationTarget("int8 CompiledModel.run (pooled workspace)"),
            report.latencyTarget("rasterize (levelled, 16×16)", row: "shape: rasterize (levelled, 16x16)", limitMicroseconds: 1.5),
            Target(
                description: "heap allocations per int8 recognizer call (the answer's probabilities and image)",
                ratio: report.allocations.first { $0.name == "int8 recognizer call" }?.perCall ?? .infinity, limit: 2, atLeast: false),
            Target(
                description: "int8 batch API on \(Self.batchTargetThreads) threads",
                ratio: (report.rows.first { $0.name == batchRow(threads: Self.batchTargetThreads) }?.itemsPerSecond ?? 0) / 1000,
                limit: Self.batchTargetPerSecond / 1000, atLeast: true, unit: "k drawings/s"),
        ]
        return report
    }
}

/// One shape weights file loaded as users load it: the classifier, its recognizer, and its plan with a workspace
/// and output buffer of its own.
struct ShapeVariant {
    /// `int8` or `f32`.
    let format: String
    let classifier: ShapeClassifier
    /// The file's rasterizer (the shape benchmarks time image models).
    let rasterizer: ShapeRasterizer
    let recognizer: ShapeRecognizer
    let plan: PlanRunner

    /// Loads the file of `format` (`int8` or `f32`) of `weights`.
    init(_ weights: BenchWeights, format: String) throws {
        self.format = format
        let file = try ModelFile(contentsOf: URL(fileURLWithPath: weights.path(format)))
        classifier = try ShapeClassifier(file: file)
        guard let rasterizer = classifier.rasterizer else {
            throw DataError(
                file: weights.path(format), message: "is a gesture model (templates, not an image): the shape benchmarks time image models")
        }
        self.rasterizer = rasterizer
        recognizer = ShapeRecognizer(engine: .model(classifier), model: "\(weights.model).\(format)")
        plan = PlanRunner(classifier.compiled)
    }
}
