import ArgumentParser
import Foundation
import Models
import Tensor
import Train
import WeightsFormat

extension Bench {
    struct TrainSpeed: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "train",
            abstract: "Training throughput of the shape and motion architectures at batch 64, and the share in BLAS.",
            discussion: """
                One step is forward, backward and an Adam update on a batch of 64; the architectures are sampled \
                in turn and each figure is the median samples/s over the samples. There is no target here: the \
                comparison with Keras lives in peers/peers.py --train, which runs this with --json in the same run.

                Example: .build-bench/release/bench train --json
                """
        )

        @Flag(help: "Fewer and shorter samples.")
        var quick = false

        @Flag(help: "Print one JSON object per architecture per line (name, architecture, threads, samples_per_s, ...).")
        var json = false

        @Flag(
            help: "Also time each convolution of the shape network at a part's batch (32 rows) both ways: im2col and sgemm, and the direct kernels.")
        var layers = false

        @Option(help: "Threads a training step may use (default: \(Network.defaultTrainingThreads) here, one per part of the batch).")
        var threads: Int?

        func validate() throws {
            if let threads, threads < 1 { throw ValidationError("--threads must be at least 1, got \(threads)") }
        }

        func run() throws {
            warnIfDebugBuild("train")
            let threads = threads ?? Network.defaultTrainingThreads
            let benchmark = TrainBenchmark(stepsPerSample: quick ? 5 : 20, samples: quick ? 3 : 9, threads: threads)
            let rows = benchmark.run()
            if json {
                for row in rows { print(row.jsonLine(batch: benchmark.batch, threads: threads)) }
                return
            }
            print(padded("architecture", 20) + padded("parameters", 12) + padded("samples/s", 12) + "time in BLAS")
            for row in rows {
                print(
                    padded(row.task.modelName, 20) + padded(String(row.parameters), 12)
                        + padded(String(format: "%.0f", row.samplesPerSecond), 12) + String(format: "%.1f%%", 100 * row.blasShare))
            }
            if layers { printLayerComparison() }
            print(
                "\nbatch \(benchmark.batch); one step = forward, backward, Adam update; \(threads) thread\(threads == 1 ? "" : "s") "
                    + "(the batch in \(Network.trainingParts) parts when every layer trains sample by sample), BLAS threads ≤ "
                    + "\(BLAS.maxThreads); median of \(benchmark.samples) samples of \(benchmark.stepsPerSample) steps")
        }
    }
}

extension Bench.TrainSpeed {
    /// Each convolution of the shape network at a part's batch: im2col and sgemm against the direct kernels, forward
    /// and backward (the first layer's direct backward skips the input gradient, as training does), one BLAS thread.
    func printLayerComparison() {
        let saved = BLAS.maxThreads
        BLAS.maxThreads = 1
        defer { BLAS.maxThreads = saved }
        let plan: TimingPlan = quick ? .quick : .full
        print("\nper convolution, batch \(Network.smallestSplitBatch * 2) (one part), one thread: im2col + sgemm vs direct kernels")
        print(padded("layer", 34) + padded("pass", 10) + padded("im2col", 12) + padded("direct", 12) + "im2col / direct")
        var shape = [32] + RecognitionTask.shape.inputShape()
        for (index, layer) in RecognitionTask.shape.layers(classes: 4, seed: 32).enumerated() {
            defer { shape = layer.outputShape(for: shape) }
            guard let conv = layer as? Conv2D,
                let direct = DirectConvolution2D(inputShape: shape, weightShape: conv.weight.shape, stride: conv.stride, padding: conv.padding)
            else { continue }
            var generator = SeededGenerator(seed: 40)
            let x = Tensor(randomUniform: shape, in: 0..<1, generator: &generator)
            let dY = Tensor(randomUniform: conv.outputShape(for: shape), in: -1..<1, generator: &generator)
            let window = SlidingWindow2D(
                inputShape: shape, windowHeight: conv.weight.shape[1], windowWidth: conv.weight.shape[2],
                strideHeight: 1, strideWidth: 1, padding: conv.padding)
            let name = "\(index) Conv2D \(describeShape(shape)) → \(conv.weight.shape[0])"
            let firstLayer = index == 0
            let forward = measure(
                name, flops: nil, plan: plan,
                [
                    Candidate(impl: "im2col") { conv.forward(x).scalars[0] },
                    Candidate(impl: "direct") { direct.forward(bordered: direct.bordered(x), weight: conv.weight, bias: conv.bias).scalars[0] },
                ])
            let backward = measure(
                name, flops: nil, plan: plan,
                [
                    Candidate(impl: "im2col") { convolutionBackward(image: x, weight: conv.weight, dOutput: dY, window: window).dWeight.scalars[0] },
                    Candidate(impl: "direct") {
                        direct.gradients(bordered: direct.bordered(x), weight: conv.weight, dOutput: dY, inputGradient: !firstLayer).dWeight.scalars[
                            0]
                    },
                ])
            for (pass, pair) in [("forward", forward), (firstLayer ? "backward*" : "backward", backward)] {
                print(
                    padded(name, 34) + padded(pass, 10) + padded(humanSeconds(pair[0].medianSeconds), 12)
                        + padded(humanSeconds(pair[1].medianSeconds), 12) + String(format: "%.2fx", pair[0].medianSeconds / pair[1].medianSeconds))
            }
        }
        print("(* the direct backward of the first layer skips the input gradient, which training never uses)")
    }
}

/// `bench train`: training throughput of each task's architecture at batch 64 (forward, backward and an Adam
/// update per step), and the share of that time spent inside BLAS products.
///
/// The architectures are sampled in turn (shape, motion, shape, …), each sample a fixed number of steps, so a
/// noisy moment of a shared machine lands on both; each figure is the median over the samples.
struct TrainBenchmark {
    struct Row {
        let task: RecognitionTask
        let architecture: [LayerSpec]
        let inputShape: [Int]
        let classes: Int
        let parameters: Int
        let samplesPerSecond: Double
        let blasShare: Double
        let samples: Int

        /// One JSON object: name, input shape, classes, the architecture as weights files record it, batch, threads,
        /// samples/s and the BLAS share.
        func jsonLine(batch: Int, threads: Int) -> String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let layers = (try? encoder.encode(architecture)).flatMap { String(data: $0, encoding: .utf8) } ?? "null"
            return "{\"name\":\(jsonString(task.modelName)),\"input_shape\":\(inputShape),\"classes\":\(classes),"
                + "\"architecture\":\(layers),\"parameters\":\(parameters),\"batch\":\(batch),\"threads\":\(threads),"
                + "\"optimizer\":\"adam\",\"samples_per_s\":\(String(format: "%.6g", samplesPerSecond)),"
                + "\"blas_share\":\(String(format: "%.4g", blasShare)),\"samples\":\(samples)}"
        }
    }

    /// Rows per step.
    let batch = 64
    /// Steps per timed sample.
    let stepsPerSample: Int
    /// Timed samples of each architecture.
    let samples: Int
    /// Threads a step may use.
    let threads: Int

    func run() -> [Row] {
        struct Setup {
            let task: RecognitionTask
            let classes: Int
            let architecture: [LayerSpec]
            let step: () -> Void
            let parameterCount: () -> Int
        }
        let setups: [Setup] = RecognitionTask.allCases.map { task in
            let classes = task == .shape ? 4 : 2
            var generator = SeededGenerator(seed: 31)
            let layers = task.layers(classes: classes, seed: 32)
            let box = NetworkBox(network: Network(converting: layers))
            let inputs = Tensor(randomUniform: [batch] + task.inputShape(), in: 0..<1, generator: &generator)
            let labels = (0..<batch).map { $0 % classes }
            var optimizer = Optimizer(.adamDefault, learningRate: 1e-3)
            let threads = self.threads
            // The architecture as a weights file would record it (what `peers.py --train` rebuilds in Keras).
            let file = try? ModelFile(
                name: task.modelName, model: Sequential(layers), labels: (0..<classes).map { "class\($0)" },
                input: InputSpec(shape: task.inputShape(), description: "benchmark input"))
            return Setup(
                task: task, classes: classes, architecture: file?.architecture ?? [],
                step: {
                    box.network.trainingStep(
                        inputs, labels: labels, loss: SoftmaxCrossEntropy(), optimizer: &optimizer,
                        generator: &generator, threads: threads)
                },
                parameterCount: { box.network.parameters.joined().reduce(0) { $0 + $1.count } })
        }
        for setup in setups { for _ in 0..<3 { setup.step() } }  // warm-up: caches, page faults, thread start
        var rates = [[Double]](repeating: [], count: setups.count)
        var blasShares = [[Double]](repeating: [], count: setups.count)
        let clock = ContinuousClock()
        for _ in 0..<samples {
            for (index, setup) in setups.enumerated() {
                let start = clock.now
                let (_, blasSeconds) = BLAS.measuringTime { for _ in 0..<stepsPerSample { setup.step() } }
                let elapsed = seconds(clock.now - start)
                rates[index].append(Double(batch * stepsPerSample) / elapsed)
                blasShares[index].append(blasSeconds / elapsed)
            }
        }
        return setups.indices.map { index in
            let setup = setups[index]
            return Row(
                task: setup.task, architecture: setup.architecture, inputShape: setup.task.inputShape(),
                classes: setup.classes, parameters: setup.parameterCount(), samplesPerSecond: median(rates[index]),
                blasShare: median(blasShares[index]), samples: rates[index].count)
        }
    }
}

/// The network a benchmark closure trains, held by reference so the closure can mutate it.
private final class NetworkBox {
    var network: Network
    init(network: Network) { self.network = network }
}

private func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

private func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
}
