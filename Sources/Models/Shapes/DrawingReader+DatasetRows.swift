/// Where a shape dataset's fields are, and how a run of its lines becomes drawings (`DrawingReader.readDataset`).
struct DatasetLayout: Sendable {
    let path: String
    let header: [String]
    let id: Int
    let label: Int
    let stroke: Int
    let x: Int
    let y: Int
    let t: Int?
    /// Whether an empty label, or a label that changes within a drawing, is the drawing's problem (labelled data:
    /// training and `evaluate`).
    let checkLabels: Bool

    /// What a run of lines gives: its first drawing's rows (which may continue the run before), the drawings wholly
    /// inside it as the worker made them, and its last drawing's rows (which may continue in the next run).
    struct ChunkResult<Value: Sendable>: Sendable {
        var head: PendingRows?
        var items: [DatasetItem<Value>] = []
        /// Whether each of `items` has an error from its rows (which a scattered id does not replace).
        var rowErrors: [Bool] = []
        var tail: PendingRows?
        /// The run starts with a row that names no drawing (too few fields): it spoils the drawing open before the
        /// run, which only the run before knows.
        var needsSeed = false
        /// The run holds what only `CSVReader`'s row-by-row reading handles (see `readDataset`).
        var anomaly = false
    }

    /// The rows of a run of lines as drawings: `ShapeDataset`'s reading, row by row, in place. `seed` is what was
    /// open before the run: `nil` when unknown (a row naming no drawing then ends the parse with `needsSeed`),
    /// `.fileStart` for the first run.
    func parse<Value: Sendable>(
        _ bytes: UnsafeBufferPointer<UInt8>, _ chunk: DatasetChunk, seed: DatasetSeed?,
        transform: @escaping (DatasetDrawingRecord) -> Value
    ) -> ChunkResult<Value> {
        var parser = DatasetRowParser(layout: self, bytes: bytes, transform: transform)
        return parser.run(chunk, seed: seed)
    }

    /// The end of the line at `start` (its LF, a CR no LF follows, or the end of `bytes`: the file's last line may
    /// have no line end) and its commas, found byte by byte (growing `fieldEnds` as needed); `nil` when the line
    /// holds a quote or a NUL.
    static func scanSlowly(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, fieldEnds: inout [Int]) -> (newline: Int, fields: Int)? {
        var fields = 0, i = start
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: "\""), 0:
                return nil
            case UInt8(ascii: ","):
                if fields + 1 >= fieldEnds.count { fieldEnds += [Int](repeating: 0, count: fieldEnds.count) }
                fieldEnds[fields] = i
                fields += 1
            case UInt8(ascii: "\n"):
                return (i, fields)
            case UInt8(ascii: "\r") where i + 1 == bytes.count || bytes[i + 1] != UInt8(ascii: "\n"):
                return (i, fields)
            default:
                break
            }
            i += 1
        }
        return (bytes.count, fields)
    }

    /// The field at `range` of column `column` as a finite number: whole numbers and plain decimals straight from
    /// the bytes (`DecimalText`), anything else as `CSVReader.number` reads it.
    @inline(__always)
    func number(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, column: Int, line: Int) throws(DataError) -> Double {
        // Whole numbers of up to 15 digits (what pens and clocks mostly write) are exact in a Double as they are.
        if !range.isEmpty && range.count <= 15 {
            var value: UInt64 = 0, plain = true
            for k in range {
                let digit = bytes[k] &- UInt8(ascii: "0")
                if digit > 9 {
                    plain = false
                    break
                }
                value = value &* 10 &+ UInt64(digit)
            }
            if plain { return Double(value) }
        }
        if let value = DecimalText.double(UnsafeBufferPointer(rebasing: bytes[range])) { return value }
        return try CSVReader.number(
            String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self),
            file: path, line: line, column: (column + 1, header[column]))
    }

    /// The field as a coordinate: a finite number within `Drawing.largestCoordinate`.
    func coordinate(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, column: Int, line: Int) throws(DataError) -> Double {
        let value = try number(bytes, range, column: column, line: line)
        if let problem = Drawing.coordinateProblem(value) {
            throw DataError(file: path, line: line, column: (column + 1, header[column]), message: problem)
        }
        return value
    }

    /// The record of a drawing's rows: its first row error, or the drawing (strokes by index, points in file
    /// order), or why no recognizer can see it.
    func finished(id: String, label: String, first: Int, last: Int, error: DataError?, points: [DrawingPoint], strokes: [Int32])
        -> DatasetDrawingRecord
    {
        let lines = first...last
        if let error { return DatasetDrawingRecord(id: id, label: label, lines: lines, drawing: .failure(error)) }
        let drawing = Self.drawing(points, strokes: strokes)
        if let problem = ShapeRecognizer.problem(with: drawing) {
            return DatasetDrawingRecord(
                id: id, label: label, lines: lines,
                drawing: .failure(
                    DataError(file: path, line: first, message: "drawing '\(id)' (lines \(first)–\(last)): \(problem)")))
        }
        return DatasetDrawingRecord(id: id, label: label, lines: lines, drawing: .success(drawing))
    }

    /// `finished` for rows kept whole.
    func finished(_ rows: PendingRows) -> DatasetDrawingRecord {
        finished(id: rows.id, label: rows.label, first: rows.first, last: rows.last, error: rows.error, points: rows.points, strokes: rows.strokes)
    }

    /// The error of a row labelled `label` in drawing `id` labelled `groupLabel` above (with `checkLabels`), or `nil`.
    func labelError(id: String, groupLabel: String, label: String, line: Int) -> DataError? {
        guard checkLabels, label != groupLabel else { return nil }
        return DataError(
            file: path, line: line, column: (self.label + 1, "label"),
            message: "drawing '\(id)' is labelled '\(groupLabel)' above and '\(label)' here")
    }

    /// The error of a drawing whose first row has an empty label (with `checkLabels`), or `nil`.
    func emptyLabelError(_ label: String, line: Int) -> DataError? {
        guard checkLabels, label.isEmpty else { return nil }
        return DataError(file: path, line: line, column: (self.label + 1, "label"), message: "empty label")
    }

    /// `text` without leading and trailing white space (`CharacterSet.whitespaces`), calling Foundation only when
    /// an end is not a plain ASCII character other than space and tab.
    static func trimmed(_ text: String) -> String {
        let plain = { (scalar: Unicode.Scalar?) in scalar.map { $0.isASCII && $0 != " " && $0 != "\t" } ?? true }
        if plain(text.unicodeScalars.first) && plain(text.unicodeScalars.last) { return text }
        return text.trimmingCharacters(in: .whitespaces)
    }

    /// The points as strokes: one per stroke index, in increasing order, each with its points in file order.
    static func drawing(_ points: [DrawingPoint], strokes: [Int32]) -> Drawing {
        precondition(points.count == strokes.count, "DatasetLayout.drawing: \(points.count) points, \(strokes.count) stroke indices")
        var result: [[DrawingPoint]] = []
        if !zip(strokes, strokes.dropFirst()).contains(where: { $0 > $1 }) {
            // Strokes in order (as datasets write them): each a run of points.
            var start = 0
            while start < points.count {
                var end = start + 1
                while end < points.count && strokes[end] == strokes[start] { end += 1 }
                result.append(Array(points[start..<end]))
                start = end
            }
            return Drawing(strokes: result)
        }
        let order = points.indices.sorted { strokes[$0] < strokes[$1] || (strokes[$0] == strokes[$1] && $0 < $1) }
        var start = 0
        while start < order.count {
            var end = start + 1
            while end < order.count && strokes[order[end]] == strokes[order[start]] { end += 1 }
            result.append(order[start..<end].map { points[$0] })
            start = end
        }
        return Drawing(strokes: result)
    }
}

/// The state of `DatasetLayout.parse` over one run of lines: the drawing open and what the run has given so far.
/// (A struct with mutating methods rather than local functions capturing variables: those would be boxed and
/// every access checked for exclusivity at run time, a tenth of the time of parsing.)
struct DatasetRowParser<Value: Sendable> {
    let layout: DatasetLayout
    let bytes: UnsafeBufferPointer<UInt8>
    let transform: (DatasetDrawingRecord) -> Value
    var result = DatasetLayout.ChunkResult<Value>()
    var fieldEnds: [Int]
    var points: [DrawingPoint] = []
    var strokes: [Int32] = []
    // The drawing open: its id (as text, and where its bytes are unless it came from elsewhere), lines, first error.
    var open = false
    var groups = 0
    var groupID = ""
    var groupLabel = ""
    /// Whether the open drawing's label came from a row with the header's number of fields (one that a label is
    /// checked against).
    var labelFromRow = false
    var idRange: Range<Int>?
    var first = 0
    var last = 0
    var rowError: DataError?
    var hasError = false

    init(layout: DatasetLayout, bytes: UnsafeBufferPointer<UInt8>, transform: @escaping (DatasetDrawingRecord) -> Value) {
        self.layout = layout
        self.bytes = bytes
        self.transform = transform
        fieldEnds = [Int](repeating: 0, count: layout.header.count + 1)
    }

    /// Ends the open drawing: the run's head (kept as rows) or a drawing wholly inside the run (handed over).
    mutating func close() {
        guard open else { return }
        if groups == 1 {
            result.head = PendingRows(
                id: groupID, label: groupLabel, labelFromRow: labelFromRow, first: first, last: last, error: rowError,
                points: points, strokes: strokes)
        } else {
            let record = layout.finished(id: groupID, label: groupLabel, first: first, last: last, error: rowError, points: points, strokes: strokes)
            result.items.append(DatasetItem(id: record.id, label: record.label, lines: record.lines, value: transform(record)))
            result.rowErrors.append(hasError)
        }
    }

    /// Opens a drawing with id `id` (at `range` of the bytes, or `nil`) and label `label` on `line`.
    mutating func start(_ id: String, at range: Range<Int>?, label: String, fromRow: Bool, line: Int) {
        close()
        (open, groups, groupID, idRange, first, last, rowError, hasError) = (true, groups + 1, id, range, line, line, nil, false)
        (groupLabel, labelFromRow) = (label, fromRow)
        points.removeAll(keepingCapacity: true)
        strokes.removeAll(keepingCapacity: true)
    }

    /// Records the open drawing's first error.
    mutating func fail(_ error: DataError) {
        guard !hasError else { return }
        rowError = error
        hasError = true
    }

    /// Whether `range` holds the same bytes as the open drawing's id at `idRange`. (A static function of what it
    /// needs: a method of `self` called from the parsing loop made the compiler copy the whole parser, 554 bytes,
    /// for every row.)
    @inline(__always)
    static func isSameID(_ range: Range<Int>, as idRange: Range<Int>?, in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let idRange, idRange.count == range.count, let base = bytes.baseAddress else { return false }
        return memoryEqual(base + idRange.lowerBound, base + range.lowerBound, count: range.count)
    }

    /// Whether `range` holds the open drawing's id when its bytes differ (`isSameID`): different ids, unless either is
    /// not ASCII and the strings are equal.
    func isOpenIDAsText(_ range: Range<Int>) -> Bool {
        if idRange != nil && (range.allSatisfy { bytes[$0] < 0x80 } && groupID.utf8.allSatisfy { $0 < 0x80 }) { return false }
        return text(range) == groupID
    }

    /// Whether `count` bytes at `a` and `b` are equal, eight at a time.
    @inline(__always)
    static func memoryEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, count: Int) -> Bool {
        var k = 0
        while k + 8 <= count {
            if UnsafeRawPointer(a).loadUnaligned(fromByteOffset: k, as: UInt64.self)
                != UnsafeRawPointer(b).loadUnaligned(fromByteOffset: k, as: UInt64.self)
            {
                return false
            }
            k += 8
        }
        while k < count {
            if a[k] != b[k] { return false }
            k += 1
        }
        return true
    }

    /// The bytes at `range` as text (UTF-8, checked when the line was read).
    func text(_ range: Range<Int>) -> String { String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self) }

    /// Field `index` of the line starting at `lineStart` whose field ends are in `fieldEnds`.
    @inline(__always)
    func field(_ index: Int, lineStart: Int) -> Range<Int> { (index == 0 ? lineStart : fieldEnds[index - 1] + 1)..<fieldEnds[index] }

    /// Parses `chunk`.
    mutating func run(_ chunk: DatasetChunk, seed: DatasetSeed?) -> DatasetLayout.ChunkResult<Value> {
        if case let .drawing(id, label, seedError) = seed {
            (open, groups, groupID, idRange, first, last) = (true, 1, id, nil, chunk.firstLine, chunk.firstLine)
            (groupLabel, labelFromRow) = (label, true)
            if let seedError { fail(seedError) }
        }
        let header = layout.header.count
        var i = chunk.start, line = chunk.firstLine - 1
        while i < chunk.end {
            let lineStart = i
            // Capturing only `bytes`: a closure that captured `self` would copy the whole parser for every line.
            var scanned = fieldEnds.withUnsafeMutableBufferPointer { [bytes] in CSVReader.scanLine(bytes, from: lineStart, fieldEnds: $0) }
            if scanned.newline == nil {
                // A quote, a NUL, more fields than the header has, or the file's last line without a line end.
                guard let slow = DatasetLayout.scanSlowly(bytes, from: lineStart, fieldEnds: &fieldEnds) else {
                    result.anomaly = true
                    return result
                }
                scanned = (slow.newline, slow.fields, 0x80)
            }
            guard let newline = scanned.newline, newline - lineStart + 1 <= CSVReader.maximumLineBytes else {
                result.anomaly = true
                return result
            }
            let fields = scanned.fields
            line += 1
            i = newline + 1
            let lastStart = fields == 0 ? lineStart : fieldEnds[fields - 1] + 1
            let lastEnd = newline > lastStart && bytes[newline - 1] == UInt8(ascii: "\r") ? newline - 1 : newline
            if fields == 0 && lastEnd == lineStart { continue }  // a blank line
            if scanned.bits & 0x8080_8080_8080_8080 != 0,
                String(validating: UnsafeBufferPointer(rebasing: bytes[lineStart..<lastEnd]), as: UTF8.self) == nil
            {
                result.anomaly = true
                return result
            }
            fieldEnds[fields] = lastEnd

            guard fields + 1 == header else {
                // A row with the wrong number of fields starts a drawing of its own id, or spoils the one open.
                if layout.id <= fields {
                    let range = field(layout.id, lineStart: lineStart)
                    if !open || !(Self.isSameID(range, as: idRange, in: bytes) || isOpenIDAsText(range)) {
                        let label = layout.label <= fields ? DatasetLayout.trimmed(text(field(layout.label, lineStart: lineStart))) : ""
                        start(text(range), at: range, label: label, fromRow: false, line: line)
                    }
                } else if !open {
                    guard seed != nil else {
                        result.needsSeed = true
                        return result
                    }
                    start("line \(line)", at: nil, label: "", fromRow: false, line: line)
                }
                fail(DataError(file: layout.path, line: line, message: "\(fields + 1) fields, but the header has \(header)"))
                last = line
                continue
            }
            let idField = field(layout.id, lineStart: lineStart)
            if !open || !(Self.isSameID(idField, as: idRange, in: bytes) || isOpenIDAsText(idField)) {
                let label = DatasetLayout.trimmed(text(field(layout.label, lineStart: lineStart)))
                start(text(idField), at: idField, label: label, fromRow: true, line: line)
                if let error = layout.emptyLabelError(label, line: line) { fail(error) }
            }
            last = line
            guard !hasError else { continue }
            do throws(DataError) {
                if layout.checkLabels, labelFromRow,
                    let error = layout.labelError(
                        id: groupID, groupLabel: groupLabel,
                        label: DatasetLayout.trimmed(text(field(layout.label, lineStart: lineStart))), line: line)
                {
                    throw error
                }
                let strokeField = field(layout.stroke, lineStart: lineStart)
                let strokeValue = try layout.number(bytes, strokeField, column: layout.stroke, line: line)
                guard strokeValue >= 0, strokeValue == strokeValue.rounded(), strokeValue < 1_000_000 else {
                    throw DataError(
                        file: layout.path, line: line, column: (layout.stroke + 1, "stroke"),
                        message: "\(text(strokeField)) is not a stroke index (0, 1, 2, …)")
                }
                let x = try layout.coordinate(bytes, field(layout.x, lineStart: lineStart), column: layout.x, line: line)
                let y = try layout.coordinate(bytes, field(layout.y, lineStart: lineStart), column: layout.y, line: line)
                var t: Double?
                if let column = layout.t { t = try layout.number(bytes, field(column, lineStart: lineStart), column: column, line: line) }
                points.append(DrawingPoint(x: x, y: y, t: t))
                strokes.append(Int32(strokeValue))
            } catch {
                fail(error)
            }
        }
        if open {
            if groups == 1 {
                close()
            } else {
                result.tail = PendingRows(
                    id: groupID, label: groupLabel, labelFromRow: labelFromRow, first: first, last: last, error: rowError,
                    points: points, strokes: strokes)
            }
        }
        return result
    }
}

/// What was open before a run of lines, for parsing it again (`DatasetLayout.parse`).
enum DatasetSeed: Sendable {
    /// Nothing: the run starts the file.
    case fileStart
    /// A drawing with this id, label and first error.
    case drawing(id: String, label: String, error: DataError?)
}

/// A drawing's rows as read so far.
struct PendingRows: Sendable {
    let id: String
    let label: String
    /// Whether `label` came from a row with the header's number of fields (not from a malformed row).
    let labelFromRow: Bool
    let first: Int
    var last: Int
    var error: DataError?
    var points: [DrawingPoint]
    var strokes: [Int32]

    /// These rows continued by `next` (the same drawing's rows in the following run). With `layout.checkLabels`,
    /// `next` starting with another label is the drawing's error there, as reading row by row finds it.
    func joined(with next: PendingRows, layout: DatasetLayout) -> PendingRows {
        let labelError =
            next.labelFromRow && labelFromRow
            ? layout.labelError(id: id, groupLabel: label, label: next.label, line: next.first) : nil
        return PendingRows(
            id: id, label: label, labelFromRow: labelFromRow, first: first, last: next.last,
            error: error ?? labelError ?? next.error, points: points + next.points, strokes: strokes + next.strokes)
    }

    /// What a run that continues these rows starts with.
    func seed() -> DatasetSeed { .drawing(id: id, label: label, error: error) }
}
