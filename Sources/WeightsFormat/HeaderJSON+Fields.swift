// A header's values converted to the types its fields have. Each conversion accepts only the JSON that means one
// value of that type and throws `HeaderJSONError.field` otherwise, with an empty path that the enclosing object
// and array readers fill in (`tensors[3].shape[1]`) as the error passes through them.

extension HeaderJSON {
    /// The value as an error message shows it: a string quoted (cut after 40 characters), a number as written,
    /// `true`, `null`, `an object with 2 keys`, `an array of 3 elements`.
    var summary: String {
        switch self {
        case .string(let text): HeaderJSONError.quoted(text)
        case .number(let text): text.count > 40 ? String(text.prefix(40)) + "…" : text
        case .bool(let value): "\(value)"
        case .null: "null"
        case .object(let members):
            members.isEmpty ? "an empty object" : "an object with \(members.count) key\(members.count == 1 ? "" : "s")"
        case .array(let elements):
            elements.isEmpty ? "an empty array" : "an array of \(elements.count) element\(elements.count == 1 ? "" : "s")"
        }
    }

    /// The error for this value where `expected` belongs.
    func mismatch(_ expected: String) -> HeaderJSONError {
        .field(path: "", problem: "expected \(expected), found \(summary)")
    }

    /// A string.
    func string() throws(HeaderJSONError) -> String {
        guard case .string(let text) = self else { throw mismatch("a string") }
        return text
    }

    /// An integer written as one (no fraction or exponent) that fits `Int`.
    func int() throws(HeaderJSONError) -> Int {
        guard case .number(let text) = self, Self.isInteger(text) else { throw mismatch("an integer") }
        guard let value = Int(text) else { throw mismatch("an integer from \(Int.min) to \(Int.max)") }
        return value
    }

    /// A non-negative integer written as one that fits `UInt64`.
    func uint64() throws(HeaderJSONError) -> UInt64 {
        guard case .number(let text) = self, Self.isInteger(text) else { throw mismatch("an integer") }
        guard let value = UInt64(text) else { throw mismatch("an integer from 0 to \(UInt64.max)") }
        return value
    }

    /// A `Double` that is finite and, unless the text is a zero, normal: a number that would become an infinity, a
    /// subnormal or zero is refused rather than changed.
    func double() throws(HeaderJSONError) -> Double {
        guard case .number(let text) = self else { throw mismatch("a number") }
        guard let value = Double(text), value.isFinite, !value.isSubnormal, value != 0 || Self.isZero(text) else {
            throw mismatch("a number within a Double's range (0, or a magnitude from 2.2e-308 to 1.8e308)")
        }
        return value
    }

    /// A `Float` read straight from the text (not through `Double`, which could round twice), finite and, unless
    /// the text is a zero, normal.
    func float() throws(HeaderJSONError) -> Float {
        guard case .number(let text) = self else { throw mismatch("a number") }
        guard let value = Float(text), value.isFinite, !value.isSubnormal, value != 0 || Self.isZero(text) else {
            throw mismatch("a number within a Float's range (0, or a magnitude from 1.2e-38 to 3.4e38)")
        }
        return value
    }

    /// One of the string values of `Value`: `"valid"` for `Padding.valid`.
    func choice<Value: RawRepresentable & CaseIterable>(_: Value.Type) throws(HeaderJSONError) -> Value where Value.RawValue == String {
        guard case .string(let text) = self, let value = Value(rawValue: text) else {
            let names = Value.allCases.map { HeaderJSONError.quoted($0.rawValue) }
            throw mismatch(names.count == 2 ? "\(names[0]) or \(names[1])" : "one of \(names.joined(separator: ", "))")
        }
        return value
    }

    /// Every element read by `read`; an element's error gains its index.
    func array<Element>(_ read: (HeaderJSON) throws(HeaderJSONError) -> Element) throws(HeaderJSONError) -> [Element] {
        guard case .array(let elements) = self else { throw mismatch("an array") }
        var values: [Element] = []
        values.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            do throws(HeaderJSONError) {
                values.append(try read(element))
            } catch {
                throw error.inside(index: index)
            }
        }
        return values
    }

    /// The members of an object. Keys a reader does not ask for are ignored, as `Weights/FORMAT.md` promises: an
    /// optional field added later (as `run` and `activationQuantization` were) does not break the readers before it.
    func members() throws(HeaderJSONError) -> HeaderMembers {
        guard case .object(let list) = self else { throw mismatch("an object") }
        return HeaderMembers(list: list)
    }

    /// The value as free-form `JSONValue` (numbers as `Double`).
    func jsonValue() throws(HeaderJSONError) -> JSONValue {
        switch self {
        case .null: return .null
        case .bool(let value): return .bool(value)
        case .number: return .number(try double())
        case .string(let value): return .string(value)
        case .array: return .array(try array { json throws(HeaderJSONError) in try json.jsonValue() })
        case .object(let list):
            var values: [String: JSONValue] = [:]
            for (key, value) in list {
                do throws(HeaderJSONError) {
                    values[key] = try value.jsonValue()
                } catch {
                    throw error.inside(key: key)
                }
            }
            return .object(values)
        }
    }

    /// Whether a number's text has neither fraction nor exponent.
    private static func isInteger(_ text: String) -> Bool {
        !text.utf8.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
    }

    /// Whether a number's text has only zero digits before its exponent.
    private static func isZero(_ text: String) -> Bool {
        text.utf8.prefix { $0 != UInt8(ascii: "e") && $0 != UInt8(ascii: "E") }.allSatisfy {
            $0 == UInt8(ascii: "0") || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-")
        }
    }
}

/// An object's members, read by key (`HeaderJSON.members()`). A value's error gains its key.
struct HeaderMembers {
    /// The members in file order, each key once.
    let list: [(key: String, value: HeaderJSON)]

    /// The value of `key`, or `nil` when the object lacks it.
    func value(_ key: String) -> HeaderJSON? {
        for member in list where member.key == key { return member.value }
        return nil
    }

    /// The value of `key` read by `read`; a missing key is an error.
    func required<Value>(_ key: String, _ read: (HeaderJSON) throws(HeaderJSONError) -> Value) throws(HeaderJSONError) -> Value {
        guard let json = value(key) else {
            throw .field(path: "", problem: "the required key \(HeaderJSONError.quoted(key)) is missing")
        }
        do throws(HeaderJSONError) {
            return try read(json)
        } catch {
            throw error.inside(key: key)
        }
    }

    /// The value of `key` read by `read`, or `nil` when the key is missing or `null`.
    func optional<Value>(_ key: String, _ read: (HeaderJSON) throws(HeaderJSONError) -> Value) throws(HeaderJSONError) -> Value? {
        guard let json = value(key), json != .null else { return nil }
        return try required(key, read)
    }

    /// A required string.
    func string(_ key: String) throws(HeaderJSONError) -> String { try required(key) { json throws(HeaderJSONError) in try json.string() } }
    /// A required integer.
    func int(_ key: String) throws(HeaderJSONError) -> Int { try required(key) { json throws(HeaderJSONError) in try json.int() } }
    /// A required `Double`.
    func double(_ key: String) throws(HeaderJSONError) -> Double { try required(key) { json throws(HeaderJSONError) in try json.double() } }
    /// A required `Float`.
    func float(_ key: String) throws(HeaderJSONError) -> Float { try required(key) { json throws(HeaderJSONError) in try json.float() } }
    /// A required array of strings.
    func strings(_ key: String) throws(HeaderJSONError) -> [String] {
        try required(key) { json throws(HeaderJSONError) in try json.array { element throws(HeaderJSONError) in try element.string() } }
    }
    /// A required array of integers.
    func ints(_ key: String) throws(HeaderJSONError) -> [Int] {
        try required(key) { json throws(HeaderJSONError) in try json.array { element throws(HeaderJSONError) in try element.int() } }
    }
    /// An optional string.
    func optionalString(_ key: String) throws(HeaderJSONError) -> String? {
        try optional(key) { json throws(HeaderJSONError) in try json.string() }
    }
    /// An optional integer.
    func optionalInt(_ key: String) throws(HeaderJSONError) -> Int? { try optional(key) { json throws(HeaderJSONError) in try json.int() } }
    /// An optional non-negative integer that fits `UInt64`.
    func optionalUInt64(_ key: String) throws(HeaderJSONError) -> UInt64? {
        try optional(key) { json throws(HeaderJSONError) in try json.uint64() }
    }
    /// An optional `Double`.
    func optionalDouble(_ key: String) throws(HeaderJSONError) -> Double? {
        try optional(key) { json throws(HeaderJSONError) in try json.double() }
    }
    /// A required string value of `Value`.
    func choice<Value: RawRepresentable & CaseIterable>(_ key: String, _ type: Value.Type) throws(HeaderJSONError) -> Value
    where Value.RawValue == String {
        try required(key) { json throws(HeaderJSONError) in try json.choice(type) }
    }
}
