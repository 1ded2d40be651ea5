import Foundation
import Models

/// One drawing of a dataset read for classification: its id, where it is, and the drawing or why it is unusable.
public struct DatasetDrawing: Sendable {
    /// The `drawing` column's value.
    public let id: String
    /// The `label` column's value (not used to classify).
    public let label: String
    /// The drawing's first and last lines.
    public let lines: ClosedRange<Int>
    /// The drawing, or the first problem found in its rows.
    public let drawing: Result<Drawing, DataError>
}

extension ShapeDataset {
    /// Every drawing of the file for classification, one item per drawing in file order. Unlike `read`, a bad
    /// row spoils only its own drawing: the item carries the error (file, line, column) and reading goes on.
    /// Errors that leave nothing to read — a missing file, a missing column, bytes that are not text — are thrown.
    public static func items(_ path: String, rasterizer: ShapeRasterizer = ShapeRasterizer()) throws(DataError) -> [DatasetDrawing] {
        var reader = try CSVReader(path: path)
        let columns = try reader.columns(["drawing", "label", "stroke", "x", "y"])
        let tColumn = reader.optionalColumn("t")
        var items: [DatasetDrawing] = []
        var current: (id: String, label: String, first: Int, last: Int, strokes: [Int: [DrawingPoint]], order: [Int], error: DataError?)?

        func close() {
            guard let open = current else { return }
            var result: Result<Drawing, DataError>
            if let error = open.error {
                result = .failure(error)
            } else {
                let drawing = Drawing(strokes: open.order.sorted().compactMap { open.strokes[$0] })
                result = .success(drawing)
                if let problem = rasterizer.problem(with: drawing) {
                    result = .failure(DataError(file: path, line: open.first, message: "drawing '\(open.id)' (lines \(open.first)–\(open.last)): \(problem)"))
                }
            }
            items.append(DatasetDrawing(id: open.id, label: open.label, lines: open.first...open.last, drawing: result))
            current = nil
        }

        while true {
            let before = reader.lineNumber
            let fields: [String]
            do {
                guard let next = try reader.next() else { break }
                fields = next
            } catch {
                // A row of the wrong width spoils the drawing it sits in; a reader that cannot move on ends the file.
                if current == nil { current = ("line \(reader.lineNumber)", "", reader.lineNumber, reader.lineNumber, [:], [], nil) }
                if current?.error == nil { current?.error = error }
                current?.last = reader.lineNumber
                if reader.lineNumber == before { break }
                continue
            }
            let line = reader.lineNumber
            let id = fields[columns[0]]
            if current?.id != id {
                close()
                current = (id, fields[columns[1]].trimmingCharacters(in: .whitespaces), line, line, [:], [], nil)
            }
            current?.last = line
            guard current?.error == nil else { continue }
            do throws(DataError) {
                let strokeValue = try reader.number(fields[columns[2]], column: columns[2])
                guard strokeValue >= 0, strokeValue == strokeValue.rounded(), strokeValue < 1_000_000 else {
                    throw DataError(file: path, line: line, column: (columns[2] + 1, "stroke"),
                                    message: "\(fields[columns[2]]) is not a stroke index (0, 1, 2, …)")
                }
                let point = DrawingPoint(
                    x: try reader.number(fields[columns[3]], column: columns[3]),
                    y: try reader.number(fields[columns[4]], column: columns[4]),
                    t: try tColumn.map { column throws(DataError) in try reader.number(fields[column], column: column) })
                let stroke = Int(strokeValue)
                if current?.strokes[stroke] == nil { current?.order.append(stroke) }
                current?.strokes[stroke, default: []].append(point)
            } catch {
                current?.error = error
            }
        }
        close()
        if items.isEmpty { throw DataError(file: path, line: 2, message: "no drawings: the file has a header but no rows") }
        return items
    }
}
