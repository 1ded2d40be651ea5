import ArgumentParser
import Foundation
import Tensor

/// The benchmark executable. Build it in release mode: `swift run -c release bench engine`.
@main
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measures the engine's speed as ratios against raw BLAS and the naive references.",
        discussion: """
            Every figure is the median seconds per call over repeated samples after a warm-up; the \
            implementations of one workload are sampled in turn, so the ratios compare like with like. \
            Run a release build: swift run -c release bench engine
            """,
        subcommands: [Engine.self]
    )
}

extension Bench {
    struct Engine: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Matrix products, Dense, Conv1D and Conv2D against raw cblas_sgemm and naive loops.",
            discussion: """
                Exits 1 when a speed target fails: Tensor matmul ≥ 90% of raw sgemm throughput at 256³ and \
                1024³; batch-1 Dense 1x576x128 ≤ 2x raw sgemm; every convolution at batch 64 ≥ 10x faster \
                than its naive reference.

                Example: swift run -c release bench engine --json > engine.jsonl
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
            #if DEBUG
            FileHandle.standardError.write(Data(
                "warning: this is a debug build; measure with `swift run -c release bench engine`\n".utf8))
            #endif
            if !json {
                print("bench engine: BLAS threads ≤ \(BLAS.maxThreads) (products under "
                      + "\(BLAS.singleThreadWorkLimit) multiply-adds run on one)")
                print(padded("workload", 34) + padded("impl", 8) + padded("median", 12) + padded("GFLOP/s", 10) + "vs tensor")
            }
            let benchmark = EngineBenchmark(plan: quick ? .quick : .full) { group in
                for measurement in group {
                    if json {
                        print(measurement.jsonLine)
                    } else {
                        let gflops = measurement.gflopsPerSecond.map { String(format: "%.2f", $0) } ?? "-"
                        let relative = measurement.impl == "tensor"
                            ? "" : String(format: "%.2fx", measurement.medianSeconds / group[0].medianSeconds)
                        print(padded(measurement.name, 34) + padded(measurement.impl, 8)
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
