import DataFiles
import Models

// How `DatasetRowParser` reads a dataset's records and fields from its bytes: lines that are not plain (`scanLine`
// stops at them) by `CSVRecordGrammar`, as `CSVReader` reads them, and fields as numbers.
extension DatasetLayout {
    /// The end of the line at `start` (its LF, a CR no LF follows, or the end of `bytes`: the file's last line may
    /// have no line end) and its commas, found byte by byte (growing `fieldEnds` as needed); `nil` when the line
    /// holds a quote or a NUL (which `CSVRecordGrammar` reads).
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

    /// Whether `position` of `bytes` starts a line (or is the end of `bytes`): where a read that stopped at a bad byte
    /// goes on from without counting a line of its own.
    static func startsLine(_ bytes: UnsafeBufferPointer<UInt8>, at position: Int) -> Bool {
        guard position > 0 && position < bytes.count else { return true }
        let before = bytes[position - 1]
        return before == UInt8(ascii: "\n") || (before == UInt8(ascii: "\r") && bytes[position] != UInt8(ascii: "\n"))
    }
}

extension DatasetRowParser {
    /// The record at `start` that is not plain, read by `CSVRecordGrammar` (to `end`, as the end of the input) after a
    /// record ending
    /// on `line`: where the next begins, the line this one ends on, and its number of fields, its bytes in `copied`
    /// (grown as needed) — or no fields when there is no row (blank lines to `end`, or a record that cannot be read,
    /// which `spoil`s the drawing open), and `stop` when the parse stops (a quote where `quotes` are not read, or
    /// `needsSeed`). Not inlined: the loop over plain lines stays small.
    @inline(never)
    mutating func readNotPlain(
        at start: Int, line: Int, end: Int, quotes: Bool, record: inout [UInt8], copied: inout UnsafeMutableBufferPointer<UInt8>
    ) -> (next: Int, line: Int, fields: Int?, stop: Bool) {
        var (position, line) = (start, line)
        var grammar = CSVRecordGrammar(columns: layout.header)
        switch grammar.read(
            bytes, at: &position, end: end, endOfInput: true, line: &line, quotes: quotes, file: layout.path, into: &record,
            fieldEnds: &fieldEnds)
        {
        case .quote:
            result.hasQuote = true
            return (position, line, nil, true)
        case .end:
            return (position, line, nil, false)
        case .failure(let error):
            if !DatasetLayout.startsLine(bytes, at: position) { result.extraLines += 1 }
            return (position, line, nil, !spoil(error, line: line))
        case .needsMore:
            preconditionFailure("DatasetRowParser: the grammar asked for more input than the whole run it was given")
        case .tooManyFields:
            preconditionFailure("DatasetRowParser: the grammar counted fields against a maximum it was not given")
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
