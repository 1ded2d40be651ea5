import Foundation

/// Reads a CSV file with a header row, one record at a time, without holding the file's text in memory: the
/// file is read in chunks of up to 1 MiB (from a pipe, whatever has arrived) and each record's fields are handed
/// over as it is parsed, so a reader of a pipe sees a record as soon as its line has ended.
///
/// Columns are found by name, in any order; unknown columns are ignored. A file of numbers that has no header
/// (`init(path:headerless:)`) has a fixed number of fields per record instead. Fields may be quoted (`"a,b"`, with
/// `""` for a quote). Blank lines are skipped. Every problem is a `DataError` naming the file, the line and,
/// for a field, its column.
///
/// Lines may end in LF (Unix), CRLF (Windows) or a lone CR (classic Mac OS, and what some spreadsheets still
/// export): each ends one line, a CR followed by LF only one. A UTF-8 byte-order mark (`EF BB BF`, which Excel
/// and Windows tools write) at the very start of the file is skipped; anywhere else it is text.
package struct CSVReader {
    /// The file's name as errors show it.
    package let file: String
    /// The header's column names, in file order.
    package private(set) var header: [String] = []

    /// Where the bytes come from: a file or standard input read 1 MiB at a time, a caller's stream (`--follow`),
    /// or nothing more (a part, read whole).
    private enum Source {
        case handle(FileHandle)
        case stream(() throws(DataError) -> Data)
    }

    private let source: Source
    private var buffer: [UInt8] = []
    private var position = 0
    private var atEnd = false
    /// Bytes read from the file so far.
    private var bytesRead = 0
    /// The line the next record starts on.
    package private(set) var lineNumber = 0
    /// The last record read: in `buffer` from `recordStart` (a plain record, read in place) or copied to `fieldBytes`
    /// from 0 (`CSVRecordGrammar`'s record), its fields separated by one byte either way; `fieldEnds[0..<fieldCount]`
    /// are where its fields end.
    private var inPlace = false
    private var recordStart = 0
    private var fieldBytes: [UInt8] = []
    private var fieldEnds: [Int] = []
    private var fieldCount = 0
    /// Whether the last record was read whole but refused for its number of fields.
    private var miscounted = false
    /// For a file without a header row, what its records are (see `Headerless`); `nil` when the first row is the header.
    private let headerless: Headerless?
    /// Whether an error ended reading, because it cannot go on after it (a record refused before its line was
    /// read whole): every later read finds the end.
    private var stopped = false

    /// What each record of a file without a header row holds: `fields` fields, each named `name` in errors
    /// (`column 3 (value)`), and `reason`, which says why that many (`the model's input has 256`), ends the
    /// message of a record with more or fewer. A record is refused as soon as it has more than `fields` fields,
    /// without reading the rest of its line (which may be huge): reading ends with that error (later reads find
    /// the end of the file).
    package struct Headerless: Sendable {
        /// The number of fields every record has.
        package let fields: Int
        /// The name of each field in errors.
        package let name: String
        /// Why a record has `fields` fields, for the error of one that has not.
        package let reason: String

        /// The layout of a header-less file's records.
        package init(fields: Int, name: String, reason: String) {
            precondition(fields >= 1, "CSVReader.Headerless: \(fields) fields")
            (self.fields, self.name, self.reason) = (fields, name, reason)
        }
    }

    /// Opens `path` (`-` reads standard input) and reads its header.
    package init(path: String) throws(DataError) {
        try self.init(path: path, headerless: nil)
    }

    /// Opens `path` (`-` reads standard input), a file with no header row whose records are as `headerless` says
    /// (`nil`: the first row is the header, read now). A byte-order mark at its start is skipped all the same.
    package init(path: String, headerless: Headerless?) throws(DataError) {
        file = path
        self.headerless = headerless
        if path == "-" {
            source = .handle(FileHandle.standardInput)
        } else {
            source = .handle(try InputFile.open(path, as: "a CSV file"))
        }
        try readHeader()
    }

    /// A reader of bytes as `stream` delivers them, named `file` in errors, and reads its header. `stream` returns
    /// the next bytes as soon as it has any (it may wait for them), or none at the end; a record is handed over
    /// as soon as its line has ended, so a reader can follow a recording as it is written.
    package init(file: String, stream: @escaping () throws(DataError) -> Data) throws(DataError) {
        self.file = file
        headerless = nil
        source = .stream(stream)
        try readHeader()
    }

    /// A reader of `bytes` (a file's whole contents, or standard input's), named `file` in errors, and reads its header.
    package init(file: String, bytes: Data) throws(DataError) {
        var offset = 0
        try self.init(file: file) { () throws(DataError) -> Data in
            let end = min(bytes.count, offset + (1 << 20))
            defer { offset = end }
            return bytes[(bytes.startIndex + offset)..<(bytes.startIndex + end)]
        }
    }

    private mutating func readHeader() throws(DataError) {
        try readEncoding()
        if let headerless {
            header = [String](repeating: headerless.name, count: headerless.fields)
            return
        }
        guard let first = try nextRecord() else {
            throw DataError(file: file, line: 1, message: "the file is empty; expected a header row of column names")
        }
        header = first.map { $0.trimmingCharacters(in: .whitespaces) }
        // One column whose name holds a semicolon or a tab: a spreadsheet's export with another list separator.
        if header.count == 1, let separator = header[0].first(where: { $0 == ";" || $0 == "\t" }) {
            throw DataError(
                file: file, line: 1,
                message: "the header is one column, '\(Self.printable(header[0].prefix(60)))': its fields are separated by "
                    + (separator == ";" ? "semicolons" : "tabs")
                    + ", not commas (a spreadsheet set to another list separator writes them so); save the file as CSV with commas "
                    + "between fields and points in numbers (1.5, not 1,5)")
        }
        // A file that starts with its data: every name a number. Its columns could only be named after values.
        if !header.isEmpty, header.allSatisfy({ !$0.isEmpty && Double($0) != nil }) {
            throw DataError(
                file: file, line: 1,
                message: "the first row holds numbers (\(headerSummary)), not column names; the file needs a header row first "
                    + "(x,y for a drawing; the README lists a recording's columns)")
        }
        if let duplicate = Dictionary(grouping: header, by: { $0 }).first(where: { $0.value.count > 1 && !$0.key.isEmpty })?.key {
            throw DataError(file: file, line: 1, message: "column '\(duplicate)' appears twice in the header")
        }
    }

    /// Where the next record starts in the file: bytes read from it (after the byte-order mark, if any, which
    /// is counted) less those not yet parsed.
    package var byteOffset: Int { bytesRead - (buffer.count - position) }

    /// Reads the file's encoding from its first bytes: skips a UTF-8 byte-order mark (Excel's "CSV UTF-8" begins
    /// with one), so that the first column's name is not `\u{FEFF}x`, and refuses UTF-16 text (Excel's "Unicode
    /// text", Windows tools), by its byte-order mark or, without one, by the zero byte beside each of its first ASCII
    /// characters: its NUL bytes would otherwise be called binary data.
    private mutating func readEncoding() throws(DataError) {
        while buffer.count < 4, try fill() {}
        if buffer.starts(with: [0xEF, 0xBB, 0xBF]) {
            position = 3
            return
        }
        let first = Array(buffer.prefix(4))
        guard first.count >= 2 else { return }
        let order: String? =
            switch (first[0], first[1]) {
            case (0xFF, 0xFE): "little-endian, byte-order mark FF FE"
            case (0xFE, 0xFF): "big-endian, byte-order mark FE FF"
            default:
                first.count == 4 && first[0] != 0 && first[1] == 0 && first[2] != 0 && first[3] == 0
                    ? "little-endian, no byte-order mark"
                    : first.count == 4 && first[0] == 0 && first[1] != 0 && first[2] == 0 && first[3] != 0
                        ? "big-endian, no byte-order mark" : nil
            }
        guard let order else { return }
        throw DataError(file: file, line: 1, message: "is UTF-16 text (\(order)), not UTF-8; save it as UTF-8 (in Excel: CSV UTF-8)")
    }

    /// The positions of `names` in the header (a name written in other case, `X` for `x`, when the header has no
    /// exact match); a missing one is an error that lists what the header has.
    package func columns(_ names: [String]) throws(DataError) -> [Int] {
        var positions: [Int] = []
        for name in names {
            guard let index = optionalColumn(name) else {
                throw DataError(file: file, line: 1, message: "missing column '\(name)'; the header has \(headerSummary)")
            }
            positions.append(index)
        }
        return positions
    }

    /// The header's column names for an error message: quoted, the first 20 and how many more.
    package var headerSummary: String { Self.summary(of: header) }

    /// Column names for an error message: quoted, the first 20 and how many more.
    package static func summary(of header: [String]) -> String {
        let shown = 20
        guard !header.isEmpty else { return "no columns" }
        return header.prefix(shown).map { "'\(Self.printable($0.prefix(60)))'" }.joined(separator: ", ")
            + (header.count > shown ? " and \(header.count - shown) more" : "")
    }

    /// `text` as a message can show it on a terminal: anything but printable ASCII and letters (control bytes,
    /// undecodable bytes) as `?`.
    static func printable(_ text: Substring) -> String {
        String(
            text.map { character -> Character in
                let ascii = character.unicodeScalars.allSatisfy { (0x20...0x7E).contains($0.value) }
                return ascii || (character.isLetter && character != "\u{FFFD}") ? character : "?"
            })
    }

    /// The position of an optional column (see `position(of:in:)`), or `nil`.
    package func optionalColumn(_ name: String) -> Int? { Self.position(of: name, in: header) }

    /// Where the column `name` is in `header`: its exact name, else the one header name equal to it but for case
    /// (`X` for `x`, `Gravity.X` for `gravity.x`); `nil` when neither (or several names differ only in case).
    package static func position(of name: String, in header: [String]) -> Int? {
        if let exact = header.firstIndex(of: name) { return exact }
        let folded = header.indices.filter { header[$0].lowercased() == name.lowercased() }
        return folded.count == 1 ? folded[0] : nil
    }

    /// The next record's fields (as many as the header has), or `nil` at the end of the file.
    package mutating func next() throws(DataError) -> [String]? {
        guard try advance() else { return nil }
        return (0..<fieldCount).map(field)
    }

    /// Reads the next record (as many fields as the header has) without making strings of its fields, or returns
    /// `false` at the end of the file; `field(_:)` and `number(column:)` read it. The same checks and errors as
    /// `next()`.
    package mutating func advance() throws(DataError) -> Bool {
        miscounted = false
        guard try readRecord() else { return false }
        guard fieldCount == header.count else {
            miscounted = true
            if let headerless { throw DataError(file: file, line: lineNumber, message: "\(fieldCount) values, but \(headerless.reason)") }
            throw DataError(file: file, line: lineNumber, message: "\(fieldCount) fields, but the header has \(header.count)")
        }
        return true
    }

    /// Field `index` of the record the last `advance()` (or `next()`) refused for its number of fields — it was
    /// read whole, only with more or fewer fields than the header — or `nil`: the last record was not refused so,
    /// or has no field `index`. Readers use it to report a bad row under its own id (drawing, session) rather
    /// than the previous row's.
    package func fieldOfMiscountedRecord(_ index: Int) -> String? {
        miscounted && index >= 0 && index < fieldCount ? field(index) : nil
    }

    /// Field `index` of the record `advance()` read.
    package func field(_ index: Int) -> String {
        // UTF-8 was checked as the record was read.
        let (start, end) = bounds(index)
        return inPlace ? String(decoding: buffer[start..<end], as: UTF8.self) : String(decoding: fieldBytes[start..<end], as: UTF8.self)
    }

    /// Field `index` of the record `advance()` read, as a finite number: `number(field(index), column: index)`,
    /// with plain decimals (`-0.4591`, `1.5e-3`) read straight from the bytes.
    package func number(column index: Int) throws(DataError) -> Double {
        let (start, end) = bounds(index)
        let value =
            inPlace
            ? buffer.withUnsafeBufferPointer { DecimalText.double(UnsafeBufferPointer(rebasing: $0[start..<end])) }
            : fieldBytes.withUnsafeBufferPointer { DecimalText.double(UnsafeBufferPointer(rebasing: $0[start..<end])) }
        if let value { return value }
        return try number(field(index), column: index)
    }

    /// Where field `index` of the last record lies in `buffer` or `fieldBytes`.
    private func bounds(_ index: Int) -> (start: Int, end: Int) {
        precondition(index >= 0 && index < fieldCount, "CSVReader: field \(index) of a record of \(fieldCount) fields")
        return (index == 0 ? recordStart : fieldEnds[index - 1] + 1, fieldEnds[index])
    }

    /// The next record's fields, or the error that spoils that record (a wrong field count, a NUL byte, a line
    /// too long, bytes that are not UTF-8): reading can go on after it. `nil` at the end of the file. An error
    /// reading the file itself is thrown, since nothing after it can be read.
    package mutating func nextResult() throws(DataError) -> Result<[String], DataError>? {
        do {
            return try next().map { .success($0) }
        } catch  where error.kind == .invalid {
            return .failure(error)
        }
    }

    /// Parses `field` of column `index` as a finite number.
    package func number(_ field: String, column index: Int) throws(DataError) -> Double {
        try Self.number(field, file: file, line: lineNumber, column: (index + 1, header[index]))
    }

    /// Parses `field` as a finite number (surrounding spaces allowed); the error names `file`, `line` and `column`
    /// (1-based, with its header name). What `number(_:column:)` does for a reader's current record.
    package static func number(_ field: String, file: String, line: Int, column: (index: Int, name: String)) throws(DataError) -> Double {
        if let value = Double(field), value.isFinite { return value }  // the common case: no spaces, a finite number
        let trimmed = field.trimmingCharacters(in: .whitespaces)
        guard let value = Double(trimmed) else {
            throw DataError(
                file: file, line: line, column: column,
                message: trimmed.isEmpty ? "empty field; expected a number" : "'\(trimmed.prefix(40))' is not a number")
        }
        guard value.isFinite else {
            throw DataError(file: file, line: line, column: column, message: "\(trimmed) is not a finite number")
        }
        return value
    }

    // MARK: - Tokenizing

    /// Longest line accepted: a guard against a file that is one enormous line.
    package static let maximumLineBytes = 1 << 20

    private mutating func fill() throws(DataError) -> Bool {
        guard !atEnd else { return false }
        if position > 0 {
            buffer.removeFirst(position)
            position = 0
        }
        let count: Int
        switch source {
        case let .handle(handle):
            count = try readAvailable(from: handle.fileDescriptor)
        case let .stream(stream):
            let chunk = try stream()
            buffer.append(contentsOf: chunk)
            count = chunk.count
        }
        if count == 0 {
            atEnd = true
            return false
        }
        bytesRead += count
        return true
    }

    /// Appends what one `read` of `descriptor` gives (up to 1 MiB: from a pipe or a terminal, what has arrived,
    /// without waiting for more) to `buffer`; 0 at the end of the file. `FileHandle.read(upToCount:)` would wait
    /// for the whole 1 MiB or the end, holding back the records of a pipe that is written line by line.
    private mutating func readAvailable(from descriptor: Int32) throws(DataError) -> Int {
        // Read into uninitialized memory and copy what came (a memcpy): growing `buffer` by a chunk of zeros and
        // cutting it back costs a loop over the whole chunk for every read, however little a read brings.
        let chunk = 1 << 20
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 1)
        defer { scratch.deallocate() }
        var result = -1
        repeat {
            result = read(descriptor, scratch.baseAddress, chunk)
        } while result < 0 && errno == EINTR
        guard result >= 0 else {
            let code = errno
            throw DataError(file: file, line: lineNumber, message: "read failed: \(String(cString: strerror(code)))", kind: .unreadable)
        }
        buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[0..<result]))
        return result
    }

    /// The next non-blank record's raw fields.
    private mutating func nextRecord() throws(DataError) -> [String]? {
        try readRecord() ? (0..<fieldCount).map(field) : nil
    }

    /// Reads the next non-blank record; `false` at the end of the file.
    private mutating func readRecord() throws(DataError) -> Bool {
        if stopped { return false }
        if readPlainRecord() { return true }
        (inPlace, recordStart, fieldCount) = (false, 0, 0)
        return try readRecordByBytes()
    }

    /// Reads the next record in place when it is plain — whole in the buffer, no quote, no NUL, UTF-8, not too
    /// long — as almost every record of a sensor recording is; `false` otherwise, having consumed only the blank
    /// lines before it, so `readRecordByBytes` reads it (and reports its error) from its start.
    private mutating func readPlainRecord() -> Bool {
        // A header-less record may not have one field more than it should: that is refused by the grammar as soon
        // as it begins (`CSVRecord.tooManyFields`), whether the line is whole in the buffer or not.
        let capacity = headerless?.fields ?? max(16, header.count + 1)
        if fieldEnds.count < capacity { fieldEnds += [Int](repeating: 0, count: capacity - fieldEnds.count) }
        var lineStart = position
        while true {
            let start = lineStart
            let (newline, fields, bits) = buffer.withUnsafeBufferPointer { bytes in
                fieldEnds.withUnsafeMutableBufferPointer { ends -> (Int?, Int, UInt64) in
                    Self.scanLine(bytes, from: start, fieldEnds: UnsafeMutableBufferPointer(rebasing: ends[..<capacity]))
                }
            }
            guard let newline, newline - lineStart + 1 <= Self.maximumLineBytes else {
                position = lineStart
                return false
            }
            let lastStart = fields == 0 ? lineStart : fieldEnds[fields - 1] + 1
            let lastEnd = newline > lastStart && buffer[newline - 1] == UInt8(ascii: "\r") ? newline - 1 : newline
            if fields == 0 && lastEnd == lineStart {  // a blank line
                lineNumber += 1
                lineStart = newline + 1
                continue
            }
            fieldEnds[fields] = lastEnd
            fieldCount = fields + 1
            (inPlace, recordStart) = (true, lineStart)
            let notUTF8 = { (field: Int) in String(validating: self.buffer[self.bounds(field).start..<self.bounds(field).end], as: UTF8.self) == nil }
            if bits & 0x8080_8080_8080_8080 != 0, (0..<fieldCount).contains(where: notUTF8) {
                position = lineStart
                return false
            }
            lineNumber += 1
            position = newline + 1
            return true
        }
    }

    /// Reads the next non-blank record that is not plain into `fieldBytes` and `fieldEnds` by `CSVRecordGrammar`,
    /// refilling the buffer whenever the record runs past it; `false` at the end of the file. An error is thrown at
    /// the byte where the grammar stops, so the reader goes on from there after one (`nextResult`).
    private mutating func readRecordByBytes() throws(DataError) -> Bool {
        var grammar = CSVRecordGrammar(columns: header)
        while true {
            var (at, line) = (position, lineNumber)
            let found = buffer.withUnsafeBufferPointer { bytes in
                grammar.read(
                    bytes, at: &at, end: bytes.count, endOfInput: atEnd, line: &line, quotes: true, file: file, into: &fieldBytes,
                    fieldEnds: &fieldEnds, maximumFields: headerless?.fields ?? .max)
            }
            (position, lineNumber) = (at, line)
            switch found {
            case .needsMore:
                _ = try fill()
            case .fields(let count):
                fieldCount = count
                return true
            case .end:
                return false
            case .failure(let error):
                throw error
            case .tooManyFields:
                let fields = headerless?.fields ?? header.count
                stopped = true
                throw DataError(
                    file: file, line: lineNumber, message: "more than \(fields) values, but \(headerless?.reason ?? "the header has \(fields)")")
            case .quote:
                preconditionFailure("CSVReader: the grammar left a quote unread, though it was told to read quotes")
            }
        }
    }
}

/// Records read one at a time, their numbers by column: a CSV file's (`CSVReader`), or rows that arrived another way
/// (a request's JSON samples), so that one reader of recordings reads both with the same checks and errors.
package protocol RecordReader {
    /// The name errors give.
    var file: String { get }
    /// The column names.
    var header: [String] { get }
    /// The line of the record `advance()` read, as errors give it (the header is line 1).
    var lineNumber: Int { get }
    /// Reads the next record, or returns `false` after the last.
    mutating func advance() throws(DataError) -> Bool
    /// Column `index` of the record `advance()` read, as a finite number.
    func number(column index: Int) throws(DataError) -> Double
}

extension RecordReader {
    /// The header's column names for an error message (`CSVReader.summary(of:)`).
    package var headerSummary: String { CSVReader.summary(of: header) }
}

extension CSVReader: RecordReader {}
