import Foundation
import Tensor
import Testing

@testable import Models

/// The header bytes of an encoded weights file.
private func headerBytes(_ file: [UInt8]) -> [UInt8] {
    let length = (12..<16).reduce(0) { $0 | Int(file[$1]) << (8 * ($1 - 12)) }
    return Array(file[ModelFile.preambleBytes..<(ModelFile.preambleBytes + length)])
}

private func replacing(_ json: [UInt8], _ old: String, _ new: String) -> [UInt8] {
    Array(String(decoding: json, as: UTF8.self).replacingOccurrences(of: old, with: new).utf8)
}

/// A parse's error text, or `nil` when it parses.
private func parseError(_ bytes: [UInt8]) -> String? {
    do throws(HeaderJSONError) {
        _ = try HeaderJSON.parse(bytes[...])
        return nil
    } catch {
        return error.description
    }
}

@Suite("The weights header's parser")
struct HeaderJSONTests {
    /// Syntax errors in a real header: the position (line 1: the encoder writes no line breaks) and what was
    /// expected and found. `at` is the error's offset inside the replacement text.
    @Test func syntaxErrorsInAHeaderSayWhereAndWhat() throws {
        let header = headerBytes(try imageModelFile(format: .int8).encoded())
        let text = String(decoding: header, as: UTF8.self)
        let cases: [(old: String, new: String, at: Int, error: String)] = [
            (
                #""epochs":3"#, #""epochs":03"#, 10,
                "expected '.', 'e' or the number's end after a leading 0 (JSON numbers have no leading zeros), found '3'"
            ),
            (#""epochs":3"#, #""epochs":tru"#, 9, "expected true, found 'tru'"),
            (#""epochs":3"#, #""epochs":+3"#, 9, "expected a value after ':', found '+'"),
            (#""epochs":3"#, #""epochs":-"#, 10, "expected a digit after '-', found ','"),
            (#""epochs":3"#, #""epochs":3."#, 11, "expected a digit after '.', found ','"),
            (#""epochs":3"#, #""epochs":3e"#, 11, "expected a digit in the exponent, found ','"),
            (#""epochs":3"#, #""epochs":NaN"#, 9, "expected a value after ':', found 'N'"),
            (#""epochs":3,"#, #""epochs":3 /* three */,"#, 11, "expected ',' or '}' after a member, found '/'"),
            ("[28,28,1]", "[28,28,1,]", 9, "expected a value after ',', found ']'"),
            ("[28,28,1]", "[28 28 1]", 4, "expected ',' or ']' after an element, found '2'"),
            (#""name":"test-image""#, #""name":"a","name":"b""#, 11, #"expected each key once in an object, found "name" again"#),
            (#""name":"#, #""name""#, 6, #"expected ':' after the key "name", found '"'"#),
            (#""name":"test-image""#, #"'name':"test-image""#, 0, "expected a key (a string) after ',', found '''"),
            (
                #""test-image""#, "\"test\u{1}image\"", 5,
                #"expected a character or an escape in a string (a control character must be escaped, e.g. \n), found byte 0x01"#
            ),
            (#""test-image""#, #""test\qimage""#, 6, #"expected an escape: \", \\, \/, \b, \f, \n, \r, \t or \u and 4 hex digits, found 'q'"#),
            (#""test-image""#, #""test\u12g4""#, 9, #"expected 4 hex digits after \u, found 'g'"#),
            (#""test-image""#, #""test\ud800image""#, 11, #"expected a low surrogate \uDC00…\uDFFF after the high surrogate \uD800, found 'i'"#),
            (#""test-image""#, #""test\udfffimage""#, 5, #"expected a Unicode scalar (a low surrogate must follow a high one), found \uDFFF alone"#),
        ]
        for (old, new, at, error) in cases {
            let changed = replacing(header, old, new)
            let offset = try #require(text.range(of: old)).lowerBound.utf16Offset(in: text) + at
            #expect(changed != header, "\(old) → \(new) changed nothing")
            #expect(parseError(changed) == "line 1, column \(offset + 1) (byte \(offset) of the header): \(error)", "\(old) → \(new)")
        }
    }

    /// Positions count lines (LF, CR LF, CR) and characters, and every kind of syntax error has its message.
    @Test func syntaxErrorsGiveLineColumnAndByte() {
        let control = "expected a character or an escape in a string (a control character must be escaped, e.g. \\n)"
        let cases: [(json: [UInt8], error: String)] = [
            (Array("".utf8), "line 1, column 1 (byte 0 of the header): expected a value, found the end of the header"),
            (Array(" \n ".utf8), "line 2, column 2 (byte 3 of the header): expected a value, found the end of the header"),
            (Array("{".utf8), "line 1, column 2 (byte 1 of the header): expected a key (a string) or '}', found the end of the header"),
            (Array("{\n  \"a\": tru\n}".utf8), "line 2, column 8 (byte 9 of the header): expected true, found 'tru'"),
            (Array("{\r\n\"a\":1\r\n,}".utf8), "line 3, column 2 (byte 11 of the header): expected a key (a string) after ',', found '}'"),
            (Array("{\r\"a\":1\r\r}x".utf8), "line 4, column 2 (byte 10 of the header): expected the end of the header after its value, found 'x'"),
            (Array("{\"é\":1,}".utf8), "line 1, column 8 (byte 8 of the header): expected a key (a string) after ',', found '}'"),
            (Array("\u{FEFF}{}".utf8), "line 1, column 1 (byte 0 of the header): expected a value, found '\u{FEFF}' (U+FEFF)"),
            (Array("[é]".utf8), "line 1, column 2 (byte 1 of the header): expected a value or ']', found 'é' (U+00E9)"),
            (Array(#"{"a":"x}"#.utf8), #"line 1, column 9 (byte 8 of the header): expected '"' to close the string, found the end of the header"#),
            (
                Array(#"{"a":{"b":1,"b":2}}"#.utf8),
                #"line 1, column 13 (byte 12 of the header): expected each key once in an object, found "b" again"#
            ),
            (
                Array(#"["\udc00"]"#.utf8),
                #"line 1, column 3 (byte 2 of the header): expected a Unicode scalar (a low surrogate must follow a high one), found \uDC00 alone"#
            ),
            (
                Array(#"["\ud800\u0041"]"#.utf8),
                #"line 1, column 9 (byte 8 of the header): expected a low surrogate \uDC00…\uDFFF after the high surrogate \uD800, found \u0041"#
            ),
            (
                Array(#"["\ud800"]"#.utf8),
                #"line 1, column 9 (byte 8 of the header): expected a low surrogate \uDC00…\uDFFF after the high surrogate \uD800, found '"'"#
            ),
            (Array("[\"a\tb\"]".utf8), "line 1, column 4 (byte 3 of the header): \(control), found byte 0x09"),
            (Array("[\"a\nb\"]".utf8), "line 1, column 4 (byte 3 of the header): \(control), found byte 0x0A"),
            (
                [0x5B, 0x22, 0xC3, 0x28, 0x22, 0x5D],
                "line 1, column 3 (byte 2 of the header): expected valid UTF-8, found bytes 0xC3 0x28, not UTF-8"
            ),
            ([0x5B, 0x22, 0xC0, 0xAF, 0x22, 0x5D], "line 1, column 3 (byte 2 of the header): expected valid UTF-8, found byte 0xC0, not UTF-8"),
            (
                [0x5B, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x5D],
                "line 1, column 3 (byte 2 of the header): expected valid UTF-8, found bytes 0xED 0xA0 0x80, not UTF-8"
            ),
            (
                [0x5B, 0x22, 0xF4, 0x90, 0x80, 0x80, 0x22, 0x5D],
                "line 1, column 3 (byte 2 of the header): expected valid UTF-8, found bytes 0xF4 0x90 0x80 0x80, not UTF-8"
            ),
            (
                [0x5B, 0x22, 0xE2, 0x82],
                "line 1, column 3 (byte 2 of the header): expected valid UTF-8, found bytes 0xE2 0x82 and the end of the header, not UTF-8"
            ),
            ([0x5B, 0x22, 0xFF, 0x22, 0x5D], "line 1, column 3 (byte 2 of the header): expected valid UTF-8, found byte 0xFF, not UTF-8"),
            ([0x5B, 0xFF, 0x5D], "line 1, column 2 (byte 1 of the header): expected a value or ']', found byte 0xFF, not UTF-8"),
            (Array("[1,2}".utf8), "line 1, column 5 (byte 4 of the header): expected ',' or ']' after an element, found '}'"),
            (Array(#"{"a":1]"#.utf8), "line 1, column 7 (byte 6 of the header): expected ',' or '}' after a member, found ']'"),
            (Array("[nul]".utf8), "line 1, column 2 (byte 1 of the header): expected null, found 'nul'"),
            (Array("[falsy]".utf8), "line 1, column 2 (byte 1 of the header): expected false, found 'falsy'"),
            (Array("[.5]".utf8), "line 1, column 2 (byte 1 of the header): expected a value or ']', found '.'"),
            (Array("[1 2]".utf8), "line 1, column 4 (byte 3 of the header): expected ',' or ']' after an element, found '2'"),
        ]
        for (json, error) in cases {
            #expect(parseError(json) == error, "\(String(decoding: json, as: UTF8.self))")
        }
    }

    /// Escapes decode to their characters, surrogate pairs to one scalar; strings without escapes stay as written.
    @Test func escapesAndSurrogatePairsDecode() throws {
        let text = #"""
            {"k\u0065y":["\"\\\/\b\f\n\r\t","\u0041\u00e9\u20AC\ud83c\udfaf","\u0000","é€🎯",""],
             "n":[0,-0,1.5,-2.5e3,1E+2,0.0e-0,123456789012345678901234567890],"l":[true,false,null,{}]}
            """#
        let strings: [HeaderJSON] = [.string("\"\\/\u{8}\u{C}\n\r\t"), .string("Aé€🎯"), .string("\u{0}"), .string("é€🎯"), .string("")]
        let numbers = ["0", "-0", "1.5", "-2.5e3", "1E+2", "0.0e-0", "123456789012345678901234567890"].map(HeaderJSON.number)
        #expect(
            try HeaderJSON.parse(Array(text.utf8)[...])
                == .object([
                    (key: "key", value: .array(strings)), (key: "n", value: .array(numbers)),
                    (key: "l", value: .array([.bool(true), .bool(false), .null, .object([])])),
                ]))
        #expect(try HeaderJSON.parse(Array(" \t\r\n[[1]] \n".utf8)[...]) == .array([.array([.number("1")])]))
        #expect(try HeaderJSON.parse(Array("\"🎯\"".utf8)[...]) == .string("🎯"))
    }

    /// The nesting, member and element limits are errors at the first value beyond them.
    @Test func limitsAreErrors() {
        let depth = HeaderJSON.maximumDepth
        #expect(parseError(Array((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8)) == nil)
        #expect(
            parseError(Array((String(repeating: "[", count: depth + 1) + String(repeating: "]", count: depth + 1)).utf8))
                == "line 1, column \(depth + 1) (byte \(depth) of the header): expected at most \(depth) levels of nested objects and arrays, found '['"
        )
        let deepObject = String(repeating: #"{"a":"#, count: depth + 1) + "1" + String(repeating: "}", count: depth + 1)
        #expect(parseError(Array(deepObject.utf8))?.hasSuffix("expected at most \(depth) levels of nested objects and arrays, found '{'") == true)

        let members = { (count: Int) in "{" + (0..<count).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}" }
        #expect(parseError(Array(members(HeaderJSON.maximumMembers).utf8)) == nil)
        let tooMany = members(HeaderJSON.maximumMembers + 1)
        let lastKey = tooMany.range(of: "\"k\(HeaderJSON.maximumMembers)\"")?.lowerBound.utf16Offset(in: tooMany) ?? 0
        #expect(
            parseError(Array(tooMany.utf8))
                == "line 1, column \(lastKey + 1) (byte \(lastKey) of the header): expected at most \(HeaderJSON.maximumMembers) members in an "
                + "object, found member \(HeaderJSON.maximumMembers + 1)")

        let elements = { (count: Int) in "[" + String(repeating: "0,", count: count - 1) + "0]" }
        let most = HeaderJSON.maximumElements
        #expect(parseError(Array(elements(most).utf8)) == nil)
        #expect(
            parseError(Array(elements(most + 1).utf8))
                == "line 1, column \(2 * most + 2) (byte \(2 * most + 1) of the header): expected at most \(most) elements in an array, "
                + "found element \(most + 1)")
    }
}
