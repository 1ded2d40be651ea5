import DataFiles
import Foundation
import Testing

@testable import Datasets
@testable import Models

/// `ShapeDataset.drawings` (runs of lines parsed in parallel, rows in place) against its reference, the rows read one
/// at a time by `CSVReader` on one thread (`drawingsRowByRow`, a test oracle): the same drawings, ids, lines and
/// errors, in the same order, however the file is cut into runs, on any number of threads, whatever the file holds.
@Suite("The parallel dataset reader gives the reference reader's drawings and errors")
struct DatasetFastReaderTests {
    /// This test's files, removed after it.
    let files = TestFiles("fast-dataset-tests")

    func write(_ bytes: [UInt8]) throws -> String {
        let url = files.folder.appendingPathComponent("\(UUID().uuidString).csv")
        try Data(bytes).write(to: url)
        return url.path
    }

    /// Rows of drawing `id`: a square of side `side` in `strokes` strokes (stroke indices as given).
    func rows(_ id: String, side: Int = 10, strokes: [Int] = [0], t: Bool = false) -> String {
        var text = ""
        for (k, stroke) in strokes.enumerated() {
            for (n, (x, y)) in [(0, 0), (side, 0), (side, side), (0, side), (0, 0)].enumerated() {
                text += "\(id),square,\(stroke),\(x + k),\(y)" + (t ? ",\(n * 10)" : "") + "\n"
            }
        }
        return text
    }

    static let header = "drawing,label,stroke,x,y\n"

    /// Every way of cutting and threading `text` gives the reference's items, labels checked or not.
    func expectSameAsReference(_ text: String, _ context: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try expectSameAsReference(bytes: Array(text.utf8), context, sourceLocation: sourceLocation)
    }

    /// `expectSameAsReference` for bytes that may not be text.
    func expectSameAsReference(bytes: [UInt8], _ context: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let path = try write(bytes)
        defer { try? FileManager.default.removeItem(atPath: path) }
        for checkLabels in [false, true] {
            let reference = Result { () throws(DataError) in
                try ShapeDataset.drawingsRowByRow(path, checkLabels: checkLabels) { { $0 } }
            }
            for chunkBytes in [1, 7, 33, 200, 1 << 22] {
                for threads in [1, 2, 3] {
                    let fast = Result { () throws(DataError) in
                        try ShapeDataset.drawings(path, threads: threads, checkLabels: checkLabels, chunkBytes: chunkBytes) { { $0 } }
                    }
                    let place = "\(context), runs of \(chunkBytes) bytes, \(threads) threads, checkLabels \(checkLabels)"
                    switch (fast, reference) {
                    case let (.success(items), .success(expected)):
                        #expect(items.map(\.id) == expected.map(\.id), "\(place)", sourceLocation: sourceLocation)
                        #expect(items.map(\.lines) == expected.map(\.lines), "\(place)", sourceLocation: sourceLocation)
                        #expect(items.map(\.label) == expected.map(\.label), "\(place)", sourceLocation: sourceLocation)
                        for (item, want) in zip(items, expected) where item.value.drawing != want.value.drawing {
                            Issue.record("\(place): '\(item.id)': \(item.value.drawing) vs \(want.value.drawing)", sourceLocation: sourceLocation)
                        }
                        #expect(
                            items.map(\.value.id) == items.map(\.id) && items.map(\.value.lines) == items.map(\.lines)
                                && items.map(\.value.label) == items.map(\.label), sourceLocation: sourceLocation)
                    case let (.failure(a), .failure(b)):
                        #expect(a == b, "\(place): \(a) vs \(b)", sourceLocation: sourceLocation)
                    default:
                        Issue.record("\(place): fast \(fast) vs reference \(reference)", sourceLocation: sourceLocation)
                    }
                }
            }
        }
    }

    @Test func realDatasetsReadTheSame() throws {
        let text = try bundledShapesText(drawings: 24)
        try expectSameAsReference(text, "real")
        try expectSameAsReference(text.replacingOccurrences(of: "\n", with: "\r\n"), "real, CRLF")
        try expectSameAsReference(text.replacingOccurrences(of: "\n", with: "\r"), "real, lone CR")
        try expectSameAsReference("\u{FEFF}" + text, "real, byte-order mark")
        try expectSameAsReference(String(text.dropLast()), "real, no line end at the end")
    }

    @Test func blankLinesAndOtherLineEndsReadTheSame() throws {
        try expectSameAsReference("\n\n" + Self.header + "\n" + rows("a") + "\n\r\n\r" + rows("b") + "\n\n", "blank lines")
        try expectSameAsReference(
            Self.header + rows("a").replacingOccurrences(of: "\n", with: "\r\n") + rows("b") + "c,square,0,1,1\r", "mixed line ends")
        try expectSameAsReference(Self.header + "a,square,0,1,1\r\r\na,square,0,5,5\r\r", "CR CR LF")
        try expectSameAsReference(Self.header + "   \n" + rows("a"), "a line of spaces")
    }

    @Test func columnsInAnyOrderWithTimesAndExtras() throws {
        let text =
            "t,extra,y,x,stroke,label,drawing\n"
            + rows("a", strokes: [0, 1], t: true).split(separator: "\n").map { line in
                let f = line.split(separator: ",", omittingEmptySubsequences: false)
                return "\(f[5]),x,\(f[4]),\(f[3]),\(f[2]),\(f[1]),\(f[0])"
            }.joined(separator: "\n") + "\n" + "1.5e1,, 7 ,8 ,0,square,b\n2,,9,1e2,0,square,b\n"
        try expectSameAsReference(text, "reordered columns")
    }

    @Test func scatteredIdsAreErrorsOnEveryRun() throws {
        try expectSameAsReference(Self.header + rows("a") + rows("b") + rows("a", side: 20), "a, b, a")
        try expectSameAsReference(Self.header + (0..<7).map { rows($0 % 2 == 0 ? "x" : "y") }.joined(), "alternating ids")
        try expectSameAsReference(Self.header + rows("a") + "a,square,0,zz,1\n" + rows("b") + rows("a"), "a scattered run with its own error")
    }

    @Test func badNumbersAndStrokes() throws {
        let bad = [
            "a,square,0,abc,1", "a,square,0,,1", "a,square,0,nan,1", "a,square,0,1,inf", "a,square,-1,1,1", "a,square,1.5,1,1",
            "a,square,0,2e15,1", "a,square,0,1,-3e20", "a,square,x,1,1", "a,square,0, 12 ,1", "a,square,0,0x10,1",
            "a,square,0,12345678901234567890123,1", "a,square,0,1e-400,1",
        ]
        for row in bad {
            try expectSameAsReference(Self.header + rows("z") + row + "\n" + rows("a") + rows("b"), "row \(row)")
        }
    }

    @Test func rowsWithTheWrongNumberOfFields() throws {
        try expectSameAsReference(Self.header + rows("a") + "b,square,0,1\n" + rows("b"), "a short row opening a drawing")
        try expectSameAsReference(Self.header + rows("a") + "a,square,0,1,2,3\n" + rows("b"), "a long row in a drawing")
        try expectSameAsReference(Self.header + rows("a") + "\n,\n" + rows("b"), "a row of two empty fields")
        try expectSameAsReference(Self.header + "oops\n" + rows("a"), "a first row of one field")
        try expectSameAsReference(Self.header + rows("a") + "oops\n" + rows("a") + rows("b"), "a one-field row inside a drawing")
        try expectSameAsReference(Self.header + rows("a") + String(repeating: "a,", count: 40) + "1\n" + rows("b"), "many commas")
        // A one-field row at every place a run can start: it spoils the drawing open before it.
        try expectSameAsReference(Self.header + (0..<6).map { rows("d\($0)") + "x\n" }.joined(), "one-field rows after every drawing")
    }

    @Test func drawingsNoRecognizerCanSee() throws {
        try expectSameAsReference(Self.header + "a,square,0,1,1\n" + rows("b") + "c,square,0,5,5\nc,square,0,5,5\n", "one point, one place")
        try expectSameAsReference(Self.header + rows("a", strokes: [2, 0, 1]) + rows("b", strokes: [1, 1, 0]), "strokes out of order")
    }

    @Test func wholeFileErrorsAreTheSame() throws {
        try expectSameAsReference(Self.header, "a header only")
        try expectSameAsReference(Self.header + "\n\n", "a header and blank lines")
        try expectSameAsReference("drawing,label,x,y\n" + "a,square,1,1\n", "a missing column")
        try expectSameAsReference("", "an empty file")
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-\(UUID().uuidString).csv").path
        #expect(throws: DataError(file: missing, message: "no such file", kind: .missingFile)) {
            try ShapeDataset.drawings(missing, threads: 2) { { $0 } }
        }
    }

    @Test func nonASCIIIdsReadTheSame() throws {
        try expectSameAsReference(Self.header + rows("café") + rows("naïve") + rows("café"), "accented ids, scattered")
        // The same id in two normal forms: equal strings, different bytes.
        try expectSameAsReference(Self.header + rows("caf\u{E9}") + rows("cafe\u{301}") + rows("b"), "two normal forms")
    }

    @Test func labelsThatChangeWithinADrawingAreItsProblemWhereverTheRunsAreCut() throws {
        let text =
            Self.header + rows("a") + rows("b").replacingOccurrences(of: "square", with: "circle") + rows("b")
            + rows("c") + rows("c").replacingOccurrences(of: "square", with: " square ") + rows("d").replacingOccurrences(of: "square", with: "")
        try expectSameAsReference(text, "labels that change, spaces, empty")
        let items = try ShapeDataset.drawings(try write(Array(text.utf8)), threads: 2, checkLabels: true) { { $0 } }
        #expect(items.map(\.id) == ["a", "b", "c", "d"])
        guard case let .failure(changed) = items[1].value.drawing, case let .failure(empty) = items[3].value.drawing else {
            Issue.record("\(items.map(\.value.drawing))")
            return
        }
        #expect(changed.message == "drawing 'b' is labelled 'circle' above and 'square' here" && changed.line == 12)
        #expect(empty.message == "empty label" && empty.line == 27)
        #expect((try? items[2].value.drawing.get()) != nil, "a label with spaces around it is the same label")
    }

    /// A drawing of more points than a drawing file may have is an error, as in a drawing file, however many runs
    /// its rows cross; the one after it is read. (Before: accepted, and each run's join copied every point so far —
    /// quadratic: 20M points took 26 s, 50M 215 s and 6.7 GB.)
    @Test func aDrawingOfMoreThanAMillionPointsIsAnErrorInAnyRuns() throws {
        var text = "drawing,label,stroke,x,y\n"
        text.reserveCapacity(20_000_000)
        for index in 0...DrawingReader.maximumPoints { text += "d,square,0,\(index % 1000),\(index / 1000)\n" }
        text += "e,square,0,0,0\ne,square,0,9,0\ne,square,0,9,9\ne,square,0,0,9\ne,square,0,0,0\n"
        let path = try write(Array(text.utf8))
        for chunkBytes in [1 << 22, 1 << 16] {
            let items = try ShapeDataset.drawings(path, threads: 2, chunkBytes: chunkBytes) { { $0 } }
            #expect(items.map(\.id) == ["d", "e"])
            #expect(
                items.first?.value.drawing.failureMessage?.hasSuffix("drawing 'd' has more than 1000000 points; is this one drawing?") == true,
                "\(chunkBytes): \(String(describing: items.first?.value.drawing.failureMessage))")
            #expect((try? items.last?.value.drawing.get())?.strokes.first?.count == 5)
            // The line of the 1,000,001st point (the header is line 1). Before: where a run of lines began.
            #expect(items.first?.value.drawing.failureLine == DrawingReader.maximumPoints + 2, "\(chunkBytes)")
        }
    }
}
