import DataFiles
import Foundation
import Synchronization
import Testing

@testable import Datasets
@testable import Models

/// Devices and endless streams as input (issue 46, M4): `/dev/zero` by its path is refused before it is read, by
/// every reader; NUL bytes from a stream that never ends are refused as they are read, with file, line and column;
/// a dataset from a pipe stops at its size limit. Pipes are named `/dev/fd/N`, as `/dev/stdin` names one.
extension HostileInputTests {
    /// The one error every reader gives a device by its path.
    static func deviceError(_ path: String, _ what: String) -> DataError {
        DataError(file: path, message: "is a character device, not \(what)", kind: .unreadable)
    }

    @Test(arguments: ["/dev/zero", "/dev/null"])
    func aCharacterDeviceIsRefusedByEveryReaderBeforeItIsRead(device: String) throws {
        #expect(throws: Self.deviceError(device, "a CSV file")) { _ = try CSVReader(path: device) }
        #expect(throws: Self.deviceError(device, "a CSV file")) { _ = try DrawingReader.read(device) }
        #expect(throws: Self.deviceError(device, "a CSV file")) { _ = try MotionRecordingReader.read(device) }
        #expect(throws: Self.deviceError(device, "a CSV file")) { _ = try ShapeDataset.contents(of: device) }
        #expect(throws: Self.deviceError(device, "a CSV file")) { _ = try MotionDataset.read(device) }
        #expect(throws: Self.deviceError(device, "a .npy file")) { _ = try NPYRows(path: device, size: 4) }
        #expect(throws: DataError(file: "/tmp", message: "is a directory, not a CSV file", kind: .unreadable)) {
            _ = try CSVReader(path: "/tmp")
        }
    }

    /// A FIFO and a pipe named by a path (`/dev/fd/N`, as `/dev/stdin` is) are still read.
    @Test func aPipeByItsPathIsStillRead() throws {
        let pipe = Pipe()
        let writer = Thread {
            pipe.fileHandleForWriting.write(Data(Self.square.utf8)); try? pipe.fileHandleForWriting.close()
        }
        writer.start()
        let drawing = try DrawingReader.read("/dev/fd/\(pipe.fileHandleForReading.fileDescriptor)")
        #expect(drawing.pointCount == 5 && drawing.strokes.count == 2)

        let fifo = files.folder.appendingPathComponent("drawing-\(UUID().uuidString).fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let fifoWriter = Thread { FileHandle(forWritingAtPath: fifo)?.write(Data(Self.square.utf8)) }
        fifoWriter.start()
        #expect(try DrawingReader.read(fifo) == drawing)
    }

    /// NULs from a stream that never ends (`cat /dev/zero | classify shape -`) are refused within
    /// `CSVReader.maximumLineBytes` of them, at the line and column of the first: before, a run of NULs was skipped
    /// to its end, which never came (100% CPU forever).
    @Test func endlessNULsFromAStreamAreRefusedAsTheyAreRead() throws {
        let given = Atomic<Int>(0)
        let chunk = Data(count: 1 << 16)
        var first = true
        let endless = { () throws(DataError) -> Data in
            defer { first = false }
            given.add(chunk.count, ordering: .relaxed)
            return first ? Data("x,y\n1,2\n3,".utf8) + chunk : chunk
        }
        var reader = try CSVReader(file: "-", stream: endless)
        #expect(try reader.next() == ["1", "2"])
        #expect(throws: CSVRecordGrammar.nulByte(file: "-", line: 3, column: (2, "y"))) { _ = try reader.next() }
        #expect(given.load(ordering: .relaxed) <= CSVReader.maximumLineBytes + 2 * chunk.count, "\(given.load(ordering: .relaxed)) bytes read")
    }

    /// A pipe the test writes `head` to, then zeros until the reader is done (or `cap` bytes, which a reader that
    /// waits for the end would need): what `body` returns, and how many bytes were written.
    func readingEndlessZeros<Value>(
        after head: String, cap: Int = 1 << 28, _ body: (String) throws -> Value
    ) rethrows -> (value: Value, written: Int) {
        signal(SIGPIPE, SIG_IGN)  // the writer learns that the reader is gone from EPIPE
        let pipe = Pipe()
        let done = Atomic<Bool>(false), written = Atomic<Int>(0)
        let finished = DispatchSemaphore(value: 0)
        let descriptor = pipe.fileHandleForWriting.fileDescriptor
        let writer = Thread {
            defer { finished.signal() }
            var bytes = Array(head.utf8)
            while !done.load(ordering: .relaxed) && written.load(ordering: .relaxed) < cap {
                let count = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
                guard count > 0 else { return }
                written.add(count, ordering: .relaxed)
                bytes = [UInt8](repeating: 0, count: 1 << 16)
            }
        }
        writer.start()
        defer {
            done.store(true, ordering: .relaxed)
            try? pipe.fileHandleForReading.close()  // a writer blocked on a full pipe gets EPIPE
            finished.wait()
            try? pipe.fileHandleForWriting.close()
        }
        let value = try body("/dev/fd/\(pipe.fileHandleForReading.fileDescriptor)")
        return (value, written.load(ordering: .relaxed))
    }

    @Test func endlessNULsFromAPipeAreRefusedByTheDrawingReader() throws {
        let (result, written) = readingEndlessZeros(after: "x,y\n1,2\n3,") { path in
            (path, Result { () throws(DataError) in try DrawingReader.read(path) })
        }
        #expect(throws: CSVRecordGrammar.nulByte(file: result.0, line: 3, column: (2, "y"))) { try result.1.get() }
        #expect(written < 1 << 28, "the reader waited for the end of an endless pipe")
    }

    /// A dataset from a pipe is read into memory whole: its first NUL ends reading at once, with the error its parse
    /// gives that NUL (before, `/dev/zero` through a pipe was read until memory ran out: a trap).
    @Test func endlessNULsFromAPipeAreRefusedByTheDatasetReader() throws {
        let (result, written) = readingEndlessZeros(after: "drawing,label,stroke,x,y\na,square,0,1,1\na,square,0,") { path in
            Result { () throws(DataError) in try ShapeDataset.contents(of: path) }
        }
        guard case .failure(let error) = result else {
            Issue.record("an endless pipe of NULs was read whole")
            return
        }
        #expect(error.line == 3 && error.column?.index == 4 && error.column?.name == "x" && error.message == CSVRecordGrammar.nulMessage, "\(error)")
        #expect(error.kind == .invalid)
        #expect(written < 1 << 28, "the reader waited for the end of an endless pipe")
    }

    /// Text without a NUL from a pipe that does not end stops at the dataset size limit, with an error naming it.
    @Test func aDatasetFromAnEndlessPipeStopsAtItsSizeLimit() throws {
        let limit = 3 << 20
        let pipe = Pipe()
        signal(SIGPIPE, SIG_IGN)
        let writer = Thread {
            let row = Data(String(repeating: "a,square,0,1,1\n", count: 4096).utf8)
            pipe.fileHandleForWriting.write(Data("drawing,label,stroke,x,y\n".utf8))
            for _ in 0..<(2 * limit / row.count + 2) {
                guard (try? pipe.fileHandleForWriting.write(contentsOf: row)) != nil else { break }
            }
            try? pipe.fileHandleForWriting.close()
        }
        writer.start()
        defer { try? pipe.fileHandleForReading.close() }
        let path = "/dev/fd/\(pipe.fileHandleForReading.fileDescriptor)"
        let error = #expect(throws: DataError.self) { try ShapeDataset.contents(of: path, maximumBytes: limit) }
        #expect(
            error?.message.contains("larger than a dataset can be (at most \(limit) bytes, read into memory)") == true, "\(String(describing: error))"
        )
        #expect(error?.kind == .invalid)
    }
}

extension CSVReaderTests {
    /// A run of NULs longer than the line limit is one failure per `CSVReader.maximumLineBytes` NULs (and its rest),
    /// the same whether the bytes come whole or in pieces; the records after it are read.
    @Test func aRunOfNULsLongerThanALineIsAFailurePerLineLimit() throws {
        let maximum = CSVReader.maximumLineBytes
        let bytes = Array("a,b\n1,".utf8) + [UInt8](repeating: 0, count: 2 * maximum + 10) + Array("\n3,4\n".utf8)
        let whole = streamTranscript({ () throws(DataError) in try CSVReader(file: "f.csv", bytes: Data(bytes)) }, bytes: 20)
        let pieces = streamTranscript(
            { () throws(DataError) in try CSVReader(file: "f.csv", stream: stream(bytes, sizes: [1 << 16, 7, 12_345])) }, bytes: 20)
        #expect(whole == pieces)
        #expect(whole.filter { $0.contains("contains a NUL byte") }.count == 3, "\(whole)")
        #expect(whole.contains("[\"3\", \"4\"]"), "\(whole)")
    }

}
