import Dispatch
import Foundation
import Synchronization

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
    /// parallel, rows in place; a drawing cut by a run's end is joined to its rest before it is handed over. A
    /// file that is not plain enough for that — it holds a quote, a NUL, bytes that are not UTF-8 or a line longer
    /// than `CSVReader.maximumLineBytes` — is read by `CSVReader` row by row on one thread, with the same
    /// results.
    package static func drawings<Value: Sendable>(
        _ path: String, threads: Int, checkLabels: Bool = false, makeWorker: @Sendable () -> (DatasetDrawingRecord) -> Value
    ) throws(DataError) -> [DatasetItem<Value>] {
        try drawings(path, threads: threads, checkLabels: checkLabels, chunkBytes: 1 << 22, rowByRow: false, makeWorker: makeWorker)
    }

    /// `drawings(_:threads:checkLabels:makeWorker:)` in runs of `chunkBytes`, or with `rowByRow` read by `CSVReader`
    /// row by row however plain the file (the twin tests compare the in-place parsing with).
    static func drawings<Value: Sendable>(
        _ path: String, threads: Int, checkLabels: Bool = false, chunkBytes: Int, rowByRow: Bool,
        makeWorker: @Sendable () -> (DatasetDrawingRecord) -> Value
    ) throws(DataError) -> [DatasetItem<Value>] {
        precondition(threads >= 1 && chunkBytes >= 1, "ShapeDataset.drawings: threads \(threads), chunkBytes \(chunkBytes)")
        // The file mapped into memory: its pages are read as the workers reach them, and never copied.
        let data = try contents(of: path)
        var reader = try CSVReader(file: path, bytes: data)
        let columns = try reader.columns(["drawing", "label", "stroke", "x", "y"])
        let layout = DatasetLayout(
            path: path, header: reader.header, id: columns[0], label: columns[1], stroke: columns[2], x: columns[3],
            y: columns[4], t: reader.optionalColumn("t"), checkLabels: checkLabels)
        let start = reader.byteOffset, firstLine = reader.lineNumber + 1
        let parsed =
            rowByRow
            ? nil
            : data.withUnsafeBytes { raw in
                inPlace(
                    raw.bindMemory(to: UInt8.self), from: start, firstLine: firstLine, layout: layout, threads: threads,
                    chunkBytes: chunkBytes, makeWorker: makeWorker)
            }
        var (items, rowErrors): ([DatasetItem<Value>], [Bool])
        if let parsed {
            (items, rowErrors) = parsed
        } else {
            // Quotes, NULs, bytes that are not UTF-8: CSVReader's reading, row by row.
            let transform = makeWorker()
            let groups = try layout.groups(&reader)
            items = groups.map { rows in
                let record = layout.finished(rows)
                return DatasetItem(id: record.id, label: record.label, lines: record.lines, value: transform(record))
            }
            rowErrors = groups.map { $0.error != nil }
        }
        guard !items.isEmpty else { throw DataError(file: path, line: 2, message: "no drawings: the file has a header but no rows") }

        // A drawing whose rows are not together: an error on each of its runs (one with a row error keeps it).
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
                    let error = DataError(file: path, line: lines.lowerBound, column: (columns[0] + 1, "drawing"), message: message)
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
    /// a worker, and whether each has an error from its rows; `nil` when the bytes are not plain enough (see
    /// `drawings`).
    static func inPlace<Value: Sendable>(
        _ bytes: UnsafeBufferPointer<UInt8>, from start: Int, firstLine: Int, layout: DatasetLayout, threads: Int, chunkBytes: Int,
        makeWorker: @Sendable () -> (DatasetDrawingRecord) -> Value
    ) -> (items: [DatasetItem<Value>], rowErrors: [Bool])? {
        guard start <= bytes.count else { return nil }
        let shared = UnsafeBufferPointerBox(bytes)
        let chunks = DatasetChunk.cut(bytes, from: start, size: chunkBytes, firstLine: firstLine, threads: threads)
        let results = parallelChunks(count: chunks.count, threads: threads, makeWorker: makeWorker) { index, worker in
            layout.parse(shared.buffer, chunks[index], seed: index == 0 ? .fileStart : nil, transform: worker)
        }
        guard !results.contains(where: { $0.anomaly }) else { return nil }

        // Join the drawings cut by a run's end, in file order, on this thread.
        let transform = makeWorker()
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
        for (index, first) in results.enumerated() {
            var result = first
            if result.needsSeed {
                // The run starts with a row that belongs to whatever drawing is open: parse it again knowing which.
                result = layout.parse(bytes, chunks[index], seed: open.map { $0.seed() } ?? .fileStart, transform: transform)
            }
            if let head = result.head {
                if let rows = open, rows.id == head.id {
                    open = rows.joined(with: head, layout: layout)
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

    /// The bytes of `path`: a regular file mapped into memory (its pages are read as the workers reach them, and
    /// never copied); standard input (`-`), a pipe or a device read whole, since they cannot be mapped.
    static func contents(of path: String) throws(DataError) -> Data {
        do {
            if path == "-" { return try FileHandle.standardInput.readToEnd() ?? Data() }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw DataError(file: path, message: "no such file", kind: .missingFile)
            }
            guard !isDirectory.boolValue else { throw DataError(file: path, message: "is a directory, not a CSV file", kind: .unreadable) }
            let type = try FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType
            if type == .typeRegular { return try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped) }
            guard let handle = FileHandle(forReadingAtPath: path) else {
                throw DataError(file: path, message: "cannot be opened for reading", kind: .unreadable)
            }
            defer { try? handle.close() }
            return try handle.readToEnd() ?? Data()
        } catch let error as DataError {
            throw error
        } catch {
            throw DataError(file: path, message: "cannot be read: \(error.localizedDescription)", kind: .unreadable)
        }
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

    /// `body(index, worker)` for each chunk index on up to `threads` threads, each thread with a worker of its own,
    /// taking the next chunk as it finishes one; results in index order.
    static func parallelChunks<Value, Result: Sendable>(
        count: Int, threads: Int, makeWorker: @Sendable () -> (DatasetDrawingRecord) -> Value,
        _ body: @Sendable (Int, @escaping (DatasetDrawingRecord) -> Value) -> Result
    ) -> [Result] {
        let slots = Mutex<[Result?]>(Array(repeating: nil, count: count))
        let next = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: max(1, min(threads, count))) { _ in
            let worker = makeWorker()
            while case let index = next.wrappingAdd(1, ordering: .relaxed).oldValue, index < count {
                let result = body(index, worker)
                slots.withLock { $0[index] = result }
            }
        }
        return slots.withLock { $0.compactMap { $0 } }
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
        let counts = parallelMap(count: ranges.count, threads: threads) { index in
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
