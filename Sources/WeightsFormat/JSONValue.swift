/// A JSON value, for the free-form parts of a weights header (preprocessing parameters).
public enum JSONValue: Codable, Equatable, Sendable, CustomStringConvertible {
    /// A string.
    case string(String)
    /// A number.
    case number(Double)
    /// `true` or `false`.
    case bool(Bool)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])
    /// `null`.
    case null

    /// Decodes whichever kind of value is there.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Encodes the value as itself.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }

    /// Every number inside the value.
    package var numbers: [Double] {
        switch self {
        case .number(let value): [value]
        case .array(let values): values.flatMap(\.numbers)
        case .object(let values): values.values.flatMap(\.numbers)
        case .string, .bool, .null: []
        }
    }

    /// The value as JSON-like text.
    public var description: String {
        switch self {
        case .string(let value): "\"\(value)\""
        case .number(let value): value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : "\(value)"
        case .bool(let value): "\(value)"
        case .array(let values): "[" + values.map(\.description).joined(separator: ", ") + "]"
        case .object(let values):
            "{" + values.keys.sorted().map { "\($0): \(values[$0]?.description ?? "null")" }.joined(separator: ", ") + "}"
        case .null: "null"
        }
    }
}
