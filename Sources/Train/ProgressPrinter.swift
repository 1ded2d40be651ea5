import Foundation

/// Shows training progress on standard error: on a terminal, one live line per epoch redrawn as steps finish
/// (epoch, a bar, step/total, loss, accuracy, samples/s, time left in the epoch); otherwise one plain line per
/// epoch, so logs stay readable.
public final class ProgressPrinter: @unchecked Sendable {
    private let live: Bool
    private let write: (String) -> Void
    private var lastDraw = ContinuousClock.now
    private var epochStart = ContinuousClock.now
    private let clock = ContinuousClock()

    /// Creates a printer; `live` defaults to whether standard error is a terminal.
    /// The default `write` uses the throwing `write(contentsOf:)`: a full or closed standard error loses the
    /// progress line instead of trapping, as Foundation's `FileHandle.write(_:)` would.
    public init(
        live: Bool = isatty(STDERR_FILENO) == 1,
        write: @escaping (String) -> Void = {
            try? FileHandle.standardError.write(contentsOf: Data($0.utf8))
        }
    ) {
        self.live = live
        self.write = write
    }

    /// Shows one event.
    public func callAsFunction(_ event: TrainingEvent) {
        switch event {
        case let .step(epoch, epochs, step, steps, loss, accuracy, samplesPerSecond):
            if step == 1 { epochStart = clock.now }
            guard live, step == steps || clock.now - lastDraw > .milliseconds(100) else { return }
            lastDraw = clock.now
            let width = 24, filled = width * step / max(steps, 1)
            let bar = String(repeating: "=", count: filled) + (filled < width ? ">" : "") + String(repeating: " ", count: max(0, width - filled - 1))
            let remaining = seconds(clock.now - epochStart) / Double(step) * Double(steps - step)
            write(
                String(
                    format: "\r\u{1B}[Kepoch %d/%d [%@] %d/%d loss %.4f acc %@ %.0f samples/s ETA %.0fs",
                    epoch, epochs, bar, step, steps, loss, percent(accuracy), samplesPerSecond, remaining))
        case let .epoch(summary, epochs):
            var line = String(
                format: "epoch %d/%d: loss %.4f acc %@", summary.epoch, epochs, summary.trainingLoss,
                percent(summary.trainingAccuracy))
            if let loss = summary.validationLoss, let accuracy = summary.validationAccuracy {
                line += String(format: " | validation loss %.4f acc %@", loss, percent(accuracy))
            }
            line += String(format: " | %.0f samples/s", summary.samplesPerSecond) + (summary.isBest ? " | best" : "")
            write((live ? "\r\u{1B}[K" : "") + line + "\n")
        case let .stoppedEarly(epoch, bestEpoch, lastImprovement):
            write(earlyStopText(epoch: epoch, bestEpoch: bestEpoch, lastImprovement: lastImprovement) + "\n")
        }
    }
}

/// `stopped after epoch 33: no better validation accuracy and no lower validation loss in the 7 epochs since epoch 26
/// (its lower loss); keeping epoch 15 (the best accuracy)`: what the early-stopping rule counted, in its own terms.
public func earlyStopText(epoch: Int, bestEpoch: Int, lastImprovement: Int) -> String {
    let since = epoch - lastImprovement
    let counted =
        "no better validation accuracy and no lower validation loss in the \(since) epoch\(since == 1 ? "" : "s") since epoch \(lastImprovement)"
    return lastImprovement == bestEpoch
        ? "stopped after epoch \(epoch): \(counted); keeping epoch \(bestEpoch)"
        : "stopped after epoch \(epoch): \(counted) (its lower loss); keeping epoch \(bestEpoch) (the best accuracy)"
}
