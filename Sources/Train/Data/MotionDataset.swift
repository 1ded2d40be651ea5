import Foundation
import Models
import Tensor

/// A recording session from a motion dataset, with its label and where it stands in the file.
public struct LabeledSession: Sendable {
    /// The `session` column's value.
    public let id: String
    /// The `label` column's value.
    public let label: String
    /// The samples, in file order.
    public let samples: [MotionSample]
    /// The session's first and last lines in the file.
    public let lines: ClosedRange<Int>
}

/// Reads motion datasets: a motion recording's Core Motion columns plus `session` and `label`, in any order.
public enum MotionDataset {
    /// The two states, in class order.
    public static let standardLabels = ["walking", "running"]

    /// The Core Motion columns read (attitude is not needed: the features do not depend on orientation).
    static let requiredColumns = [
        "gravity.x", "gravity.y", "gravity.z", "rotationRate.x", "rotationRate.y", "rotationRate.z",
        "userAcceleration.x", "userAcceleration.y", "userAcceleration.z",
    ]

    /// Every session of the file, checked: numbers finite, one label per session, and each at least one window
    /// long. Rows of a session need not be together; they keep their file order.
    public static func read(_ path: String, windowing: MotionWindowing = MotionWindowing()) throws(DataError) -> [LabeledSession] {
        var reader = try CSVReader(path: path)
        let idColumns = try reader.columns(["session", "label"])
        let valueColumns: [Int]
        do {
            valueColumns = try reader.columns(requiredColumns)
        } catch {
            let hasRaw = reader.optionalColumn("acc.x") != nil
            throw DataError(file: path, line: 1, message: error.message
                + (hasRaw ? " (raw accelerometer recordings are not read yet: the motion-classifier issue adds them)" : ""))
        }
        var order: [String] = []
        var sessions: [String: (label: String, first: Int, last: Int, samples: [MotionSample])] = [:]
        while let fields = try reader.next() {
            let line = reader.lineNumber
            let id = fields[idColumns[0]], label = fields[idColumns[1]].trimmingCharacters(in: .whitespaces)
            var v = [Double](repeating: 0, count: 9)
            for (i, column) in valueColumns.enumerated() { v[i] = try reader.number(fields[column], column: column) }
            let sample = MotionSample(gravity: (v[0], v[1], v[2]), rotationRate: (v[3], v[4], v[5]), userAcceleration: (v[6], v[7], v[8]))
            if var session = sessions[id] {
                guard session.label == label else {
                    throw DataError(file: path, line: line, column: (idColumns[1] + 1, "label"),
                                    message: "session '\(id)' is labelled '\(session.label)' above and '\(label)' here")
                }
                session.samples.append(sample)
                session.last = line
                sessions[id] = session
            } else {
                guard !label.isEmpty else {
                    throw DataError(file: path, line: line, column: (idColumns[1] + 1, "label"), message: "empty label")
                }
                order.append(id)
                sessions[id] = (label, line, line, [sample])
            }
        }
        if order.isEmpty { throw DataError(file: path, line: 2, message: "no sessions: the file has a header but no rows") }
        var result: [LabeledSession] = []
        for id in order {
            guard let session = sessions[id] else { continue }
            guard session.samples.count >= windowing.window else {
                throw DataError(file: path, line: session.first,
                                message: "session '\(id)' (lines \(session.first)–\(session.last)) has \(session.samples.count) "
                                    + "samples; one window needs \(windowing.window) (\(String(format: "%.2f", Double(windowing.window) / windowing.rate)) s)")
            }
            result.append(LabeledSession(id: id, label: session.label, samples: session.samples, lines: session.first...session.last))
        }
        return result
    }

    /// The class names: walking and running when the labels are among them, otherwise every label in order of
    /// first appearance.
    public static func classNames(for sessions: [LabeledSession]) -> [String] {
        var names: [String] = []
        for session in sessions where !names.contains(session.label) { names.append(session.label) }
        return Set(names).isSubset(of: standardLabels) ? standardLabels : names
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
            let windows = windowing.windows(session.samples)
            parts.append(windows)
            labels += Array(repeating: label, count: windows.shape[0])
            groups += Array(repeating: index, count: windows.shape[0])
        }
        return Examples(inputs: Tensor.concatenate(parts, axis: 0), labels: labels, groups: groups, classNames: classNames)
    }
}
