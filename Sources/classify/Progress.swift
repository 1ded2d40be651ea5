import DataFiles
import Datasets
import Dispatch
import Foundation
import Models
import Synchronization

/// Runs `work`, and while it runs longer than 2 s, prints `note: WHAT… (N s)` on standard error every 5 s (unless
/// `--quiet`), `WHAT` evaluated each time: a long step that prints nothing else still shows it is alive and,
/// when `what` reads a counter, how far it has got.
func whileSaying<Value>(_ what: @autoclosure @escaping @Sendable () -> String, _ work: () throws(DataError) -> Value) throws(DataError) -> Value {
    let done = Atomic<Bool>(false)
    let started = ContinuousClock.now
    let timer = DispatchSource.makeTimerSource(queue: .global())
    timer.schedule(deadline: .now() + 2, repeating: 5)
    timer.setEventHandler {
        guard !done.load(ordering: .acquiring) else { return }
        let seconds = (ContinuousClock.now - started).components.seconds
        reportNote("\(what())… (\(seconds) s)")
    }
    timer.resume()
    defer {
        done.store(true, ordering: .releasing)
        timer.cancel()
    }
    return try work()
}

/// `ShapeDataset.drawings` as the CLI runs it (`shape --dataset`, `evaluate shape`): after 2 s, a `note:` line
/// every 5 s says how far it has got through the file (`datasetProgressText`).
func datasetDrawings<Value: Sendable>(
    _ path: String, threads: Int, checkLabels: Bool = false, makeWorker: @escaping @Sendable () -> (DatasetDrawingRecord) -> Value
) throws(DataError) -> [DatasetItem<Value>] {
    let progress = DatasetProgress()
    return try whileSaying(datasetProgressText(path, progress)) { () throws(DataError) in
        try ShapeDataset.drawings(path, threads: threads, checkLabels: checkLabels, progress: progress, makeWorker: makeWorker)
    }
}

/// `ShapeDataset.drawings`'s progress through `path` as `whileSaying` shows it: `reading big.csv: 1.2 of 6.0 GB`
/// (or `3.4 MB so far` from a pipe), then `classifying big.csv: 42% of 6.0 GB`.
func datasetProgressText(_ path: String, _ progress: DatasetProgress) -> String {
    let name = path == "-" ? "standard input" : path
    guard progress.readFinished.load(ordering: .acquiring) else {
        let read = progress.bytesRead.load(ordering: .relaxed), expected = progress.expectedBytes.load(ordering: .relaxed)
        guard expected > 0 else { return "reading \(name): \(byteText(read)) so far" }
        return "reading \(name): \(byteText(read, unitOf: expected)) of \(byteText(expected))"
    }
    let total = max(1, progress.bytesRead.load(ordering: .relaxed)), done = progress.bytesDone.load(ordering: .relaxed)
    return "classifying \(name): \(min(100, done * 100 / total))% of \(byteText(total))"
}

/// `bytes` in bytes, MB or GB (decimal), in the unit `unitOf` would be shown in: `1.2 GB`, `340.5 MB`, `120 bytes`.
private func byteText(_ bytes: Int, unitOf reference: Int? = nil) -> String {
    guard (reference ?? bytes) >= 1_000_000 else { return "\(bytes) bytes" }
    let giga = (reference ?? bytes) >= 1_000_000_000
    let value = Double(bytes) / (giga ? 1e9 : 1e6)
    return "\(String(format: "%.1f", value)) \(giga ? "GB" : "MB")"
}
