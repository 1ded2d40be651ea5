import DataFiles
import Foundation
import Tensor

/// The inputs of a `.npy` file of little-endian float32 in C order, read one at a time: its header first, then
/// `4 * size` bytes per input, never the whole file. `classify run --input` reads them; `encode` writes them
/// (`--save-inputs`).
package struct NPYRows {
    package let path: String
    private let handle: FileHandle
    /// Values per input, and inputs in the file (the shape's first axis).
    private let size: Int
    private let inputs: Int
    private var read = 0
    /// The shape the header declares (the inputs first).
    package let shape: [Int]

    /// The longest header read: numpy writes a few hundred bytes (and itself refuses more than 10,000 by default).
    static let maximumHeaderBytes = 1 << 16

    /// Opens `path` and reads its header, whose shape must hold inputs of `size` values, and checks that the file
    /// holds as many bytes as the shape says (when it is a regular file, whose size is known).
    package init(path: String, size: Int) throws(DataError) {
        self.path = path
        self.size = size
        func fail(_ message: String) -> DataError { DataError(file: path, message: message) }
        handle = try InputFile.open(path, as: "a .npy file")
        let start = try Self.bytes(6 + 2 + 2, of: handle, path: path)
        guard start.count == 10, start.prefix(6) == [0x93] + Array("NUMPY".utf8) else { throw fail("not a .npy file (its magic is missing)") }
        let major = start[6]
        guard major == 1 || major == 2 else { throw fail(".npy version \(major) is not read (versions 1 and 2 are)") }
        var headerLength = Int(start[8]) | Int(start[9]) << 8
        var headerStart = 10
        if major == 2 {
            let more = try Self.bytes(2, of: handle, path: path)
            guard more.count == 2 else { throw fail("its header runs past the end of the file") }
            headerLength |= Int(more[0]) << 16 | Int(more[1]) << 24
            headerStart = 12
        }
        guard headerLength <= Self.maximumHeaderBytes else {
            throw fail("its header is \(headerLength) bytes long; at most \(Self.maximumHeaderBytes) are read")
        }
        let text = try Self.bytes(headerLength, of: handle, path: path)
        guard text.count == headerLength else { throw fail("its header runs past the end of the file") }
        let header: NPYHeader
        do {
            header = try NPYHeader(parsing: text)
        } catch {
            let shown = String(decoding: text.prefix(160), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw fail("its header \(error.message): \(DataError.terminalSafe(shown))")
        }
        guard header.descr == "<f4" else {
            throw fail("holds '\(DataError.terminalSafe(header.descr))' data; only little-endian float32 ('descr': '<f4') is read")
        }
        guard !header.fortranOrder else { throw fail("is in Fortran order ('fortran_order': True); only C order is read") }
        let shape = header.shape
        self.shape = shape
        guard let values = checkedElementCount(shape), values <= Int.max / 4 else {
            throw fail("its shape \(shape) holds more values than can be counted (the product of its sizes overflows)")
        }
        guard let first = shape.first else { throw fail("its shape () has no first axis to count the inputs") }
        let perInput = checkedElementCount(Array(shape.dropFirst())) ?? 0
        guard perInput == size else { throw fail("its shape \(shape) holds inputs of \(perInput) values, but the model's input has \(size)") }
        guard first >= 1 else { throw fail("no inputs: its shape is \(shape)") }
        inputs = first
        var status = stat()
        if fstat(handle.fileDescriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG {
            let payload = Int(status.st_size) - headerStart - headerLength
            guard payload == 4 * values else { throw fail("its shape \(shape) needs \(4 * values) bytes of data, and it holds \(payload)") }
        }
    }

    /// Reads the next input into `row` (of `size` values), or returns `false` after the last; a value that is not
    /// finite, or data that ends early or goes on past the shape's end, is an error.
    package mutating func next(into row: inout [Float]) throws(DataError) -> Bool {
        guard read < inputs else {
            guard try Self.bytes(1, of: handle, path: path).isEmpty else {
                throw DataError(file: path, message: "holds more data than its shape's \(inputs) inputs")
            }
            return false
        }
        let bytes = try Self.bytes(4 * size, of: handle, path: path)
        guard bytes.count == 4 * size else {
            throw DataError(file: path, message: "its data ends in input \(read + 1), and its shape says \(inputs) inputs")
        }
        read += 1
        bytes.withUnsafeBytes { raw in
            for index in row.indices {
                row[index] = Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 4 * index, as: UInt32.self)))
            }
        }
        if let bad = row.firstIndex(where: { !$0.isFinite }) {
            throw DataError(file: path, message: "input \(read), value \(bad + 1) is \(row[bad]), not a finite number")
        }
        return true
    }

    /// Up to `count` bytes of `handle` (fewer only at its end).
    private static func bytes(_ count: Int, of handle: FileHandle, path: String) throws(DataError) -> [UInt8] {
        do {
            return [UInt8](try handle.read(upToCount: count) ?? Data())
        } catch {
            throw DataError(file: path, message: "read failed: \(error.localizedDescription)", kind: .unreadable)
        }
    }
}

/// The header of a `.npy` file: a Python dict literal of exactly the keys `descr` (a quoted string), `fortran_order`
/// (`True` or `False`) and `shape` (a tuple of sizes), as numpy writes it — `{'descr': '<f4', 'fortran_order':
/// False, 'shape': (16, 256), }` padded with spaces and a newline. Anything else (an unknown or repeated key, a
/// value of another kind, text after the closing brace) is refused: a header is not searched for the text it
/// should hold.
struct NPYHeader {
    var descr: String
    var fortranOrder: Bool
    var shape: [Int]

    /// What is wrong with a header, and where: "at character 12: expected ...".
    struct Problem: Error {
        let message: String
    }

    /// Parses the header's bytes.
    init(parsing bytes: [UInt8]) throws(Problem) {
        var parser = Parser(bytes: bytes)
        var descr: String?, fortranOrder: Bool?, shape: [Int]?
        parser.skipSpace()
        try parser.expect("{")
        while true {
            parser.skipSpace()
            if parser.take("}") { break }
            let keyStart = parser.position
            let key = try parser.quoted("a quoted key ('descr', 'fortran_order' or 'shape') or '}'")
            parser.skipSpace()
            try parser.expect(":")
            parser.skipSpace()
            let repeated = { () -> Problem in Problem(message: "at character \(keyStart + 1): the key '\(key)' appears twice") }
            switch key {
            case "descr":
                guard descr == nil else { throw repeated() }
                descr = try parser.quoted("a quoted type such as '<f4'")
            case "fortran_order":
                guard fortranOrder == nil else { throw repeated() }
                fortranOrder = try parser.boolean()
            case "shape":
                guard shape == nil else { throw repeated() }
                shape = try parser.tuple()
            default:
                throw Problem(
                    message: "at character \(keyStart + 1): unknown key '\(key.prefix(40))'; a .npy header has 'descr', 'fortran_order' and 'shape'")
            }
            parser.skipSpace()
            if parser.take("}") { break }
            try parser.expect(",", or: "'}'")
        }
        parser.skipSpace()
        guard parser.atEnd else { throw parser.problem(expected: "nothing but spaces after the closing '}'") }
        guard let descr, let fortranOrder, let shape else {
            let missing = [descr == nil ? "'descr'" : nil, fortranOrder == nil ? "'fortran_order'" : nil, shape == nil ? "'shape'" : nil]
            throw Problem(message: "has no \(missing.compactMap { $0 }.joined(separator: " or "))")
        }
        (self.descr, self.fortranOrder, self.shape) = (descr, fortranOrder, shape)
    }

    /// A cursor over the header's bytes.
    private struct Parser {
        let bytes: [UInt8]
        var position = 0

        var atEnd: Bool { position == bytes.count }

        mutating func skipSpace() {
            while position < bytes.count, [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r")].contains(bytes[position]) {
                position += 1
            }
        }

        /// Takes `character` if it is next.
        mutating func take(_ character: Unicode.Scalar) -> Bool {
            guard position < bytes.count, bytes[position] == UInt8(ascii: character) else { return false }
            position += 1
            return true
        }

        mutating func expect(_ character: Unicode.Scalar, or other: String? = nil) throws(Problem) {
            guard take(character) else { throw problem(expected: "'\(character)'" + (other.map { " or \($0)" } ?? "")) }
        }

        /// "at character N: expected WHAT, found 'x'" (or "the end of the header").
        func problem(expected: String) -> Problem {
            let found =
                position < bytes.count
                ? (0x20...0x7E).contains(bytes[position])
                    ? "'\(Character(Unicode.Scalar(bytes[position])))'" : String(format: "byte 0x%02X", bytes[position])
                : "the end of the header"
            return Problem(message: "at character \(position + 1): expected \(expected), found \(found)")
        }

        /// A string in single or double quotes, of printable ASCII without backslashes (no escapes).
        mutating func quoted(_ what: String) throws(Problem) -> String {
            guard position < bytes.count, bytes[position] == UInt8(ascii: "'") || bytes[position] == UInt8(ascii: "\"") else {
                throw problem(expected: what)
            }
            let quote = bytes[position]
            position += 1
            let start = position
            while position < bytes.count, bytes[position] != quote {
                guard (0x20...0x7E).contains(bytes[position]), bytes[position] != UInt8(ascii: "\\") else {
                    throw problem(expected: "printable text without escapes in a quoted string")
                }
                position += 1
            }
            guard position < bytes.count else { throw problem(expected: "the closing quote of the string begun at character \(start)") }
            position += 1
            return String(decoding: bytes[start..<(position - 1)], as: UTF8.self)
        }

        mutating func boolean() throws(Problem) -> Bool {
            for (word, value) in [("True", true), ("False", false)] where bytes[position...].starts(with: word.utf8) {
                position += word.utf8.count
                return value
            }
            throw problem(expected: "True or False")
        }

        /// A tuple of sizes: `()`, `(3,)`, `(3, 4)` or `(3, 4,)`; `(3)` is a number in Python, not a tuple.
        mutating func tuple() throws(Problem) -> [Int] {
            try expect("(")
            var sizes: [Int] = []
            while true {
                skipSpace()
                if take(")") { break }  // `()`, or after a comma
                let start = position
                while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
                guard position > start else { throw problem(expected: sizes.isEmpty ? "a size or ')'" : "a size") }
                let digits = String(decoding: bytes[start..<position], as: UTF8.self)
                guard let size = Int(digits), digits.count == 1 || !digits.hasPrefix("0") else {
                    throw Problem(message: "at character \(start + 1): the size \(digits.prefix(40)) is not a size (too large, or a leading zero)")
                }
                sizes.append(size)
                skipSpace()
                if take(",") { continue }
                guard sizes.count > 1 else { throw problem(expected: "',' after the only size (a one-size tuple is written (\(size),))") }
                try expect(")", or: "','")
                break
            }
            return sizes
        }
    }
}

extension NPYRows {
    /// `rows` as a `.npy` file: float32, little-endian, C order, shape `[rows] + shape`.
    package static func encode(_ rows: [[Float]], shape: [Int]) -> [UInt8] {
        let dimensions = ([rows.count] + shape).map(String.init).joined(separator: ", ")
        var header = "{'descr': '<f4', 'fortran_order': False, 'shape': (\(dimensions)\(shape.isEmpty ? "," : "")), }"
        let unpadded = 10 + header.utf8.count + 1
        header += String(repeating: " ", count: (64 - unpadded % 64) % 64) + "\n"
        var bytes: [UInt8] = [0x93] + Array("NUMPY".utf8) + [1, 0, UInt8(header.utf8.count & 0xFF), UInt8(header.utf8.count >> 8)]
        bytes += Array(header.utf8)
        bytes.reserveCapacity(bytes.count + 4 * rows.count * (rows.first?.count ?? 0))
        for row in rows { for value in row { withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes += $0 } } }
        return bytes
    }
}
