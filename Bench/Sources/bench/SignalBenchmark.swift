import ArgumentParser
import Foundation
import Models
import SignalTask
import Tensor

extension Bench {
    struct Signal: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The third task (Tests/SignalTask, an app's own task) through the engine's recognizer machine.",
            discussion: """
                The signal task is written as an app writes its own task, with the engine's public declarations only \
                (this package compiles it as an outside package's code). Its small dense model (32→24→3) is trained \
                here in about a second with the engine's training, then saved and loaded as int8. Latency rows run \
                one 200-sample signal (11 windows) on one thread: its windows made and run through the compiled plan, \
                window by window, as an app's own loop would; SignalRecognizer.recognize (the engine's path: the \
                plan over the windows, the decision rule, the answer); the rule; and, per signal, a batch of 256 \
                through recognize(batch:threads:) on one thread. Exits 1 when a target fails: the whole path ≤ 3× \
                the bare loop, so that the engine's machine costs an app's task little beyond its model.

                Example: .build-bench/release/bench signal --json
                """
        )

        @Flag(help: "Print one JSON object per line (notes, then rows); targets go to stderr.")
        var json = false

        @Flag(help: "Sample for a fraction of the time.")
        var quick = false

        func run() throws {
            warnIfDebugBuild("signal")
            let report = try SignalBenchmark(plan: quick ? .quick : .full).run()
            if !report.print(json: json) { throw ExitCode(1) }
        }
    }
}

/// `bench signal`: the third task's path against the bare loop an app would write over the same compiled plan.
struct SignalBenchmark {
    let plan: TimingPlan
    /// Signals in a batch row.
    static let batch = 256
    /// The most the whole path may take, as a multiple of the bare loop.
    static let overheadLimit = 3.0

    func run() throws -> ModelReport {
        BLAS.maxThreads = 1
        var report = ModelReport(title: "bench signal")
        report.notes.append(("kernels", kernelsNote))
        let int8 = try SignalModel.files().int8
        let recognizer = try SignalRecognizer(model: int8, named: "signal-waves.int8")
        guard let compiled = recognizer.engine.classifier?.compiled else { throw ValidationError("the signal model did not load as a classifier") }
        report.notes.append(("model", "signal-waves.int8, trained here (validation \(percentText(try SignalModel.files().validation)))"))
        report.notes.append(("int8 plan", planNote(compiled.plan)))
        let runner = PlanRunner(compiled), rule = SignalRecognizer.ruleOnly
        let windows = recognizer.windows
        let signals = SignalModel.testSignals(count: Self.batch / 3 + 1, seed: 61).prefix(Self.batch).map(\.signal)
        var next = 0
        func advance() -> Int {
            next = (next + 1) % signals.count
            return next
        }
        report.time(
            plan,
            [
                Workload(name: "signal: windows + int8 plan, window by window (bare)") {
                    let signal = windows.inputs(signals[advance()])
                    var sum: Float = 0
                    signal.withUnsafeBufferPointer { all in
                        for start in stride(from: 0, to: all.count, by: windows.window) {
                            sum += runner.run(UnsafeBufferPointer(rebasing: all[start..<(start + windows.window)]))
                        }
                    }
                    return sum
                },
                Workload(name: "signal: int8 recognizer (whole path)") {
                    Float((try? recognizer.recognize(signals[advance()]))?.confidence ?? 0)
                },
                Workload(name: "signal: the rule (whole path)") {
                    Float((try? rule.recognize(signals[advance()]))?.confidence ?? 0)
                },
            ])
        report.time(
            plan,
            [
                Workload(name: "signal: int8 recognizer, batch \(Self.batch), 1 thread", items: Self.batch) {
                    recognizer.recognize(batch: signals, threads: 1).count == Self.batch ? 1 : 0
                }
            ])
        report.targets = [
            report.ratioTarget(
                "signal whole path / bare windows + plan", "signal: int8 recognizer (whole path)",
                over: "signal: windows + int8 plan, window by window (bare)", limit: Self.overheadLimit)
        ]
        return report
    }

    private func percentText(_ value: Double) -> String { String(format: "%.1f%%", 100 * value) }
}
