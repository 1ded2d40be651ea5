import Foundation
import Tensor
import Testing

@testable import Models

/// The header bytes of an encoded weights file.
private func headerBytes(_ file: [UInt8]) -> [UInt8] {
    let length = (12..<16).reduce(0) { $0 | Int(file[$1]) << (8 * ($1 - 12)) }
    return Array(file[ModelFile.preambleBytes..<(ModelFile.preambleBytes + length)])
}

/// Checks the fast reader against its twin, `JSONDecoder`: it either gives up or gives exactly the decoder's
/// header, and it never accepts what the decoder refuses. Returns whether the fast reader read it.
@discardableResult
private func expectSameAsDecoder(_ json: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
    let decoded = try? JSONDecoder().decode(WeightsHeader.self, from: Data(json))
    guard let plain = WeightsHeader(plainJSON: json[...]) else { return false }
    #expect(
        decoded != nil, "the fast reader accepted a header JSONDecoder refuses: \(String(decoding: json, as: UTF8.self))",
        sourceLocation: sourceLocation)
    #expect(
        plain == decoded, "the fast reader differs from JSONDecoder on \(String(decoding: json, as: UTF8.self))",
        sourceLocation: sourceLocation)
    return true
}

private func replacing(_ json: [UInt8], _ old: String, _ new: String) -> [UInt8] {
    Array(String(decoding: json, as: UTF8.self).replacingOccurrences(of: old, with: new).utf8)
}

@Suite struct PlainJSONTests {
    /// Every header this build writes, and the shipped files' headers, take the fast path with the same result.
    @Test func encodedHeadersTakeTheFastPathAndMatchTheDecoder() throws {
        var headers = [try imageModelFile(), try imageModelFile(format: .int8), try imageModelFile(format: .q4)].map { headerBytes($0.encoded()) }
        let sequence = try ModelFile(
            name: "test-sequence", model: sequenceModel(), labels: ["a", "b"],
            input: InputSpec(shape: [128, 12], description: "128×12 \"window\""),
            decision: DecisionRule(temperature: 1.25, rejectLabel: "b"), format: .lut4)
        headers.append(headerBytes(sequence.encoded()))
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let shipped = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Weights").path)
            .filter { $0.hasSuffix(".weights") }
        #expect(!shipped.isEmpty)
        for name in shipped {
            headers.append(headerBytes(Array(try Data(contentsOf: root.appendingPathComponent("Weights/\(name)")))))
        }
        for (index, header) in headers.enumerated() {
            // The sequence model's description has escaped quotes: that one is left to JSONDecoder.
            #expect(expectSameAsDecoder(header) == (index != 3), "header \(index) did not take the fast path")
        }
    }

    /// Forms the encoder does not write: either the same header as JSONDecoder's or JSONDecoder's path.
    @Test func unusualFormsAreReadAsTheDecoderReadsThemOrLeftToIt() throws {
        let header = headerBytes(try imageModelFile(format: .int8).encoded())
        let variants: [(String, String)] = [
            ("\"epochs\":3", "\"epochs\":3.0"), ("\"epochs\":3", "\"epochs\":3e0"), ("\"epochs\":3", "\"epochs\":-0"),
            ("\"epochs\":3", "\"epochs\":null"), ("\"epochs\":3", "\"epochs\":\"3\""), ("\"epochs\":3", "\"epochs\":03"),
            ("\"epochs\":3", "\"epochs\":99999999999999999999"), ("\"seed\":7", "\"seed\":-7"), ("\"seed\":7", "\"seed\":18446744073709551615"),
            ("\"validationAccuracy\":0.75", "\"validationAccuracy\":1e400"), ("\"validationAccuracy\":0.75", "\"validationAccuracy\":1e-400"),
            ("\"validationAccuracy\":0.75", "\"validationAccuracy\":4e-320"), ("\"validationAccuracy\":0.75", "\"validationAccuracy\":0.0e5"),
            ("\"validationAccuracy\":0.75", "\"validationAccuracy\":.75"), ("\"validationAccuracy\":0.75", "\"validationAccuracy\":0.75E+0"),
            ("\"lineWidth\":2.5", "\"lineWidth\":1e-50"), ("\"lineWidth\":2.5", "\"lineWidth\":[1,{\"a\":null},true]"),
            ("\"lineWidth\":2.5", "\"lineWidth\":1.0000000596046448"), ("\"alpha\":0.05", "\"alpha\":1.0000000596046448"),
            ("\"alpha\":0.05", "\"alpha\":1e-50"), ("\"alpha\":0.05", "\"alpha\":3.5e38"), ("\"alpha\":0.05", "\"alpha\":1e-40"),
            ("\"name\":\"test-image\"", "\"name\":\"test\\u002dimage\""), ("\"name\":\"test-image\"", "\"name\":\"a\",\"name\":\"b\""),
            ("\"name\":\"test-image\"", "\"name\":\"test-image\",\"extra\":1"), ("{\"relu\":{}}", "{\"relu\":{\"x\":1}}"),
            ("{\"relu\":{}}", "{\"relu\":{},\"tanh\":{}}"), ("{\"relu\":{}}", "{\"gelu\":{}}"), ("\"padding\":\"same\"", "\"padding\":\"full\""),
            ("\"format\":\"f32\"", "\"format\":\"f64\""), ("\"kind\":\"max\"", "\"kind\":\"min\""), (",", " ,\n\t"), (":", " : "),
            ("\"training\":{", "\"training\":null,\"x\":{"), ("[28,28,1]", "[28,28,1,]"), ("[28,28,1]", "[28 28 1]"),
            ("\"test-image\"", "\"tést-image\""), ("\"test-image\"", "\"test\u{1}image\""),
        ]
        var fast = 0
        for (old, new) in variants {
            let changed = replacing(header, old, new)
            #expect(changed != header, "the variant \(old) → \(new) changed nothing")
            if expectSameAsDecoder(changed) { fast += 1 }
        }
        #expect(fast > 5, "only \(fast) variants took the fast path")
        for text in [
            "", "{", "[]", "null", "{}", "{\"name\":\"x\"}", " \(String(decoding: header, as: UTF8.self)) ",
            String(decoding: header, as: UTF8.self) + "x", String(repeating: "[", count: 600),
        ] {
            expectSameAsDecoder(Array(text.utf8))
        }
    }

    /// Every single-byte change of a real header: the fast reader never disagrees with JSONDecoder.
    @Test func byteFlipsNeverDisagreeWithTheDecoder() throws {
        let header = headerBytes(try imageModelFile(format: .int8).encoded())
        var generator = SeededGenerator(seed: 13)
        let replacements: [UInt8] = Array("{}[]\",:0123456789.eE+- \\nulltruefalsex\u{7F}".utf8) + [0x00, 0xC3, 0xFF]
        for _ in 0..<3000 {
            var changed = header
            let position = Int(generator.next() % UInt64(changed.count))
            changed[position] = replacements[Int(generator.next() % UInt64(replacements.count))]
            expectSameAsDecoder(changed)
        }
    }

    /// The parser's own contract: plain documents parse, anything it does not read plainly is `nil`.
    @Test func parserReadsPlainDocumentsOnly() {
        #expect(
            PlainJSON.parse(Array(" {\"a\":[1,-2.5e3,true,false,null,\"x\"],\"b\":{}} ".utf8)[...])
                == .object([
                    (key: "a", value: .array([.number("1"), .number("-2.5e3"), .bool(true), .bool(false), .null, .string("x")])),
                    (key: "b", value: .object([])),
                ]))
        for text in [
            "{\"a\":1,\"a\":2}", "\"a\\nb\"", "01", "1.", "-", "+1", "1e", "[1,]", "{\"a\"}", "tru", "nul", "\"a", "1 2",
            String(repeating: "[", count: PlainJSON.maximumDepth + 1) + String(repeating: "]", count: PlainJSON.maximumDepth + 1),
        ] {
            #expect(PlainJSON.parse(Array(text.utf8)[...]) == nil, "parsed \(text)")
        }
        #expect(PlainJSON.parse(Array("[[1]]".utf8)[...]) == .array([.array([.number("1")])]))
        let members = { (count: Int) in "{" + (0..<count).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}" }
        #expect(PlainJSON.parse(Array(members(PlainJSON.maximumMembers).utf8)[...]) != nil)
        #expect(PlainJSON.parse(Array(members(PlainJSON.maximumMembers + 1).utf8)[...]) == nil)
    }
}
