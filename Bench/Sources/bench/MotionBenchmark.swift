import Foundation
import Models
import Tensor
import Train
import WeightsFormat

/// `bench motion`: the motion model's preprocessing, inference and whole path, int8 and f32, from one run.
///
/// Latency rows run one 256-sample window at a time on one thread: its features alone (the vertical and
/// horizontal signals, their autocorrelations and intensities, into a caller's buffer), the compiled plan alone
/// (batch 1), both together, and `MotionRecognizer.classify` on a one-window recording (checks, features, the
/// plan, the still and gap rules, the timeline). Throughput rows: the plan over a `[1024, inputSize]` batch on one
/// thread, and a 10-minute recording through `MotionRecognizer` (one thread, as `classify motion` runs).
struct MotionBenchmark {
    let plan: TimingPlan
    let weights: BenchWeights

    /// Windows in a throughput batch: the batch `peers.py` runs the other engines at.
    static let batch = 1024
    /// Seconds of the long recording.
    static let recordingSeconds = 600.0

    /// Eight generated 12-second recordings of both gaits, and 16 windows cut from their starts and ends: what the
    /// latency rows cycle through.
    static func windows(windowing: MotionWindowing) -> (recordings: [MotionRecording], windows: [[MotionSample]]) {
        var generator = MotionGenerator(seed: 78)
        let recordings = generator.sessions(people: 4, seconds: 12).map { $0.recording(windowing: windowing) }
        let window = windowing.window
        let windows = recordings.flatMap { recording -> [[MotionSample]] in
            guard let segment = recording.segments.first, segment.count >= window else { return [] }
            return [Array(segment[0..<window]), Array(segment[(segment.count - window)...])]
        }
        return (recordings, windows)
    }

    func run() throws -> ModelReport {
        BLAS.maxThreads = 1
        var report = ModelReport(title: "bench motion")
        report.notes.append(("kernels", kernelsNote))
        report.notes.append(("weights", weights.description))
        let int8 = try MotionVariant(weights, format: "int8"), f32 = try MotionVariant(weights, format: "f32")
        for variant in [int8, f32] { report.notes.append(("\(variant.format) plan", planNote(variant.plan.plan))) }
        if int8.plan.plan.integerSteps == 0 {
            report.notes.append(
                (
                    "note",
                    "the int8 file has no activationQuantization header, so its plan runs in float; "
                        + "re-export it with `classify train motion ... --quantize int8`"
                ))
        }
        let windowing = int8.classifier.windowing
        let size = windowing.inputSize, window = windowing.window

        let (recordings, windows) = Self.windows(windowing: windowing)
        guard let template = recordings.first, !windows.isEmpty else { return report }
        // One-window recordings, as an app classifying the latest 5.12 s would pass them.
        let short = windows.map { samples in
            var one = template
            (one.segments, one.segmentStarts, one.bridgedGaps, one.notes) = ([samples], [0], [], [])
            return one
        }
        var generator = MotionGenerator(seed: 79)
        let long =
            generator.sessions(people: 1, seconds: Self.recordingSeconds).first.map { $0.recording(windowing: windowing) }
            ?? template
        let longWindows = long.segments.map { windowing.starts(count: $0.count).count }.reduce(0, +)

        let features = UnsafeMutableBufferPointer<Float>.allocate(capacity: size)
        features.initialize(repeating: 0)
        defer { features.deallocate() }
        func computeFeatures(_ samples: [MotionSample]) {
            let (vertical, horizontal) = MotionWindowing.signals(samples)
            windowing.input(vertical: vertical[...], horizontal: horizontal[...], into: features)
        }
        let inputs = windows.map { samples -> [Float] in
            computeFeatures(samples)
            return Array(features)
        }
        let count = windows.count
        var next = 0
        func advance() -> Int {
            next = (next + 1) % count
            return next
        }

        report.time(
            plan,
            [
                Workload(name: "motion: window features (\(window) samples → \(size))") {
                    computeFeatures(windows[advance()])
                    return features[0]
                }
            ])
        // The two parts of the features: the signals into buffers of the caller's (no allocation), and the
        // autocorrelations and intensities of those signals.
        let verticalBuffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: window)
        let horizontalBuffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: window)
        verticalBuffer.initialize(repeating: 0)
        horizontalBuffer.initialize(repeating: 0)
        defer { verticalBuffer.deallocate(); horizontalBuffer.deallocate() }
        report.time(
            plan,
            [
                Workload(name: "motion: window signals only (into a caller's buffers)") {
                    windows[advance()].withUnsafeBufferPointer {
                        MotionWindowing.signals($0, vertical: verticalBuffer, horizontal: horizontalBuffer)
                    }
                    return verticalBuffer[0]
                }
            ])
        report.time(
            plan,
            [
                Workload(name: "motion: window autocorrelations only") {
                    windowing.input(vertical: UnsafeBufferPointer(verticalBuffer), horizontal: UnsafeBufferPointer(horizontalBuffer), into: features)
                    return features[0]
                }
            ])
        // What the shipped model's lag smoothing costs, in the same run: the same autocorrelations without it.
        if windowing.lagSmoothing > 1 {
            var unsmoothed = windowing
            unsmoothed.lagSmoothing = 0
            report.time(
                plan,
                [
                    Workload(name: "motion: window autocorrelations, lag smoothing off") {
                        unsmoothed.input(
                            vertical: UnsafeBufferPointer(verticalBuffer), horizontal: UnsafeBufferPointer(horizontalBuffer), into: features)
                        return features[0]
                    }
                ])
        }
        report.time(
            plan,
            [int8, f32].map { variant in
                Workload(name: "motion: \(variant.format) plan") { inputs[advance()].withUnsafeBufferPointer { variant.plan.run($0) } }
            })
        report.time(
            plan,
            [
                Workload(name: "motion: window features + int8 plan") {
                    computeFeatures(windows[advance()])
                    return int8.plan.run(UnsafeBufferPointer(features))
                }
            ])
        report.time(
            plan,
            [int8, f32].map { variant in
                Workload(name: "motion: \(variant.format) recognizer, one-window recording") {
                    Float((try? variant.recognizer.recognize(short[advance()]))?.windows.first?.confidence ?? 0)
                }
            })
        report.time(
            plan,
            [
                Workload(name: "motion: window features + cadence fallback") {
                    computeFeatures(windows[advance()])
                    return Float(CadenceRecognizer(windowing: windowing).classify(UnsafeBufferPointer(features)).running)
                }
            ])
        let batch = Tensor(shape: [Self.batch, size], scalars: (0..<Self.batch).flatMap { inputs[$0 % count] })
        report.time(
            plan,
            [int8, f32].map { variant in
                Workload(name: "motion: \(variant.format) plan, batch \(Self.batch)", items: Self.batch) { variant.plan.run(batch: batch) }
            })
        report.time(
            plan,
            [int8, f32].map { variant in
                Workload(
                    name: "motion: \(variant.format) recognizer, \(Int(Self.recordingSeconds / 60))-minute recording",
                    items: longWindows
                ) {
                    Float((try? variant.recognizer.recognize(long))?.windows.count ?? 0)
                }
            })

        let input = inputs[0]
        for variant in [int8, f32] {
            report.countAllocations("\(variant.format) plan run") { input.withUnsafeBufferPointer { variant.plan.run($0) } }
        }
        let inputTensor = Tensor(shape: [size], scalars: input)
        report.countAllocations("int8 CompiledModel.run (pooled workspace)") { int8.plan.runPooled(inputTensor) }
        report.countAllocations("window features (signals + input)") {
            computeFeatures(windows[0])
            return features[0]
        }
        for variant in [int8, f32] {
            report.countAllocations("\(variant.format) recognizer call, one window") {
                Float((try? variant.recognizer.recognize(short[0]))?.windows.first?.confidence ?? 0)
            }
        }
        if let perRecording = AllocationCounter.perCall(10, { Float((try? int8.recognizer.recognize(long))?.windows.count ?? 0) }) {
            report.allocations.append(AllocationRow(name: "int8 recognizer, long recording, per window", perCall: perRecording / Double(longWindows)))
        }

        report.targets = [
            report.latencyTarget(
                "window features + int8 plan", row: "motion: window features + int8 plan",
                limitMicroseconds: 4),
            report.latencyTarget(
                "preprocess + int8 inference, one-window recording through the recognizer",
                row: "motion: int8 recognizer, one-window recording", limitMicroseconds: 30),
            report.ratioTarget("int8 plan time / f32 plan time", "motion: int8 plan", over: "motion: f32 plan", limit: 1),
            report.noAllocationTarget("int8 plan run"),
            report.noAllocationTarget("f32 plan run"),
            report.noAllocationTarget("int8 CompiledModel.run (pooled workspace)"),
            Target(
                description: "heap allocations per int8 recognizer call, one window (the answer's windows and probabilities)",
                ratio: report.allocations.first { $0.name == "int8 recognizer call, one window" }?.perCall ?? .infinity, limit: 2,
                atLeast: false),
        ]
        if let bytes = (try? FileManager.default.attributesOfItem(atPath: weights.path("int8")))?[.size] as? Int {
            report.targets.append(Target(description: "int8 weights file", ratio: Double(bytes), limit: 65536, atLeast: false, unit: " bytes"))
        }
        return report
    }
}

/// One motion weights file loaded as users load it: the classifier, its recognizer, and its plan with a
/// workspace and output buffer of its own.
struct MotionVariant {
    /// `int8` or `f32`.
    let format: String
    let classifier: MotionClassifier
    let recognizer: MotionRecognizer
    let plan: PlanRunner

    /// Loads the file of `format` (`int8` or `f32`) of `weights`.
    init(_ weights: BenchWeights, format: String) throws {
        self.format = format
        let file = try ModelFile(contentsOf: URL(fileURLWithPath: weights.path(format)))
        classifier = try MotionClassifier(file: file)
        recognizer = MotionRecognizer(engine: .model(classifier), model: "\(weights.model).\(format)")
        plan = PlanRunner(classifier.compiled)
    }
}
