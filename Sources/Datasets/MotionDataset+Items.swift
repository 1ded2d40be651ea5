import DataFiles
import Foundation
import Models

/// One session of a motion dataset read for classification: its id, where it is, and the recording or why it is
/// unusable.
package struct DatasetSession: Sendable {
    /// The `session` column's value.
    package let id: String
    /// The `label` column's value, when the file has one.
    package let label: String?
    /// The session's first and last lines.
    package let lines: ClosedRange<Int>
    /// The recording, or the first problem found in its rows.
    package let recording: Result<MotionRecording, DataError>
}

extension MotionDataset {
    /// Every session of the file for classification, in order of first appearance, each converted like a
    /// recording. Unlike `read`, a bad row spoils only its own session: the item carries the error and reading
    /// goes on. Errors that leave nothing to read (missing file, missing columns, a failing disk) are thrown.
    package static func sessions(_ path: String, rate: Double = 50, window: Int = 256) throws(DataError) -> [DatasetSession] {
        var reader = try CSVReader(path: path)
        let idColumn = try reader.columns(["session"])[0]
        guard let columns = MotionColumns(header: reader.header) else {
            throw DataError(
                file: path, line: 1,
                message: "missing columns: a motion dataset needs gravity.x/y/z and "
                    + "userAcceleration.x/y/z (Core Motion), or acc.x/y/z (raw accelerometer), besides session")
        }
        let (coreMotion, valueColumns, spinColumns, timeColumn) = (columns.coreMotion, columns.values, columns.spins, columns.time)
        let labelColumn = reader.optionalColumn("label")
        var order: [String] = []
        // Per session: its label, first and last lines, its rows' nine sensor values each (one flat array), times.
        var sessions: [String: (label: String?, first: Int, last: Int, values: [Double], times: [Double], error: DataError?)] = [:]
        var lastId: String?
        // Each row is read in place (no strings but the id and label), as `MotionRecordingReader` reads a file.
        while true {
            do throws(DataError) {
                guard try reader.advance() else { break }
            } catch  where error.kind == .invalid {
                // A row with the wrong number of fields still names its session; one that cannot be split into
                // fields at all spoils the session above it.
                let id = reader.fieldOfMiscountedRecord(idColumn) ?? lastId ?? "line \(reader.lineNumber)"
                if sessions[id] == nil {
                    order.append(id)
                    sessions[id] = (nil, reader.lineNumber, reader.lineNumber, [], [], nil)
                }
                if sessions[id]?.error == nil { sessions[id]?.error = error }
                lastId = id
                continue
            }
            let line = reader.lineNumber, id = reader.field(idColumn)
            let label = labelColumn.map { reader.field($0).trimmingCharacters(in: .whitespaces) }
            lastId = id
            // Taken out of the dictionary while it grows, so that its arrays have one owner and append in place
            // (a copy left in the dictionary made every row copy the session's rows: quadratic in its length).
            let existing = sessions.removeValue(forKey: id)
            if existing == nil { order.append(id) }
            var session = existing ?? (label, line, line, [], [], nil)
            session.last = line
            if session.error == nil {
                do throws(DataError) {
                    if let labelColumn, let label {
                        if label.isEmpty { throw DataError(file: path, line: line, column: (labelColumn + 1, "label"), message: "empty label") }
                        if label != session.label {
                            throw DataError(
                                file: path, line: line, column: (labelColumn + 1, "label"),
                                message: "session '\(id)' is labelled '\(session.label ?? "")' above and '\(label)' here")
                        }
                    }
                    let rows = session.values.count / 9
                    try MotionRecordingReader.appendSensorValues(reader: reader, values: valueColumns, spins: spinColumns, to: &session.values)
                    let time = try timeColumn.map { column throws(DataError) in try reader.number(column: column) } ?? Double(rows) / rate
                    if let problem = MotionSampleRules.timeProblem(time, after: session.times.last, word: "timestamp") {
                        throw DataError(
                            file: path, line: line, column: timeColumn.map { ($0 + 1, "timestamp") }, message: "session '\(id)': \(problem)")
                    }
                    session.times.append(time)
                } catch {
                    session.error = error
                }
            }
            sessions[id] = session
        }
        if order.isEmpty { throw DataError(file: path, line: 2, message: "no sessions: the file has a header but no rows") }
        return order.compactMap { id in
            guard let session = sessions[id] else { return nil }
            var recording: Result<MotionRecording, DataError>
            let assumedRate = timeColumn == nil ? rate : nil
            if let error = session.error {
                recording = .failure(error)
            } else if let problem = MotionRecordingReader.rateProblem(
                sourceRate: MotionRecordingReader.medianRate(session.times),
                assumedRate: assumedRate)
            {
                // Refused before resampling: a session too slow to see a stride would only be upsampled into noise.
                recording = .failure(
                    DataError(file: path, line: session.first, message: "session '\(id)' (lines \(session.first)–\(session.last)): \(problem)"))
            } else if case let .failure(error) = Result(catching: { () throws(DataError) in
                try MotionRecordingReader.checkSpan(session.times, rate: rate, window: window, file: path, line: session.first)
            }) {
                recording = .failure(error)
            } else {
                var assembled = MotionRecordingReader.assemble(
                    rows: session.values, times: session.times, coreMotion: coreMotion, rate: rate, window: window,
                    assumedRate: assumedRate)
                assembled.source = "\(path)#\(id)"
                recording = .success(assembled)
            }
            return DatasetSession(id: id, label: session.label, lines: session.first...session.last, recording: recording)
        }
    }
}
