import DataFiles
import Foundation
import Models
import Tensor

/// A recording session from a motion dataset, with its label and where it stands in the file.
package struct LabeledSession: Sendable {
    /// A session labelled `label`, found at `lines` of its file.
    package init(id: String, label: String, segments: [[MotionSample]], lines: ClosedRange<Int>) {
        self.id = id
        self.label = label
        self.segments = segments
        self.lines = lines
    }

    /// The `session` column's value.
    package let id: String
    /// The `label` column's value.
    package let label: String
    /// The samples, at the windowing's rate, split where the recording had gaps.
    package let segments: [[MotionSample]]
    /// The session's first and last lines in the file.
    package let lines: ClosedRange<Int>
}

/// Reads motion datasets: a motion recording's Core Motion columns plus `session` and `label`, in any order.
package enum MotionDataset {
    /// The two states, in class order.
    package static let standardLabels = ["walking", "running"]  // (MotionStillness.movingLabels, in class order)

    /// Every session of the file, checked: numbers finite, one label per session, timestamps increasing within a
    /// session, and each at least one window long. Rows of a session need not be together; they keep their file
    /// order. Core Motion columns or raw accelerometer `acc.*` (optionally `gyro.*`) are read, with optional
    /// `timestamp`; each session is converted like a recording (units, gravity, gaps, resampling).
    package static func read(_ path: String, windowing: MotionWindowing = MotionWindowing()) throws(DataError) -> [LabeledSession] {
        // The label column is required here (`sessions` reads files without one too).
        _ = try CSVReader(path: path).columns(["session", "label"])
        var result: [LabeledSession] = []
        for session in try sessions(path, rate: windowing.rate, window: windowing.window) {
            let recording = try session.recording.get()
            let longest = recording.segments.map(\.count).max() ?? 0
            guard longest >= windowing.window else {
                throw DataError(
                    file: path, line: session.lines.lowerBound,
                    message: "session '\(session.id)' (lines \(session.lines.lowerBound)–\(session.lines.upperBound)) has \(longest) samples; "
                        + "one window needs \(windowing.window) (\(String(format: "%.2f", Double(windowing.window) / windowing.rate)) s)")
            }
            result.append(LabeledSession(id: session.id, label: session.label ?? "", segments: recording.segments, lines: session.lines))
        }
        return result
    }
}
