import DataFiles

/// A JSON document (RFC 8259) read value by value, with the header's parser: the same grammar, the same refusals
/// (a repeated key, invalid UTF-8, an unescaped control character, trailing bytes) and the same messages, but no
/// tree. The caller walks the structure it expects and keeps only what it needs, so a document of a million
/// points costs the points, and a limit (the most points a drawing may have) is checked as each value is read,
/// not after the whole body was decoded.
///
/// Errors are `DataError`s naming `file`, the line and the column: `request:1: column 40 (byte 39): expected ','
/// or ']' after an element, found '}'`.
package struct JSONCursor {
    private var parser: Parser
    private let file: String

    /// A cursor at the start of `bytes`; `file` names the document in errors ("request").
    package init(_ bytes: ArraySlice<UInt8>, file: String) {
        parser = Parser(bytes: bytes, document: "body")
        self.file = file
    }

    /// The error `expected` (found: what is at `position`, by default the current byte) as a `DataError`.
    package func failure(_ expected: String, at position: Int? = nil, found: String? = nil) -> DataError {
        Self.dataError(parser.failure(expected, at: position, found: found), file: file)
    }

    /// Steps into an object (`{`); `what` names it in an error ("an object {\"strokes\": …}").
    package mutating func beginObject(_ what: String) throws(DataError) {
        parser.skipWhitespace()
        guard parser.current == UInt8(ascii: "{") else { throw failure(what) }
        parser.index += 1
    }

    /// The next key of the object entered, after its `:`; `nil` at the object's `}`. `keys` holds the keys read so
    /// far in this object (empty before the first): a key already among them is refused, as the header's parser
    /// refuses it.
    package mutating func nextKey(_ keys: inout [String]) throws(DataError) -> String? {
        try nextKey(&keys, expecting: [])
    }

    /// `nextKey(_:)` for an object whose keys are likely `expected`, in that order (the previous sample's): a key
    /// written exactly as `expected[keys.count]` (no escapes) is that same `String`, read without making a new one,
    /// and while every key so far was the expected one the repeat check is left out (`expected` holds no repeats).
    /// The same keys, errors and refusals as `nextKey(_:)`, at a small part of its cost for rows of the same keys.
    package mutating func nextKey(_ keys: inout [String], expecting expected: [String]) throws(DataError) -> String? {
        parser.skipWhitespace()
        if keys.isEmpty {
            if parser.current == UInt8(ascii: "}") {
                parser.index += 1
                return nil
            }
        } else {
            switch parser.current {
            case UInt8(ascii: ","):
                parser.index += 1
                parser.skipWhitespace()
            case UInt8(ascii: "}"):
                parser.index += 1
                return nil
            default: throw failure("',' or '}' after a member")
            }
        }
        guard parser.current == UInt8(ascii: "\"") else { throw failure(keys.isEmpty ? "a key (a string) or '}'" : "a key (a string) after ','") }
        let start = parser.index
        let key: String
        if keys.count < expected.count, let end = matchedKey(expected[keys.count]) {
            key = expected[keys.count]
            parser.index = end
        } else {
            do { key = try parser.string() } catch { throw Self.dataError(error, file: file) }
        }
        guard keys.count < HeaderJSON.maximumMembers else {
            throw failure("at most \(HeaderJSON.maximumMembers) members in an object", at: start, found: "member \(keys.count + 1)")
        }
        let inOrder = keys.count < expected.count && key == expected[keys.count] && keys.indices.allSatisfy { keys[$0] == expected[$0] }
        guard inOrder || !keys.contains(key) else {
            throw failure("each key once in an object", at: start, found: "\(HeaderJSONError.quoted(key)) again")
        }
        keys.append(key)
        parser.skipWhitespace()
        guard parser.current == UInt8(ascii: ":") else { throw failure("':' after the key \(HeaderJSONError.quoted(key))") }
        parser.index += 1
        return key
    }

    /// The position after the string at the cursor when it is `"key"` byte for byte, with `key` needing no escape;
    /// otherwise `nil`.
    private func matchedKey(_ key: String) -> Int? {
        let start = parser.index + 1
        let matched = key.utf8.withContiguousStorageIfAvailable { key -> Bool in
            parser.bytes.withUnsafeBufferPointer { all in
                let from = start - parser.bytes.startIndex
                guard from + key.count < all.count, all[from + key.count] == UInt8(ascii: "\"") else { return false }
                for (offset, byte) in key.enumerated() {
                    guard byte >= 0x20, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\"), all[from + offset] == byte else { return false }
                }
                return true
            }
        }
        return matched == true ? start + key.utf8.count + 1 : nil
    }

    /// Steps into an array (`[`); `what` names it in an error.
    package mutating func beginArray(_ what: String) throws(DataError) {
        parser.skipWhitespace()
        guard parser.current == UInt8(ascii: "[") else { throw failure(what) }
        parser.index += 1
    }

    /// Whether the array entered has another element (after its `,`), given how many were read (`read`); `false`
    /// at its `]`, which is consumed.
    package mutating func nextElement(after read: Int) throws(DataError) -> Bool {
        parser.skipWhitespace()
        switch parser.current {
        case UInt8(ascii: "]"):
            parser.index += 1
            return false
        case UInt8(ascii: ",") where read > 0:
            parser.index += 1
            return true
        case _ where read == 0:
            return true
        default:
            throw failure("',' or ']' after an element")
        }
    }

    /// A number; `what` names it in an error ("a number (x)"; made only for one). Refuses one beyond `Double`'s range (`1e400`),
    /// which no decoder could keep.
    package mutating func number(_ what: @autoclosure () -> String) throws(DataError) -> Double {
        parser.skipWhitespace()
        let start = parser.index
        guard let first = parser.current, first == UInt8(ascii: "-") || Parser.isDigit(first) else { throw failure(what()) }
        let range: Range<Int>
        do { range = try parser.numberRange() } catch { throw Self.dataError(error, file: file) }
        // Most numbers (a few digits) are read from their bytes (`DecimalText`, bit for bit `strtod`); others as text.
        if let value = parser.bytes.withUnsafeBufferPointer({ all in
            DecimalText.double(
                UnsafeBufferPointer(rebasing: all[(range.lowerBound - parser.bytes.startIndex)..<(range.upperBound - parser.bytes.startIndex)]))
        }), value.isFinite {
            return value
        }
        let text = String(decoding: parser.bytes[range], as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw failure("a number within ±1.8e308 (a Double)", at: start, found: text.count > 24 ? String(text.prefix(24)) + "…" : text)
        }
        return value
    }

    /// Reads past one value of any kind without keeping it (members the caller does not read).
    package mutating func skipValue() throws(DataError) {
        try skip(depth: 1)
    }

    private mutating func skip(depth: Int) throws(DataError) {
        parser.skipWhitespace()
        switch parser.current {
        case UInt8(ascii: "{"):
            do { try parser.checkDepth(depth) } catch { throw Self.dataError(error, file: file) }
            parser.index += 1
            var keys: [String] = []
            while try nextKey(&keys) != nil { try skip(depth: depth + 1) }
        case UInt8(ascii: "["):
            do { try parser.checkDepth(depth) } catch { throw Self.dataError(error, file: file) }
            parser.index += 1
            var read = 0
            while try nextElement(after: read) {
                try skip(depth: depth + 1)
                read += 1
            }
        default:
            // A scalar: the header's parser reads it (a string, number, true, false or null) and refuses the rest.
            do { _ = try parser.value(depth: depth, expecting: "a value") } catch { throw Self.dataError(error, file: file) }
        }
    }

    /// Refuses anything but white space after the document's value.
    package mutating func end() throws(DataError) {
        parser.skipWhitespace()
        guard parser.index == parser.bytes.endIndex else { throw failure("the end of the body after its value") }
    }

    /// A syntax error as the `DataError` of `file`: its line, its column (with the byte offset) and what was
    /// expected and found.
    private static func dataError(_ error: HeaderJSONError, file: String) -> DataError {
        switch error {
        case let .syntax(offset, line, column, expected, found, _):
            DataError(file: file, line: line, column: (column, "byte \(offset)"), message: "expected \(expected), found \(found)")
        case .field:
            DataError(file: file, message: error.description)
        }
    }
}
