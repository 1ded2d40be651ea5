import ArgumentParser
import Foundation
import Models
import Tensor

extension Bench {
    /// Prints the inputs `bench shape` / `bench motion` run and what each compiled plan answers for them, so that
    /// another runtime (peers/peers.py) can check it computes the same function.
    struct PlanOutputs: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "plan-outputs",
            abstract: "Internal: one JSON line per generated sample: its model input and the int8 and f32 plans' outputs.",
            shouldDisplay: false
        )

        @Argument(help: "shape or motion.")
        var model: String

        @Option(help: "The folder holding the model's int8 and f32 weights files.")
        var weights = "Weights"

        @Option(help: "Samples to print.")
        var count = 8

        func validate() throws {
            guard ["shape", "motion"].contains(model) else { throw ValidationError("the model is shape or motion, got '\(model)'") }
            guard (1...256).contains(count) else { throw ValidationError("--count must be 1…256, got \(count)") }
        }

        func run() throws {
            let inputs: [[Float]], plans: [(String, PlanRunner)]
            if model == "shape" {
                let variants = try ["int8", "f32"].map { try ShapeVariant(BenchWeights(folder: weights, model: BenchWeights.shape), format: $0) }
                let rasterizer = variants[0].rasterizer
                inputs = ShapeBenchmark.drawings().prefix(count).map { rasterizer.rasterize($0).scalars }
                plans = variants.map { ($0.format, $0.plan) }
            } else {
                let variants = try ["int8", "f32"].map { try MotionVariant(BenchWeights(folder: weights, model: BenchWeights.motion), format: $0) }
                let windowing = variants[0].classifier.windowing
                inputs = MotionBenchmark.windows(windowing: windowing).windows.prefix(count).map { samples in
                    let (vertical, horizontal) = MotionWindowing.signals(samples)
                    return [Float](unsafeUninitializedCapacity: windowing.inputSize) { buffer, initialized in
                        windowing.input(vertical: vertical[...], horizontal: horizontal[...], into: buffer)
                        initialized = windowing.inputSize
                    }
                }
                plans = variants.map { ($0.format, $0.plan) }
            }
            let numbers = { (values: [Float]) in "[" + values.map { String(format: "%.9g", $0) }.joined(separator: ",") + "]" }
            for input in inputs {
                let outputs = plans.map { format, runner in
                    let output = input.withUnsafeBufferPointer { runner.outputs($0) }
                    return "\(jsonString(format)):\(numbers(output))"
                }
                print("{\"input\":\(numbers(input)),\(outputs.joined(separator: ","))}")
            }
        }
    }
}
