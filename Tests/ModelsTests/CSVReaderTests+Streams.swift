import DataFiles
import Foundation
import Testing

@testable import Models

/// A stream (`--follow`, standard input) may hand over a record in pieces, cutting a quoted field, a `""`, a CRLF or
/// a UTF-8 character anywhere: the reader must read on where `CSVRecordGrammar` asked for more and give what it gives
/// for the bytes whole — the same records, errors, lines and places.
extension CSVReaderTests {
    /// Files whose records are not plain, cut anywhere by a stream of tiny chunks.
    static let streamedFiles: [(name: String, bytes: [UInt8])] = {
        let maximum = CSVReader.maximumLineBytes
        func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }
        return [
            (
                "quoted fields, escapes and line ends",
                utf8(
                    "a,b\r\n\"x,\"\"y\"\"\r\nz\",2\r\n\"\"\"\",\"\"\r\n3,\"p\rq\"\r\r\n\r\n4,\"\"\"\"\"\"\"\"5\r\n"
                        + "\"a\"b,x\"y\"\n\"\",\"\r\n\"\r6,\"7\"")
            ),
            ("NUL bytes", utf8("a,b\n1,\u{0}2\n3,\"\u{0}\"\n\u{0}\n\"5\",\"6\"\u{0}\n7,8")),
            // A run of NULs is one failure wherever the chunks cut it (a file of zeros is read at memory speed).
            (
                "runs of NUL bytes",
                utf8("a,b\n1,2") + [UInt8](repeating: 0, count: 300) + utf8("3,4\n") + [UInt8](repeating: 0, count: 5) + utf8("\n5,6\n")
            ),
            (
                "bytes that are not UTF-8",
                utf8("a,b\n\u{e9},\"\u{fc}\u{20ac}\"\n") + [0xFF, UInt8(ascii: ","), UInt8(ascii: "1"), UInt8(ascii: "\n")]
                    + utf8("2,\"") + [0xC3] + utf8("\"\n\"") + [0xE2, 0x82] + utf8("\",3\n4,\"\u{1F600}\"\r\n")
            ),
            ("a byte-order mark and lone CRs", utf8("\u{FEFF}a,b\r1,2\r\r3,4\r\n5,\"6\r7\"\r\"8\"\r")),
            (
                "a line over the limit",
                utf8("a,b\n1,2\n\"3\",") + [UInt8](repeating: UInt8(ascii: "7"), count: maximum + 10) + utf8(",8\n9,\"10\"\n")
            ),
            ("a quote never closed", utf8("a,b\n\"1\",2\n3,\"" + String(repeating: "abc\r\n", count: maximum / 5 + 10))),
            (
                "a quoted field longer than a fill, `\"\"` not counted",
                utf8("a,b\n\"" + String(repeating: "x\"\"", count: (maximum - 5) / 2) + "\",y\n1,\"2\"\n")
            ),
        ]
    }()

    /// Everything a reader gives after its header, as text: each record (its fields) or error (line and message), and
    /// the line and byte offset it leaves the reader at; or the error that ends reading (of the header, the file).
    func streamTranscript(_ open: () throws(DataError) -> CSVReader, bytes: Int) -> [String] {
        var lines: [String] = []
        do {
            var reader = try open()
            lines.append("header \(reader.header)")
            while lines.count <= 2 * bytes, let result = try reader.nextResult() {
                switch result {
                case .success(let fields): lines.append("\(fields)")
                case .failure(let error): lines.append("error \(error.line ?? 0): \(error.message)")
                }
                lines.append("  now on line \(reader.lineNumber), at byte \(reader.byteOffset)")
            }
        } catch {
            lines.append("stopped \(error.line ?? 0): \(error.message)")
        }
        return lines
    }

    /// A stream of `bytes` in chunks of `sizes`, taken in turn.
    func stream(_ bytes: [UInt8], sizes: [Int]) -> () throws(DataError) -> Data {
        var (offset, turn) = (0, 0)
        return { () throws(DataError) -> Data in
            let end = min(bytes.count, offset + sizes[turn % sizes.count])
            defer { (offset, turn) = (end, turn + 1) }
            return Data(bytes[offset..<end])
        }
    }

    @Test(arguments: streamedFiles.indices)
    func streamsInTinyChunksReadAsTheBytesWhole(file: Int) {
        let (name, bytes) = Self.streamedFiles[file]
        let whole = streamTranscript({ () throws(DataError) in try CSVReader(file: "f.csv", bytes: Data(bytes)) }, bytes: bytes.count)
        #expect(whole.count > 2, "\(name): \(whole)")
        for sizes in [[1], [2], [3], [7], [1, 2, 3, 7], [bytes.count]] {
            let chunked = streamTranscript(
                { () throws(DataError) in try CSVReader(file: "f.csv", stream: stream(bytes, sizes: sizes)) }, bytes: bytes.count)
            guard chunked != whole else { continue }
            let first = zip(chunked, whole).prefix { $0 == $1 }.count
            let (got, wanted) = (chunked.dropFirst(first).first ?? "nothing", whole.dropFirst(first).first ?? "nothing")
            Issue.record("\(name), chunks of \(sizes): entry \(first) is \(got), not \(wanted)")
        }
    }

    @Test func streamedFilesHoldWhatTheyAreFor() {
        // Each file reaches the record or error it was written for (the long quoted field is read whole), so the
        // comparison above is not between two empty readings.
        let expected = [
            "[\"x,\\\"y\\\"\\r\\nz\", \"2\"]", "error 2: contains a NUL byte", "error 2: contains a NUL byte", "error 3: is not UTF-8 text",
            "[\"5\", \"6\\r7\"]",
            "error 3: line longer than", "error 3: a quoted field opens on this line", "[\"x\\\"x\\\"x",
        ]
        for (file, fragment) in zip(Self.streamedFiles, expected) {
            let whole = streamTranscript(
                { () throws(DataError) in try CSVReader(file: "f.csv", bytes: Data(file.bytes)) }, bytes: file.bytes.count)
            #expect(whole.contains { $0.hasPrefix(fragment) }, "\(file.name): \(whole.prefix(12))")
        }
    }

    /// A run of NULs is one failure, and the records after it are read (before: one failure a byte, so 2 GB of
    /// zeros took 337 s to report).
    @Test func aRunOfNULsIsOneFailure() throws {
        let bytes = Array("a,b\n1,2".utf8) + [UInt8](repeating: 0, count: 100_000) + Array("3,4\n5,6\n".utf8)
        let whole = streamTranscript({ () throws(DataError) in try CSVReader(file: "f.csv", bytes: Data(bytes)) }, bytes: bytes.count)
        #expect(whole.filter { $0.contains("contains a NUL byte") }.count == 1, "\(whole)")
        #expect(whole.contains("[\"3\", \"4\"]") && whole.contains("[\"5\", \"6\"]"), "\(whole)")
    }
}
