/// What `CSVRecordGrammar.read` found at a place of some bytes.
package enum CSVRecord {
    /// A record of this many fields, unquoted and unescaped in the record buffer.
    case fields(Int)
    /// No record before the end of the input: only blank lines.
    case end
    /// The bytes ran out before the record was complete, and more may come: call `read` again, on the same grammar,
    /// from where it stopped, once there are more.
    case needsMore
    /// A record that cannot be read (a NUL, bytes that are not UTF-8, a line too long, a quote never closed); reading
    /// goes on from the byte where it stopped.
    case failure(DataError)
    /// A quote, where quotes are not read (see `read`).
    case quote
    /// A record with more fields than `read`'s `maximumFields`, found at the comma that begins the field too many;
    /// the rest of its line is not read.
    case tooManyFields
}

/// The grammar of a CSV record, byte by byte: the one reading of a record that is not plain, shared by `CSVReader`
/// (bytes from a file or a stream, which may end mid-record) and the shape dataset's in-place parser (a whole
/// file's bytes), so that a file reads the same by either.
///
/// A comma ends a field, an LF, a CRLF or a lone CR the record; a quote that opens a field starts a quoted field
/// (`"a,b"`), in which `""` is a quote and commas and line ends are text (each line end still a line: an LF, or a CR
/// that no LF follows); any other quote is text (`x"y`, and `"a"b` is `ab`). A NUL outside quotes, a field that is
/// not UTF-8 (checked once unquoted), a record of more than `CSVReader.maximumLineBytes` bytes (the second quote of a
/// `""` not counted) and a quote still open at the end of the input are failures, each at the byte where it stops:
/// reading goes on from there, as from the start of a line (the rest of a line cut by a NUL is a record of its own,
/// on the next line number). A run of NULs is one failure, reading going on after its last — a run of at most
/// `CSVReader.maximumLineBytes` NULs, so that an endless one (`/dev/zero` through a pipe) fails within that many
/// bytes rather than never: a longer run is one failure for each `CSVReader.maximumLineBytes` NULs (and its rest).
/// A NUL's failure names its column (field) when `columns` has a name for it. Blank lines before a record are skipped.
///
/// A value holds a record in progress: when the bytes end before the record does and more may come, `read`
/// returns `.needsMore`, having consumed what it could decide (a CR, or a quote in a quoted field, waits for the byte after it);
/// the same value reads on from there once there are more bytes, as if they had all been there from the start.
package struct CSVRecordGrammar {
    /// Whether a record is in progress (its line counted, the record buffer emptied).
    private var started = false
    private var quoted = false
    /// Whether a field of the record has begun (a comma or an opening quote was read): the line is not blank.
    private var fieldStarted = false
    /// The record's bytes so far, against `CSVReader.maximumLineBytes`.
    private var lineBytes = 0
    /// Where the field being read begins in the record buffer.
    private var fieldStart = 0
    /// The field's bytes or-ed together: at least 0x80 when one is not ASCII (and the field must be checked).
    private var bits: UInt8 = 0
    /// The line the open quoted field began on.
    private var quoteLine = 0
    /// Fields ended so far.
    private var fields = 0
    /// Whether a NUL was read and the NULs after it are being skipped (a run of NULs is one failure), and its line.
    private var inNULs = false
    private var nulLine = 0
    /// The NULs of the run read so far, against `CSVReader.maximumLineBytes`, and the column of its first.
    private var nulRun = 0
    private var nulColumn: (index: Int, name: String)?
    /// The header's column names, for the column of a NUL's failure (none: no column named).
    private let columns: [String]

    /// A grammar at the start of a record whose columns are `columns` (the header's names, trimmed; none for the
    /// header itself).
    package init(columns: [String] = []) {
        self.columns = columns
    }

    /// Reads the record at `position` of `bytes` (to `end`, the end of the input if `endOfInput`) after a record
    /// ending on `line`, skipping blank lines; `position` becomes where the next record starts (or, after a
    /// failure, the byte after the one where reading stopped), and `line` the line this record ends on (a quoted
    /// field can hold line ends) or the line of the failure.
    ///
    /// The fields are written to `record`, each followed by one separator byte, and where each ends to `fieldEnds`
    /// (grown as needed), so field `i` is `record[(i == 0 ? 0 : fieldEnds[i - 1] + 1)..<fieldEnds[i]]`, as a plain
    /// line is read in place. With `quotes` false any quote outside quoted text is `.quote`, left unread at
    /// `position`: a quoted field may hold line ends, which only a reader of the whole input can follow.
    /// `.needsMore` (only when not `endOfInput`) leaves the record in progress in this value, `record` and
    /// `fieldEnds`: call again with the same ones and `position` at the same byte (wherever `bytes` now holds it) once
    /// there are more bytes after it. A record with more than `maximumFields` fields is `.tooManyFields` as soon as
    /// the comma before its field too many is read, `position` just after that comma.
    package mutating func read(
        _ bytes: UnsafeBufferPointer<UInt8>, at position: inout Int, end: Int, endOfInput: Bool, line: inout Int, quotes: Bool,
        file: String, into record: inout [UInt8], fieldEnds: inout [Int], maximumFields: Int = .max
    ) -> CSVRecord {
        precondition(position >= 0 && position <= end && end <= bytes.count, "CSVRecordGrammar: \(position) to \(end) of \(bytes.count) bytes")
        if !started {
            started = true
            line += 1
            record.removeAll(keepingCapacity: true)
        }
        let found = Self.classes.withUnsafeBufferPointer { classes in
            readOn(
                bytes, classes: classes, at: &position, end: end, endOfInput: endOfInput, line: &line, quotes: quotes, file: file, into: &record,
                fieldEnds: &fieldEnds, maximumFields: maximumFields)
        }
        if case .needsMore = found { return found }
        self = CSVRecordGrammar(columns: columns)
        return found
    }

    /// Bytes that end a run of field bytes: `unquotedStop` outside quotes (comma, LF, CR, quote, NUL) and
    /// `quotedStop` inside them (quote, LF, CR), indexed by byte.
    private static let classes: [UInt8] = (0..<256).map { byte in
        let stops = [UInt8(ascii: ","), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\""), 0]
        let quotedStops = [UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\"")]
        return (stops.contains(UInt8(byte)) ? unquotedStop : 0) | (quotedStops.contains(UInt8(byte)) ? quotedStop : 0)
    }
    private static let unquotedStop: UInt8 = 1
    private static let quotedStop: UInt8 = 2

    /// `read`'s loop: runs of field bytes copied at once, the bytes that end them read one by one.
    private mutating func readOn(
        _ bytes: UnsafeBufferPointer<UInt8>, classes: UnsafeBufferPointer<UInt8>, at position: inout Int, end: Int, endOfInput: Bool,
        line: inout Int, quotes: Bool, file: String, into record: inout [UInt8], fieldEnds: inout [Int], maximumFields: Int
    ) -> CSVRecord {
        let quote = UInt8(ascii: "\""), lf = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r")
        let maximum = CSVReader.maximumLineBytes
        if inNULs {
            // A run of NULs (binary data: a file of zeros) is one failure, found at memory speed, not one per byte;
            // one of at most `maximum` NULs, so that an endless run fails all the same.
            let start = position, limit = min(end, position + (maximum - nulRun))
            while position < limit && bytes[position] == 0 { position += 1 }
            nulRun += position - start
            if position == end && !endOfInput && nulRun < maximum { return .needsMore }
            return .failure(Self.nulByte(file: file, line: nulLine, column: nulColumn))
        }
        while true {
            guard position < end else {
                guard endOfInput else { return .needsMore }
                if quoted { return .failure(Self.quoteNotClosed(file: file, line: line)) }
                if fields == 0 && record.count == fieldStart && !fieldStarted { return .end }
                return endField(&record, fieldEnds: &fieldEnds, file: file, line: line) ?? .fields(fields)
            }
            // A run of field bytes, up to the next stop or `end`.
            let stop = quoted ? Self.quotedStop : Self.unquotedStop
            let start = position
            var i = start, runBits = bits
            while i < end && classes[Int(bytes[i])] & stop == 0 {
                runBits |= bytes[i]
                i += 1
            }
            if i > start {
                if lineBytes + (i - start) > maximum {
                    position = start + (maximum - lineBytes) + 1
                    return .failure(
                        quoted ? Self.quotedFieldTooLong(file: file, from: quoteLine, to: line) : Self.lineTooLong(file: file, line: line))
                }
                record.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<i]))
                (lineBytes, bits, position) = (lineBytes + (i - start), runBits, i)
                if i == end { continue }
            }
            // The stop. A CR or a quote is decided by the byte after it, which may not be here yet.
            let byte = bytes[position]
            if lineBytes + 1 > maximum {
                position += 1
                return .failure(
                    quoted ? Self.quotedFieldTooLong(file: file, from: quoteLine, to: line) : Self.lineTooLong(file: file, line: line))
            }
            let decidedLater = byte == cr || (quoted && byte == quote)
            if decidedLater && position + 1 == end && !endOfInput { return .needsMore }
            position += 1
            lineBytes += 1
            if quoted {
                if byte == quote {
                    if position < end && bytes[position] == quote {  // `""`: a quote, its second byte not counted
                        record.append(quote)
                        position += 1
                    } else {
                        quoted = false
                    }
                } else {
                    // A line end inside quotes is text, and a line: an LF, or a CR that no LF follows.
                    if byte == lf || (position >= end || bytes[position] != lf) { line += 1 }
                    record.append(byte)
                }
                continue
            }
            switch byte {
            case UInt8(ascii: ","):
                if let failure = endField(&record, fieldEnds: &fieldEnds, file: file, line: line) { return failure }
                if fields >= maximumFields { return .tooManyFields }
                fieldStarted = true
            case lf, cr:
                // CRLF ends one line; a lone CR ends one too.
                if byte == cr && position < end && bytes[position] == lf { position += 1 }
                if fields == 0 && record.count == fieldStart && !fieldStarted {  // a blank line
                    lineBytes = 0
                    line += 1
                    continue
                }
                return endField(&record, fieldEnds: &fieldEnds, file: file, line: line) ?? .fields(fields)
            case quote:
                guard quotes else {
                    position -= 1
                    return .quote
                }
                if record.count == fieldStart {
                    quoted = true
                    quoteLine = line
                    fieldStarted = true
                } else {
                    record.append(byte)
                }
            default:  // NUL: it and the NULs right after it are one failure
                (inNULs, nulLine, nulRun) = (true, line, 1)
                nulColumn = fields < columns.count ? (fields + 1, columns[fields]) : nil
                return readOn(
                    bytes, classes: classes, at: &position, end: end, endOfInput: endOfInput, line: &line, quotes: quotes, file: file,
                    into: &record, fieldEnds: &fieldEnds, maximumFields: maximumFields)
            }
        }
    }

    /// Ends the field that began at `fieldStart`, or the failure of one that is not UTF-8 (`bits` says whether any
    /// byte is not ASCII: numbers and names are ASCII and need no further check).
    private mutating func endField(_ record: inout [UInt8], fieldEnds: inout [Int], file: String, line: Int) -> CSVRecord? {
        if bits >= 0x80, String(validating: record[fieldStart...], as: UTF8.self) == nil {
            return .failure(Self.notUTF8(file: file, line: line))
        }
        if fields >= fieldEnds.count { fieldEnds += [Int](repeating: 0, count: fieldEnds.count + 1) }
        fieldEnds[fields] = record.count
        fields += 1
        record.append(UInt8(ascii: ","))
        fieldStart = record.count
        bits = 0
        return nil
    }

    // MARK: - Errors of a record that cannot be read

    /// A quoted field that opens on `line` and runs past `CSVReader.maximumLineBytes` (to line `last`): most likely a
    /// quote never closed.
    static func quotedFieldTooLong(file: String, from line: Int, to last: Int) -> DataError {
        DataError(
            file: file, line: line,
            message: "a quoted field opens on this line and runs past \(CSVReader.maximumLineBytes) bytes "
                + "(to line \(last)); is a closing quote missing?")
    }

    /// A line, from its start, longer than `CSVReader.maximumLineBytes`.
    static func lineTooLong(file: String, line: Int) -> DataError {
        DataError(file: file, line: line, message: "line longer than \(CSVReader.maximumLineBytes) bytes; is this a CSV file?")
    }

    /// A quoted field still open at the end of the file.
    static func quoteNotClosed(file: String, line: Int) -> DataError {
        DataError(file: file, line: line, message: "a quoted field is not closed before the end of the file")
    }

    /// A NUL byte outside quotes, on `line` in `column` (when known).
    package static func nulByte(file: String, line: Int, column: (index: Int, name: String)? = nil) -> DataError {
        DataError(file: file, line: line, column: column, message: nulMessage)
    }

    /// What a NUL byte's failure says.
    package static let nulMessage = "contains a NUL byte; this is binary data, not a CSV file"

    /// A field whose bytes are not UTF-8.
    static func notUTF8(file: String, line: Int) -> DataError { DataError(file: file, line: line, message: "is not UTF-8 text") }
}
