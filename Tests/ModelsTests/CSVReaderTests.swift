import DataFiles
import Foundation
import Tensor
import Testing

@testable import Models

/// The CSV tokenizer as it was written before runs of bytes were copied at once: byte by byte over the whole
/// text, one record per call — the naive twin of `CSVReader`'s reading. Each record is its fields or its error
/// (line and message); reading goes on after an error from where it stopped, as `nextResult` does.
func referenceRecords(_ bytes: [UInt8], maximumLineBytes: Int = CSVReader.maximumLineBytes) -> [Result<[String], DataError>] {
    // A UTF-8 byte-order mark at the very start is not text.
    var position = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0, line = 0, records: [Result<[String], DataError>] = []
    func error(_ message: String) -> DataError { DataError(file: "f.csv", line: line, message: message) }
    func text(_ field: [UInt8]) -> String? { String(validating: field, as: UTF8.self) }
    outer: while records.count <= bytes.count {
        line += 1
        var fields: [String] = [], field: [UInt8] = [], quoted = false, fieldStarted = false, lineBytes = 0, quoteLine = 0
        while true {
            if position >= bytes.count {
                if quoted { records.append(.failure(error("a quoted field is not closed before the end of the file"))); break outer }
                if fields.isEmpty && field.isEmpty && !fieldStarted { break outer }
                guard let last = text(field) else { records.append(.failure(error("is not UTF-8 text"))); continue outer }
                records.append(.success(fields + [last]))
                break outer
            }
            let byte = bytes[position]
            position += 1
            lineBytes += 1
            if lineBytes > maximumLineBytes {
                records.append(
                    .failure(
                        quoted
                            ? DataError(
                                file: "f.csv", line: quoteLine,
                                message: "a quoted field opens on this line and runs past \(maximumLineBytes) "
                                    + "bytes (to line \(line)); is a closing quote missing?")
                            : error("line longer than \(maximumLineBytes) bytes; is this a CSV file?")))
                continue outer
            }
            if quoted {
                if byte == UInt8(ascii: "\"") {
                    if position < bytes.count && bytes[position] == UInt8(ascii: "\"") {
                        field.append(byte)
                        position += 1
                    } else {
                        quoted = false
                    }
                } else {
                    if byte == UInt8(ascii: "\n") { line += 1 }
                    if byte == UInt8(ascii: "\r") && (position >= bytes.count || bytes[position] != UInt8(ascii: "\n")) { line += 1 }
                    field.append(byte)
                }
                continue
            }
            switch byte {
            case UInt8(ascii: ","):
                guard let value = text(field) else { records.append(.failure(error("is not UTF-8 text"))); continue outer }
                fields.append(value)
                field.removeAll()
                fieldStarted = true
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                // LF, CRLF and a lone CR each end one line.
                if byte == UInt8(ascii: "\r") && position < bytes.count && bytes[position] == UInt8(ascii: "\n") { position += 1 }
                if fields.isEmpty && field.isEmpty && !fieldStarted { lineBytes = 0; line += 1; continue }
                guard let value = text(field) else { records.append(.failure(error("is not UTF-8 text"))); continue outer }
                records.append(.success(fields + [value]))
                continue outer
            case UInt8(ascii: "\"") where field.isEmpty:
                quoted = true
                quoteLine = line
                fieldStarted = true
            case 0:
                records.append(.failure(error("contains a NUL byte; this is binary data, not a CSV file")))
                continue outer
            default:
                field.append(byte)
            }
        }
    }
    return records
}

/// What a reader makes of `bytes` after the header: each record's fields and each field read as a number (its
/// bits or its error), or the record's error — by strings (`next`, `number(_:column:)`) or in place (`advance`,
/// `field`, `number(column:)`).
func readerTranscript(_ bytes: [UInt8], inPlace: Bool) throws -> [String] {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("csv-\(UUID().uuidString).csv")
    try Data(bytes).write(to: url)
    defer { try? FileManager.default.removeItem(at: url) }
    var reader = try CSVReader(path: url.path)
    var lines: [String] = []
    func number(_ read: () throws(DataError) -> Double) -> String {
        do { return "\(try read().bitPattern)" } catch { return "\(error.line ?? 0) \(error.column?.index ?? 0) \(error.message)" }
    }
    while lines.count <= bytes.count {
        do {
            let fields: [String]
            if inPlace {
                guard try reader.advance() else { break }
                fields = reader.header.indices.map(reader.field)
                lines.append(
                    fields.joined(separator: "|") + " → "
                        + fields.indices.map { c in number { () throws(DataError) in try reader.number(column: c) } }.joined(separator: ", "))
            } else {
                guard let next = try reader.next() else { break }
                fields = next
                lines.append(
                    fields.joined(separator: "|") + " → "
                        + fields.indices.map { c in number { () throws(DataError) in try reader.number(fields[c], column: c) } }.joined(
                            separator: ", "))
            }
        } catch {
            lines.append("error \(error.line ?? 0): \(error.message)")
            if error.kind != .invalid || error.message.hasPrefix("a quoted field") { break }
        }
    }
    return lines
}

@Suite("CSV reading: in place against by strings and the byte-by-byte twin")
struct CSVReaderTests {
    static let awkwardFiles: [String] = [
        "a,b\n1,2\n3,4\n",
        "a,b\r\n1.5,-2e3\r\n\r\n\n3,4",
        "a,b\n\"1,5\",\"x\"\"y\"\n\"multi\nline\",7\n8,9\n",
        "a,b\n 1.5 ,2\n,3\n4,\nnan,inf\n1e400,-0\n.5,5.\n+1,0x10\n1_0,1e\n",
        "a,b\n1,2,3\n4\n5,6\n",
        "a,b\n1,2\n3,\u{0}4\n5,6\n",
        "a,b\n\"unclosed,1\n2,3\n",
        "a,b\n\"a\"b,\"\"\n\"\",\"\"\"\"\n",
        "a,b\nx\"y,\"q\"r\"s\"\n",
        "timestamp,x\n0.020,-0.4591\n0.040,-0.4538\n1,00000000000000000000001\n",
        "a,b\n\r\n,\n1,2",
        "a\n1\n\n2\n\"\"\n",
        // Line ends of every kind, and a byte-order mark.
        "\u{FEFF}a,b\r1,2\r\r3,4\r\n5,6\n\r7,8\r",
        "a,b\r\"x\ry\",1\r\"p\r\nq\",2\r3,\"\u{FEFF}\"\r\r\n",
        "\u{FEFF}\r\na,b\r\n1,2",
    ]

    @Test(arguments: awkwardFiles.indices)
    func inPlaceReadingMatchesReadingByStrings(file: Int) throws {
        let bytes = Array(Self.awkwardFiles[file].utf8)
        #expect(try readerTranscript(bytes, inPlace: true) == readerTranscript(bytes, inPlace: false))
    }

    /// Column names are found in any case when the header has no exact match (`X,Y` for a drawing's `x,y`), and a
    /// first row of numbers is said to be data, not a header (it was "column '0' appears twice in the header").
    @Test func headersAreFoundInAnyCaseAndARowOfNumbersIsNoHeader() throws {
        let upper = try CSVReader(file: "f.csv", bytes: Data("X,Y,T\n1,2,3\n".utf8))
        #expect(try upper.columns(["x", "y"]) == [0, 1])
        #expect(upper.optionalColumn("t") == 2 && upper.optionalColumn("stroke") == nil)
        let both = try CSVReader(file: "f.csv", bytes: Data("X,x,Ab,aB\n1,2,3,4\n".utf8))
        #expect(both.optionalColumn("x") == 1, "the exact name wins")
        #expect(both.optionalColumn("ab") == nil, "two names that differ only in case: neither")
        for text in ["0,0\n10,40\n", "1.5,-2,3e2\n1,2,3\n"] {
            do {
                _ = try CSVReader(file: "f.csv", bytes: Data(text.utf8))
                Issue.record("a first row of numbers was taken as a header: \(text)")
            } catch {
                #expect(error.line == 1)
                #expect(error.message.hasPrefix("the first row holds numbers ('"), "\(error.message)")
                #expect(
                    error.message.hasSuffix(
                        "not column names; the file needs a header row first (x,y for a drawing; the README lists a recording's columns)"))
            }
        }
    }

    @Test func badBytesAndLongLinesAreReportedAlike() throws {
        var bytes = Array("a,b\n1,2\n".utf8) + [0xFF, 0xFE, UInt8(ascii: ","), UInt8(ascii: "3"), UInt8(ascii: "\n")]
        bytes += Array("4,5\n\"\u{e9}\",6\n".utf8)
        bytes += [UInt8](repeating: UInt8(ascii: "7"), count: CSVReader.maximumLineBytes + 10) + Array(",8\n9,10\n".utf8)
        try expectRecordsMatchTwin(bytes)
        let inPlace = try readerTranscript(bytes, inPlace: true)
        #expect(inPlace == (try readerTranscript(bytes, inPlace: false)))
        // After an error the reader goes on from the byte where it stopped (the rest of line 3 is a record of one
        // field, and the long line's end one of two).
        #expect(inPlace.contains("error 3: is not UTF-8 text"))
        #expect(inPlace.contains("error 4: 1 fields, but the header has 2"))
        #expect(inPlace.contains("error 7: line longer than \(CSVReader.maximumLineBytes) bytes; is this a CSV file?"))
    }

    @Test func aQuoteNeverClosedIsReportedWhereItOpens() throws {
        let bytes = Array(("a,b\n1,2\n3,\"" + String(repeating: "abc\r\n", count: CSVReader.maximumLineBytes / 5 + 10)).utf8)
        try expectRecordsMatchTwin(bytes)
        let transcript = try readerTranscript(bytes, inPlace: true)
        #expect(
            transcript.contains(
                "error 3: a quoted field opens on this line and runs past \(CSVReader.maximumLineBytes) bytes "
                    + "(to line \(3 + (CSVReader.maximumLineBytes - 3) / 5)); is a closing quote missing?"), "\(transcript.prefix(3))")
    }

    @Test(arguments: awkwardFiles.indices)
    func recordsMatchTheByteByByteTwin(file: Int) throws {
        try expectRecordsMatchTwin(Array(Self.awkwardFiles[file].utf8))
    }

    @Test func recordsAcrossTheReadersChunksMatchTheTwin() throws {
        // 2.5 MiB of records of many lengths, some quoted with escapes and newlines, so runs, quotes and line ends
        // fall on the 1 MiB boundaries at which the reader refills its buffer.
        var generator = SeededGenerator(seed: 11)
        var text = "time,name,value\n"
        while text.utf8.count < 5 << 19 {
            let width = Int(generator.nextUniform(in: 1..<40))
            let name = String(repeating: "n", count: width)
            switch Int(generator.nextUniform(in: 0..<5)) {
            case 0: text += "1.5,\"\(name),\"\"q\"\"\nz\",-0.25\n"
            case 1: text += "2,\(name),\r\n"
            case 2: text += "\n3e-2,\"\",\(width)\n"
            default: text += "\(width).\(width),\(name),\(-width)e-3\n"
            }
        }
        let bytes = Array(text.utf8)
        try expectRecordsMatchTwin(bytes)
        #expect(try readerTranscript(bytes, inPlace: true) == readerTranscript(bytes, inPlace: false))
    }

    func expectRecordsMatchTwin(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("csv-\(UUID().uuidString).csv")
        try Data(bytes).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let expected = referenceRecords(bytes)
        guard case .success(let header)? = expected.first else {
            Issue.record("the twin read no header", sourceLocation: sourceLocation)
            return
        }
        var reader = try CSVReader(path: url.path)
        #expect(reader.header == header.map { $0.trimmingCharacters(in: .whitespaces) }, sourceLocation: sourceLocation)
        for (index, record) in expected.dropFirst().enumerated() {
            let expectedRecord = record.flatMap { fields -> Result<[String], DataError> in
                fields.count == header.count
                    ? .success(fields)
                    : .failure(DataError(file: "f.csv", line: nil, message: "\(fields.count) fields, but the header has \(header.count)"))
            }
            let actual: Result<[String], DataError>
            do {
                guard let fields = try reader.next() else {
                    Issue.record(
                        "record \(index + 1): the reader ended; the twin has \(expected.count - 1 - index) more", sourceLocation: sourceLocation)
                    return
                }
                actual = .success(fields)
            } catch {
                actual = .failure(error)
            }
            switch (actual, expectedRecord) {
            case let (.success(a), .success(e)):
                #expect(a == e, "record \(index + 1)", sourceLocation: sourceLocation)
            case let (.failure(a), .failure(e)):
                #expect(
                    a.message == e.message && (e.line == nil || a.line == e.line), "record \(index + 1): \(a) against \(e)",
                    sourceLocation: sourceLocation)
            default:
                Issue.record("record \(index + 1): \(actual) against \(expectedRecord)", sourceLocation: sourceLocation)
            }
            if case .failure(let error) = actual, error.message.hasPrefix("a quoted field") { return }
        }
        #expect(try reader.next() == nil, "the twin ended first", sourceLocation: sourceLocation)
    }

    @Test func plainDecimalsReadFromBytesAreStrtodsBits() {
        // The naive twin is Double(String); the fast path must give its exact bits or step aside (nil).
        var texts = [
            "0", "-0", "+0", "-0.0000", ".5", "5.", "1e22", "1e23", "1e-22", "1e-23", "9007199254740992",
            "9007199254740993", "123456789012345678901", "1234567890123456789", "0.1", "0.3", "-1.5e-3", "1E5",
            "2.2250738585072014e-308", "1e", "1e+", "--1", "+-1", "1.2.3", "", "-", ".", "e5", "1_0", " 1", "1 ",
            "0x10", "inf", "nan", "1e0001", "1e99999", "00000000000000000001", "0.000000000000000000001",
        ]
        var generator = SeededGenerator(seed: 3)
        func digits(_ count: Int) -> String { String((0..<count).map { _ in Character(String(Int(generator.nextUniform(in: 0..<10)))) }) }
        for _ in 0..<20_000 {
            var text = ["", "-", "+"][Int(generator.nextUniform(in: 0..<3))] + digits(Int(generator.nextUniform(in: 0..<8)))
            if generator.nextUniform(in: 0..<1) < 0.8 { text += "." + digits(Int(generator.nextUniform(in: 0..<14))) }
            if generator.nextUniform(in: 0..<1) < 0.2 {
                text += ["e", "E", "e-", "e+"][Int(generator.nextUniform(in: 0..<4))] + digits(Int(generator.nextUniform(in: 0..<3)))
            }
            texts.append(text)
        }
        var fast = 0
        for text in texts {
            let value = Array(text.utf8).withUnsafeBufferPointer(DecimalText.double)
            if let value {
                fast += 1
                #expect(value.bitPattern == Double(text)?.bitPattern, "'\(text)': \(value) against \(String(describing: Double(text)))")
            }
        }
        #expect(fast > texts.count / 2, "the fast path read only \(fast) of \(texts.count)")
    }
}
