import DataFiles
import Foundation
import Testing

@testable import Models

/// A file of numbers without a header row (`classify run --input`): every record has the stated number of fields,
/// read as every CSV here is read (a byte-order mark, CRLF, quotes), and a record with too many is refused at the
/// comma that begins its field too many, in place or across chunks, after which reading ends (issue 31).
extension CSVReaderTests {
    /// What a header-less reader of 3 fields makes of `bytes`: each record's fields, or its error, then `end`.
    static func headerlessTranscript(_ bytes: [UInt8], name: String) throws -> [String] {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("csv-\(UUID().uuidString).csv")
        try Data(bytes).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        var reader = try CSVReader(path: url.path, headerless: CSVReader.Headerless(fields: 3, name: "value", reason: "the input has 3"))
        #expect(reader.header == ["value", "value", "value"])
        var lines: [String] = []
        while lines.count < 10 {
            do {
                guard try reader.advance() else { break }
                lines.append("\(reader.lineNumber): " + (0..<3).map(reader.field).joined(separator: "|"))
            } catch {
                lines.append("error \(error.line ?? 0): \(error.message)")
            }
        }
        return lines + ["end"]
    }

    @Test func headerlessRecordsAreCountedAndTooManyStopsTheReading() throws {
        let rows = "1,2,3\r\n\r\n4,\"5\",6\n"
        #expect(try Self.headerlessTranscript(Array(("\u{FEFF}" + rows).utf8), name: "bom") == ["1: 1|2|3", "3: 4|5|6", "end"])
        // Fewer fields: an error, and reading goes on.
        #expect(
            try Self.headerlessTranscript(Array("1,2\n4,5,6\n".utf8), name: "few") == ["error 1: 2 values, but the input has 3", "2: 4|5|6", "end"])
        // More: refused as soon as the fourth field begins, whether the line is whole, quoted, or far longer than a
        // read (its end never looked at); then the end.
        let long = "1,2,3\n" + String(repeating: "7,", count: 3 << 20)
        for text in ["1,2,3\n4,5,6,7\n8,9,10\n", "1,2,3\n4,5,\"6\",7\n8,9,10\n", long] {
            #expect(
                try Self.headerlessTranscript(Array(text.utf8), name: "many") == [
                    "1: 1|2|3", "error 2: more than 3 values, but the input has 3", "end",
                ])
        }
    }
}
