import ArgumentParser
import Foundation
import Models
import ONNX
import Tensor
import WeightsFormat

extension Bench {
    struct ONNXSpeed: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "onnx",
            abstract: "Imported ONNX models against the same architectures built here: time per inference, allocations.",
            discussion: """
                Each model of Tests/ONNXTests/Fixtures (PyTorch, Keras through tf2onnx, ONNX Runtime's QDQ \
                quantization) and each shipped model exported to ONNX is imported as --weights model.onnx imports \
                it, compiled, and run one input at a time on one thread, beside a twin built here: the same layers \
                from the engine's own constructors, freshly initialized, saved in the same weight format (with the \
                same input quantization for its int8 layers) and read back. Their samples alternate. Exits 1 when \
                an imported model allocates on the heap after its first inference, or is more than 10% slower than \
                its twin. Run from the package root (it reads the fixtures there).

                Example: .build-bench/release/bench onnx
                """
        )

        @Flag(help: "Sample for a fraction of the time.")
        var quick = false

        func run() throws {
            warnIfDebugBuild("onnx")
            ONNXFormat.register()
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bench-onnx-\(ProcessInfo.processInfo.processIdentifier)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            var models: [(String, URL)] = []
            for variant in ["shape-classifier.int8", "shape-classifier.f32", "motion-state.int8"] {
                let url = folder.appendingPathComponent("\(variant).onnx")
                try ONNXExport.data(of: ModelFile(contentsOf: URL(fileURLWithPath: "Weights/\(variant).weights"))).write(to: url)
                models.append(("\(variant) (exported)", url))
            }
            for fixture in ["torch-shape-cnn", "torch-shape-cnn-qdq", "keras-shape-cnn", "torch-motion-mlp"] {
                models.append((fixture, URL(fileURLWithPath: "Tests/ONNXTests/Fixtures/\(fixture).onnx")))
            }
            let plan = quick ? TimingPlan.quick : TimingPlan.full
            var targets: [Target] = []
            print(padded("model", 34) + padded("imported", 12) + padded("built here", 12) + padded("ratio", 8) + "allocations per inference")
            for (name, url) in models {
                let imported = try ModelFile(contentsOf: url)
                let twin = try Self.twin(of: imported, folder: folder)
                let a = PlanRunner(imported.makeCompiledModel()), b = PlanRunner(twin.makeCompiledModel())
                let input = (0..<a.plan.inputCount).map { Float($0 % 13) / 12 }
                let timings = input.withUnsafeBufferPointer { input in
                    measure(
                        name, flops: nil, plan: plan,
                        [Candidate(impl: "imported") { a.run(input) }, Candidate(impl: "built here") { b.run(input) }])
                }
                let allocations = input.withUnsafeBufferPointer { input in AllocationCounter.perCall { a.run(input) } }
                let ratio = timings[0].medianSeconds / timings[1].medianSeconds
                print(
                    padded(name, 34) + padded(humanSeconds(timings[0].medianSeconds), 12) + padded(humanSeconds(timings[1].medianSeconds), 12)
                        + padded(String(format: "%.3f", ratio), 8) + (allocations.map { String(format: "%.2f", $0) } ?? "not counted"))
                targets.append(Target(description: "\(name): imported / built here, time per inference", ratio: ratio, limit: 1.10, atLeast: false))
                if let allocations {
                    targets.append(
                        Target(description: "\(name): heap allocations per inference after the first", ratio: allocations, limit: 0, atLeast: false))
                }
            }
            print()
            for target in targets { print(target.line) }
            if targets.contains(where: { !$0.passed }) { throw ExitCode(1) }
        }

        /// The same architecture built from the engine's own layers (He-initialized), stored in the imported
        /// model's weight format, with its input quantization on the layers whose weights are int8 here too.
        static func twin(of imported: ModelFile, folder: URL) throws -> ModelFile {
            var generator = SeededGenerator(seed: 1)
            let layers: [any Layer] = imported.architecture.map { spec -> any Layer in
                switch spec {
                case let .dense(i, o): Dense(inFeatures: i, outFeatures: o, generator: &generator)
                case let .conv2D(i, o, kh, kw, sh, sw, padding):
                    Conv2D(inChannels: i, outChannels: o, kernel: (kh, kw), stride: (sh, sw), padding: padding, generator: &generator)
                case let .conv1D(i, o, k, s, padding):
                    Conv1D(inChannels: i, outChannels: o, kernelSize: k, stride: s, padding: padding, generator: &generator)
                case let .pool2D(kind, h, w, sh, sw, padding): Pool2D(kind, size: (h, w), stride: (sh, sw), padding: padding)
                case let .pool1D(kind, size, s, padding): Pool1D(kind, size: size, stride: s, padding: padding)
                case .globalAveragePool: GlobalAveragePool()
                case let .batchNorm(channels, epsilon): BatchNorm(channels: channels, epsilon: epsilon)
                case .flatten: Flatten()
                case let .activation(function): Activation(function)
                case let .transpose(permutation): Transpose(permutation: permutation)
                case let .reshape(shape): Reshape(shape: shape)
                case let .pad(before, after, mode, value): Pad(before: before, after: after, mode: mode, value: value)
                case let .constantOperation(operation, shape): ConstantOperation(operation, operand: Tensor(repeating: 1, shape: shape))
                case let .reduce(kind, axes): Reduce(kind, axes: axes)
                }
            }
            let int8 = imported.tensors.values.contains { $0.format == .int8 }
            var twin = try ModelFile(
                name: imported.name, model: Sequential(layers), labels: imported.labels, input: imported.input,
                preprocessing: imported.preprocessing, decision: imported.decision, format: int8 ? .int8 : .f32)
            twin.activationQuantization = imported.activationQuantization?.filter { twin.tensors["\($0.layer).weight"]?.format == .int8 }
            let url = folder.appendingPathComponent("twin.weights")
            try twin.write(to: url)
            return try ModelFile(contentsOf: url)
        }
    }
}
