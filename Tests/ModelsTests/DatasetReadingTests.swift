import DataFiles
import Foundation
import Testing

@testable import Datasets
@testable import Models

/// How the dataset readers (training, evaluation and `--dataset` batches) treat rows a careless or hostile file
/// holds: scattered drawing ids, malformed rows that open a drawing or session, other line endings, sessions too
/// slow to classify.
@Suite("Dataset readers: scattered ids, malformed rows, line endings, slow sessions")
struct DatasetReadingTests {
    /// This test's files, removed after it.
    let files = TestFiles("dataset-tests")

    func write(_ text: String) throws -> String { try files.write(text) }

    /// Rows of a drawing `id`: a square of side `side`, one stroke.
    func rows(_ id: String, label: String = "square", side: Int = 10) -> String {
        [(0, 0), (side, 0), (side, side), (0, side), (0, 0)].map { "\(id),\(label),0,\($0.0),\($0.1)\n" }.joined()
    }

    static let header = "drawing,label,stroke,x,y\n"

    /// A regular file read by several threads in pieces at their own offsets is the same bytes as read in one
    /// stream, for piece sizes on both sides of the file's, and its progress counts every byte once.
    @Test(arguments: [1, 2, 3])
    func aFileReadInPiecesIsTheFileReadInOneStream(threads: Int) throws {
        let text = Self.header + (0..<300).map { rows("d\($0)", side: $0 % 17 + 1) }.joined()
        let path = try write(text)
        let whole = try ShapeDataset.contents(of: path)
        #expect(whole == Data(text.utf8))
        for pieceBytes in [1, 7, 4096, text.utf8.count - 1, text.utf8.count, 1 << 23] {
            let progress = DatasetProgress()
            let pieces = try ShapeDataset.contents(of: path, progress: progress, threads: threads, pieceBytes: pieceBytes)
            #expect(pieces == whole, "\(threads) threads, pieces of \(pieceBytes) bytes: \(pieces.count) bytes, expected \(whole.count)")
            #expect(progress.bytesRead.load(ordering: .relaxed) == whole.count, "\(threads) threads, pieces of \(pieceBytes)")
        }
    }

    /// The progress a long `--dataset` shows: the file's size, then every byte read, then every byte parsed (the
    /// header's too), in runs of any size.
    @Test(arguments: [1, 64, 1 << 22])
    func progressCountsEveryByteReadAndParsed(chunkBytes: Int) throws {
        let text = Self.header + (0..<50).map { rows("d\($0)") }.joined()
        let path = try write(text)
        let progress = DatasetProgress()
        let items = try ShapeDataset.drawings(path, threads: 2, chunkBytes: chunkBytes, progress: progress) { { $0 } }
        #expect(items.count == 50)
        let finished = progress.readFinished.load(ordering: .relaxed)
        let counts = [
            progress.expectedBytes.load(ordering: .relaxed), progress.bytesRead.load(ordering: .relaxed),
            progress.bytesDone.load(ordering: .relaxed),
        ]
        #expect(finished)
        #expect(counts == [text.utf8.count, text.utf8.count, text.utf8.count])
    }

    @Test func aDrawingWhoseRowsAreScatteredIsAnErrorNamingEveryRun() throws {
        // a: lines 2–6 and 12–16, b between them.
        let path = try write(Self.header + rows("a") + rows("b") + rows("a", side: 20))
        let items = try datasetRecords(path)
        #expect(items.map(\.id) == ["a", "b", "a"])
        let message =
            "drawing 'a' has rows at lines 2–6, 12–16, with other drawings between them; "
            + "the rows of one drawing must be together (or give each drawing its own id)"
        guard case .failure(let first) = items[0].drawing, case .failure(let second) = items[2].drawing else {
            Issue.record("a scattered drawing was classified: \(items.map(\.drawing))")
            return
        }
        #expect(first == DataError(file: path, line: 2, column: (1, "drawing"), message: message))
        #expect(second == DataError(file: path, line: 12, column: (1, "drawing"), message: message))
        #expect((try? items[1].drawing.get()) != nil)
        #expect(throws: DataError(file: path, line: 2, column: (1, "drawing"), message: message)) { try ShapeDataset.read(path) }
    }

    @Test func manyRunsOfOneIdKeepEachMessageShort() throws {
        let path = try write(Self.header + (0..<300).map { rows($0 % 2 == 0 ? "a" : "b") }.joined())
        let items = try datasetRecords(path, threads: 2)
        #expect(items.count == 300)
        #expect(
            throws: DataError(
                file: path, line: 7, column: (1, "drawing"),
                message: "drawing 'b' has rows at lines 7–11, 17–21, 27–31, 37–41 and 146 more runs, with other drawings "
                    + "between them; the rows of one drawing must be together (or give each drawing its own id)")
        ) {
            try items[1].drawing.get()
        }
    }

    /// Fewer bytes of rows than threads never trap (the row-by-row split once indexed before the rows' start).
    @Test(arguments: ["a", "\n", "a,square,0,1,1", "\r\r"])
    func tinyDatasetsSplitForThreadsNeverTrap(rows: String) throws {
        let path = try write(Self.header + rows)
        for threads in [2, 4, 16] {
            do {
                let items = try datasetRecords(path, threads: threads)
                #expect(items.count == 1 && (try? items[0].drawing.get()) == nil, "\(items)")
            } catch {
                #expect(error.message == "no drawings: the file has a header but no rows")
            }
        }
    }

    @Test func aMalformedRowOpeningADrawingIsReportedUnderItsOwnId() throws {
        let path = try write(Self.header + rows("a") + "b,square,0,1\n" + rows("b").split(separator: "\n").dropFirst().joined(separator: "\n") + "\n")
        let items = try datasetRecords(path)
        #expect(items.map(\.id) == ["a", "b"])
        #expect((try? items[0].drawing.get()) != nil, "drawing a is whole: \(items[0].drawing)")
        #expect(throws: DataError(file: path, line: 7, message: "4 fields, but the header has 5")) { try items[1].drawing.get() }
        #expect(items[1].lines == 7...11)
    }

    @Test func crOnlyAndCrlfDatasetsReadAsLfOnesOnEveryThread() throws {
        let text = Self.header + rows("a") + rows("b", label: "circle") + "c,star,0,1,x\n" + rows("d")
        for threads in [1, 3] {
            let expected = try datasetRecords(try write(text), threads: threads)
            for end in ["\r", "\r\n"] {
                let items = try datasetRecords(try write(text.replacingOccurrences(of: "\n", with: end)), threads: threads)
                #expect(items.map(\.id) == expected.map(\.id) && items.map(\.lines) == expected.map(\.lines), "threads \(threads)")
                #expect(items.map { try? $0.drawing.get() } == expected.map { try? $0.drawing.get() })
                #expect(items.map(\.drawing.failureMessage) == expected.map(\.drawing.failureMessage))
            }
        }
    }

    @Test func aSessionTooSlowIsRefusedBeforeItIsResampled() throws {
        var text = "session,label,timestamp,acc.x,acc.y,acc.z\n"
        for i in 0..<300 { text += String(format: "fast,walking,%.2f,0,%.3f,-1\n", Double(i) * 0.02, sin(Double(i) / 4)) }
        for i in 0..<300 { text += String(format: "slow,walking,%.0f,0,%.3f,-1\n", Double(i) * 5, sin(Double(i) / 4)) }
        text += "late,walking,1\n"
        let path = try write(text)
        let sessions = try MotionDataset.sessions(path)
        #expect(sessions.map(\.id) == ["fast", "slow", "late"])
        #expect((try? sessions[0].recording.get()) != nil)
        #expect(
            throws: DataError(
                file: path, line: 302,
                message: "session 'slow' (lines 302–601): the samples are 5 s apart (median): 0.2 Hz, "
                    + "too slow to resolve a stride; the lowest rate accepted is 10 Hz (over twice the fastest running cadence, "
                    + "3.5 steps a second). The timestamps look like milliseconds (200 Hz if divided by 1000): the timestamp "
                    + "column must be in seconds")
        ) { try sessions[1].recording.get() }
        // A row with too few fields opens its own session instead of spoiling 'slow'.
        #expect(throws: DataError(file: path, line: 602, message: "3 fields, but the header has 6")) { try sessions[2].recording.get() }
    }

    /// A dataset given as a pipe (`--dataset <(gunzip -c big.csv.gz)`) cannot be mapped: it is read whole, and gives
    /// the regular file's drawings. (It was refused as "cannot be read" before.)
    @Test func aPipeReadsAsTheFile() throws {
        let text = Self.header + rows("a") + rows("b", label: "circle") + "c,star,0,1,x\n"
        let file = try write(text)
        let fifo = files.folder.appendingPathComponent("\(UUID().uuidString).fifo").path
        try #require(mkfifo(fifo, 0o600) == 0)
        defer { try? FileManager.default.removeItem(atPath: fifo) }
        let writer = Thread {
            if let handle = FileHandle(forWritingAtPath: fifo) {
                handle.write(Data(text.utf8))
                try? handle.close()
            }
        }
        writer.start()
        let piped = try datasetRecords(fifo, threads: 2)
        let expected = try datasetRecords(file, threads: 2)
        #expect(piped.map(\.id) == expected.map(\.id) && piped.map(\.lines) == expected.map(\.lines))
        #expect(piped.map { try? $0.drawing.get() } == expected.map { try? $0.drawing.get() })
        #expect(piped.map(\.drawing.failureMessage) == expected.map(\.drawing.failureMessage).map { $0?.replacingOccurrences(of: file, with: fifo) })
    }
}

extension Result where Failure == DataError {
    /// The error's text, or `nil` on success.
    var failureMessage: String? {
        if case .failure(let error) = self { return "\(error.line ?? 0): \(error.message)" }
        return nil
    }

    /// The error's line, or `nil` on success or without one.
    var failureLine: Int? {
        if case .failure(let error) = self { return error.line }
        return nil
    }
}
