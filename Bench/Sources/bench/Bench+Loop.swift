import ArgumentParser
import Foundation
import Models
import Tensor

extension Bench {
    /// `bench loop`: one shape workload run over and over for a given time, for a profiler to look at
    /// (`perf record -e cpu-clock -- .build-bench/release/bench loop rasterize`). It prints only the calls made and the
    /// mean time per call, which is no benchmark: use `bench shape` for figures.
    struct Loop: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Runs one shape workload in a loop, for a profiler (perf, callgrind); prints calls and mean time.",
            discussion: """
                Workloads: rasterize (the levelled rasterizer into a buffer), int8-plan, f32-plan (the compiled \
                plan on a rasterized drawing), rasterize-int8 (both), recognize (ShapeRecognizer, int8, the \
                whole path). The drawings are bench shape's 256 generated ones, in turn.

                Example: perf record -e cpu-clock -- .build-bench/release/bench loop rasterize --seconds 3
                """
        )

        enum Workload: String, ExpressibleByArgument, CaseIterable {
            case rasterize
            case int8Plan = "int8-plan"
            case f32Plan = "f32-plan"
            case rasterizeInt8 = "rasterize-int8"
            case recognize
        }

        @Argument(help: "The workload: \(Workload.allCases.map(\.rawValue).joined(separator: ", ")).")
        var workload: Workload

        @Option(help: "How long to run, in seconds (0.01…600).")
        var seconds = 2.0

        @Option(help: "Run exactly this many rounds of the 256 drawings instead, whatever the time (for instruction counts).")
        var rounds: Int?

        @Option(help: "The folder holding shape-classifier.int8.weights and .f32.weights.")
        var weights = "Weights"

        func validate() throws {
            guard seconds >= 0.01, seconds <= 600 else { throw ValidationError("--seconds must be between 0.01 and 600, got \(seconds)") }
            if let rounds, !(1...1_000_000).contains(rounds) { throw ValidationError("--rounds must be between 1 and 1000000, got \(rounds)") }
        }

        func run() throws {
            BLAS.maxThreads = 1
            let drawings = ShapeBenchmark.drawings()
            let variant = try ShapeVariant(BenchWeights(folder: weights, model: BenchWeights.shape), format: workload == .f32Plan ? "f32" : "int8")
            let rasterizer = variant.rasterizer
            let images = drawings.map(rasterizer.rasterize)
            let pixels = UnsafeMutableBufferPointer<Float>.allocate(capacity: rasterizer.size * rasterizer.size)
            pixels.initialize(repeating: 0)
            defer { pixels.deallocate() }
            let call: (Int) -> Float
            switch workload {
            case .rasterize:
                call = {
                    rasterizer.rasterize(drawings[$0], into: pixels); return pixels[0]
                }
            case .int8Plan, .f32Plan:
                call = { variant.plan.run(images[$0]) }
            case .rasterizeInt8:
                call = {
                    rasterizer.rasterize(drawings[$0], into: pixels); return variant.plan.run(UnsafeBufferPointer(pixels))
                }
            case .recognize:
                call = { Float((try? variant.recognizer.recognize(drawings[$0]))?.confidence ?? 0) }
            }
            let clock = ContinuousClock()
            let end = clock.now + .milliseconds(Int(seconds * 1000))
            var calls = 0, sink: Float = 0
            let start = clock.now
            while rounds.map({ calls < $0 * drawings.count }) ?? (clock.now < end) {
                for index in drawings.indices { sink += call(index) }
                calls += drawings.count
            }
            let elapsed = (clock.now - start) / calls
            print("\(workload.rawValue): \(calls) calls, \(elapsed) each on average (checksum \(sink.isFinite ? "finite" : "not finite"))")
        }
    }
}
