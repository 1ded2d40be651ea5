/// What `DatasetLayout.readRecord` found at a place of a dataset's bytes.
enum DatasetRecord {
    /// A record of this many fields, unquoted and unescaped in the record buffer.
    case fields(Int)
    /// No record before the end: only blank lines.
    case end
    /// A record that cannot be read (a NUL, bytes that are not UTF-8, a line too long, a quote never closed); reading
    /// goes on from where it stopped, as `CSVReader` goes on after one.
    case failure(DataError)
    /// A quote, where quotes are not read (see `readRecord`).
    case quote
}

// How `DatasetRowParser` reads a dataset's records and fields from its bytes: lines that are not plain (`scanLine`
// stops at them) byte by byte, as `CSVReader` reads them, and fields as numbers.
extension DatasetLayout {
    /// The end of the line at `start` (its LF, a CR no LF follows, or the end of `bytes`: the file's last line may
    /// have no line end) and its commas, found byte by byte (growing `fieldEnds` as needed); `nil` when the line
    /// holds a quote or a NUL (which `readRecord` reads).
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

    /// Reads the record at `position` of `bytes` (to `end`) byte by byte, as `CSVReader` reads a record that is not
    /// plain (its `readRecordByBytes`), for `DatasetRowParser`: the same fields, the same errors on the same lines, and
    /// the same place to go on from after one — so a file reads the same here as with `CSVReader`, whatever it holds.
    ///
    /// A comma ends a field, an LF, a CRLF or a lone CR the record; a quote that opens a field starts a quoted field
    /// (`"a,b"`), in which `""` is a quote and commas and line ends are text; any other quote is text (`x"y`, and
    /// `"a"b` is `ab`). A NUL outside quotes, a field that is not UTF-8 (checked once unquoted), a record of more
    /// than `CSVReader.maximumLineBytes` bytes (the second quote of a `""` not counted) and a quote still open at
    /// `end` are failures, each with `CSVReader`'s error, at the byte where it stops: reading goes on from there,
    /// as from the start of a line (the rest of a line cut by a NUL is a record of its own, on the next line number).
    /// Blank lines before the record are skipped.
    ///
    /// `line` is the line the last record ended on, and becomes the line this one ends on (a quoted field can hold
    /// line ends). The fields are written to `record`, each followed by one separator byte, and where each ends to
    /// `fieldEnds` (grown as needed), as `DatasetRowParser` reads a line in place. With `quotes` false any quote is
    /// `.quote`, left unread: a quoted field may hold line ends, which only a parse of the whole file can follow.
    static func readRecord(
        _ bytes: UnsafeBufferPointer<UInt8>, at position: inout Int, end: Int, line: inout Int, quotes: Bool, file: String,
        into record: inout [UInt8], fieldEnds: inout [Int]
    ) -> DatasetRecord {
        let quote = UInt8(ascii: "\""), lf = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r")
        line += 1
        record.removeAll(keepingCapacity: true)
        var fields = 0, quoted = false, fieldStarted = false, lineBytes = 0, fieldStart = 0, bits: UInt8 = 0, quoteLine = 0
        // Ends the field that began at `fieldStart`: its bytes must be UTF-8 (`bits`, all its bytes or-ed, says
        // whether any is not ASCII).
        func endField() -> DataError? {
            if bits >= 0x80, String(validating: record[fieldStart...], as: UTF8.self) == nil {
                return CSVRecordGrammar.notUTF8(file: file, line: line)
            }
            if fields >= fieldEnds.count { fieldEnds += [Int](repeating: 0, count: fieldEnds.count + 1) }
            fieldEnds[fields] = record.count
            fields += 1
            record.append(UInt8(ascii: ","))
            fieldStart = record.count
            bits = 0
            return nil
        }
        while true {
            guard position < end else {
                if quoted { return .failure(CSVRecordGrammar.quoteNotClosed(file: file, line: line)) }
                if fields == 0 && record.count == fieldStart && !fieldStarted { return .end }
                if let error = endField() { return .failure(error) }
                return .fields(fields)
            }
            let byte = bytes[position]
            position += 1
            if quoted {
                lineBytes += 1
                if lineBytes > CSVReader.maximumLineBytes {
                    return .failure(CSVRecordGrammar.quotedFieldTooLong(file: file, from: quoteLine, to: line))
                }
                if byte == quote {
                    if position < end && bytes[position] == quote {
                        record.append(quote)
                        position += 1
                    } else {
                        quoted = false
                    }
                } else {
                    // A line end inside quotes is text, and a line: an LF, or a CR that no LF follows.
                    if byte == lf || (byte == cr && (position >= end || bytes[position] != lf)) { line += 1 }
                    bits |= byte
                    record.append(byte)
                }
                continue
            }
            lineBytes += 1
            if lineBytes > CSVReader.maximumLineBytes { return .failure(CSVRecordGrammar.lineTooLong(file: file, line: line)) }
            switch byte {
            case UInt8(ascii: ","):
                if let error = endField() { return .failure(error) }
                fieldStarted = true
            case lf, cr:
                // CRLF ends one line; a lone CR ends one too.
                if byte == cr && position < end && bytes[position] == lf { position += 1 }
                if fields == 0 && record.count == fieldStart && !fieldStarted {  // a blank line
                    lineBytes = 0
                    line += 1
                    continue
                }
                if let error = endField() { return .failure(error) }
                return .fields(fields)
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
            case 0:
                return .failure(CSVRecordGrammar.nulByte(file: file, line: line))
            default:
                bits |= byte
                record.append(byte)
            }
        }
    }

    /// Whether `position` of `bytes` starts a line (or is the end of `bytes`): where a read that stopped at a bad byte
    /// goes on from without counting a line of its own.
    static func startsLine(_ bytes: UnsafeBufferPointer<UInt8>, at position: Int) -> Bool {
        guard position > 0 && position < bytes.count else { return true }
        let before = bytes[position - 1]
        return before == UInt8(ascii: "\n") || (before == UInt8(ascii: "\r") && bytes[position] != UInt8(ascii: "\n"))
    }
}

extension DatasetRowParser {
    /// The record at `start` that is not plain, read byte by byte (`DatasetLayout.readRecord`) after a record ending
    /// on `line`: where the next begins, the line this one ends on, and its number of fields, its bytes in `copied`
    /// (grown as needed) — or no fields when there is no row (blank lines to `end`, or a record that cannot be read,
    /// which `spoil`s the drawing open), and `stop` when the parse stops (a quote where `quotes` are not read, or
    /// `needsSeed`). Not inlined: the loop over plain lines stays small.
    @inline(never)
    mutating func readNotPlain(
        at start: Int, line: Int, end: Int, quotes: Bool, record: inout [UInt8], copied: inout UnsafeMutableBufferPointer<UInt8>
    ) -> (next: Int, line: Int, fields: Int?, stop: Bool) {
        var (position, line) = (start, line)
        switch DatasetLayout.readRecord(
            bytes, at: &position, end: end, line: &line, quotes: quotes, file: layout.path, into: &record, fieldEnds: &fieldEnds)
        {
        case .quote:
            result.hasQuote = true
            return (position, line, nil, true)
        case .end:
            return (position, line, nil, false)
        case .failure(let error):
            if !DatasetLayout.startsLine(bytes, at: position) { result.extraLines += 1 }
            return (position, line, nil, !spoil(error, line: line))
        case .fields(let count):
            if copied.count < record.count {
                copied.deallocate()
                copied = .allocate(capacity: max(record.count, 2 * copied.count))
            }
            _ = copied.initialize(from: record)
            return (position, line, count, false)
        }
    }
}
