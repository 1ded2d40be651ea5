/// A JSON document as the weights header's fast reader parses it, for headers in the form the encoder writes.
///
/// `JSONDecoder` builds generic containers and looks up protocol conformances at run time for every type it
/// decodes, which costs `classify` about a millisecond per process before it classifies anything. This parser
/// reads the same bytes with plain code. It is deliberately narrow: anything it is not sure `JSONDecoder` would
/// read the same way — a string with an escape, a repeated key, a nesting deeper than `maximumDepth`, an object
/// larger than `maximumMembers`, a number that does not fit — makes it give up (`nil`), and the caller decodes
/// with `JSONDecoder` as before, so errors and every unusual input keep `JSONDecoder`'s behaviour. Numbers keep
/// their text, so each field converts them as `JSONDecoder` does (`Float` straight from the text, not through
/// `Double`).
enum PlainJSON: Equatable {
    /// An object's members in file order; a key appears at most once.
    case object([(key: String, value: PlainJSON)])
    /// An array.
    case array([PlainJSON])
    /// A string without escapes.
    case string(String)
    /// A number, as its text (valid JSON number syntax).
    case number(String)
    /// `true` or `false`.
    case bool(Bool)
    /// `null`.
    case null

    /// Deeper documents are left to `JSONDecoder`.
    static let maximumDepth = 32
    /// Objects with more members are left to `JSONDecoder` (header objects have a dozen at most).
    static let maximumMembers = 64

    static func == (lhs: PlainJSON, rhs: PlainJSON) -> Bool {
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

    /// Parses `bytes` as one JSON value with only whitespace around it, or `nil` when it is not valid JSON or not
    /// in the plain form this parser reads.
    static func parse(_ bytes: ArraySlice<UInt8>) -> PlainJSON? {
        var parser = Parser(bytes: bytes)
        guard let value = parser.value(depth: 0) else { return nil }
        parser.skipWhitespace()
        return parser.index == bytes.endIndex ? value : nil
    }

    private struct Parser {
        let bytes: ArraySlice<UInt8>
        var index: Int

        init(bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            index = bytes.startIndex
        }

        mutating func skipWhitespace() {
            while index < bytes.endIndex, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func value(depth: Int) -> PlainJSON? {
            guard depth < PlainJSON.maximumDepth else { return nil }
            skipWhitespace()
            guard index < bytes.endIndex else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "{"): return object(depth: depth)
            case UInt8(ascii: "["): return array(depth: depth)
            case UInt8(ascii: "\""): return string().map(PlainJSON.string)
            case UInt8(ascii: "t"): return literal("true", .bool(true))
            case UInt8(ascii: "f"): return literal("false", .bool(false))
            case UInt8(ascii: "n"): return literal("null", .null)
            default: return number()
            }
        }

        mutating func object(depth: Int) -> PlainJSON? {
            index += 1
            var members: [(key: String, value: PlainJSON)] = []
            if consume(UInt8(ascii: "}")) { return .object(members) }
            while true {
                skipWhitespace()
                // Header objects have a few keys: a linear search for a repeat costs less than hashing them, and
                // larger objects are left to JSONDecoder.
                guard members.count < PlainJSON.maximumMembers, index < bytes.endIndex, bytes[index] == UInt8(ascii: "\""),
                    let key = string(), !members.contains(where: { $0.key == key }),
                    consume(UInt8(ascii: ":")), let member = value(depth: depth + 1)
                else { return nil }
                members.append((key, member))
                guard let closed = closingOrComma(UInt8(ascii: "}")) else { return nil }
                if closed { return .object(members) }
            }
        }

        mutating func array(depth: Int) -> PlainJSON? {
            index += 1
            var elements: [PlainJSON] = []
            if consume(UInt8(ascii: "]")) { return .array(elements) }
            while true {
                guard let element = value(depth: depth + 1) else { return nil }
                elements.append(element)
                guard let closed = closingOrComma(UInt8(ascii: "]")) else { return nil }
                if closed { return .array(elements) }
            }
        }

        /// Skips whitespace, then `byte` when it comes next; whether it did.
        mutating func consume(_ byte: UInt8) -> Bool {
            skipWhitespace()
            guard index < bytes.endIndex, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// After a member or an element: `true` past the `closing` bracket, `false` past a comma, `nil` otherwise.
        mutating func closingOrComma(_ closing: UInt8) -> Bool? {
            if consume(closing) { return true }
            return consume(UInt8(ascii: ",")) ? false : nil
        }

        /// A string without escapes or control characters, in valid UTF-8; `index` is at its opening quote.
        mutating func string() -> String? {
            let start = index + 1
            var end = start
            while end < bytes.endIndex, bytes[end] != UInt8(ascii: "\"") {
                guard bytes[end] >= 0x20, bytes[end] != UInt8(ascii: "\\") else { return nil }
                end += 1
            }
            guard end < bytes.endIndex, let text = String(validating: bytes[start..<end], as: UTF8.self) else { return nil }
            index = end + 1
            return text
        }

        mutating func literal(_ word: String, _ value: PlainJSON) -> PlainJSON? {
            let utf8 = Array(word.utf8)
            guard bytes.endIndex - index >= utf8.count, bytes[index..<(index + utf8.count)].elementsEqual(utf8) else { return nil }
            index += utf8.count
            return value
        }

        /// `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`, kept as text.
        mutating func number() -> PlainJSON? {
            let start = index
            func digits() -> Int {
                let first = index
                while index < bytes.endIndex, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
                return index - first
            }
            if index < bytes.endIndex, bytes[index] == UInt8(ascii: "-") { index += 1 }
            let integerStart = index
            let integerDigits = digits()
            guard integerDigits > 0, integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else { return nil }
            if index < bytes.endIndex, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { return nil }
            }
            if index < bytes.endIndex, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.endIndex, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { return nil }
            }
            return .number(String(decoding: bytes[start..<index], as: UTF8.self))
        }
    }
}

// MARK: - Field values, converted as `JSONDecoder` converts them (`nil`: leave the document to it)

extension PlainJSON {
    /// The members of an object whose keys are all among `allowed` and include every one of `required`.
    func members(allowed: Set<String>, required: Set<String>) -> [String: PlainJSON]? {
        guard case .object(let list) = self, list.allSatisfy({ allowed.contains($0.key) }) else { return nil }
        var members: [String: PlainJSON] = [:]
        for (key, value) in list { members[key] = value }
        return required.allSatisfy { members[$0] != nil } ? members : nil
    }

    /// The value of an optional field: `.some(nil)` when it is missing or `null`, `nil` when it cannot be read.
    static func optional<Value>(_ json: PlainJSON?, _ read: (PlainJSON) -> Value?) -> Value?? {
        guard let json, json != .null else { return .some(nil) }
        return read(json).map { .some($0) }
    }

    var string: String? {
        if case .string(let value) = self { value } else { nil }
    }

    /// An integer written as one (no fraction or exponent) that fits `Int`.
    var int: Int? {
        guard case .number(let text) = self, !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) else { return nil }
        return Int(text)
    }

    /// A non-negative integer written as one that fits `UInt64`.
    var uint64: UInt64? {
        guard case .number(let text) = self, text.allSatisfy(\.isASCIIDigit) else { return nil }
        return UInt64(text)
    }

    /// A `Double` that is finite and, unless the text is a zero, normal (no underflow).
    var double: Double? {
        guard case .number(let text) = self, let value = Double(text), value.isFinite, !value.isSubnormal else { return nil }
        return value != 0 || Self.isZero(text) ? value : nil
    }

    /// A `Float` read straight from the text (as `JSONDecoder` reads one), finite and, unless the text is a zero,
    /// normal.
    var float: Float? {
        guard case .number(let text) = self, let value = Float(text), value.isFinite, !value.isSubnormal else { return nil }
        return value != 0 || Self.isZero(text) ? value : nil
    }

    /// Every element read by `read`, or `nil` when this is not an array or any element cannot be read.
    func array<Element>(_ read: (PlainJSON) -> Element?) -> [Element]? {
        guard case .array(let elements) = self else { return nil }
        var values: [Element] = []
        values.reserveCapacity(elements.count)
        for element in elements {
            guard let value = read(element) else { return nil }
            values.append(value)
        }
        return values
    }

    /// Whether a number's text has only zero digits before its exponent.
    private static func isZero(_ text: String) -> Bool {
        text.prefix(while: { $0 != "e" && $0 != "E" }).allSatisfy { $0 == "0" || $0 == "." || $0 == "-" }
    }

    /// The value as `JSONValue.init(from:)` decodes it.
    var jsonValue: JSONValue? {
        switch self {
        case .null: .null
        case .bool(let value): .bool(value)
        case .number: double.map(JSONValue.number)
        case .string(let value): .string(value)
        case .array: array(\.jsonValue).map(JSONValue.array)
        case .object(let list):
            list.reduce(into: [String: JSONValue]?.some([:])) { result, member in
                guard result != nil, let value = member.value.jsonValue else {
                    result = nil
                    return
                }
                result?[member.key] = value
            }.map(JSONValue.object)
        }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
