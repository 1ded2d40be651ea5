/// JSON written straight into bytes, for the answers printed or served once per input (`ShapeJSON`, `FollowJSON`):
/// the same text `jsonText` makes of their `Encodable` conformances — keys in the order the caller writes them
/// (which it keeps sorted, as `.sortedKeys` does), a number as `Double.description` without a trailing `.0`, a string
/// with `"`, `\`, C0 (`\b \t \n \f \r`, else `\u00xx`), DEL and C1 escaped — at a small part of `JSONEncoder`'s cost
/// (no tree of boxed values, no key sorting). The tests hold each writer to `jsonText` of the same value.
///
/// A number that is not finite makes the whole text `{}`, as `jsonText` gives when `JSONEncoder` refuses it.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    /// Whether the next member or element needs a comma before it.
    private var needsComma = false
    /// Whether a number was not finite.
    private var invalid = false

    init(capacity: Int = 512) { bytes.reserveCapacity(capacity) }

    /// The text, or `{}` when a number was not finite.
    var text: String { invalid ? "{}" : String(decoding: bytes, as: UTF8.self) }

    /// The bytes, or `{}`'s when a number was not finite.
    var result: [UInt8] { invalid ? Array("{}".utf8) : bytes }

    mutating func beginObject() { open(UInt8(ascii: "{")) }
    mutating func endObject() { close(UInt8(ascii: "}")) }
    mutating func beginArray() { open(UInt8(ascii: "[")) }
    mutating func endArray() { close(UInt8(ascii: "]")) }

    private mutating func open(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        needsComma = false
    }

    private mutating func close(_ bracket: UInt8) {
        bytes.append(bracket)
        needsComma = true
    }

    /// A member's key (a literal of the caller's, which needs no escaping) and its colon.
    mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// A member whose key is any text (a class label).
    mutating func key(_ name: String) {
        string(name)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    mutating func string(_ value: String) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            // Most strings (labels, names, paths) need no escape: copied whole.
            guard utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 == 0x7F || $0 == 0xC2 }) else {
                bytes.append(contentsOf: utf8)
                return
            }
            var previous: UInt8 = 0
            for byte in utf8 {
                switch byte {
                case UInt8(ascii: "\""): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
                case UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
                case 0x08: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
                case 0x09: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
                case 0x0A: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
                case 0x0C: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
                case 0x0D: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
                case 0x00..<0x20, 0x7F: escape(byte)
                // U+0080…U+009F is C2 80…C2 9F in UTF-8: the C2 is held back (below) until its second byte shows which.
                case 0x80...0x9F where previous == 0xC2: escape(byte)
                default:
                    if previous == 0xC2 { bytes.append(0xC2) }
                    if byte != 0xC2 { bytes.append(byte) }
                }
                previous = byte
            }
            if previous == 0xC2 { bytes.append(0xC2) }  // not reached for valid UTF-8, which never ends with a lead byte
        }
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    /// `\u00xx`, lowercase, as `JSONEncoder` and `escapingHighControls` write it.
    private mutating func escape(_ code: UInt8) {
        let hex = Array("0123456789abcdef".utf8)
        bytes += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(code >> 4)], hex[Int(code & 15)]]
    }

    /// `value.description` without a trailing `.0` (`384`, `0.5`, `1e-05`, `1e+16`): what `JSONEncoder` writes. A
    /// whole number below 10¹⁵ is written from its digits, without formatting.
    mutating func number(_ value: Double) {
        separate()
        needsComma = true
        guard value.isFinite else {
            invalid = true
            return
        }
        if value.rounded(.towardZero) == value, value.magnitude < 1e15 {
            if value.sign == .minus { bytes.append(UInt8(ascii: "-")) }
            PercentText.appendDecimal(Int(value.magnitude), to: &bytes)
            return
        }
        var text = value.description
        text.withUTF8 { utf8 in
            // Copied as one buffer (an appended `utf8` view is copied byte by byte).
            let whole = utf8.count >= 2 && utf8[utf8.count - 2] == UInt8(ascii: ".") && utf8[utf8.count - 1] == UInt8(ascii: "0")
            bytes.append(contentsOf: whole ? UnsafeBufferPointer(rebasing: utf8.dropLast(2)) : utf8)
        }
    }

    mutating func number(_ value: Int) {
        separate()
        needsComma = true
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        PercentText.appendDecimal(Int(value.magnitude), to: &bytes)
    }

    mutating func null() {
        separate()
        bytes += Array("null".utf8)
        needsComma = true
    }

    mutating func bool(_ value: Bool) {
        separate()
        bytes += value ? Array("true".utf8) : Array("false".utf8)
        needsComma = true
    }

    /// A member `name` when `value` is present (as `encodeIfPresent` leaves an absent one out).
    mutating func member(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    mutating func member(_ name: StaticString, _ value: Double?) {
        guard let value else { return }
        key(name)
        number(value)
    }

    /// `[x, y]`.
    mutating func pair(_ values: [Double]) {
        beginArray()
        for value in values { number(value) }
        endArray()
    }

    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }
}
