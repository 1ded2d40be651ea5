import DataFiles
import Foundation
import Tensor
import Testing

@testable import Datasets
@testable import Models

/// Records that are not plain — quoted fields, NUL bytes, bytes that are not UTF-8, lines too long, stray quotes —
/// are read in place as the reference reads them with `CSVReader`, row by row: the same drawings, labels, lines and
/// errors, however the file is cut into runs and on any number of threads.
extension DatasetFastReaderTests {
    /// `text` with every field of every line in quotes (a quote in one doubled), each line ended by `end`.
    func quotedEverywhere(_ text: String, end: String = "\n") -> String {
        text.split(separator: "\n").map { line in
            line.split(separator: ",", omittingEmptySubsequences: false).map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
                .joined(separator: ",")
        }.joined(separator: end) + end
    }

    /// The items `drawings` reads from `bytes` (labels checked or not), cut in runs of `chunkBytes` on 2 threads.
    func items(_ bytes: [UInt8], checkLabels: Bool = false, chunkBytes: Int = 7) throws -> (path: String, items: [DatasetItem<DatasetDrawingRecord>])
    {
        let path = try write(bytes)
        return (path, try ShapeDataset.drawings(path, threads: 2, checkLabels: checkLabels, chunkBytes: chunkBytes) { { $0 } })
    }

    @Test func quotedFilesReadTheSame() throws {
        let text = try bundledShapesText(drawings: 12)
        try expectSameAsReference(quotedEverywhere(text), "every field quoted")
        try expectSameAsReference(quotedEverywhere(text, end: "\r\n"), "every field quoted, CRLF")
        try expectSameAsReference(quotedEverywhere(text, end: "\r"), "every field quoted, lone CR")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        try expectSameAsReference(
            lines[0] + "\n" + quotedEverywhere(lines.dropFirst().joined(separator: "\n"), end: "\r\n"), "rows quoted, header plain")
        try expectSameAsReference(Self.header + rows("a") + quotedEverywhere(rows("b")) + rows("c"), "one drawing quoted")
        // The quoted file is the plain one: the same drawings.
        let plain = try items(Array(text.utf8)).items, quoted = try items(Array(quotedEverywhere(text, end: "\r\n").utf8)).items
        #expect(quoted.map(\.id) == plain.map(\.id) && quoted.map(\.label) == plain.map(\.label) && quoted.map(\.lines) == plain.map(\.lines))
        #expect(quoted.map { try? $0.value.drawing.get() } == plain.map { try? $0.value.drawing.get() })
        #expect(quoted.count == 12 && quoted.allSatisfy { (try? $0.value.drawing.get()) != nil })
    }

    @Test func quotedNumbersReadAsCSVReaderReadsThem() throws {
        let fields = [
            "\"1.5\"", "\" 7 \"", "\"1e2\"", "\"-0\"", "\"\"", "\"nan\"", "\"x\"", "\"1\"5", "\"1\"\"5\"", " \"1\"", "\"1\" ", "\"12\n\"",
            "\"1,5\"", "\"0x10\"", "\"99999999999999999999\"",
        ]
        for field in fields {
            try expectSameAsReference(Self.header + rows("a") + "b,square,0,\(field),1\n" + rows("b") + rows("c"), "x = \(field)")
            try expectSameAsReference(Self.header + rows("a") + "b,square,\(field),1,1\n" + rows("b"), "stroke = \(field)")
            try expectSameAsReference(
                "drawing,label,stroke,x,y,t\n" + rows("a", t: true) + "a,square,0,3,4,\(field)\n" + rows("b", t: true), "t = \(field)")
        }
        // "1.5" is 1.5 and "1"5 is 15, as CSVReader reads them.
        let read = try items(Array((Self.header + "a,square,\"0\",\"1.5\",\"1\"5\na,square,0,2,2\n").utf8)).items
        #expect(try read[0].value.drawing.get().strokes == [[DrawingPoint(x: 1.5, y: 15, t: nil), DrawingPoint(x: 2, y: 2, t: nil)]])
    }

    @Test func quotedIdsAndLabelsAreUnescaped() throws {
        let id = "\"a, \"\"b\"\"\""  // a, "b"
        let text = Self.header + rows(id) + rows("c") + rows(id) + rows("\"d\"\"\"").replacingOccurrences(of: "square", with: "\"sq,\"\"uare\"\"\"")
        try expectSameAsReference(text, "quoted ids with commas and quotes, scattered; a quoted label")
        let read = try items(Array(text.utf8), checkLabels: true).items
        #expect(read.map(\.id) == ["a, \"b\"", "c", "a, \"b\"", "d\""])
        #expect(read[3].label == "sq,\"uare\"" && (try? read[3].value.drawing.get()) != nil)
        #expect(read[0].value.drawing.failureMessage?.contains("drawing 'a, \"b\"' has rows at lines 2–6, 12–16") == true)
    }

    /// A line end inside quotes is text, and counts as a line: a record ends on its last line, and errors and
    /// drawings name that line, as `CSVReader` numbers it.
    @Test func lineBreaksInsideQuotes() throws {
        let text =
            Self.header + rows("a") + "b,\"squ\nare\",0,1,1\n" + rows("b") + "c,\"x\r\ny\",0,1,1\n" + rows("c") + "d,\"p\rq\",0,1,1\n"
            + rows("d") + "\"e\ne\",square,0,1,1\n" + rows("e\ne").replacingOccurrences(of: "e\ne", with: "\"e\ne\"") + "f,square,0,\"1\n\",1\n"
        try expectSameAsReference(text, "line ends in quoted labels, ids and numbers")
        try expectSameAsReference(text.replacingOccurrences(of: "\n", with: "\r\n"), "the same, CRLF")
        try expectSameAsReference(text.replacingOccurrences(of: "\n", with: "\r"), "the same, lone CR")
        let read = try items(Array(text.utf8), checkLabels: true).items
        #expect(read.map(\.id) == ["a", "b", "c", "d", "e\ne", "f"])
        #expect(read[1].lines == 8...13 && read[2].lines == 15...20 && read[3].lines == 22...27 && read[4].lines == 29...39)
        #expect(read[1].value.drawing.failureMessage == "9: drawing 'b' is labelled 'squ\nare' above and 'square' here")
        #expect(read[5].value.drawing.failureMessage == "41: '1\n' is not a number")
    }

    /// Quotes that do not open a field are text (`x"y`), and so is what follows a closing quote (`"a"b` is `ab`).
    @Test func strayQuotesAreText() throws {
        try expectSameAsReference(Self.header + rows("x\"y") + rows("\"a\"b") + rows("ab") + "c,s\"q,0,1,1\nc,sq\",0,2,2\n", "stray quotes")
        try expectSameAsReference(Self.header + rows("a") + "a,square,0,1\"\",1\n" + rows("b"), "a stray pair of quotes in a number")
        try expectSameAsReference(Self.header + rows("a") + "a,square,0, \"1\",1\n" + rows("b"), "a quote after a space")
        let read = try items(Array((Self.header + rows("x\"y") + rows("\"a\"b") + rows("ab")).utf8)).items
        #expect(read.map(\.id) == ["x\"y", "ab"] && read.map(\.lines) == [2...6, 7...16])
    }

    @Test func aQuoteNeverClosed() throws {
        try expectSameAsReference(Self.header + rows("a") + "b,square,0,\"1,1\n" + rows("b"), "a quote never closed")
        try expectSameAsReference(Self.header + "\"", "a file that ends in an open quote")
        // Open for over a mebibyte: the error names where it opened, and reading goes on from inside the quotes.
        let long = String(repeating: "abc\r\n", count: CSVReader.maximumLineBytes / 5 + 10)
        try expectSameAsReference(Self.header + rows("a") + "b,\"" + long + "\n" + rows("c"), "a quote open over a mebibyte")
        let read = try items(Array((Self.header + rows("a") + "b,\"" + long + "\"\n" + rows("c")).utf8)).items
        #expect(
            read.first { $0.value.drawing.failureMessage?.contains("a quoted field opens on this line") == true }?.value.drawing.failureMessage
                == "7: a quoted field opens on this line and runs past \(CSVReader.maximumLineBytes) bytes (to line \(7 + (CSVReader.maximumLineBytes - 3) / 5)); is a closing quote missing?"
        )
    }

    /// A NUL byte spoils the drawing it sits in; reading goes on after it, the rest of its line a line of its own,
    /// as `CSVReader` reads on (and numbers the lines after it one further).
    @Test func nulBytesReadTheSame() throws {
        let nul = "\u{0}"
        for (text, context) in [
            (Self.header + rows("a") + "b,square,0,1\(nul),1\n" + rows("b") + rows("c"), "a NUL inside a row"),
            (Self.header + rows("a") + "\(nul)b,square,0,1,1\n" + rows("b"), "a NUL starting a row"),
            (Self.header + rows("a") + "a,square,0,1,1\(nul)\n" + rows("b"), "a NUL before the line end"),
            (Self.header + rows("a") + "a,square,0,1,1\(nul)\r\n" + rows("b"), "a NUL before CRLF"),
            (Self.header + "b,square,0,1\(nul),1\n" + rows("b"), "a NUL on the first row"),
            (Self.header + rows("a") + "a,square,0,1,1\n\(nul)", "a NUL at the end"),
            (Self.header + (0..<6).map { rows("d\($0)") + "\(nul)x,y\n" }.joined(), "a NUL after every drawing"),
            (Self.header + rows("n\(nul)ul") + rows("\"n\(nul)ul\"") + rows("b"), "NULs in ids, one quoted (text there)"),
        ] {
            try expectSameAsReference(text, context)
        }
        let (path, read) = try items(Array((Self.header + rows("a") + "b,square,0,1\(nul),1\n" + rows("b")).utf8))
        #expect(read.map(\.id) == ["a", "", "b"])
        #expect(
            read[0].value.drawing
                == .failure(DataError(file: path, line: 7, column: (4, "x"), message: "contains a NUL byte; this is binary data, not a CSV file")))
        #expect(read[1].value.drawing == .failure(DataError(file: path, line: 8, message: "2 fields, but the header has 5")))
        #expect(read[0].lines == 2...7 && read[1].lines == 8...8 && read[2].lines == 9...13)
    }

    /// A field that is not UTF-8 spoils the drawing it sits in; reading goes on after the field (after its comma, as
    /// `CSVReader` reads on: the rest of the line is a line of its own).
    @Test func bytesThatAreNotUTF8ReadTheSame() throws {
        func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }
        let before = utf8(Self.header + rows("a")), after = utf8(rows("c"))
        for (row, context) in [
            ([0xFF] + utf8("b,square,0,1,1\n"), "an id"), (utf8("b,s") + [0xC3] + utf8("quare,0,1,1\n"), "a label"),
            (utf8("b,square,0,1") + [0xE2, 0x82] + utf8(",1\n"), "a field's end"),
            (utf8("b,square,0,1,") + [0xE2, 0x82] + utf8("1\n"), "the last field"),
            (utf8("b,square,0,1,1") + [0xFE] + utf8("\n"), "the line end"), (utf8("b,square,0,1,1") + [0xFE] + utf8("\r\n"), "a CRLF"),
            (utf8("b,square,0,1,1\n") + [0x80], "the start of the next row"), (utf8("\"b\u{E9}") + [0xFF] + utf8("\",square,0,1,1\n"), "a quoted id"),
        ] {
            try expectSameAsReference(bytes: before + row + after, "not UTF-8 in \(context)")
            try expectSameAsReference(bytes: utf8(String(decoding: before + row + after, as: UTF8.self)), "the same bytes replaced, \(context)")
        }
        try expectSameAsReference(bytes: before + [0x61, 0x2C, 0xFF], "not UTF-8 at the end")
        // Checked once unquoted: "\xC3"\xA9 is é, though its bytes as they stand are not UTF-8.
        try expectSameAsReference(bytes: before + [0x22, 0xC3, 0x22, 0xA9] + utf8(",square,0,1,1\n"), "é cut by a quote")
        let (path, read) = try items(utf8(Self.header) + [0x61, 0xFF] + utf8(",square,0,1,1\n") + utf8(rows("b")))
        #expect(read.map(\.id) == ["line 2", "square", "b"])
        #expect(read[0].value.drawing == .failure(DataError(file: path, line: 2, message: "is not UTF-8 text")))
        #expect(read[1].lines == 3...3 && read[2].lines == 4...8)
    }

    /// Lines longer than `CSVReader.maximumLineBytes` are errors where `CSVReader` stops: after that many bytes (the
    /// rest of the line is read on as a line of its own), a CR before an LF not counted.
    @Test func longLinesReadTheSame() throws {
        let limit = CSVReader.maximumLineBytes
        func row(length: Int, end: String = "\n") -> String {
            let start = "b,square,0,", tail = "1,1"
            return start + String(repeating: "0", count: length - start.utf8.count - tail.utf8.count) + tail + end
        }
        for (line, context) in [
            (row(length: limit + 10), "over the limit"), (row(length: limit), "the limit, then LF"), (row(length: limit - 1), "one under, then LF"),
            (row(length: limit - 1, end: "\r\n"), "one under, then CRLF"), (row(length: limit, end: "\r\n"), "the limit, then CRLF"),
            (row(length: 2 * limit + 5), "over twice the limit"), (row(length: limit + 1, end: ""), "over the limit, at the end, no line end"),
            (row(length: limit, end: ""), "the limit, at the end, no line end"),
        ] {
            try expectSameAsReference(Self.header + rows("a") + line + (line.hasSuffix("\n") ? rows("b") + rows("c") : ""), context)
        }
        let (path, read) = try items(Array((Self.header + rows("a") + row(length: limit + 10) + rows("b")).utf8))
        #expect(read.map(\.id) == ["a", "0000001", "b"])
        #expect(read[0].value.drawing == .failure(DataError(file: path, line: 7, message: "line longer than \(limit) bytes; is this a CSV file?")))
        #expect(read[1].value.drawing == .failure(DataError(file: path, line: 8, message: "2 fields, but the header has 5")))
        #expect(read[2].lines == 9...13)
        // One under the limit before a CRLF is a row.
        let under = try items(Array((Self.header + rows("a") + row(length: limit - 1, end: "\r\n") + rows("b")).utf8)).items
        #expect(under.map(\.id) == ["a", "b"] && under.map(\.lines) == [2...6, 7...12] && (try? under[1].value.drawing.get()) != nil)
    }

    /// A quote only in a late run, right after a row that names no drawing (a NUL row, or one too short to reach the
    /// id column; such a run is parsed again once the one before is known, and only then shows the quote): the file
    /// is still read as one run.
    @Test func aQuoteLateInTheFileIsFoundWhereverTheRunsAreCut() throws {
        try expectSameAsReference(Self.header + rows("a") + rows("b") + "\u{0}\n\"b\",square,0,1,1\n" + rows("c"), "a quote after a NUL row")
        let idLast = { (id: String) in (0..<5).map { "square,0,\($0 * 3),\($0 * $0)," + id + "\n" }.joined() }
        try expectSameAsReference(
            "label,stroke,x,y,drawing\n" + idLast("a") + idLast("b") + "x\n" + idLast("\"b\"") + idLast("c"), "a quote after a row short of the id")
        try expectSameAsReference(
            Self.header + (0..<8).map { rows("d\($0)") }.joined() + "d7,\"square\",0,\"5\n\",5\n" + rows("e"), "a quote at the end")
        // A NUL early moves every line after it one further; a quote later makes the file one run.
        try expectSameAsReference(
            Self.header + rows("a") + "a,sq\u{0}uare,0,1,1\n" + (0..<5).map { rows("d\($0)") }.joined() + "\"q\",square,0,1,1\n", "NUL, then a quote")
    }

    /// Damaged files (bytes flipped, inserted and deleted, quotes, NULs and line ends inserted, lines swapped) read
    /// the same in place as row by row.
    @Test func mutatedDatasetsReadTheSame() throws {
        let base = Array(
            (Self.header + rows("a") + rows("b", strokes: [0, 1]) + "\"c,\"\"1\"\"\",square,0,\"5\",5\r\nc,square,0,6,7\n" + rows("d")
                + rows("e\u{E9}")).utf8)
        var mutator = Mutator(generator: SeededGenerator(seed: 4_180))
        for round in 0..<150 {
            let bytes = mutator.mutate(base)
            try expectSameAsReference(bytes: bytes, "round \(round): \(String(decoding: bytes, as: UTF8.self).debugDescription)")
        }
    }
}
