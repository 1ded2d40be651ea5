/// A weights header as JSON (RFC 8259), parsed strictly by the header's one reader.
///
/// The header is read with plain code rather than `JSONDecoder`, which builds generic containers and looks up
/// protocol conformances at run time for every type it decodes: that cost `classify` about a millisecond per
/// process before it classified anything. The parser takes exactly the grammar of RFC 8259 — every string escape,
/// `\uXXXX` with surrogate pairs, any white space — and refuses everything else with a `HeaderJSONError.syntax`
/// that says where (byte offset, line, column) and what was expected and found: no trailing commas, comments,
/// leading zeros, unescaped control characters, lone surrogates, invalid UTF-8 or byte-order mark. It also
/// refuses a key repeated in one object (RFC 8259 leaves its meaning open) and documents beyond its limits
/// (`maximumDepth`, `maximumMembers`, `maximumElements`), which no header comes near.
///
/// Numbers keep their text, so each field converts it to its own type (a `Float` straight from the text, not
/// through `Double`); `HeaderJSON+Fields.swift` has those conversions.
// Sendable is declared, not inferred: inferring it for this recursive enum is a "circular reference" for Swift 6.3
// when its module's files are type-checked in some orders.
enum HeaderJSON: Equatable, Sendable {
    /// An object's members in file order; no key appears twice.
    case object([(key: String, value: HeaderJSON)])
    /// An array.
    case array([HeaderJSON])
    /// A string, its escapes decoded.
    case string(String)
    /// A number, as its text (valid JSON number syntax).
    case number(String)
    /// `true` or `false`.
    case bool(Bool)
    /// `null`.
    case null

    /// The deepest nesting of objects and arrays (a header nests 6 deep).
    static let maximumDepth = 32
    /// The most members one object may have (header objects have at most a dozen). Each key is checked against
    /// the object's earlier keys, so this also bounds that work.
    static let maximumMembers = 64
    /// The most elements one array may have (the largest header arrays, labels and tensors, hold dozens).
    static let maximumElements = 1 << 16

    /// Objects are equal when they have the same members in the same order.
    static func == (lhs: HeaderJSON, rhs: HeaderJSON) -> Bool {
        switch (lhs, rhs) {
        case let (.object(a), .object(b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case let (.array(a), .array(b)): a == b
        case let (.string(a), .string(b)): a == b
        case let (.number(a), .number(b)): a == b
        case let (.bool(a), .bool(b)): a == b
        case (.null, .null): true
        default: false
        }
    }

    /// Parses `bytes` as one JSON value with only white space around it.
    static func parse(_ bytes: ArraySlice<UInt8>) throws(HeaderJSONError) -> HeaderJSON {
        var parser = Parser(bytes: bytes)
        let value = try parser.value(depth: 1, expecting: "a value")
        parser.skipWhitespace()
        guard parser.index == bytes.endIndex else { throw parser.failure("the end of the \(parser.document) after its value") }
        return value
    }
}

/// The recursive-descent parser: `index` moves through `bytes`; each function starts at its value's first byte.
/// `JSONCursor` (HeaderJSON+Cursor.swift) walks other documents with the same functions.
struct Parser {
    let bytes: ArraySlice<UInt8>
    var index: Int
    /// What the bytes are, in errors: "header" ("byte 3 of the header", "the end of the header").
    let document: String

    init(bytes: ArraySlice<UInt8>, document: String = "header") {
        self.bytes = bytes
        self.document = document
        index = bytes.startIndex
    }

    /// A syntax error at `position` (by default the current byte).
    func failure(_ expected: String, at position: Int? = nil, found: String? = nil) -> HeaderJSONError {
        HeaderJSONError(syntaxIn: bytes, at: position ?? index, expected: expected, found: found, document: document)
    }

    /// The current byte, or `nil` at the end.
    var current: UInt8? { index < bytes.endIndex ? bytes[index] : nil }

    mutating func skipWhitespace() {
        while index < bytes.endIndex {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// The value after any white space; `expecting` names it in an error (e.g. "a value after ','").
    mutating func value(depth: Int, expecting: String) throws(HeaderJSONError) -> HeaderJSON {
        skipWhitespace()
        switch current {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), .some(UInt8(ascii: "0")...UInt8(ascii: "9")): return .number(try number())
        default: throw failure(expecting)
        }
    }

    /// Refuses an object or array that would nest deeper than the limit.
    func checkDepth(_ depth: Int) throws(HeaderJSONError) {
        guard depth <= HeaderJSON.maximumDepth else {
            throw failure("at most \(HeaderJSON.maximumDepth) levels of nested objects and arrays")
        }
    }

    mutating func object(depth: Int) throws(HeaderJSONError) -> HeaderJSON {
        try checkDepth(depth)
        index += 1
        var members: [(key: String, value: HeaderJSON)] = []
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else {
                throw failure(members.isEmpty ? "a key (a string) or '}'" : "a key (a string) after ','")
            }
            let keyStart = index
            let key = try string()
            guard members.count < HeaderJSON.maximumMembers else {
                throw failure("at most \(HeaderJSON.maximumMembers) members in an object", at: keyStart, found: "member \(members.count + 1)")
            }
            // Header objects have a few keys: a linear search for a repeat costs less than hashing them.
            guard !members.contains(where: { $0.key == key }) else {
                throw failure("each key once in an object", at: keyStart, found: "\(HeaderJSONError.quoted(key)) again")
            }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw failure("':' after the key \(HeaderJSONError.quoted(key))") }
            index += 1
            members.append((key, try value(depth: depth + 1, expecting: "a value after ':'")))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return .object(members)
            default: throw failure("',' or '}' after a member")
            }
        }
    }

    mutating func array(depth: Int) throws(HeaderJSONError) -> HeaderJSON {
        try checkDepth(depth)
        index += 1
        var elements: [HeaderJSON] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            guard elements.count < HeaderJSON.maximumElements else {
                throw failure("at most \(HeaderJSON.maximumElements) elements in an array", found: "element \(elements.count + 1)")
            }
            elements.append(try value(depth: depth + 1, expecting: elements.isEmpty ? "a value or ']'" : "a value after ','"))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return .array(elements)
            default: throw failure("',' or ']' after an element")
            }
        }
    }

    /// A string; `index` is at its opening quote. A string without escapes is made from its bytes as they are;
    /// the bytes are copied only from the first escape on.
    mutating func string() throws(HeaderJSONError) -> String {
        let start = index + 1
        var position = start
        var hasEscapes = false
        var decoded: [UInt8] = []  // from the first escape on: the string so far, escapes decoded
        var runStart = start  // the first byte not yet copied into `decoded`
        while true {
            guard position < bytes.endIndex else { throw failure("'\"' to close the string", at: position) }
            switch bytes[position] {
            case UInt8(ascii: "\""):
                index = position + 1
                guard hasEscapes else { return String(decoding: bytes[start..<position], as: UTF8.self) }
                decoded.append(contentsOf: bytes[runStart..<position])
                return String(decoding: decoded, as: UTF8.self)
            case UInt8(ascii: "\\"):
                hasEscapes = true
                decoded.append(contentsOf: bytes[runStart..<position])
                position = try escape(at: position, into: &decoded)
                runStart = position
            case 0x00..<0x20:
                throw failure("a character or an escape in a string (a control character must be escaped, e.g. \\n)", at: position)
            case 0x80...:
                guard let length = UTF8Sequence.length(in: bytes, at: position) else {
                    throw failure(
                        "valid UTF-8", at: position, found: UTF8Sequence.invalidDescription(in: bytes, at: position, document: document))
                }
                position += length
            default:
                position += 1
            }
        }
    }

    /// Decodes the escape at `position` (its backslash) into `output`; returns the position after it.
    func escape(at position: Int, into output: inout [UInt8]) throws(HeaderJSONError) -> Int {
        let letter = position + 1
        guard letter < bytes.endIndex else { throw failure("an escape after '\\'", at: letter) }
        let simple: UInt8
        switch bytes[letter] {
        case UInt8(ascii: "\""): simple = 0x22
        case UInt8(ascii: "\\"): simple = 0x5C
        case UInt8(ascii: "/"): simple = 0x2F
        case UInt8(ascii: "b"): simple = 0x08
        case UInt8(ascii: "f"): simple = 0x0C
        case UInt8(ascii: "n"): simple = 0x0A
        case UInt8(ascii: "r"): simple = 0x0D
        case UInt8(ascii: "t"): simple = 0x09
        case UInt8(ascii: "u"):
            let first = try hexQuad(at: letter + 1)
            var value = UInt32(first)
            var end = letter + 5
            switch first {
            case 0xD800...0xDBFF:
                // A high surrogate must be followed by an escaped low one; together they are one scalar.
                guard end + 1 < bytes.endIndex, bytes[end] == UInt8(ascii: "\\"), bytes[end + 1] == UInt8(ascii: "u") else {
                    throw failure("a low surrogate \\uDC00…\\uDFFF after the high surrogate \(Self.escaped(first))", at: end)
                }
                let second = try hexQuad(at: end + 2)
                guard (0xDC00...0xDFFF).contains(second) else {
                    throw failure(
                        "a low surrogate \\uDC00…\\uDFFF after the high surrogate \(Self.escaped(first))", at: end,
                        found: Self.escaped(second))
                }
                value = 0x10000 + (UInt32(first - 0xD800) << 10) + UInt32(second - 0xDC00)
                end += 6
            case 0xDC00...0xDFFF:
                throw failure("a Unicode scalar (a low surrogate must follow a high one)", at: position, found: "\(Self.escaped(first)) alone")
            default:
                break
            }
            // Not a surrogate, or a valid pair: always a scalar.
            if let scalar = Unicode.Scalar(value) { output.append(contentsOf: scalar.utf8) }
            return end
        default:
            throw failure("an escape: \\\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t or \\u and 4 hex digits", at: letter)
        }
        output.append(simple)
        return letter + 1
    }

    /// The 4 hex digits at `position` (after `\u`).
    func hexQuad(at position: Int) throws(HeaderJSONError) -> UInt16 {
        var value: UInt16 = 0
        for offset in 0..<4 {
            guard position + offset < bytes.endIndex, let digit = Self.hexDigit(bytes[position + offset]) else {
                throw failure("4 hex digits after \\u", at: position + offset)
            }
            value = value << 4 | UInt16(digit)
        }
        return value
    }

    static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// `\uD800`: how a UTF-16 code unit is written as an escape.
    static func escaped(_ unit: UInt16) -> String {
        let digits = String(unit, radix: 16, uppercase: true)
        return "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
    }

    /// `true`, `false` or `null`, whose first letter is at `index`.
    mutating func literal(_ word: StaticString, _ value: HeaderJSON) throws(HeaderJSONError) -> HeaderJSON {
        let count = word.utf8CodeUnitCount
        let matches = word.withUTF8Buffer { letters in
            bytes.endIndex - index >= count && bytes[index..<(index + count)].elementsEqual(letters)
        }
        guard matches else {
            let letters = bytes[index...].prefix(16).prefix { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }
            throw failure("\(word)", found: "'\(String(decoding: letters, as: UTF8.self))'")
        }
        index += count
        return value
    }

    /// `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`, kept as text.
    mutating func number() throws(HeaderJSONError) -> String {
        String(decoding: bytes[try numberRange()], as: UTF8.self)
    }

    /// Reads past one JSON number; the range of its bytes.
    mutating func numberRange() throws(HeaderJSONError) -> Range<Int> {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, Self.isDigit(first) else { throw failure("a digit after '-'") }
        index += 1
        if first == UInt8(ascii: "0") {
            if let next = current, Self.isDigit(next) {
                throw failure("'.', 'e' or the number's end after a leading 0 (JSON numbers have no leading zeros)")
            }
        } else {
            skipDigits()
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard let digit = current, Self.isDigit(digit) else { throw failure("a digit after '.'") }
            skipDigits()
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let digit = current, Self.isDigit(digit) else { throw failure("a digit in the exponent") }
            skipDigits()
        }
        return start..<index
    }

    mutating func skipDigits() {
        while let byte = current, Self.isDigit(byte) { index += 1 }
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }
}

/// UTF-8 as RFC 3629 defines it: no overlong forms, no encoded surrogates, nothing above U+10FFFF.
enum UTF8Sequence {
    /// The length of the valid UTF-8 sequence that starts at `position`, or `nil` when none does.
    static func length(in bytes: ArraySlice<UInt8>, at position: Int) -> Int? {
        let lead = bytes[position]
        let count: Int
        var second: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0x00...0x7F: return 1
        case 0xC2...0xDF: count = 2
        case 0xE0: (count, second) = (3, 0xA0...0xBF)
        case 0xED: (count, second) = (3, 0x80...0x9F)
        case 0xE1...0xEF: count = 3
        case 0xF0: (count, second) = (4, 0x90...0xBF)
        case 0xF4: (count, second) = (4, 0x80...0x8F)
        case 0xF1...0xF3: count = 4
        default: return nil
        }
        guard bytes.endIndex - position >= count, second.contains(bytes[position + 1]) else { return nil }
        for offset in 2..<count where !(0x80...0xBF).contains(bytes[position + offset]) { return nil }
        return count
    }

    /// What is at `position` when it starts no valid sequence: the bytes its first byte announces (one when it
    /// can start none), e.g. `bytes 0xC3 0x28, not UTF-8`.
    static func invalidDescription(in bytes: ArraySlice<UInt8>, at position: Int, document: String = "header") -> String {
        let announced =
            switch bytes[position] {
            case 0xC2...0xDF: 2
            case 0xE0...0xEF: 3
            case 0xF0...0xF4: 4
            default: 1
            }
        let shown = bytes[position..<min(position + announced, bytes.endIndex)]
        let end = shown.count < announced ? " and the end of the \(document)" : ""
        return (shown.count == 1 ? "byte " : "bytes ") + shown.map(HeaderJSONError.hex).joined(separator: " ") + end + ", not UTF-8"
    }
}
