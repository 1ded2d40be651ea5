import Foundation


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
    /// Errors that leave nothing to read — a missing file, a missing column, a failing disk — are thrown.
    /// With `threads` above 1, an unquoted file is split into runs of lines parsed in parallel. With
    /// `checkLabels` (for labelled data: `evaluate`), an empty label or one that changes within a drawing is that
    /// drawing's problem.
    ///
    /// A drawing whose rows are not together — its id appears again after other drawings — is not classified:
    /// each of its runs of rows is an item whose error names all its runs' lines, since neither run is the whole
    /// drawing and one answer under its name would hide the other.
    public static func items(
        _ path: String, rasterizer: ShapeRasterizer = ShapeRasterizer(), threads: Int = 1, checkLabels: Bool = false
    ) throws(DataError) -> [DatasetDrawing] {
        try pendingDrawings(path, threads: threads, checkLabels: checkLabels).drawings.map { $0.finished(path: path, rasterizer: rasterizer) }
    }

    /// `drawings` with an error on each run of rows of a drawing whose id appears again after other drawings
    /// (one that has an error already keeps it): the drawing's id, where it is, and where its other runs are.
    static func scatteredDrawingsMarked(_ drawings: [PendingDrawing], path: String, idColumn: Int) -> [PendingDrawing] {
        var runs: [String: [Int]] = [:]
        for (index, drawing) in drawings.enumerated() { runs[drawing.id, default: []].append(index) }
        var result = drawings
        for (id, indices) in runs where indices.count > 1 {
            let message = DrawingReader.scatteredMessage(id: id, runs: indices.map { drawings[$0].first...drawings[$0].last })
            for index in indices where result[index].error == nil {
                result[index].error = DataError(file: path, line: drawings[index].first, column: (idColumn + 1, "drawing"), message: message)
            }
        }
        return result
    }

    /// The file's drawings in order, each with its first problem, and where its columns are. With `checkLabels`,
    /// an empty label or a label that changes within a drawing is a drawing's problem too.
    static func pendingDrawings(_ path: String, threads: Int, checkLabels: Bool) throws(DataError) -> (drawings: [PendingDrawing], layout: RowLayout) {
        var reader = try CSVReader(path: path)
        let layout = RowLayout(path: path, columns: try reader.columns(["drawing", "label", "stroke", "x", "y"]),
                               t: reader.optionalColumn("t"), checkLabels: checkLabels)
        var pending: [PendingDrawing]
        if threads > 1, let parts = try reader.split(into: threads) {
            let results = parallelMap(count: parts.count, threads: parts.count) { index in
                var part = CSVReader(parts[index])
                return Result { () throws(DataError) in try layout.groups(&part) }
            }
            pending = []
            for result in results {
                let groups = try result.get()
                // A drawing cut by a part boundary continues in the next part.
                if let last = pending.last, let first = groups.first, last.id == first.id {
                    pending[pending.count - 1] = last.merged(with: first)
                    pending += groups.dropFirst()
                } else {
                    pending += groups
                }
            }
        } else {
            pending = try layout.groups(&reader)
        }
        if pending.isEmpty { throw DataError(file: path, line: 2, message: "no drawings: the file has a header but no rows") }
        return (scatteredDrawingsMarked(pending, path: path, idColumn: layout.columns[0]), layout)
    }
}

/// Where a shape dataset's fields are, and whether labels are checked.
struct RowLayout: Sendable {
    let path: String
    let columns: [Int]
    let t: Int?
    let checkLabels: Bool

    /// The drawings of `reader`'s rows, in order, each with its first problem.
    ///
    /// Rows are read in place (`advance`, `field`, `number(column:)`): no array of strings per row, and plain
    /// decimals parsed from the bytes. A row that cannot be split into fields spoils the drawing it sits in, as
    /// `nextResult` reports it; an error reading the file itself is thrown.
    func groups(_ reader: inout CSVReader) throws(DataError) -> [PendingDrawing] {
        var groups: [PendingDrawing] = []
        while true {
            let more: Bool
            do {
                more = try reader.advance()
            } catch where error.kind == .invalid {
                // A row with the wrong number of fields still names its drawing: a new one is reported under its own
                // id. A row that cannot be split at all (a NUL, bytes that are not UTF-8) spoils the drawing above it.
                let line = reader.lineNumber
                if let id = reader.fieldOfMiscountedRecord(columns[0]), groups.last?.id != id {
                    groups.append(PendingDrawing(id: id, label: reader.fieldOfMiscountedRecord(columns[1]).map(Self.trimmed) ?? "", first: line))
                } else if groups.isEmpty {
                    groups.append(PendingDrawing(id: "line \(line)", label: "", first: line))
                }
                if groups[groups.count - 1].error == nil { groups[groups.count - 1].error = error }
                groups[groups.count - 1].last = line
                continue
            }
            guard more else { break }
            let line = reader.lineNumber
            let id = reader.field(columns[0]), label = Self.trimmed(reader.field(columns[1]))
            if groups.last?.id != id {
                groups.append(PendingDrawing(id: id, label: label, first: line))
                if checkLabels && label.isEmpty {
                    groups[groups.count - 1].error = DataError(file: path, line: line, column: (columns[1] + 1, "label"), message: "empty label")
                }
            }
            let index = groups.count - 1
            groups[index].last = line
            guard groups[index].error == nil else { continue }
            do throws(DataError) {
                if checkLabels && label != groups[index].label {
                    throw DataError(file: path, line: line, column: (columns[1] + 1, "label"),
                                    message: "drawing '\(id)' is labelled '\(groups[index].label)' above and '\(label)' here")
                }
                let strokeValue = try reader.number(column: columns[2])
                guard strokeValue >= 0, strokeValue == strokeValue.rounded(), strokeValue < 1_000_000 else {
                    throw DataError(file: path, line: line, column: (columns[2] + 1, "stroke"),
                                    message: "\(reader.field(columns[2])) is not a stroke index (0, 1, 2, …)")
                }
                let point = DrawingPoint(
                    x: try coordinate(reader, column: columns[3]),
                    y: try coordinate(reader, column: columns[4]),
                    t: try t.map { column throws(DataError) in try reader.number(column: column) })
                groups[index].add(point, stroke: Int(strokeValue))
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

    /// `text` without leading and trailing white space (`CharacterSet.whitespaces`), calling Foundation only when
    /// an end is not a plain ASCII character other than space and tab.
    static func trimmed(_ text: String) -> String {
        let plain = { (scalar: Unicode.Scalar?) in scalar.map { $0.isASCII && $0 != " " && $0 != "\t" } ?? true }
        if plain(text.unicodeScalars.first) && plain(text.unicodeScalars.last) { return text }
        return text.trimmingCharacters(in: .whitespaces)
    }
}

/// A drawing's rows as read so far.
struct PendingDrawing: Sendable {
    let id: String
    let label: String
    let first: Int
    var last: Int
    var strokes: [Int: [DrawingPoint]] = [:]
    var order: [Int] = []
    var error: DataError?

    init(id: String, label: String, first: Int) {
        self.id = id
        self.label = label
        self.first = first
        last = first
    }

    mutating func add(_ point: DrawingPoint, stroke: Int) {
        if strokes[stroke] == nil { order.append(stroke) }
        strokes[stroke, default: []].append(point)
    }

    /// This drawing continued by `next` (its rows in the following part of the file).
    func merged(with next: PendingDrawing) -> PendingDrawing {
        var result = self
        result.last = next.last
        result.error = error ?? next.error
        for stroke in next.order {
            for point in next.strokes[stroke] ?? [] { result.add(point, stroke: stroke) }
        }
        return result
    }

    /// The item: the drawing, or its first problem (a row's, or why it cannot be drawn).
    func finished(path: String, rasterizer: ShapeRasterizer) -> DatasetDrawing {
        var result: Result<Drawing, DataError>
        if let error {
            result = .failure(error)
        } else {
            let drawing = Drawing(strokes: order.sorted().compactMap { strokes[$0] })
            result = .success(drawing)
            if let problem = rasterizer.problem(with: drawing) {
                result = .failure(DataError(file: path, line: first, message: "drawing '\(id)' (lines \(first)–\(last)): \(problem)"))
            }
        }
        return DatasetDrawing(id: id, label: label, lines: first...last, drawing: result)
    }
}
