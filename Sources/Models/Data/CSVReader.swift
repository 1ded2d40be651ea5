import Foundation

/// Reads a CSV file with a header row, one record at a time, without holding the file's text in memory: the
/// file is read in 1 MiB chunks and each record's fields are handed over as it is parsed.
///
/// Columns are found by name, in any order; unknown columns are ignored. Fields may be quoted (`"a,b"`, with
/// `""` for a quote). Blank lines are skipped. Every problem is a `DataError` naming the file, the line and,
/// for a field, its column.
public struct CSVReader {
    /// The file's name as errors show it.
    public let file: String
    /// The header's column names, in file order.
    public private(set) var header: [String] = []

    private let handle: FileHandle?
    private var buffer: [UInt8] = []
    private var position = 0
    private var atEnd = false
    /// The line the next record starts on.
    public private(set) var lineNumber = 0

    /// Opens `path` (`-` reads standard input) and reads its header.
    public init(path: String) throws(DataError) {
        file = path
        if path == "-" {
            handle = FileHandle.standardInput
        } else {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw DataError(file: path, message: "no such file", kind: .missingFile)
            }
            guard !isDirectory.boolValue, let opened = FileHandle(forReadingAtPath: path) else {
                throw DataError(file: path, message: isDirectory.boolValue ? "is a directory, not a CSV file" : "cannot be opened for reading", kind: .unreadable)
            }
            handle = opened
        }
        guard let first = try nextRecord() else {
            throw DataError(file: path, line: 1, message: "the file is empty; expected a header row of column names")
        }
        header = first.map { $0.trimmingCharacters(in: .whitespaces) }
        if let duplicate = Dictionary(grouping: header, by: { $0 }).first(where: { $0.value.count > 1 && !$0.key.isEmpty })?.key {
            throw DataError(file: path, line: 1, message: "column '\(duplicate)' appears twice in the header")
        }
    }

    /// A run of whole lines of a file, held in memory, to be read by its own reader (on any thread).
    public struct Part: Sendable {
        let file: String
        let header: [String]
        let bytes: [UInt8]
        let lineNumber: Int
    }

    /// A reader over a part's lines; its line numbers are the file's.
    public init(_ part: Part) {
        file = part.file
        header = part.header
        handle = nil
        buffer = part.bytes
        atEnd = true
        lineNumber = part.lineNumber
    }

    /// The rest of the file as up to `parts` consecutive runs of whole lines, to parse in parallel (each with
    /// `CSVReader(part)`, which reports the file's own line numbers). `nil` (and this reader still usable, from where it was) when the
    /// rest holds a quote, since a quoted field may span lines, or is larger than `maximumBytes`.
    public mutating func split(into parts: Int, maximumBytes: Int = 1 << 30) throws(DataError) -> [Part]? {
        while buffer.count - position <= maximumBytes, try fill() {}
        guard buffer.count - position <= maximumBytes, parts > 1, !buffer[position...].contains(UInt8(ascii: "\"")) else { return nil }
        let rest = buffer[position...]
        var readers: [Part] = []
        var start = rest.startIndex, line = lineNumber
        for part in 1...parts where start < rest.endIndex {
            var end = part == parts ? rest.endIndex : max(start, rest.startIndex + rest.count * part / parts)
            while end < rest.endIndex && rest[end - 1] != UInt8(ascii: "\n") { end += 1 }
            if end == start { continue }
            let bytes = Array(rest[start..<end])
            readers.append(Part(file: file, header: header, bytes: bytes, lineNumber: line))
            line += bytes.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
            start = end
        }
        buffer = []
        position = 0
        return readers
    }

    /// The positions of `names` in the header; a missing one is an error that lists what the header has.
    public func columns(_ names: [String]) throws(DataError) -> [Int] {
        var positions: [Int] = []
        for name in names {
            guard let index = header.firstIndex(of: name) else {
                throw DataError(file: file, line: 1, message: "missing column '\(name)'; the header has "
                    + (header.isEmpty ? "no columns" : header.map { "'\($0)'" }.joined(separator: ", ")))
            }
            positions.append(index)
        }
        return positions
    }

    /// The position of an optional column, or `nil`.
    public func optionalColumn(_ name: String) -> Int? { header.firstIndex(of: name) }

    /// The next record's fields (as many as the header has), or `nil` at the end of the file.
    public mutating func next() throws(DataError) -> [String]? {
        guard let fields = try nextRecord() else { return nil }
        guard fields.count == header.count else {
            throw DataError(file: file, line: lineNumber, message: "\(fields.count) fields, but the header has \(header.count)")
        }
        return fields
    }

    /// The next record's fields, or the error that spoils that record (a wrong field count, a NUL byte, a line
    /// too long, bytes that are not UTF-8): reading can go on after it. `nil` at the end of the file. An error
    /// reading the file itself is thrown, since nothing after it can be read.
    public mutating func nextResult() throws(DataError) -> Result<[String], DataError>? {
        do {
            return try next().map { .success($0) }
        } catch where error.kind == .invalid {
            return .failure(error)
        }
    }

    /// Parses `field` of column `index` as a finite number.
    public func number(_ field: String, column index: Int) throws(DataError) -> Double {
        if let value = Double(field), value.isFinite { return value }  // the common case: no spaces, a finite number
        let trimmed = field.trimmingCharacters(in: .whitespaces)
        guard let value = Double(trimmed) else {
            throw DataError(file: file, line: lineNumber, column: (index + 1, header[index]),
                            message: trimmed.isEmpty ? "empty field; expected a number" : "'\(trimmed.prefix(40))' is not a number")
        }
        guard value.isFinite else {
            throw DataError(file: file, line: lineNumber, column: (index + 1, header[index]),
                            message: "\(trimmed) is not a finite number")
        }
        return value
    }

    // MARK: - Tokenizing

    /// Longest line accepted: a guard against a file that is one enormous line.
    public static let maximumLineBytes = 1 << 20

    private mutating func fill() throws(DataError) -> Bool {
        guard !atEnd, let handle else { return false }
        let chunk: Data
        do {
            chunk = try handle.read(upToCount: 1 << 20) ?? Data()
        } catch {
            throw DataError(file: file, line: lineNumber, message: "read failed: \(error.localizedDescription)", kind: .unreadable)
        }
        if chunk.isEmpty {
            atEnd = true
            return false
        }
        if position > 0 {
            buffer.removeFirst(position)
            position = 0
        }
        buffer.append(contentsOf: chunk)
        return true
    }

    /// The next non-blank record's raw fields.
    private mutating func nextRecord() throws(DataError) -> [String]? {
        while true {
            lineNumber += 1
            var fields: [String] = []
            var field: [UInt8] = []
            var quoted = false, fieldStarted = false, lineBytes = 0
            while true {
                if position >= buffer.count {
                    guard try fill() else {
                        if quoted { throw DataError(file: file, line: lineNumber, message: "a quoted field is not closed before the end of the file") }
                        if fields.isEmpty && field.isEmpty && !fieldStarted { return nil }
                        fields.append(try text(field))
                        return fields
                    }
                }
                let byte = buffer[position]
                position += 1
                lineBytes += 1
                if lineBytes > Self.maximumLineBytes {
                    throw DataError(file: file, line: lineNumber, message: "line longer than \(Self.maximumLineBytes) bytes; is this a CSV file?")
                }
                if quoted {
                    if byte == UInt8(ascii: "\"") {
                        if position >= buffer.count { _ = try fill() }
                        if position < buffer.count && buffer[position] == UInt8(ascii: "\"") {
                            field.append(byte)
                            position += 1
                        } else {
                            quoted = false
                        }
                    } else {
                        if byte == UInt8(ascii: "\n") { lineNumber += 1 }
                        field.append(byte)
                    }
                    continue
                }
                switch byte {
                case UInt8(ascii: ","):
                    fields.append(try text(field))
                    field.removeAll(keepingCapacity: true)
                    fieldStarted = true
                case UInt8(ascii: "\n"):
                    if field.last == UInt8(ascii: "\r") { field.removeLast() }
                    if fields.isEmpty && field.isEmpty && !fieldStarted { lineBytes = 0; lineNumber += 1; continue }
                    fields.append(try text(field))
                    return fields
                case UInt8(ascii: "\"") where field.isEmpty:
                    quoted = true
                    fieldStarted = true
                case 0:
                    throw DataError(file: file, line: lineNumber, message: "contains a NUL byte; this is binary data, not a CSV file")
                default:
                    field.append(byte)
                }
            }
        }
    }

    private func text(_ bytes: [UInt8]) throws(DataError) -> String {
        // Numbers and names are ASCII: decoding them needs no validation (and is several times faster).
        if bytes.allSatisfy({ $0 < 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
        guard let string = String(validating: bytes, as: UTF8.self) else {
            throw DataError(file: file, line: lineNumber, message: "is not UTF-8 text")
        }
        return string
    }
}
