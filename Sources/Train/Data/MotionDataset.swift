import Foundation
import Models
import Tensor

/// A recording session from a motion dataset, with its label and where it stands in the file.
public struct LabeledSession: Sendable {
    /// The `session` column's value.
    public let id: String
    /// The `label` column's value.
    public let label: String
    /// The samples, at the windowing's rate, split where the recording had gaps.
    public let segments: [[MotionSample]]
    /// The session's first and last lines in the file.
    public let lines: ClosedRange<Int>
}

/// Reads motion datasets: a motion recording's Core Motion columns plus `session` and `label`, in any order.
public enum MotionDataset {
    /// The two states, in class order.
    public static let standardLabels = ["walking", "running"]

    /// Every session of the file, checked: numbers finite, one label per session, timestamps increasing within a
    /// session, and each at least one window long. Rows of a session need not be together; they keep their file
    /// order. Core Motion columns or raw accelerometer `acc.*` (optionally `gyro.*`) are read, with optional
    /// `timestamp`; each session is converted like a recording (units, gravity, gaps, resampling).
    public static func read(_ path: String, windowing: MotionWindowing = MotionWindowing()) throws(DataError) -> [LabeledSession] {
        // The label column is required here (`sessions` reads files without one too).
        _ = try CSVReader(path: path).columns(["session", "label"])
        var result: [LabeledSession] = []
        for session in try sessions(path, rate: windowing.rate, window: windowing.window) {
            let recording = try session.recording.get()
            let longest = recording.segments.map(\.count).max() ?? 0
            guard longest >= windowing.window else {
                throw DataError(file: path, line: session.lines.lowerBound,
                                message: "session '\(session.id)' (lines \(session.lines.lowerBound)–\(session.lines.upperBound)) has \(longest) samples; "
                                    + "one window needs \(windowing.window) (\(String(format: "%.2f", Double(windowing.window) / windowing.rate)) s)")
            }
            result.append(LabeledSession(id: session.id, label: session.label ?? "", segments: recording.segments, lines: session.lines))
        }
        return result
    }

    /// The class names: walking and running when the labels are among them, otherwise every label in order of
    /// first appearance.
    public static func classNames(for sessions: [LabeledSession]) -> [String] {
        Train.classNames(for: sessions.map(\.label), standard: standardLabels)
    }

    /// The sessions as examples: every window of every session (windows never cross sessions), grouped by
    /// session so splits keep a session's windows together.
    public static func examples(
        _ sessions: [LabeledSession], classNames: [String], windowing: MotionWindowing, file: String
    ) throws(DataError) -> Examples {
        var parts: [Tensor] = [], labels: [Int] = [], groups: [Int] = []
        for (index, session) in sessions.enumerated() {
            guard let label = classNames.firstIndex(of: session.label) else {
                throw DataError(file: file, line: session.lines.lowerBound,
                                message: "session '\(session.id)' has label '\(session.label)', which the model does not know "
                                    + "(it knows \(classNames.joined(separator: ", ")))")
            }
            let windows = Tensor.concatenate(session.segments.map(windowing.windows), axis: 0)
            parts.append(windows)
            labels += Array(repeating: label, count: windows.shape[0])
            groups += Array(repeating: index, count: windows.shape[0])
        }
        return Examples(inputs: Tensor.concatenate(parts, axis: 0), labels: labels, groups: groups, classNames: classNames)
    }
}
