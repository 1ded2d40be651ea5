import Foundation
import Tensor
import Testing

@testable import Models
@testable import WeightsFormat

/// The header bytes of an encoded weights file.
func headerBytes(_ file: [UInt8]) -> [UInt8] {
    let length = (12..<16).reduce(0) { $0 | Int(file[$1]) << (8 * ($1 - 12)) }
    return Array(file[ModelFile.preambleBytes..<(ModelFile.preambleBytes + length)])
}

/// The header the one reader makes of `json`, or its error.
private func read(_ json: [UInt8]) -> Result<WeightsHeader, HeaderJSONError> {
    do throws(HeaderJSONError) {
        return .success(try WeightsHeader(jsonBytes: json[...]))
    } catch {
        return .failure(error)
    }
}

/// The twin: what `JSONDecoder` and the `Decodable` conformances make of `json` (test-only oracle).
private func decoded(_ json: [UInt8]) -> WeightsHeader? {
    try? JSONDecoder().decode(WeightsHeader.self, from: Data(json))
}

/// Checks that the reader reads `json` and gives exactly the twin's header.
private func expectReadAsTheDecoderReadsIt(_ json: [UInt8], _ note: String = "", sourceLocation: SourceLocation = #_sourceLocation) {
    let text = String(decoding: json.prefix(300), as: UTF8.self)
    switch read(json) {
    case .success(let header):
        #expect(header == decoded(json), "the reader differs from JSONDecoder \(note) on \(text)", sourceLocation: sourceLocation)
    case .failure(let error):
        Issue.record("the reader refused \(note) \(text): \(error)", sourceLocation: sourceLocation)
    }
}

/// Checks the twin property on any input: what the reader accepts, `JSONDecoder` accepts with the same value.
private func expectNoDisagreement(_ json: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
    guard case .success(let header) = read(json) else { return }
    #expect(
        header == decoded(json), "the reader accepted what JSONDecoder refuses or reads differently: \(String(decoding: json, as: UTF8.self))",
        sourceLocation: sourceLocation)
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

/// `json` written again: every string character as a `\u` escape (UTF-16, so beyond U+FFFF as a surrogate pair),
/// white space of every kind between tokens, and the keys of each object in reverse order.
private func rewritten(_ json: HeaderJSON, escapeAll: Bool, spaced: Bool, reversed: Bool) -> String {
    let space = spaced ? " \r\n\t " : ""
    func string(_ text: String) -> String {
        guard escapeAll else {
            // Only what must be escaped: quotes, backslashes and control characters.
            let escaped = text.unicodeScalars.map { scalar in
                switch scalar {
                case "\"", "\\": "\\" + String(scalar)
                case _ where scalar.value < 0x20: String(format: "\\u%04X", scalar.value)
                default: String(scalar)
                }
            }
            return "\"" + escaped.joined() + "\""
        }
        return "\"" + text.utf16.map { String(format: "\\u%04x", $0) }.joined() + "\""
    }
    switch json {
    case .object(let members):
        let ordered = reversed ? members.reversed() : members
        let written = ordered.map {
            space + string($0.key) + space + ":" + space + rewritten($0.value, escapeAll: escapeAll, spaced: spaced, reversed: reversed)
        }
        return "{" + written.joined(separator: space + ",") + space + "}"
    case .array(let elements):
        return "[" + elements.map { space + rewritten($0, escapeAll: escapeAll, spaced: spaced, reversed: reversed) }.joined(separator: ",") + space
            + "]"
    case .string(let text): return string(text)
    case .number(let text): return text
    case .bool(let value): return "\(value)"
    case .null: return "null"
    }
}

@Suite("The weights header's one reader")
struct HeaderJSONTests {
    /// The headers this build writes (every layer kind and activation, a description with quotes, non-ASCII and a
    /// character beyond U+FFFF, a decision) and the shipped files' headers (activation quantization, training runs).
    static func headers() throws -> [[UInt8]] {
        var headers = [try imageModelFile(), try imageModelFile(format: .int8), try imageModelFile(format: .q4)].map { headerBytes($0.encoded()) }
        let sequence = try ModelFile(
            name: "test-sequence", model: sequenceModel(), labels: ["a", "b"],
            input: InputSpec(shape: [128, 12], description: "128×12 \"window\" \\ é 🎯\n"),
            decision: DecisionRule(temperature: 1.25, rejectLabel: "b"), format: .lut4)
        headers.append(headerBytes(sequence.encoded()))
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let shipped = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Weights").path)
            .filter { $0.hasSuffix(".weights") }.sorted()
        #expect(shipped.count == 4)
        for name in shipped {
            headers.append(headerBytes(Array(try Data(contentsOf: root.appendingPathComponent("Weights/\(name)")))))
        }
        return headers
    }

    @Test func everyHeaderThisBuildWritesOrShipsIsReadAsJSONDecoderReadsIt() throws {
        for header in try Self.headers() { expectReadAsTheDecoderReadsIt(header) }
    }

    /// The same headers with every string escaped, white space everywhere and the keys reversed: the same value,
    /// and the same as the twin's.
    @Test func rewrittenHeadersGiveTheSameHeader() throws {
        for header in try Self.headers() {
            guard case .success(let original) = read(header) else {
                Issue.record("refused \(String(decoding: header, as: UTF8.self))")
                continue
            }
            let json = try HeaderJSON.parse(header[...])
            for (escapeAll, spaced, reversed) in [(true, false, false), (false, true, false), (false, false, true), (true, true, true)] {
                let text = Array(rewritten(json, escapeAll: escapeAll, spaced: spaced, reversed: reversed).utf8)
                #expect(text != header)
                #expect(try read(text).get() == original, "escapeAll \(escapeAll), spaced \(spaced), reversed \(reversed)")
                expectReadAsTheDecoderReadsIt(text, "(escapeAll \(escapeAll), spaced \(spaced), reversed \(reversed))")
            }
        }
    }

    /// Forms the encoder does not write but JSON allows, each with its meaning: read as the twin reads them.
    @Test func otherValidFormsAreReadAsTheDecoderReadsThem() throws {
        let header = headerBytes(try imageModelFile(format: .int8).encoded())
        let variants: [(String, String)] = [
            ("\"epochs\":3", "\"epochs\":-0"), ("\"epochs\":3", "\"epochs\":null"), ("\"validationAccuracy\":0.75", "\"validationAccuracy\":0.0e5"),
            ("\"validationAccuracy\":0.75", "\"validationAccuracy\":75E-2"), ("\"validationAccuracy\":0.75", "\"validationAccuracy\":0.75e+0"),
            ("\"lineWidth\":2.5", "\"lineWidth\":1.0000000596046448"), ("\"alpha\":0.05", "\"alpha\":1.0000000596046448"),
            ("\"alpha\":0.05", "\"alpha\":3.4028234e38"), ("\"lineWidth\":2.5", "\"lineWidth\":[1,{\"a\":null,\"b\":\"\\/\"},true,-0.0]"),
            ("\"name\":\"test-image\"", "\"name\":\"test\\u002Dimage\""), ("\"test-image\"", "\"tést-image\""),
            ("\"Datasets/x.csv\"", "\"Datasets\\/x.csv\\t\\r\\n\\b\\f\\u0000\""), ("\"test-image\"", "\"\\ud83c\\udfaf \\uD83C\\uDFAF\""),
            (",", " ,\n\t"), ("\":", "\"\r\n:\r"), ("{\"", "{ \""),
        ]
        for (old, new) in variants {
            let changed = replacing(header, old, new)
            #expect(changed != header, "the variant \(old) → \(new) changed nothing")
            expectReadAsTheDecoderReadsIt(changed, "(\(old) → \(new))")
        }
    }

    /// Keys a reader does not know are ignored (FORMAT.md's promise, so an optional field added later does not break
    /// the readers before it), in the header, its objects and a layer's fields alike: the same header as without them.
    @Test func unknownKeysAreIgnoredAsTheFormatPromises() throws {
        let header = headerBytes(try imageModelFile(format: .int8).encoded())
        let original = try read(header).get()
        for (old, new) in [
            ("\"name\":\"test-image\"", "\"name\":\"test-image\",\"extra\":{\"a\":[1,2]}"),
            ("\"seed\":7", "\"seed\":7,\"machine\":\"x86\""), ("\"inFeatures\":512", "\"inFeatures\":512,\"note\":true"),
            ("{\"relu\":{}}", "{\"relu\":{\"x\":1}}"),
        ] {
            let changed = replacing(header, old, new)
            #expect(changed != header, "the variant \(old) → \(new) changed nothing")
            #expect(try read(changed).get() == original, "\(old) → \(new)")
            expectReadAsTheDecoderReadsIt(changed, "(\(old) → \(new))")
        }
    }

    /// Headers that are valid JSON but not the format: each error names the field's path and what was found.
    @Test func fieldErrorsNameThePathAndWhatWasFound() throws {
        let header = headerBytes(try imageModelFile(format: .int8).encoded())
        let range = "a number within a Double's range (0, or a magnitude from 2.2e-308 to 1.8e308)"
        let cases: [(old: String, new: String, error: String)] = [
            ("\"shape\":[16,3,3,1]", "\"shape\":[16,\"3\",3,1]", "tensors[0].shape[1]: expected an integer, found \"3\""),
            (
                "{\"conv2D\":{\"inChannels\":1,", "{\"conv3D\":{\"inChannels\":1,",
                "architecture[0]: unknown layer kind \"conv3D\" (the kinds are dense, conv1D, conv2D, pool1D, pool2D, globalAveragePool, batchNorm, "
                    + "flatten, activation, transpose, reshape, pad, constantOperation, reduce)"
            ),
            ("\"epochs\":3", "\"epochs\":1.5", "training.epochs: expected an integer, found 1.5"),
            ("\"epochs\":3", "\"epochs\":3.0", "training.epochs: expected an integer, found 3.0"),
            ("\"epochs\":3", "\"epochs\":3e0", "training.epochs: expected an integer, found 3e0"),
            ("\"epochs\":3", "\"epochs\":\"3\"", "training.epochs: expected an integer, found \"3\""),
            (
                "\"epochs\":3", "\"epochs\":99999999999999999999",
                "training.epochs: expected an integer from -9223372036854775808 to 9223372036854775807, found 99999999999999999999"
            ),
            ("\"seed\":7", "\"seed\":-7", "training.seed: expected an integer from 0 to 18446744073709551615, found -7"),
            ("\"validationAccuracy\":0.75", "\"validationAccuracy\":1e400", "training.validationAccuracy: expected \(range), found 1e400"),
            ("\"validationAccuracy\":0.75", "\"validationAccuracy\":4e-320", "training.validationAccuracy: expected \(range), found 4e-320"),
            ("\"validationAccuracy\":0.75", "\"validationAccuracy\":true", "training.validationAccuracy: expected a number, found true"),
            ("\"lineWidth\":2.5", "\"lineWidth\":[1,{\"a\":1e-400}]", "preprocessing.lineWidth[1].a: expected \(range), found 1e-400"),
            ("\"lineWidth\":2.5", "\"line width\":{\"x\":1e999}", "preprocessing[\"line width\"].x: expected \(range), found 1e999"),
            (
                "\"alpha\":0.05", "\"alpha\":1e-50",
                "architecture[5].activation.function.leakyRelu.alpha: expected a number within a Float's range (0, or a magnitude from 1.2e-38 "
                    + "to 3.4e38), found 1e-50"
            ),
            (
                "{\"relu\":{}}", "{\"relu\":{},\"tanh\":{}}",
                "architecture[2].activation.function: expected an object with one key, the function, found an object with 2 keys"
            ),
            (
                "{\"relu\":{}}", "{\"gelu\":{}}",
                "architecture[2].activation.function: unknown activation \"gelu\" (the functions are relu, leakyRelu, sigmoid, tanh, softmax, "
                    + "logSoftmax, elu, selu, softplus, softsign)"
            ),
            ("{\"flatten\":{}}", "[\"flatten\"]", "architecture[7]: expected an object with one key, the layer kind, found an array of 1 element"),
            ("\"padding\":\"same\"", "\"padding\":\"full\"", "architecture[0].conv2D.padding: expected \"valid\" or \"same\", found \"full\""),
            (
                "\"format\":\"f32\"", "\"format\":\"f64\"",
                "tensors[0].format: expected one of \"f32\", \"f16\", \"int8\", \"q4\", \"lut2\", \"lut4\", \"lut6\", \"lut8\", found \"f64\""
            ),
            ("\"kind\":\"max\"", "\"kind\":\"min\"", "architecture[3].pool2D.kind: expected \"max\" or \"average\", found \"min\""),
            ("\"inFeatures\":512", "\"inFeatures\":true", "architecture[8].dense.inFeatures: expected an integer, found true"),
            ("\"name\":\"test-image\",", "", "the required key \"name\" is missing"),
            (
                "\"epochs\":3", "\"epochs\":3,\"epochsTrained\":2",
                "training.epochsTrained: expected at least 3 (a run trains its best epoch and more), found 2"
            ),
            ("\"name\":\"test-image\"", "\"name\":null", "name: expected a string, found null"),
            ("\"description\":\"28x28 test image\",", "", "input: the required key \"description\" is missing"),
            ("\"labels\":[\"circle\",\"triangle\",\"square\",\"star\"]", "\"labels\":\"walking\"", "labels: expected an array, found \"walking\""),
            ("\"labels\":[\"circle\",", "\"labels\":[\"circle\",7,", "labels[1]: expected a string, found 7"),
            (
                "\"input\":{\"description\":\"28x28 test image\",\"shape\":[28,28,1]}", "\"input\":[1]",
                "input: expected an object, found an array of 1 element"
            ),
        ]
        for (old, new, error) in cases {
            let changed = replacing(header, old, new)
            #expect(changed != header, "\(old) → \(new) changed nothing")
            guard case .failure(let failure) = read(changed) else {
                Issue.record("read \(old) → \(new)")
                continue
            }
            #expect(failure.description == error, "\(old) → \(new)")
            if case .syntax = failure { Issue.record("a syntax error for valid JSON: \(failure)") }
        }
    }

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

    /// Every single-byte change of a real header: what the reader accepts, JSONDecoder reads the same way.
    @Test func byteFlipsNeverDisagreeWithTheDecoder() throws {
        let header = headerBytes(try imageModelFile(format: .int8).encoded())
        var generator = SeededGenerator(seed: 13)
        let replacements: [UInt8] = Array("{}[]\",:0123456789.eE+- \\nulltruefalsex\u{7F}/u".utf8) + [0x00, 0x09, 0xC3, 0xFF]
        var accepted = 0
        for _ in 0..<3000 {
            var changed = header
            let position = Int(generator.next() % UInt64(changed.count))
            changed[position] = replacements[Int(generator.next() % UInt64(replacements.count))]
            expectNoDisagreement(changed)
            if case .success = read(changed) { accepted += 1 }
        }
        #expect(accepted > 100 && accepted < 2900, "\(accepted) of 3000 changed headers read: the changes must exercise both outcomes")
    }

    /// Through a whole file: a corrupt header is `corruptHeader` with the reader's message, after the file's path.
    @Test func aWeightsFileReportsTheHeaderErrorWithItsPath() throws {
        let file = try imageModelFile(format: .int8).encoded()
        let text = String(decoding: headerBytes(file), as: UTF8.self)
        let offset = try #require(text.range(of: "[28,28,1]")).lowerBound.utf16Offset(in: text) + 9
        let message = "line 1, column \(offset + 1) (byte \(offset) of the header): expected a value after ',', found ']'"
        let syntax = reassemble(file, header: replacing(headerBytes(file), "[28,28,1]", "[28,28,1,]"))
        #expect(problem(decoding: syntax) == .corruptHeader(message))
        #expect(
            WeightsFileError(path: "bad.weights", problem: .corruptHeader(message)).description
                == "bad.weights: corrupt header: \(message); re-run `classify train` to write it again")
        let field = reassemble(file, header: replacing(headerBytes(file), #""shape":[16,3,3,1]"#, #""shape":[16,"3",3,1]"#))
        #expect(problem(decoding: field) == .corruptHeader(#"tensors[0].shape[1]: expected an integer, found "3""#))
        #expect(problem(decoding: reassemble(file, header: headerBytes(file))) == nil, "the helper keeps a valid file valid")
    }
}

@Suite("A weights file's recorded run, read from its header alone")
struct RecordedRunTests {
    /// `ModelFile.recordedTraining` (what the weights lookup compares a model's files by) reads the header with the
    /// one reader loading uses: escapes decode, and a header it refuses has no run.
    @Test func recordedTrainingIsReadAsLoadingReadsIt() throws {
        let file = try ModelFile(
            name: "m", model: Sequential([Activation(.softmax)]), labels: ["a", "b"],
            input: InputSpec(shape: [2], description: "two numbers"), preprocessing: [:],
            training: TrainingMetadata(seed: 1, run: "crc32:00000007"), format: .f32)
        let bytes = file.encoded()
        func run(_ bytes: [UInt8]) -> String?? { ModelFile.recordedTraining { Array(bytes.prefix($0)) }.map { $0?.run } }
        #expect(run(bytes) == .some("crc32:00000007"))
        let header = String(decoding: headerBytes(bytes), as: UTF8.self)
        #expect(header.contains(#""run":"crc32:00000007""#))
        let escaped = header.replacingOccurrences(of: #""run":"crc32:00000007""#, with: #""run" : "crc32:\u0030000000\u0037""#)
        #expect(run(reassemble(bytes, header: Array(escaped.utf8))) == .some("crc32:00000007"), "the same run, written another way")
        let repeated = header.replacingOccurrences(of: #""run":"crc32:00000007""#, with: #""run":"crc32:00000008","run":"x""#)
        #expect(run(reassemble(bytes, header: Array(repeated.utf8))) == nil, "a repeated key: no run to compare")
    }
}
