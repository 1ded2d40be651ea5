/// Why a weights header is not the JSON its format defines: where, what was expected and what was found. A
/// weights file reports it as `WeightsFileError.Problem.corruptHeader` with this description.
enum HeaderJSONError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not JSON (RFC 8259), or beyond the parser's limits. `offset` counts bytes from the header's first byte,
    /// from 0; `line` and `column` count from 1, lines ending at LF, CR LF or CR, columns counting characters
    /// (Unicode scalars; a byte that is not UTF-8 counts as one).
    /// `document` names what was parsed: "header" for a weights header, "body" for a request body.
    case syntax(offset: Int, line: Int, column: Int, expected: String, found: String, document: String = "header")
    /// Valid JSON whose value at `path` (`tensors[3].shape[1]`; empty for the header itself) is not what the
    /// format defines there.
    case field(path: String, problem: String)

    /// `line 1, column 412 (byte 411 of the header): expected ',' or '}' after a member, found 'x'`, or
    /// `tensors[3].shape[1]: expected an integer, found "7"`.
    var description: String {
        switch self {
        case let .syntax(offset, line, column, expected, found, document):
            "line \(line), column \(column) (byte \(offset) of the \(document)): expected \(expected), found \(found)"
        case let .field(path, problem):
            path.isEmpty ? problem : "\(path): \(problem)"
        }
    }

    /// A syntax error at `position` in `bytes`; `found` describes what is there when given, else the character
    /// at `position`.
    init(syntaxIn bytes: ArraySlice<UInt8>, at position: Int, expected: String, found: String? = nil, document: String = "header") {
        var (line, column) = (1, 1)
        var previous: UInt8 = 0
        for byte in bytes[bytes.startIndex..<position] {
            if byte == 0x0A && previous == 0x0D {
                // The LF of a CR LF: the CR ended the line.
            } else if byte == 0x0A || byte == 0x0D {
                (line, column) = (line + 1, 1)
            } else if !(0x80...0xBF).contains(byte) {
                column += 1  // a character's first byte (UTF-8 continuation bytes are 0x80…0xBF)
            }
            previous = byte
        }
        self = .syntax(
            offset: position - bytes.startIndex, line: line, column: column, expected: expected,
            found: found ?? Self.character(in: bytes, at: position, document: document), document: document)
    }

    /// The character at `position` for an error message: `'x'`, `'é' (U+00E9)`, `byte 0x09` for a control
    /// character, `the end of the header`.
    static func character(in bytes: ArraySlice<UInt8>, at position: Int, document: String = "header") -> String {
        guard position < bytes.endIndex else { return "the end of the \(document)" }
        let byte = bytes[position]
        switch byte {
        case 0x20...0x7E: return "'\(Character(Unicode.Scalar(byte)))'"
        case 0x00..<0x80: return "byte \(hex(byte))"
        default:
            guard let length = UTF8Sequence.length(in: bytes, at: position) else {
                return UTF8Sequence.invalidDescription(in: bytes, at: position, document: document)
            }
            let text = String(decoding: bytes[position..<(position + length)], as: UTF8.self)
            let code = String(text.unicodeScalars.first?.value ?? 0, radix: 16, uppercase: true)
            return "'\(text)' (U+\(String(repeating: "0", count: max(0, 4 - code.count)) + code))"
        }
    }

    /// `0x09`.
    static func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return digits.count == 1 ? "0x0" + digits : "0x" + digits
    }

    /// `text` as a JSON string in a message, cut after 40 characters: `"shape-classifier"`.
    static func quoted(_ text: String) -> String {
        var quoted = "\""
        for scalar in text.unicodeScalars.prefix(40) {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\r": quoted += "\\r"
            case "\t": quoted += "\\t"
            case _ where scalar.value < 0x20 || (0xD800...0xDFFF).contains(scalar.value):
                let digits = String(scalar.value, radix: 16, uppercase: true)
                quoted += "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + (text.unicodeScalars.count > 40 ? "…\"" : "\"")
    }

    /// The same error seen from the object that holds the value under `key`: the path gains `key` in front.
    func inside(key: String) -> HeaderJSONError {
        guard case let .field(path, problem) = self else { return self }
        let isIdentifier =
            key.first.map { $0.isASCII && $0.isLetter } == true && key.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
        let component = isIdentifier ? key : "[\(Self.quoted(key))]"
        let separator = path.isEmpty || path.hasPrefix("[") ? "" : "."
        return .field(path: component + separator + path, problem: problem)
    }

    /// The same error seen from the array that holds the value at `index`: the path gains `[index]` in front.
    func inside(index: Int) -> HeaderJSONError {
        guard case let .field(path, problem) = self else { return self }
        let separator = path.isEmpty || path.hasPrefix("[") ? "" : "."
        return .field(path: "[\(index)]" + separator + path, problem: problem)
    }
}
