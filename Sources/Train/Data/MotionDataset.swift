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
        var reader = try CSVReader(path: path)
        let idColumns = try reader.columns(["session", "label"])
        let find = { (names: [String]) in names.compactMap { reader.optionalColumn($0) } }
        let gravity = find(["gravity.x", "gravity.y", "gravity.z"]), user = find(["userAcceleration.x", "userAcceleration.y", "userAcceleration.z"])
        let rotation = find(["rotationRate.x", "rotationRate.y", "rotationRate.z"]), acc = find(["acc.x", "acc.y", "acc.z"])
        let gyro = find(["gyro.x", "gyro.y", "gyro.z"])
        let coreMotion = gravity.count == 3 && user.count == 3
        guard coreMotion || acc.count == 3 else {
            throw DataError(file: path, line: 1, message: "missing columns: a motion dataset needs gravity.x/y/z and "
                + "userAcceleration.x/y/z (Core Motion), or acc.x/y/z (raw accelerometer), besides session and label")
        }
        let valueColumns = coreMotion ? gravity + user : acc
        let spinColumns = coreMotion ? (rotation.count == 3 ? rotation : []) : (gyro.count == 3 ? gyro : [])
        let timeColumn = reader.optionalColumn("timestamp")
        var order: [String] = []
        var sessions: [String: (label: String, first: Int, last: Int, values: [[Double]], times: [Double])] = [:]
        while let fields = try reader.next() {
            let line = reader.lineNumber
            let id = fields[idColumns[0]], label = fields[idColumns[1]].trimmingCharacters(in: .whitespaces)
            var v = [Double](repeating: 0, count: 9)
            for (i, column) in valueColumns.enumerated() { v[i] = try reader.number(fields[column], column: column) }
            for (i, column) in spinColumns.enumerated() { v[6 + i] = try reader.number(fields[column], column: column) }
            var session = sessions[id] ?? (label, line, line, [], [])
            if session.values.isEmpty {
                guard !label.isEmpty else {
                    throw DataError(file: path, line: line, column: (idColumns[1] + 1, "label"), message: "empty label")
                }
                order.append(id)
            } else if session.label != label {
                throw DataError(file: path, line: line, column: (idColumns[1] + 1, "label"),
                                message: "session '\(id)' is labelled '\(session.label)' above and '\(label)' here")
            }
            let time = try timeColumn.map { column throws(DataError) in try reader.number(fields[column], column: column) }
                ?? Double(session.values.count) / windowing.rate
            if let previous = session.times.last, time <= previous {
                throw DataError(file: path, line: line, column: timeColumn.map { ($0 + 1, "timestamp") },
                                message: "timestamp \(time) of session '\(id)' does not come after \(previous); timestamps must increase")
            }
            session.values.append(v)
            session.times.append(time)
            session.last = line
            sessions[id] = session
        }
        if order.isEmpty { throw DataError(file: path, line: 2, message: "no sessions: the file has a header but no rows") }
        var result: [LabeledSession] = []
        for id in order {
            guard let session = sessions[id] else { continue }
            let recording = MotionRecordingReader.assemble(session.values, times: session.times, coreMotion: coreMotion,
                                                           rate: windowing.rate, window: windowing.window)
            let longest = recording.segments.map(\.count).max() ?? 0
            guard longest >= windowing.window else {
                throw DataError(file: path, line: session.first,
                                message: "session '\(id)' (lines \(session.first)–\(session.last)) has \(longest) samples; "
                                    + "one window needs \(windowing.window) (\(String(format: "%.2f", Double(windowing.window) / windowing.rate)) s)")
            }
            result.append(LabeledSession(id: id, label: session.label, segments: recording.segments, lines: session.first...session.last))
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
