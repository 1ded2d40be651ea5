import ArgumentParser
import Foundation

extension Bench {
    struct Shape: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The shape model from one run: rasterizing, inference (int8, f32), the whole path, batches, allocations.",
            discussion: """
                Latency rows run one drawing on one thread: rasterizing, the compiled plan (batch 1), both, and \
                ShapeRecognizer.recognize (the whole path). Throughput rows run 256 drawings: the plan on one \
                thread, recognize(_:threads:) on every core, and the compact batch API recognize(batch:threads:) \
                on 1 and 2 threads. Heap allocations per call are counted with ordo-one's malloc interposer after a \
                first call. Exits 1 when a target fails: rasterize + int8 inference through the recognizer ≤ 30 µs; \
                rasterize + int8 plan ≤ 8 µs; the int8 plan no slower than the f32 one; no allocation in a plan \
                run; the batch API on 2 threads ≥ 150,000 drawings a second.

                Any model with the shape model's preprocessing (a raster of the drawing) runs here, whatever its \
                labels: --model names its files.

                Example: .build-bench/release/bench shape --weights /tmp/benchw --json
                         .build-bench/release/bench shape --weights /tmp/digits --model digits
                """
        )

        @OptionGroup var options: ModelBenchOptions

        func run() throws {
            try options.run("shape", model: BenchWeights.shape) { try ShapeBenchmark(plan: $0, weights: $1).run() }
        }
    }

    struct Motion: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The motion model from one run: window features, inference (int8, f32), the whole path, batches, allocations.",
            discussion: """
                A window is 256 samples (5.12 s at 50 Hz) of Core Motion data; its features are the model's input \
                (vertical and horizontal signals, their autocorrelations and intensities). Latency rows run one \
                window on one thread: features, the compiled plan (batch 1), both, and MotionRecognizer on a \
                one-window recording (the whole path). Throughput rows: the plan over 256 windows on one thread, and \
                a 10-minute recording through MotionRecognizer. Heap allocations per call are counted with ordo-one's \
                malloc interposer after a first call. Exits 1 when a target fails: features + int8 plan ≤ 4 µs a \
                window; a one-window recording through the recognizer ≤ 30 µs; the int8 plan no slower than the f32 \
                one; no allocation in a plan run; int8 weights file ≤ 64 KB.

                Any model with the motion model's preprocessing (motion windows) runs here, whatever its labels: \
                --model names its files.

                Example: .build-bench/release/bench motion --weights /tmp/benchw --json
                """
        )

        @OptionGroup var options: ModelBenchOptions

        func run() throws {
            try options.run("motion", model: BenchWeights.motion) { try MotionBenchmark(plan: $0, weights: $1).run() }
        }
    }
}

/// The options `bench shape` and `bench motion` share, and how both run.
struct ModelBenchOptions: ParsableArguments {
    @Option(help: "The folder holding the model's int8 and f32 weights files (<model>.int8.weights, <model>.f32.weights).")
    var weights = "Weights"

    @Option(help: "The model's files' name before .int8.weights and .f32.weights (default: the shipped model's).")
    var model: String?

    @Flag(
        help:
            "Print one JSON object per line (notes, then name, median_s, items, per_item_s, items_per_s, ...; allocation counts); targets go to stderr."
    )
    var json = false

    @Flag(help: "Sample for a fraction of the time.")
    var quick = false

    /// Warns on a debug build, runs `benchmark` with the sampling plan and the weights (`model` unless `--model`
    /// names another), prints the report and exits 1 when a target is missed.
    func run(_ command: String, model shipped: String, _ benchmark: (TimingPlan, BenchWeights) throws -> ModelReport) throws {
        warnIfDebugBuild(command)
        let report = try benchmark(quick ? .quick : .full, BenchWeights(folder: weights, model: model ?? shipped))
        if !report.print(json: json) { throw ExitCode(1) }
    }
}

/// A model's pair of weights files: `folder/model.int8.weights` and `folder/model.f32.weights`.
struct BenchWeights: CustomStringConvertible {
    let folder: String
    let model: String

    /// The file of `format` (`int8` or `f32`).
    func path(_ format: String) -> String { "\(folder)/\(model).\(format).weights" }

    var description: String { "\(folder)/\(model).{int8,f32}.weights" }

    /// The shipped models' names.
    static let shape = "shape-classifier", motion = "motion-state"
}
