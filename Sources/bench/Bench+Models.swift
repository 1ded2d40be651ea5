import ArgumentParser
import Foundation

extension Bench {
    struct Shape: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The shape model from one run: rasterizing, inference (int8, f32), the whole path, batches, allocations.",
            discussion: """
                Latency rows run one drawing on one thread: rasterizing, the compiled plan (batch 1), both, and \
                ShapeRecognizer.recognize (the whole path). Throughput rows run 256 drawings: the plan on one \
                thread and the recognizer's batch API on every core. Heap allocations per call are counted with \
                ordo-one's malloc interposer after a first call. Exits 1 when a target fails: rasterize + int8 \
                inference through the recognizer ≤ 30 µs; rasterize + int8 plan ≤ 8 µs; the int8 plan no slower \
                than the f32 one; no allocation in a plan run.

                Example: swift run -c release bench shape --weights /tmp/benchw --json
                """
        )

        @Option(help: "The folder holding shape-classifier.int8.weights and shape-classifier.f32.weights.")
        var weights = "Weights"

        @Flag(help: "Print one JSON object per line (notes, then name, median_s, items, per_item_s, items_per_s, ...; allocation counts); targets go to stderr.")
        var json = false

        @Flag(help: "Sample for a fraction of the time.")
        var quick = false

        func run() throws {
            #if DEBUG
            FileHandle.standardError.write(Data("warning: this is a debug build; measure with `swift run -c release bench shape`\n".utf8))
            #endif
            let report = try ShapeBenchmark(plan: quick ? .quick : .full, weightsFolder: weights).run()
            if !report.print(json: json) { throw ExitCode(1) }
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

                Example: swift run -c release bench motion --weights /tmp/benchw --json
                """
        )

        @Option(help: "The folder holding motion-state.int8.weights and motion-state.f32.weights.")
        var weights = "Weights"

        @Flag(help: "Print one JSON object per line (notes, then name, median_s, items, per_item_s, items_per_s, ...; allocation counts); targets go to stderr.")
        var json = false

        @Flag(help: "Sample for a fraction of the time.")
        var quick = false

        func run() throws {
            #if DEBUG
            FileHandle.standardError.write(Data("warning: this is a debug build; measure with `swift run -c release bench motion`\n".utf8))
            #endif
            let report = try MotionBenchmark(plan: quick ? .quick : .full, weightsFolder: weights).run()
            if !report.print(json: json) { throw ExitCode(1) }
        }
    }
}
