import DataFiles
import Models

/// Where a shape dataset's fields are, and how a run of its lines becomes drawings (`ShapeDataset.drawings`).
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
        /// The run starts with a row that names no drawing (too few fields, or one that cannot be read): it spoils the
        /// drawing open before the run, which only the run before knows.
        var needsSeed = false
        /// The run holds a quote and was parsed without quotes (see `parse`): the parse stopped there.
        var hasQuote = false
        /// How many more lines the run's rows took than it has: a row that cannot be read stops at a bad byte and
        /// the rest of its line is read as a line of its own, as `CSVReader` reads on (see `CSVRecordGrammar`), so the runs
        /// after this one start that many lines further on.
        var extraLines = 0
    }

    /// The rows of a run of lines as drawings: `ShapeDataset`'s reading, row by row, in place — plain lines straight
    /// from the bytes, any other record (a quote, a NUL, bytes that are not UTF-8, a line too long) read byte by byte
    /// by the grammar `CSVReader` reads it with (`CSVRecordGrammar`). `seed` is what was open before the run: `nil` when unknown (a row
    /// naming no drawing then ends the parse with `needsSeed`), `.fileStart` for the first run. With `quotes` false
    /// (a run of a file cut at line ends, which a quoted field could cross) the parse stops at a quote with
    /// `hasQuote`.
    func parse<Value: Sendable>(
        _ bytes: UnsafeBufferPointer<UInt8>, _ chunk: DatasetChunk, seed: DatasetSeed?, quotes: Bool,
        transform: @escaping (DatasetDrawingRecord) -> Value
    ) -> ChunkResult<Value> {
        var parser = DatasetRowParser(layout: self, bytes: bytes, transform: transform)
        return parser.run(chunk, seed: seed, quotes: quotes)
    }

    /// The record of a drawing's rows: its first row error, or the drawing (strokes by index, points in file
    /// order), or why no recognizer can see it.
    func finished(id: String, label: String, first: Int, last: Int, error: DataError?, points: [DrawingPoint], strokes: [Int32])
        -> DatasetDrawingRecord
    {
        let lines = first...last
        if let error { return DatasetDrawingRecord(id: id, label: label, lines: lines, drawing: .failure(error)) }
        if points.count > DrawingReader.maximumPoints {
            return DatasetDrawingRecord(
                id: id, label: label, lines: lines,
                drawing: .failure(
                    DataError(
                        file: path, line: min(first + DrawingReader.maximumPoints, last),
                        message: "drawing '\(id)' has more than \(DrawingReader.maximumPoints) points; is this one drawing?")
                ))
        }
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
    /// Whether the run was parsed knowing what was open before it.
    var seeded = false

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

    /// Whether `range` of `source` (the file's bytes, or a record read byte by byte) holds the same bytes as the open
    /// drawing's id at `idRange` of the file's `bytes`. (A static function of what it needs: a method of `self` called
    /// from the parsing loop made the compiler copy the whole parser, 554 bytes, for every row.)
    @inline(__always)
    static func isSameID(
        _ range: Range<Int>, of source: UnsafeBufferPointer<UInt8>, as idRange: Range<Int>?, in bytes: UnsafeBufferPointer<UInt8>
    ) -> Bool {
        guard let idRange, idRange.count == range.count, let base = bytes.baseAddress, let row = source.baseAddress else { return false }
        return memoryEqual(base + idRange.lowerBound, row + range.lowerBound, count: range.count)
    }

    /// Whether `range` of `source` holds the open drawing's id when its bytes differ (`isSameID`): different ids,
    /// unless either is not ASCII and the strings are equal (or the open id's bytes are not in the file).
    func isOpenIDAsText(_ range: Range<Int>, in source: UnsafeBufferPointer<UInt8>) -> Bool {
        if idRange != nil && (range.allSatisfy { source[$0] < 0x80 } && groupID.utf8.allSatisfy { $0 < 0x80 }) { return false }
        return Self.text(source, range) == groupID
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

    /// The bytes at `range` of `source` as text (UTF-8, checked when the line was read).
    static func text(_ source: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: source[range]), as: UTF8.self)
    }

    /// Field `index` of the line starting at `lineStart` whose field ends are in `fieldEnds`.
    @inline(__always)
    func field(_ index: Int, lineStart: Int) -> Range<Int> { (index == 0 ? lineStart : fieldEnds[index - 1] + 1)..<fieldEnds[index] }

    /// Parses `chunk`, reading quoted fields if `quotes` (see `DatasetLayout.parse`).
    mutating func run(_ chunk: DatasetChunk, seed: DatasetSeed?, quotes: Bool) -> DatasetLayout.ChunkResult<Value> {
        if case let .drawing(id, label, seedError) = seed {
            (open, groups, groupID, idRange, first, last) = (true, 1, id, nil, chunk.firstLine, chunk.firstLine)
            (groupLabel, labelFromRow) = (label, true)
            if let seedError { fail(seedError) }
        }
        seeded = seed != nil
        let header = layout.header.count
        var i = chunk.start, line = chunk.firstLine - 1
        // The last record read byte by byte, and a copy the rows below read it from (freed at the end).
        var record: [UInt8] = []
        var copied = UnsafeMutableBufferPointer<UInt8>(start: nil, count: 0)
        defer { copied.deallocate() }
        while i < chunk.end {
            let lineStart = i
            // Capturing only `bytes`: a closure that captured `self` would copy the whole parser for every line.
            var scanned = fieldEnds.withUnsafeMutableBufferPointer { [bytes] in CSVReader.scanLine(bytes, from: lineStart, fieldEnds: $0) }
            if scanned.newline == nil, let slow = DatasetLayout.scanSlowly(bytes, from: lineStart, fieldEnds: &fieldEnds) {
                // More fields than the header has, or the file's last line without a line end.
                scanned = (slow.newline, slow.fields, 0x80)
            }
            var plain = false
            if let newline = scanned.newline, newline - lineStart + 1 <= CSVReader.maximumLineBytes {
                let fields = scanned.fields
                let lastStart = fields == 0 ? lineStart : fieldEnds[fields - 1] + 1
                let lastEnd = newline > lastStart && bytes[newline - 1] == UInt8(ascii: "\r") ? newline - 1 : newline
                if fields == 0 && lastEnd == lineStart {  // a blank line
                    line += 1
                    i = newline + 1
                    continue
                }
                if scanned.bits & 0x8080_8080_8080_8080 == 0
                    || String(validating: UnsafeBufferPointer(rebasing: bytes[lineStart..<lastEnd]), as: UTF8.self) != nil
                {
                    line += 1
                    i = newline + 1
                    fieldEnds[fields] = lastEnd
                    plain = true
                }
            }
            // The row: its bytes (the file's, read in place, or a copy of a record read byte by byte), where it starts,
            // its commas. (One way through the rows below for both: the loop keeps them inline, which a function
            // called from two places was not.)
            var (source, rowStart, fields) = (bytes, lineStart, scanned.fields)
            if !plain {
                // Not plain (a quote, a NUL, bytes that are not UTF-8, a line too long): the record read byte by byte.
                let read = readNotPlain(at: i, line: line, end: chunk.end, quotes: quotes, record: &record, copied: &copied)
                (i, line) = (read.next, read.line)
                if read.stop { return result }
                guard let count = read.fields else { continue }
                (source, rowStart, fields) = (UnsafeBufferPointer(copied), 0, count - 1)
            }

            guard fields + 1 == header else {
                // A row with the wrong number of fields starts a drawing of its own id, or spoils the one open.
                if layout.id <= fields {
                    let range = field(layout.id, lineStart: rowStart)
                    if !open || !(Self.isSameID(range, of: source, as: idRange, in: bytes) || isOpenIDAsText(range, in: source)) {
                        let label = layout.label <= fields ? DatasetLayout.trimmed(Self.text(source, field(layout.label, lineStart: rowStart))) : ""
                        let inFile = source.baseAddress == bytes.baseAddress
                        start(Self.text(source, range), at: inFile ? range : nil, label: label, fromRow: false, line: line)
                    }
                }
                let error = DataError(file: layout.path, line: line, message: "\(fields + 1) fields, but the header has \(header)")
                guard spoil(error, line: line) else { return result }
                continue
            }
            let idField = field(layout.id, lineStart: rowStart)
            if !open || !(Self.isSameID(idField, of: source, as: idRange, in: bytes) || isOpenIDAsText(idField, in: source)) {
                let label = DatasetLayout.trimmed(Self.text(source, field(layout.label, lineStart: rowStart)))
                // The id's place is kept only in the file's bytes (a record read byte by byte is a copy).
                let inFile = source.baseAddress == bytes.baseAddress
                start(Self.text(source, idField), at: inFile ? idField : nil, label: label, fromRow: true, line: line)
                if let error = layout.emptyLabelError(label, line: line) { fail(error) }
            }
            last = line
            guard !hasError else { continue }
            do throws(DataError) {
                if layout.checkLabels, labelFromRow,
                    let error = layout.labelError(
                        id: groupID, groupLabel: groupLabel,
                        label: DatasetLayout.trimmed(Self.text(source, field(layout.label, lineStart: rowStart))), line: line)
                {
                    throw error
                }
                let strokeField = field(layout.stroke, lineStart: rowStart)
                let strokeValue = try layout.number(source, strokeField, column: layout.stroke, line: line)
                guard strokeValue >= 0, strokeValue == strokeValue.rounded(), strokeValue < 1_000_000 else {
                    throw DataError(
                        file: layout.path, line: line, column: (layout.stroke + 1, "stroke"),
                        message: "\(Self.text(source, strokeField)) is not a stroke index (0, 1, 2, …)")
                }
                let x = try layout.coordinate(source, field(layout.x, lineStart: rowStart), column: layout.x, line: line)
                let y = try layout.coordinate(source, field(layout.y, lineStart: rowStart), column: layout.y, line: line)
                var t: Double?
                if let column = layout.t { t = try layout.number(source, field(column, lineStart: rowStart), column: column, line: line) }
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

    /// A row on `line` that is `error` and names no drawing of its own (too few fields, or it cannot be read): it
    /// spoils the drawing open, or, at the file's start, opens one named by its line. `false` when what was open
    /// before the run is unknown (`needsSeed`).
    mutating func spoil(_ error: DataError, line: Int) -> Bool {
        if !open {
            guard seeded else {
                result.needsSeed = true
                return false
            }
            start("line \(line)", at: nil, label: "", fromRow: false, line: line)
        }
        fail(error)
        last = line
        return true
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

    /// Continues these rows with `next` (the same drawing's rows in the following run), in place: the points are
    /// appended, so a drawing spread over many runs is joined in time linear in its points (a new array per run
    /// copied all the points so far: quadratic). With `layout.checkLabels`, `next` starting with another label is
    /// the drawing's error there, as reading row by row finds it.
    mutating func append(_ next: PendingRows, layout: DatasetLayout) {
        let labelError =
            next.labelFromRow && labelFromRow
            ? layout.labelError(id: id, groupLabel: label, label: next.label, line: next.first) : nil
        last = next.last
        error = error ?? labelError ?? next.error
        // As a drawing file: at most `DrawingReader.maximumPoints`; past it the drawing is an error and keeps no more
        // points (its memory stays bounded whatever the file holds).
        guard points.count + next.points.count <= DrawingReader.maximumPoints else {
            error =
                error
                ?? DataError(
                    // The line of the point past the limit (a row is a point).
                    file: layout.path, line: min(next.first + DrawingReader.maximumPoints - points.count, next.last),
                    message: "drawing '\(id)' has more than \(DrawingReader.maximumPoints) points; is this one drawing?")
            return
        }
        points += next.points
        strokes += next.strokes
    }

    /// What a run that continues these rows starts with.
    func seed() -> DatasetSeed { .drawing(id: id, label: label, error: error) }
}
