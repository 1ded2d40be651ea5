import DataFiles
import Foundation

@testable import Datasets
@testable import Models

// The naive twin of the shape dataset reader's in-place parsing (`DatasetLayout.parse`, runs of lines parsed in
// parallel): the rows read one at a time by `CSVReader` on one thread. A test oracle only, never a production path.
extension ShapeDataset {
    /// `drawings(_:threads:checkLabels:makeWorker:)` read row by row by `CSVReader` (`DatasetLayout.groups`), on this
    /// thread: the same header, the same handling of scattered ids, only the rows read otherwise.
    static func drawingsRowByRow<Value: Sendable>(
        _ path: String, checkLabels: Bool = false, makeWorker: @escaping @Sendable () -> (DatasetDrawingRecord) -> Value
    ) throws(DataError) -> [DatasetItem<Value>] {
        var (reader, layout) = try opened(try contents(of: path), path: path, checkLabels: checkLabels)
        let transform = makeWorker()
        let groups = try layout.groups(&reader)
        let items = groups.map { rows in
            let record = layout.finished(rows)
            return DatasetItem(id: record.id, label: record.label, lines: record.lines, value: transform(record))
        }
        return try scatteredRunsMarked(items, rowErrors: groups.map { $0.error != nil }, layout: layout, makeWorker: makeWorker)
    }
}

extension DatasetLayout {
    /// The drawings of `reader`'s rows, in order, each with its first problem, read one record at a time: the
    /// reference `ShapeDataset.drawings` is held to, whatever the file holds (quotes, a NUL, bytes that are not UTF-8,
    /// long lines).
    ///
    /// A row that cannot be split into fields spoils the drawing it sits in, as `nextResult` reports it; an error
    /// reading the file itself is thrown.
    func groups(_ reader: inout CSVReader) throws(DataError) -> [PendingRows] {
        var groups: [PendingRows] = []
        func open(_ id: String, label: String, fromRow: Bool, line: Int) {
            groups.append(PendingRows(id: id, label: label, labelFromRow: fromRow, first: line, last: line, error: nil, points: [], strokes: []))
        }
        while true {
            let more: Bool
            do {
                more = try reader.advance()
            } catch  where error.kind == .invalid {
                // A row with the wrong number of fields still names its drawing: a new one is reported under its own
                // id. A row that cannot be split at all (a NUL, bytes that are not UTF-8) spoils the drawing above it.
                let line = reader.lineNumber
                if let id = reader.fieldOfMiscountedRecord(self.id), groups.last?.id != id {
                    open(id, label: reader.fieldOfMiscountedRecord(label).map(Self.trimmed) ?? "", fromRow: false, line: line)
                } else if groups.isEmpty {
                    open("line \(line)", label: "", fromRow: false, line: line)
                }
                if groups[groups.count - 1].error == nil { groups[groups.count - 1].error = error }
                groups[groups.count - 1].last = line
                continue
            }
            guard more else { break }
            let line = reader.lineNumber
            let id = reader.field(self.id), rowLabel = Self.trimmed(reader.field(label))
            if groups.last?.id != id {
                open(id, label: rowLabel, fromRow: true, line: line)
                groups[groups.count - 1].error = emptyLabelError(rowLabel, line: line)
            }
            let index = groups.count - 1
            groups[index].last = line
            guard groups[index].error == nil else { continue }
            do throws(DataError) {
                if groups[index].labelFromRow, let error = labelError(id: id, groupLabel: groups[index].label, label: rowLabel, line: line) {
                    throw error
                }
                let strokeValue = try reader.number(column: stroke)
                guard strokeValue >= 0, strokeValue == strokeValue.rounded(), strokeValue < 1_000_000 else {
                    throw DataError(
                        file: path, line: line, column: (stroke + 1, "stroke"),
                        message: "\(reader.field(stroke)) is not a stroke index (0, 1, 2, …)")
                }
                let point = DrawingPoint(
                    x: try coordinate(reader, column: x),
                    y: try coordinate(reader, column: y),
                    t: try t.map { column throws(DataError) in try reader.number(column: column) })
                groups[index].points.append(point)
                groups[index].strokes.append(Int32(strokeValue))
            } catch {
                groups[index].error = error
            }
        }
        return groups
    }

    /// Field `column` of the record `reader` read, as a coordinate: a finite number within `Drawing.largestCoordinate`.
    func coordinate(_ reader: CSVReader, column: Int) throws(DataError) -> Double {
        let value = try reader.number(column: column)
        if let problem = Drawing.coordinateProblem(value) {
            throw DataError(file: path, line: reader.lineNumber, column: (column + 1, reader.header[column]), message: problem)
        }
        return value
    }
}
