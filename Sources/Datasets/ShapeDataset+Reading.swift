import DataFiles
import Foundation
import Models
import Synchronization
import Tensor

/// One drawing of a shape dataset as `ShapeDataset.drawings` hands it to a worker: its id, label, lines, and the
/// drawing or the first problem found in its rows.
package struct DatasetDrawingRecord: Sendable {
    /// The `drawing` column's value.
    package let id: String
    /// The `label` column's value, trimmed.
    package let label: String
    /// The drawing's first and last lines.
    package let lines: ClosedRange<Int>
    /// The drawing, or why it cannot be used.
    package let drawing: Result<Drawing, DataError>
}

/// How far `ShapeDataset.drawings` has got through a dataset, read from another thread while it works (a progress
/// line): the bytes read so far, and then the bytes of rows parsed and handed to the workers.
package final class DatasetProgress: Sendable {
    /// The file's size when it is a regular file; 0 when it cannot be known before it is read (a pipe).
    package let expectedBytes = Atomic<Int>(0)
    /// The bytes read into memory so far.
    package let bytesRead = Atomic<Int>(0)
    /// Whether the whole file is in memory (parsing has begun).
    package let readFinished = Atomic<Bool>(false)
    /// The bytes of rows parsed and handed to the workers so far (after `readFinished`).
    package let bytesDone = Atomic<Int>(0)

    /// Progress from nothing read.
    package init() {}
}

/// A drawing of a dataset with what a worker made of it (`ShapeDataset.drawings`).
package struct DatasetItem<Value: Sendable>: Sendable {
    /// The `drawing` column's value.
    package let id: String
    /// The `label` column's value, trimmed.
    package let label: String
    /// The drawing's first and last lines.
    package let lines: ClosedRange<Int>
    /// The worker's result for the drawing.
    package let value: Value
}

extension ShapeDataset {
    /// The one reader of shape datasets (columns `drawing,label,stroke,x,y` and optional `t`, in any order), for
    /// `classify shape --dataset`, `classify evaluate` and training: it reads `path` (`-` for standard input) on up
    /// to `threads` threads and hands each drawing, in any order, to a worker, returning the workers' results in
    /// file order. Each thread calls `makeWorker` once and keeps what it returns (a recognizer's `Worker`, say).
    ///
    /// One item per run of rows with the same id; a bad row spoils only its drawing (its first problem, with file,
    /// line and column); a row with the wrong number of fields starts a drawing of its own id, or spoils the one
    /// above; a drawing no recognizer can see names its lines; a drawing whose rows are not together is an error
    /// on each of its runs (`scatteredMessage`). With `checkLabels` (labelled data), an empty label or one that
    /// changes within a drawing is that drawing's problem. Whole-file problems (no such file, a missing column, no
    /// rows) are thrown.
    ///
    /// The file is mapped into memory (standard input is read whole) and cut into runs of lines that are parsed in
    /// parallel, rows in place; a drawing cut by a run's end is joined to its rest before it is handed over. Records
    /// that are not plain (quoted fields, a NUL, bytes that are not UTF-8, a line longer than
    /// `CSVReader.maximumLineBytes`) are read as `CSVReader` reads them, with its errors on its lines. A file that
    /// holds a quote is parsed as one run, on one thread: a quoted field may hold line ends, so such a file cannot
    /// be cut at line ends (correctness first: quoted datasets are rare and small).
    ///
    /// `progress`, when given, counts the bytes read and then parsed as the work goes on.
    package static func drawings<Value: Sendable>(
        _ path: String, threads: Int, checkLabels: Bool = false, progress: DatasetProgress? = nil,
        makeWorker: @escaping @Sendable () -> (DatasetDrawingRecord) -> Value
    ) throws(DataError) -> [DatasetItem<Value>] {
        try drawings(path, threads: threads, checkLabels: checkLabels, chunkBytes: 1 << 22, progress: progress, makeWorker: makeWorker)
    }

    /// `drawings(_:threads:checkLabels:makeWorker:)` in runs of `chunkBytes` (tests cut files in runs of every size).
    static func drawings<Value: Sendable>(
        _ path: String, threads: Int, checkLabels: Bool = false, chunkBytes: Int, progress: DatasetProgress? = nil,
        makeWorker: @escaping @Sendable () -> (DatasetDrawingRecord) -> Value
    ) throws(DataError) -> [DatasetItem<Value>] {
        precondition(threads >= 1 && chunkBytes >= 1, "ShapeDataset.drawings: threads \(threads), chunkBytes \(chunkBytes)")
        // The file read into memory (never mapped: see `contents(of:)`).
        let data = try contents(of: path, progress: progress, threads: threads)
        progress?.readFinished.store(true, ordering: .releasing)
        let (reader, layout) = try opened(data, path: path, checkLabels: checkLabels)
        let start = reader.byteOffset, firstLine = reader.lineNumber + 1
        progress?.bytesDone.store(start, ordering: .relaxed)
        let (items, rowErrors) = data.withUnsafeBytes { raw in
            inPlace(
                raw.bindMemory(to: UInt8.self), from: start, firstLine: firstLine, layout: layout, threads: threads, chunkBytes: chunkBytes,
                progress: progress, makeWorker: makeWorker)
        }
        return try scatteredRunsMarked(items, rowErrors: rowErrors, layout: layout, makeWorker: makeWorker)
    }

    /// A reader of `data` that has read the header, and where the dataset's columns are; a missing column is thrown.
    static func opened(_ data: Data, path: String, checkLabels: Bool) throws(DataError) -> (reader: CSVReader, layout: DatasetLayout) {
        let reader = try CSVReader(file: path, bytes: data)
        let columns = try reader.columns(["drawing", "label", "stroke", "x", "y"])
        let layout = DatasetLayout(
            path: path, header: reader.header, id: columns[0], label: columns[1], stroke: columns[2], x: columns[3],
            y: columns[4], t: reader.optionalColumn("t"), checkLabels: checkLabels)
        return (reader, layout)
    }

    /// The items of a whole file, in file order, with their drawings whose rows are not together made errors: one on
    /// each of their runs (a run with an error from its rows, `rowErrors`, keeps it); no items at all is thrown.
    static func scatteredRunsMarked<Value: Sendable>(
        _ parsed: [DatasetItem<Value>], rowErrors: [Bool], layout: DatasetLayout,
        makeWorker: @escaping @Sendable () -> (DatasetDrawingRecord) -> Value
    ) throws(DataError) -> [DatasetItem<Value>] {
        precondition(parsed.count == rowErrors.count, "ShapeDataset: \(parsed.count) items, \(rowErrors.count) row errors")
        guard !parsed.isEmpty else { throw DataError(file: layout.path, line: 2, message: "no drawings: the file has a header but no rows") }
        var items = parsed
        var latest: [String: Int] = Dictionary(minimumCapacity: items.count)
        var runs: [String: [Int]] = [:]
        for (index, item) in items.enumerated() {
            // The first time an id comes back, its list starts with its first run.
            if let earlier = latest.updateValue(index, forKey: item.id) { runs[item.id, default: [earlier]].append(index) }
        }
        if !runs.isEmpty {
            let transform = makeWorker()
            for indices in runs.values {
                let id = items[indices[0]].id
                let message = scatteredMessage(id: id, runs: indices.map { items[$0].lines })
                for index in indices where !rowErrors[index] {
                    let lines = items[index].lines
                    let error = DataError(file: layout.path, line: lines.lowerBound, column: (layout.id + 1, "drawing"), message: message)
                    let label = items[index].label
                    items[index] = DatasetItem(
                        id: id, label: label, lines: lines,
                        value: transform(DatasetDrawingRecord(id: id, label: label, lines: lines, drawing: .failure(error))))
                }
            }
        }
        return items
    }

    /// The drawings of `bytes[start...]` parsed in place, in runs of `chunkBytes` on `threads` threads, each handed to
    /// a worker, and whether each has an error from its rows. A file with a quote is parsed as one run on this
    /// thread (see `drawings`).
    static func inPlace<Value: Sendable>(
        _ bytes: UnsafeBufferPointer<UInt8>, from start: Int, firstLine: Int, layout: DatasetLayout, threads: Int, chunkBytes: Int,
        progress: DatasetProgress? = nil, makeWorker: @escaping @Sendable () -> (DatasetDrawingRecord) -> Value
    ) -> (items: [DatasetItem<Value>], rowErrors: [Bool]) {
        precondition(start <= bytes.count, "ShapeDataset.inPlace: rows from \(start) of \(bytes.count) bytes")
        let shared = UnsafeBufferPointerBox(bytes)
        let chunks = DatasetChunk.cut(bytes, from: start, size: chunkBytes, firstLine: firstLine, threads: threads)
        let whole = chunks.count <= 1
        let results = Parallel.map(count: chunks.count, threads: threads, state: makeWorker) { worker, index in
            let result = layout.parse(shared.buffer, chunks[index], seed: index == 0 ? .fileStart : nil, quotes: whole, transform: worker)
            progress?.bytesDone.add(chunks[index].end - chunks[index].start, ordering: .relaxed)
            return result
        }
        let transform = makeWorker()
        if !results.contains(where: { $0.hasQuote }), let joined = joined(results, of: chunks, bytes, layout: layout, transform: transform) {
            return joined
        }
        // A quote: a quoted field may hold a line end, where the runs were cut. The whole file is one run, on this
        // thread.
        let chunk = DatasetChunk(start: start, end: bytes.count, firstLine: firstLine)
        let result = layout.parse(bytes, chunk, seed: .fileStart, quotes: true, transform: transform)
        guard let joined = joined([result], of: [chunk], bytes, layout: layout, transform: transform) else {
            preconditionFailure("ShapeDataset.inPlace: a parse that reads quotes stopped at one")
        }
        return joined
    }

    /// The runs' drawings in file order, with the drawings cut by a run's end joined to their rest, on this thread;
    /// `nil` when a run parsed again holds a quote. A run is parsed again when it starts with a row that belongs to
    /// whatever drawing is open (`needsSeed`), or when the runs before it took more lines than they have
    /// (`extraLines`), so that its lines are numbered as `CSVReader` numbers them.
    static func joined<Value: Sendable>(
        _ results: [DatasetLayout.ChunkResult<Value>], of chunks: [DatasetChunk], _ bytes: UnsafeBufferPointer<UInt8>, layout: DatasetLayout,
        transform: @escaping (DatasetDrawingRecord) -> Value
    ) -> (items: [DatasetItem<Value>], rowErrors: [Bool])? {
        var items: [DatasetItem<Value>] = []
        var rowErrors: [Bool] = []
        items.reserveCapacity(results.reduce(0) { $0 + $1.items.count + 2 })
        rowErrors.reserveCapacity(items.capacity)
        var open: PendingRows?
        func emit(_ rows: PendingRows) {
            let record = layout.finished(rows)
            items.append(DatasetItem(id: record.id, label: record.label, lines: record.lines, value: transform(record)))
            rowErrors.append(rows.error != nil)
        }
        var shift = 0
        for (index, first) in results.enumerated() {
            var result = first
            var chunk = chunks[index]
            chunk.firstLine += shift
            if shift != 0 { result = layout.parse(bytes, chunk, seed: nil, quotes: false, transform: transform) }
            if result.needsSeed {
                result = layout.parse(bytes, chunk, seed: open.map { $0.seed() } ?? .fileStart, quotes: false, transform: transform)
            }
            guard !result.hasQuote else { return nil }
            shift += result.extraLines
            if let head = result.head {
                if open?.id == head.id {
                    open?.append(head, layout: layout)
                } else {
                    if let rows = open { emit(rows) }
                    open = head
                }
            }
            if !result.items.isEmpty || result.tail != nil {
                if let rows = open { emit(rows) }
                open = result.tail
                items += result.items
                rowErrors += result.rowErrors
            }
        }
        if let rows = open { emit(rows) }
        return (items, rowErrors)
    }

    /// The error of a drawing whose id has rows at `runs` (in file order) with other drawings between them: the
    /// first four runs (a file alternating two ids must not make every message as long as the file).
    static func scatteredMessage(id: String, runs: [ClosedRange<Int>]) -> String {
        let shown = 4
        let ranges =
            runs.prefix(shown).map { "\($0.lowerBound)–\($0.upperBound)" }.joined(separator: ", ")
            + (runs.count > shown ? " and \(runs.count - shown) more runs" : "")
        return "drawing '\(id.prefix(60))' has rows at lines \(ranges), with other drawings between them; "
            + "the rows of one drawing must be together (or give each drawing its own id)"
    }
}

/// A run of whole lines of the rest of a dataset: `start..<end` in its bytes, the first line's number.
struct DatasetChunk: Sendable {
    let start: Int
    let end: Int
    var firstLine: Int

    /// `bytes[from...]` cut into runs of about `size` bytes, each ending at a line end, with
    /// their first lines' numbers (line ends counted on `threads` threads).
    static func cut(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, size: Int, firstLine: Int, threads: Int) -> [DatasetChunk] {
        var chunks: [DatasetChunk] = []
        var begin = start
        while begin < bytes.count {
            var end = min(bytes.count, begin + size)
            // A line ends at an LF, or at a CR that no LF follows.
            while end < bytes.count
                && !(bytes[end - 1] == UInt8(ascii: "\n")
                    || (bytes[end - 1] == UInt8(ascii: "\r") && bytes[end] != UInt8(ascii: "\n")))
            { end += 1 }
            chunks.append(DatasetChunk(start: begin, end: end, firstLine: 0))
            begin = end
        }
        let ranges = chunks.map { $0.start..<$0.end }
        let shared = UnsafeBufferPointerBox(bytes)
        let counts = Parallel.map(count: ranges.count, threads: threads) { index in
            lineEnds(UnsafeBufferPointer(rebasing: shared.buffer[ranges[index]]))
        }
        var line = firstLine
        for index in chunks.indices {
            chunks[index].firstLine = line
            line += counts[index]
        }
        return chunks
    }

    /// How many lines `bytes` ends (its LFs and the CRs no LF follows; it ends at a line end), eight bytes at a
    /// time while there is no CR.
    static func lineEnds(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        let raw = UnsafeRawPointer(base)
        var count = 0, i = 0
        let ones: UInt64 = 0x0101_0101_0101_0101, low7: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        while i + 8 <= bytes.count {
            let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            // A byte equal to b is a zero byte of word ^ (b · ones); zero bytes are those whose high bit stays clear.
            let lf = word ^ (ones &* 0x0A), cr = word ^ (ones &* 0x0D)
            let lfNonzero = (((lf & low7) &+ low7) | lf) & ~low7
            let crNonzero = (((cr & low7) &+ low7) | cr) & ~low7
            if crNonzero != ~low7 { break }  // a CR: count the rest byte by byte
            count += 8 - lfNonzero.nonzeroBitCount
            i += 8
        }
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "\n") || (bytes[i] == UInt8(ascii: "\r") && (i + 1 == bytes.count || bytes[i + 1] != UInt8(ascii: "\n"))) {
                count += 1
            }
            i += 1
        }
        return count
    }
}

/// A buffer pointer handed to worker threads that only read it while it is alive.
struct UnsafeBufferPointerBox: @unchecked Sendable {
    let buffer: UnsafeBufferPointer<UInt8>
    init(_ buffer: UnsafeBufferPointer<UInt8>) { self.buffer = buffer }
}
