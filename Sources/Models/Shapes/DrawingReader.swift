import DataFiles
import Foundation

/// Reads one drawing from CSV: columns `x,y`, optional `t` (ms) and `stroke` (0-based; absent means one
/// stroke), in any order, other columns ignored. `-` reads standard input.
public enum DrawingReader {
    /// The most points a drawing may have: far beyond any touch screen's, and a guard against feeding a
    /// dataset by mistake.
    public static let maximumPoints = 1_000_000

    /// `field` of column `index` as a coordinate: a finite number within `Drawing.largestCoordinate`.
    static func coordinate(_ field: String, column index: Int, reader: CSVReader) throws(DataError) -> Double {
        let value = try reader.number(field, column: index)
        if let problem = Drawing.coordinateProblem(value) {
            throw DataError(file: reader.file, line: reader.lineNumber, column: (index + 1, reader.header[index]), message: problem)
        }
        return value
    }

    /// The drawing in the file, checked: finite coordinates within `Drawing.largestCoordinate`, whole non-negative stroke indices, at least one point.
    public static func read(_ path: String) throws(DataError) -> Drawing {
        try read(CSVReader(path: path))
    }

    /// The drawing in `bytes` (a drawing file's text, as `read(_:)` takes it), named `name` in the errors.
    public static func read(csv bytes: Data, name: String) throws(DataError) -> Drawing {
        try read(CSVReader(file: name, bytes: bytes))
    }

    /// Refuses, by what it is, a file that is not one drawing: a motion recording (with the command that reads it)
    /// or a shape dataset (drawing and label columns).
    private static func refuseOtherFiles(_ reader: borrowing CSVReader) throws(DataError) {
        let path = reader.file
        let points = reader.optionalColumn("x") != nil && reader.optionalColumn("y") != nil
        if let motion = MotionColumns(header: reader.header), !points || motion.sensorLogger {
            throw DataError(
                file: path, line: 1,
                message: "this is a motion recording (a motion sensor's columns), not a drawing of x,y points; "
                    + "`classify motion \(path)` reads it")
        }
        // A file without x or y is left to `columns(_:)`, which names what is missing.
        if points && reader.optionalColumn("drawing") != nil && reader.optionalColumn("label") != nil {
            throw DataError(
                file: path, line: 1,
                message: "this is a dataset (it has drawing and label columns); "
                    + "classify one drawing at a time, or use `classify evaluate shape --data \(path)`")
        }
    }

    /// The drawing `reader` holds (one path for files and bytes).
    static func read(_ reader: consuming CSVReader) throws(DataError) -> Drawing {
        var reader = reader
        let path = reader.file
        try refuseOtherFiles(reader)
        let columns = try reader.columns(["x", "y"])
        let tColumn = reader.optionalColumn("t"), strokeColumn = reader.optionalColumn("stroke")
        var strokes: [Int: [DrawingPoint]] = [:]
        var order: [Int] = []
        var count = 0
        while let fields = try reader.next() {
            var stroke = 0
            if let strokeColumn {
                let value = try reader.number(fields[strokeColumn], column: strokeColumn)
                guard value >= 0, value == value.rounded(), value < 1_000_000 else {
                    throw DataError(
                        file: path, line: reader.lineNumber, column: (strokeColumn + 1, "stroke"),
                        message: "\(fields[strokeColumn]) is not a stroke index (0, 1, 2, …)")
                }
                stroke = Int(value)
            }
            let point = DrawingPoint(
                x: try coordinate(fields[columns[0]], column: columns[0], reader: reader),
                y: try coordinate(fields[columns[1]], column: columns[1], reader: reader),
                t: try tColumn.map { column throws(DataError) in try reader.number(fields[column], column: column) })
            if strokes[stroke] == nil { order.append(stroke) }
            strokes[stroke, default: []].append(point)
            count += 1
            if count > maximumPoints {
                throw DataError(file: path, line: reader.lineNumber, message: "more than \(maximumPoints) points; is this one drawing?")
            }
        }
        guard count > 0 else { throw DataError(file: path, line: 2, message: "no points: the file has a header but no rows") }
        return Drawing(strokes: order.sorted().compactMap { strokes[$0] })
    }
}
