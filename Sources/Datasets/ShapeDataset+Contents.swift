import DataFiles
import Foundation
import Synchronization
import Tensor

extension ShapeDataset {
    /// The bytes each thread reads at a time from a regular file.
    static let pieceBytes = 1 << 23

    /// The most bytes a dataset may have: it is read into memory whole.
    package static let maximumBytes = 1 << 33

    /// The bytes of `path` (`-`: standard input), read into memory whole — a regular file, a pipe or a FIFO (a
    /// device, a socket or a folder is refused before it is read, by `InputFile`; standard input is read whatever
    /// it is). A file is never mapped: one truncated while mapped faults (SIGBUS) where its pages are gone; read, it is
    /// what it was when read. More than `maximumBytes` is an error naming the limit, and so is running out of memory
    /// before it (never a trap).
    ///
    /// What is not a regular file (a pipe, standard input from one) may never end: its first NUL byte ends reading
    /// at once, with the error a parse gives it (file, line, column), since the bytes after it may be endless
    /// (`/dev/zero` through a pipe). A NUL inside a quoted field is text to the parse; then reading goes on, up to
    /// `maximumBytes`. A regular file's NUL spoils only the drawing it sits in, as the parse reads it.
    ///
    /// `progress`, when given, learns the file's size and counts the bytes as they are read. A regular file is read
    /// by up to `threads` threads at once, in pieces of 8 MiB at their own offsets (so that copying it and faulting in
    /// its pages take every core): then what it held when each piece was read, up to the first piece that found the
    /// file ending early, and anything written after its size was taken (standard input: in one stream, from where it
    /// stands).
    static func contents(
        of path: String, progress: DatasetProgress? = nil, threads: Int = 1, pieceBytes: Int = pieceBytes, maximumBytes: Int = maximumBytes
    ) throws(DataError) -> Data {
        let descriptor = path == "-" ? 0 : try InputFile.descriptor(path, as: "a CSV file")
        defer { if descriptor != 0 { close(descriptor) } }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw DataError(file: path, message: "cannot be read: \(String(cString: strerror(errno)))", kind: .unreadable)
        }
        let regular = status.st_mode & S_IFMT == S_IFREG
        let expected = regular ? Int(status.st_size) : 0
        guard expected <= maximumBytes else { throw tooLarge(path, bytes: expected, limit: maximumBytes) }
        progress?.expectedBytes.store(expected, ordering: .relaxed)
        let buffer = ReadBuffer()
        guard buffer.reserve(expected + 1, limit: maximumBytes) else { throw noMemory(path, bytes: expected + 1, limit: maximumBytes) }
        // A path opened here starts at byte 0; standard input may already be past it, so it is read in one stream.
        if threads > 1 && expected > pieceBytes && descriptor != 0 {
            try piecewise(descriptor, into: buffer, path: path, bytes: expected, threads: threads, pieceBytes: pieceBytes, progress: progress)
            // Whatever was appended after the size was taken is read below, as from a pipe.
            if buffer.count < expected { return buffer.take() }
        }
        let chunk = 1 << 20
        var nulsChecked = regular
        while true {
            if buffer.count == buffer.capacity {
                guard buffer.reserve(chunk, limit: maximumBytes) else { throw noMemory(path, bytes: buffer.count + chunk, limit: maximumBytes) }
            }
            guard let end = buffer.end else { preconditionFailure("ShapeDataset.contents: a buffer with room has memory") }
            let count = systemRead(descriptor, end, min(chunk, buffer.capacity - buffer.count))
            if count < 0 {
                if errno == EINTR { continue }
                throw DataError(file: path, message: "cannot be read: \(String(cString: strerror(errno)))", kind: .unreadable)
            }
            if count == 0 { return buffer.take() }
            guard buffer.count + count <= maximumBytes else { throw tooLarge(path, bytes: buffer.count + count, limit: maximumBytes) }
            let nul = nulsChecked ? nil : memchr(end, 0, count)
            buffer.count += count
            progress?.bytesRead.add(count, ordering: .relaxed)
            if let nul, let base = buffer.base {
                if let refused = try nulRefusal(
                    UnsafeRawBufferPointer(start: base, count: UnsafeRawPointer(base).distance(to: UnsafeRawPointer(nul)) + 1), path: path)
                {
                    throw refused
                }
                nulsChecked = true  // in quotes: text, and the rest is bounded by `maximumBytes`
            }
        }
    }

    /// The first `bytes` bytes of the open regular file `descriptor`, read into `buffer` (with room for them) in
    /// pieces of `pieceBytes` at their own offsets on up to `threads` threads; fewer when the file ended early (up to
    /// the first piece that found it so).
    private static func piecewise(
        _ descriptor: Int32, into buffer: ReadBuffer, path: String, bytes: Int, threads: Int, pieceBytes: Int, progress: DatasetProgress?
    ) throws(DataError) {
        guard let base = buffer.base, buffer.capacity >= bytes else { preconditionFailure("ShapeDataset.piecewise: no room for \(bytes) bytes") }
        /// The buffer, written by each thread in its own pieces only.
        struct Target: @unchecked Sendable { let base: UnsafeMutableRawPointer }
        let target = Target(base: base)
        let ended = Atomic<Int>(bytes), failure = Atomic<Int32>(0)
        let pieces = (bytes + pieceBytes - 1) / pieceBytes
        let none: @Sendable () -> Void = {}
        Parallel.forEach(count: pieces, threads: threads, state: none) { _, range in
            for piece in range {
                var offset = piece * pieceBytes
                let end = min(bytes, offset + pieceBytes)
                while offset < end {
                    let count = pread(descriptor, target.base + offset, end - offset, off_t(offset))
                    if count < 0 && errno == EINTR { continue }
                    if count < 0 {
                        _ = failure.compareExchange(expected: 0, desired: errno, ordering: .relaxed)
                        return
                    }
                    if count == 0 {
                        _ = ended.min(offset, ordering: .relaxed)
                        break
                    }
                    offset += count
                    progress?.bytesRead.add(count, ordering: .relaxed)
                }
            }
        }
        let code = failure.load(ordering: .relaxed)
        guard code == 0 else { throw DataError(file: path, message: "cannot be read: \(String(cString: strerror(code)))", kind: .unreadable) }
        let length = ended.load(ordering: .relaxed)
        if lseek(descriptor, off_t(length), SEEK_SET) < 0 {
            throw DataError(file: path, message: "cannot be read: \(String(cString: strerror(errno)))", kind: .unreadable)
        }
        buffer.count = length
    }

    /// The error the one CSV engine gives the NUL byte that `bytes` ends with, or `nil` when it reads that NUL as text
    /// (in a quoted field). An error of the header is thrown.
    private static func nulRefusal(_ bytes: UnsafeRawBufferPointer, path: String) throws(DataError) -> DataError? {
        guard let base = bytes.baseAddress else { return nil }
        let data = Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: bytes.count, deallocator: .none)
        var reader = try CSVReader(file: path, bytes: data)
        while let result = try reader.nextResult() {
            if case .failure(let error) = result, error.message == CSVRecordGrammar.nulMessage { return error }
        }
        return nil
    }

    /// The error for a dataset over `limit` bytes.
    private static func tooLarge(_ path: String, bytes: Int, limit: Int) -> DataError {
        DataError(
            file: path, message: "\(bytes) bytes or more is larger than a dataset can be (at most \(limit) bytes, read into memory); split it",
            kind: .invalid)
    }

    /// The error for a dataset that memory cannot hold (`bytes` of it, short of the `limit`).
    private static func noMemory(_ path: String, bytes: Int, limit: Int) -> DataError {
        DataError(
            file: path,
            message: "cannot be read: no memory for \(bytes) bytes of it (a dataset is read into memory whole; at most \(limit) bytes); split it",
            kind: .unreadable)
    }
}

/// Bytes read into memory of its own, grown by `realloc`: running out of memory is an error rather than a trap
/// (as growing a `Data` is), and the bytes are handed over without a copy (`take`).
final class ReadBuffer {
    /// The memory, `capacity` bytes of which `count` are read.
    private(set) var base: UnsafeMutableRawPointer?
    private(set) var capacity = 0
    var count = 0

    deinit { free(base) }

    /// Where the next bytes go (`nil` before any memory).
    var end: UnsafeMutableRawPointer? { base.map { $0 + count } }

    /// Makes room for `more` bytes after `count`: twice the capacity (at most `limit` plus `more`), else just enough;
    /// `false` when memory cannot be had for them.
    func reserve(_ more: Int, limit: Int = .max) -> Bool {
        let needed = count + more
        guard needed > capacity else { return true }
        let doubled = min(max(needed, 2 * capacity), max(needed, limit > Int.max - more ? Int.max : limit + more))
        for size in Set([doubled, needed]).sorted(by: >) {
            if let grown = realloc(base, size) {
                (base, capacity) = (grown, size)
                return true
            }
        }
        return false
    }

    /// The bytes read, as `Data` that frees them; the buffer is empty after.
    func take() -> Data {
        guard let base else { return Data() }
        defer { (self.base, capacity, count) = (nil, 0, 0) }
        return Data(bytesNoCopy: base, count: count, deallocator: .free)
    }
}
