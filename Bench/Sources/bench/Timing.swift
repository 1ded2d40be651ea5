import Foundation

/// One implementation of a workload, as the benchmark times it.
struct Candidate {
    /// `tensor`, `cblas` or `naive`.
    let impl: String
    /// One call of the workload. It returns something derived from the result so the work cannot be skipped.
    let run: () -> Float
}

/// The timing of one implementation of one workload.
struct Measurement {
    let name: String
    let impl: String
    /// Median seconds per call over the samples.
    let medianSeconds: Double
    let samples: Int
    let callsPerSample: Int
    /// Floating-point operations of one call, where the workload defines them.
    let flops: Double?

    var gflopsPerSecond: Double? { flops.map { $0 / medianSeconds / 1e9 } }

    /// One JSON object on one line: `name`, `impl`, `median_s`, `samples`, `calls_per_sample`, and `gflops`.
    var jsonLine: String {
        var fields: [(String, String)] = [
            ("name", jsonString(name)), ("impl", jsonString(impl)),
            ("median_s", String(format: "%.9g", medianSeconds)),
            ("samples", "\(samples)"), ("calls_per_sample", "\(callsPerSample)"),
        ]
        if let gflops = gflopsPerSecond { fields.append(("gflops", String(format: "%.4g", gflops))) }
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }
}

func jsonString(_ text: String) -> String {
    var escaped = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": escaped += "\\\""
        case "\\": escaped += "\\\\"
        case "\n": escaped += "\\n"
        case _ where scalar.value < 0x20: escaped += String(format: "\\u%04x", scalar.value)
        default: escaped.unicodeScalars.append(scalar)
        }
    }
    return escaped + "\""
}

/// How long and how often to sample.
struct TimingPlan {
    /// Seconds of sampling per workload, shared by its implementations.
    var budgetSeconds: Double
    var minimumSamples: Int
    var maximumSamples: Int
    /// Each sample runs the call enough times to last about this long, so microsecond calls are measurable.
    var sampleSeconds: Double

    static let full = TimingPlan(budgetSeconds: 3, minimumSamples: 7, maximumSamples: 41, sampleSeconds: 0.01)
    static let quick = TimingPlan(budgetSeconds: 0.6, minimumSamples: 3, maximumSamples: 15, sampleSeconds: 0.005)
}

/// Results are summed into this so the optimizer cannot drop the calls that produce them.
nonisolated(unsafe) var benchmarkSink: Float = 0

private func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
}

/// Times the candidates of one workload: a warm-up call each, then samples taken in turn (A, B, A, B, …) so
/// that a noisy moment of the machine lands on every implementation alike, and the median per call of each.
func measure(_ name: String, flops: Double?, plan: TimingPlan, _ candidates: [Candidate]) -> [Measurement] {
    let clock = ContinuousClock()
    var callsPerSample: [Int] = []
    for candidate in candidates {
        benchmarkSink += candidate.run()  // warm-up: caches, page faults, BLAS thread start
        let once = seconds(clock.measure { benchmarkSink += candidate.run() })
        callsPerSample.append(max(1, Int(plan.sampleSeconds / max(once, 1e-9))))
    }
    var samples = [[Double]](repeating: [], count: candidates.count)
    let start = clock.now
    while samples[0].count < plan.maximumSamples
        && (samples[0].count < plan.minimumSamples || seconds(clock.now - start) < plan.budgetSeconds)
    {
        for (index, candidate) in candidates.enumerated() {
            let calls = callsPerSample[index]
            let elapsed = seconds(
                clock.measure {
                    for _ in 0..<calls { benchmarkSink += candidate.run() }
                })
            samples[index].append(elapsed / Double(calls))
        }
    }
    return candidates.indices.map { index in
        let sorted = samples[index].sorted()
        let middle = sorted.count / 2
        let median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        return Measurement(
            name: name, impl: candidates[index].impl, medianSeconds: median, samples: sorted.count,
            callsPerSample: callsPerSample[index], flops: flops)
    }
}

/// A speed target checked from the ratio of two measurements of the same run.
struct Target {
    let description: String
    let ratio: Double
    let limit: Double
    let atLeast: Bool
    /// The unit of `ratio` and `limit` when they are not a bare ratio, with its leading space (` µs`).
    var unit = ""

    var passed: Bool { atLeast ? ratio >= limit : ratio <= limit }

    var line: String {
        "\(passed ? "PASS" : "FAIL")  \(description): \(Self.format(ratio))\(unit) (\(atLeast ? "≥" : "≤") \(Self.format(limit))\(unit))"
    }

    /// Three significant digits, or the whole number when the value is one (a byte or allocation count).
    static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(format: "%.3g", value)
    }
}

/// Formats seconds with a unit a person reads at a glance.
func humanSeconds(_ value: Double) -> String {
    switch value {
    case ..<1e-6: String(format: "%.1f ns", value * 1e9)
    case ..<1e-3: String(format: "%.2f µs", value * 1e6)
    case ..<1: String(format: "%.2f ms", value * 1e3)
    default: String(format: "%.2f s", value)
    }
}

func padded(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

/// On a debug build, the warning that its figures are not the engine's: how to build and run `command` in release.
func warnIfDebugBuild(_ command: String) {
    #if DEBUG
    FileHandle.standardError.write(
        Data(
            "warning: this is a debug build; measure with `swift run --package-path Bench --scratch-path .build-bench -c release bench \(command)`\n"
                .utf8))
    #endif
}
