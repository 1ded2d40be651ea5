import Foundation
import Tensor

/// One workload of `bench shape` or `bench motion`: a name, how many items a call handles, and the call.
struct Workload {
    let name: String
    /// Drawings or windows one call handles (1 for a latency row, 256 for a batch).
    var items = 1
    /// Threads the call runs on.
    var threads = 1
    /// One call; returns something derived from its result so the work cannot be skipped.
    let run: () -> Float
}

/// One timed workload: its median and how many items one call handles.
struct ModelRow {
    let name: String
    let measurement: Measurement
    let items: Int
    let threads: Int

    /// Median seconds per item.
    var secondsPerItem: Double { measurement.medianSeconds / Double(items) }
    /// Items per second at the median.
    var itemsPerSecond: Double { Double(items) / measurement.medianSeconds }

    /// `name`, `median_s` (per call), `items`, `threads`, `per_item_s`, `items_per_s`, `samples`, `calls_per_sample`.
    var jsonLine: String {
        "{\"name\":\(jsonString(name)),\"median_s\":\(String(format: "%.9g", measurement.medianSeconds)),"
            + "\"items\":\(items),\"threads\":\(threads),\"per_item_s\":\(String(format: "%.9g", secondsPerItem)),"
            + "\"items_per_s\":\(String(format: "%.6g", itemsPerSecond)),\"samples\":\(measurement.samples),"
            + "\"calls_per_sample\":\(measurement.callsPerSample)}"
    }
}

/// Heap allocations of one call, counted after a first call (see `AllocationCounter`).
struct AllocationRow {
    let name: String
    /// Allocations per call, or `nil` when they could not be counted.
    let perCall: Double?

    var jsonLine: String {
        "{\"name\":\(jsonString(name)),\"allocations_per_call\":\(perCall.map { String(format: "%.6g", $0) } ?? "null")}"
    }

    var text: String { perCall.map { $0 == $0.rounded() ? String(Int($0)) : String(format: "%.2f", $0) } ?? "not counted" }
}

/// What `bench shape` and `bench motion` print: the kernel level, every timed workload, allocations and the
/// targets checked from them, as a table or as JSON lines.
struct ModelReport {
    /// `bench shape` or `bench motion`.
    let title: String
    /// Facts about the run (kernel level, weights, plan steps) for the header.
    var notes: [(String, String)] = []
    var rows: [ModelRow] = []
    var allocations: [AllocationRow] = []
    var targets: [Target] = []

    /// Times `workloads` together, sampled in turn (see `measure`), and adds their rows; returns them.
    @discardableResult
    mutating func time(_ plan: TimingPlan, _ workloads: [Workload]) -> [ModelRow] {
        let measurements = measure(workloads[0].name, flops: nil, plan: plan, workloads.map { Candidate(impl: $0.name, run: $0.run) })
        let added = zip(workloads, measurements).map { ModelRow(name: $0.name, measurement: $1, items: $0.items, threads: $0.threads) }
        rows += added
        return added
    }

    /// Counts the allocations of one call of `call` (see `AllocationCounter.perCall`) and adds the row.
    mutating func countAllocations(_ name: String, calls: Int = 1000, _ call: () -> Float) {
        allocations.append(AllocationRow(name: name, perCall: AllocationCounter.perCall(calls, call)))
    }

    /// The target that the row `name`'s seconds per item, in µs, is at most `limit`.
    func latencyTarget(_ description: String, row name: String, limitMicroseconds limit: Double) -> Target {
        Target(
            description: description, ratio: (rows.first { $0.name == name }?.secondsPerItem ?? .infinity) * 1e6,
            limit: limit, atLeast: false, unit: " µs")
    }

    /// The target that row `a` takes at most `limit` times as long per item as row `b`.
    func ratioTarget(_ description: String, _ a: String, over b: String, limit: Double) -> Target {
        let (x, y) = (rows.first { $0.name == a }?.secondsPerItem ?? .infinity, rows.first { $0.name == b }?.secondsPerItem ?? 0)
        return Target(description: description, ratio: x / y, limit: limit, atLeast: false)
    }

    /// The target that the allocation row `name` counts none per call (missed when they could not be counted).
    func noAllocationTarget(_ name: String) -> Target {
        Target(
            description: "heap allocations per \(name)", ratio: allocations.first { $0.name == name }?.perCall ?? .infinity,
            limit: 0, atLeast: false)
    }

    /// The table: header notes, timings (per item and items per second), allocations, targets.
    var table: String {
        var lines = notes.map { "\($0.0): \($0.1)" }
        let width = max(48, (rows.map(\.name.count) + allocations.map(\.name.count)).max() ?? 0) + 2
        lines.append("")
        lines.append(padded("workload", width) + padded("threads", 9) + padded("per item", 12) + "items/s")
        for row in rows {
            lines.append(
                padded(row.name, width) + padded(String(row.threads), 9)
                    + padded(humanSeconds(row.secondsPerItem), 12) + humanRate(row.itemsPerSecond))
        }
        lines.append("")
        lines.append(padded("heap allocations per call (after the first)", width) + "count")
        for row in allocations { lines.append(padded(row.name, width) + row.text) }
        lines.append("")
        lines += targets.map(\.line)
        lines.append("targets: \(targets.filter(\.passed).count) of \(targets.count) met")
        return lines.joined(separator: "\n")
    }

    /// One JSON object per line: a `notes` object, then each row and each allocation count.
    var jsonLines: [String] {
        let notes =
            "{\"bench\":\(jsonString(title)),"
            + self.notes.map { "\(jsonString($0.0)):\(jsonString($0.1))" }.joined(separator: ",") + "}"
        return [notes] + rows.map(\.jsonLine) + allocations.map(\.jsonLine)
    }

    /// Prints the report (targets to standard error in JSON mode, as `bench engine` does); returns whether every
    /// target was met.
    func print(json: Bool) -> Bool {
        if json {
            for line in jsonLines { Swift.print(line) }
            let summary = targets.map(\.line) + ["targets: \(targets.filter(\.passed).count) of \(targets.count) met"]
            FileHandle.standardError.write(Data((summary.joined(separator: "\n") + "\n").utf8))
        } else {
            Swift.print(table)
        }
        return targets.allSatisfy(\.passed)
    }
}

/// Items per second with a unit a person reads at a glance: 812, 95.3k, 2.41M.
func humanRate(_ value: Double) -> String {
    switch value {
    case ..<1e4: String(format: "%.0f", value)
    case ..<1e6: String(format: "%.1fk", value / 1e3)
    default: String(format: "%.2fM", value / 1e6)
    }
}

/// The kernel level and, for a loaded plan, how many of its steps run in 8-bit integers.
func planNote(_ plan: InferencePlan) -> String {
    "\(plan.stepDescriptions.count) steps, \(plan.integerSteps) in 8-bit integers, kernels \(plan.level)"
        + (plan.isAllocationFree ? "" : ", some steps fall back to layer forward (allocates)")
}

/// The kernel level a report ran at, whether `ODML_KERNEL_LEVEL` chose it, every level this CPU runs, and the
/// library the matrix products ran on (`ODML_BLAS=builtin` measures the engine's own).
var kernelsNote: String {
    let levels = Kernels.availableLevels.map(\.description).joined(separator: ", ")
    let chosen = Kernels.levelNote ?? "\(Kernels.level) (Kernels.level, the best this CPU runs)"
    return "\(chosen); this CPU runs \(levels): \(Kernels.levelVariable)=NAME measures another; products on \(BLAS.library)"
        + (BLAS.library == BLAS.linked ? " (\(BLAS.libraryVariable)=builtin measures the engine's own)" : "")
}
