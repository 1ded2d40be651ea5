import ArgumentParser
import Foundation
import Models
import Tensor
import WeightsFormat

/// The benchmark executable, a package of its own (Bench/) that uses the engine through its public API. Build it in
/// release mode from the package root: `make bench`, or
/// `swift run --package-path Bench --scratch-path .build-bench -c release bench engine`.
@main
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measures the engine's speed as ratios against raw BLAS and the naive references.",
        discussion: """
            Every figure is the median seconds per call over repeated samples after a warm-up; the \
            implementations of one workload are sampled in turn, so the ratios compare like with like. \
            Run a release build, from the package root: swift run --package-path Bench --scratch-path .build-bench -c release bench engine
            """,
        subcommands: [
            Engine.self, Quant.self, TrainSpeed.self, Shape.self, Motion.self, CLI.self, Loop.self, Hostile.self, QuantChild.self, PlanOutputs.self,
            ONNXSpeed.self, Signal.self,
        ]
    )
}

extension Bench {
    struct Quant: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Speed and resident memory of quantized models, dequantized at load and compact, against f32.",
            discussion: """
                A 784→1024→1024→10 MLP (1.86M weights) is saved as f32, int8, q4 and lut4. Each quantized file \
                runs dequantized once at load (plain sgemm) and compact (weights stay quantized; tiles are \
                dequantized per call). Resident memory is measured in a fresh process per row: how much it \
                grows from before loading to after loading and one forward pass.

                Example: .build-bench/release/bench quant
                """
        )

        @Flag(help: "Sample for a fraction of the time.")
        var quick = false

        func run() throws {
            warnIfDebugBuild("quant")
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bench-quant-\(ProcessInfo.processInfo.processIdentifier)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let rows = try QuantBenchmark(plan: quick ? .quick : .full).run(folder: folder, executable: CommandLine.arguments[0])
            guard let float = rows.first else { return }
            let megabytes = { (bytes: Int) in String(format: "%.2f MB", Double(bytes) / 1_048_576) }
            print(
                padded("format", 8) + padded("mode", 13) + padded("file", 11) + padded("weights", 11) + padded("resident", 11)
                    + padded("batch 1", 11) + padded("vs f32", 8) + padded("batch 64", 11) + "vs f32")
            for row in rows {
                print(
                    padded(row.format.rawValue, 8) + padded(row.mode, 13) + padded(megabytes(row.fileBytes), 11)
                        + padded(megabytes(row.weightBytes), 11) + padded(megabytes(row.residentBytes), 11)
                        + padded(humanSeconds(row.batch1.medianSeconds), 11)
                        + padded(String(format: "%.2fx", row.batch1.medianSeconds / float.batch1.medianSeconds), 8)
                        + padded(humanSeconds(row.batch64.medianSeconds), 11)
                        + String(format: "%.2fx", row.batch64.medianSeconds / float.batch64.medianSeconds))
            }
            print("\nweights: bytes the built model keeps for its weights; resident: growth of a fresh process's RSS")
        }
    }

    struct CLI: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "cli",
            abstract: "classify shape --dataset on 100,000 drawings: drawings per second on every core against one.",
            discussion: """
                Runs the classify binary beside bench (build both with -c release) on a generated dataset CSV \
                (100,000 drawings are 320 MB), alternating --jobs 1 and --jobs <cores>, and reports the median wall \
                time of the whole command. Exits 1 when every core passes fewer than 40,000 drawings a second. \
                Example: swift build --package-path Bench --scratch-path .build-bench -c release --product classify && .build-bench/release/bench cli
                """
        )

        @Option(help: "Drawings in the batch (a multiple of 20).")
        var drawings = 100_000

        @Option(help: "Runs of each setting.")
        var rounds = 3

        func run() throws {
            #if DEBUG
            FileHandle.standardError.write(
                Data(
                    "warning: this is a debug build; measure with `swift build --package-path Bench --scratch-path .build-bench -c release --product classify && .build-bench/release/bench cli`\n"
                        .utf8))
            #endif
            guard drawings >= 20, rounds >= 1 else { throw ValidationError("--drawings must be at least 20 and --rounds at least 1") }
            let rows = try CLIBenchmark(drawings: drawings, rounds: rounds).run()
            print("classify shape --dataset (\(drawings) drawings), median of \(rounds) runs")
            for row in rows {
                print(
                    padded("--jobs \(row.jobs)", 12) + padded(String(format: "%.2f s", row.medianSeconds), 10)
                        + String(format: "%.0f drawings/s  (%d results)", Double(row.results) / max(row.medianSeconds, 1e-9), row.results))
            }
            if let one = rows.first, let all = rows.last, all.jobs > one.jobs {
                print(
                    String(
                        format: "\nall %d cores / one core: %.2fx the drawings per second", all.jobs, one.medianSeconds / max(all.medianSeconds, 1e-9)
                    ))
            }
            var failed = false
            if rows.contains(where: { $0.results != drawings / 20 * 20 }) {
                print("FAIL  a run did not print one result per drawing")
                failed = true
            }
            if let all = rows.last {
                let target = Target(
                    description: "classify shape --dataset, \(drawings) drawings, --jobs \(all.jobs), whole command",
                    ratio: Double(all.results) / max(all.medianSeconds, 1e-9) / 1000,
                    limit: CLIBenchmark.targetPerSecond / 1000, atLeast: true, unit: "k drawings/s")
                print(target.line)
                failed = failed || !target.passed
            }
            if failed { throw ExitCode(1) }
        }
    }

    /// Loads one weights file and runs it once; prints how much resident memory that took (for `bench quant`).
    struct QuantChild: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "quant-child", abstract: "Internal: measure one model's resident memory.", shouldDisplay: false)

        @Argument var file: String
        @Flag var compact = false

        func run() throws {
            let input = Tensor(zeros: [1, 784])
            releaseFreedMemory()
            let before = residentBytes()
            let model = try ModelFile(contentsOf: URL(fileURLWithPath: file)).makeModel(compact: compact)
            benchmarkSink += model(input).scalars[0]
            releaseFreedMemory()
            print(residentBytes() - before)
            withExtendedLifetime(model) {}
        }
    }

    struct Engine: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Matrix products, Dense, Conv1D and Conv2D against raw cblas_sgemm and naive loops.",
            discussion: """
                Exits 1 when a speed target fails: Tensor matmul ≥ 97% of raw sgemm throughput at 256³ and \
                1024³; batch-1 Dense 1x576x128 ≤ 2x raw sgemm; every convolution at batch 64 ≥ 10x faster \
                than its naive reference.

                Example: .build-bench/release/bench engine --json > engine.jsonl
                """
        )

        @Flag(help: "Print one JSON object per line (name, impl, median_s, ...) instead of a table; targets go to stderr.")
        var json = false

        @Flag(help: "Sample for a fraction of the time (about 10 s in all instead of about 50 s).")
        var quick = false

        @Option(help: "Most BLAS threads per product (default: OpenBLAS's choice, \(BLAS.maxThreads) here).")
        var threads: Int?

        func validate() throws {
            if let threads, threads < 1 { throw ValidationError("--threads must be at least 1, got \(threads)") }
        }

        func run() throws {
            if let threads { BLAS.maxThreads = threads }
            warnIfDebugBuild("engine")
            if !json {
                print(
                    "bench engine: BLAS threads ≤ \(BLAS.maxThreads) (products under "
                        + "\(BLAS.singleThreadWorkLimit) multiply-adds run on one)")
                print(padded("workload", 34) + padded("impl", 8) + padded("median", 12) + padded("GFLOP/s", 10) + "vs tensor")
            }
            let benchmark = EngineBenchmark(plan: quick ? .quick : .full) { group in
                for measurement in group {
                    if json {
                        print(measurement.jsonLine)
                    } else {
                        let gflops = measurement.gflopsPerSecond.map { String(format: "%.2f", $0) } ?? "-"
                        let relative =
                            measurement.impl == "tensor"
                            ? "" : String(format: "%.2fx", measurement.medianSeconds / group[0].medianSeconds)
                        print(
                            padded(measurement.name, 34) + padded(measurement.impl, 8)
                                + padded(humanSeconds(measurement.medianSeconds), 12) + padded(gflops, 10) + relative)
                    }
                }
            }
            let (_, targets) = benchmark.run()
            let summary = targets.map(\.line).joined(separator: "\n")
            let failed = targets.filter { !$0.passed }.count
            let closing = "targets: \(targets.count - failed) of \(targets.count) met"
            if json {
                FileHandle.standardError.write(Data((summary + "\n" + closing + "\n").utf8))
            } else {
                print("\n" + summary + "\n" + closing)
            }
            if failed > 0 { throw ExitCode(1) }
        }
    }
}
