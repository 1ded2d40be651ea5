import Foundation
import Tensor

// MARK: - Decoding

extension ModelFile {
    /// Reads and validates the weights file at `url`: every byte is checked before anything is built.
    public init(contentsOf url: URL) throws(WeightsFileError) {
        self = try Self.load(url).file
    }

    /// Reads and validates the weights file at `url`, and returns its bytes too (for tools that show them).
    ///
    /// What it refuses before reading more than the 24-byte preamble (see `readBytes(at:)`): a path that is not
    /// a regular file (directory, FIFO, device, socket — opened without blocking, then checked on the open
    /// descriptor), a file larger than `WeightsLimits.maximumFileBytes`, a wrong magic, and a declared length
    /// that differs from the file's real size.
    /// A file another format's reader is registered for (`ForeignModelReaders`: `.onnx`) is read by it, and its
    /// bytes are those of our encoding of what it read.
    package static func load(_ url: URL) throws(WeightsFileError) -> (file: ModelFile, bytes: [UInt8]) {
        if let reader = try ForeignModelReaders.reader(for: url) {
            let file = try reader(url)
            return (file, file.encoded())
        }
        let bytes = try readBytes(at: url.path)
        return (try ModelFile(bytes: bytes, path: url.path), bytes)
    }

    /// The bytes of the weights file at `path`, read only after its preamble and size pass.
    ///
    /// The file is opened once (`O_RDONLY | O_NONBLOCK`, so a FIFO or device cannot block the open) and every
    /// check runs on that descriptor (`fstat`), so nothing can swap the file between check and read. Errors: no
    /// file — `fileNotFound`; not a regular file — `notRegularFile`; permission, a symbolic-link loop and other
    /// causes a retry cannot change — `cannotOpen`; larger than `WeightsLimits.maximumFileBytes` —
    /// `fileTooLarge`; a preamble that does not match — `wrongMagic`, `truncated`, `trailingBytes`; an I/O error
    /// (EIO and the like) — `unreadable`, the only one the chain retries.
    static func readBytes(at path: String) throws(WeightsFileError) -> [UInt8] {
        func fail(_ problem: WeightsFileError.Problem) -> WeightsFileError { WeightsFileError(path: path, problem: problem) }
        let (descriptor, size) = try openRegularFile(path)
        defer { close(descriptor) }

        // The preamble first: a file that is not a weights file, or whose size contradicts its preamble, is
        // refused after 24 bytes, however large it is.
        var preamble = [UInt8](repeating: 0, count: min(size, preambleBytes))
        let got = try readFully(descriptor, into: &preamble, path: path)
        preamble.removeLast(preamble.count - got)
        let prefix = Array(preamble.prefix(magic.count))
        guard prefix == Array(magic.prefix(prefix.count)) else { throw fail(.wrongMagic(found: prefix)) }
        guard size <= WeightsLimits.maximumFileBytes else {
            throw fail(.fileTooLarge(bytes: size, limit: WeightsLimits.maximumFileBytes))
        }
        if preamble.count == preambleBytes {
            let declared = preamble[16..<24].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            if declared != UInt64(size) {
                let expected = declared > UInt64(Int.max) ? Int.max : Int(declared)
                throw fail(
                    expected > size
                        ? .truncated(expectedBytes: expected, actualBytes: size)
                        : .trailingBytes(expectedBytes: expected, actualBytes: size))
            }
        }
        var bytes = [UInt8](repeating: 0, count: size)
        let count = try readFully(descriptor, into: &bytes, path: path)
        // A file that shrank while being read gives fewer bytes; the decoder reports it as truncated. One that
        // grew is read only up to the size it had.
        bytes.removeLast(bytes.count - count)
        return bytes
    }

    /// `path` opened for reading (`O_RDONLY | O_NONBLOCK`, so a FIFO or device cannot block the open), and its size,
    /// once `fstat` on that descriptor shows a regular file; the caller closes it. Errors as `readBytes(at:)`.
    package static func openRegularFile(_ path: String) throws(WeightsFileError) -> (descriptor: Int32, size: Int) {
        func fail(_ problem: WeightsFileError.Problem) -> WeightsFileError { WeightsFileError(path: path, problem: problem) }
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw fail(openProblem(errno)) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let problem = openProblem(errno)
            close(descriptor)
            throw fail(problem)
        }
        let type = status.st_mode & S_IFMT
        guard type == S_IFREG else {
            close(descriptor)
            throw fail(.notRegularFile(kind: fileKind(type)))
        }
        return (descriptor, Int(status.st_size))
    }

    /// Reads the file from its start into `buffer` until it is full or the file ends; returns the bytes read.
    package static func readFully(_ descriptor: Int32, into buffer: inout [UInt8], path: String) throws(WeightsFileError) -> Int {
        var done = 0
        while done < buffer.count {
            let count = buffer.withUnsafeMutableBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return pread(descriptor, base + done, raw.count - done, off_t(done))
            }
            if count == 0 { break }
            if count < 0 {
                let code = errno
                if code == EINTR { continue }
                throw WeightsFileError(path: path, problem: openProblem(code))
            }
            done += count
        }
        return done
    }

    /// What an `open`, `fstat` or `read` error number means for a weights file: missing, permanent, or an I/O
    /// error worth a retry.
    static func openProblem(_ code: Int32) -> WeightsFileError.Problem {
        let message = String(cString: strerror(code))
        switch code {
        case ENOENT: return .fileNotFound
        case EISDIR: return .notRegularFile(kind: "a directory")
        case ELOOP: return .cannotOpen("\(message) (a symbolic-link loop)")
        case EACCES, EPERM, ENAMETOOLONG, ENOTDIR, ENXIO, ENODEV, EROFS, EINVAL, EOVERFLOW, EFBIG:
            return .cannotOpen(message)
        default:
            // EIO, EINTR, EAGAIN, ENOMEM, ENFILE, EMFILE, ESTALE, …: the disk, the network file system or the
            // process's limits, which may recover.
            return .unreadable(message)
        }
    }

    /// A file type for people, from `st_mode & S_IFMT`.
    private static func fileKind(_ type: mode_t) -> String {
        switch type {
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO (named pipe)"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        default: "a special file"
        }
    }

    /// The CRC-32 stored in the last 4 bytes of an encoded file.
    package static func storedChecksum(of bytes: [UInt8]) -> UInt32? {
        guard bytes.count >= 4 else { return nil }
        return bytes.suffix(4).reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The same model with every tensor stored as `f32`: what the file would be without quantization.
    package var float32Equivalent: ModelFile {
        var copy = self
        copy.tensors = tensors.mapValues { $0.format == .f32 ? $0 : QuantizedTensor(quantizing: $0.dequantized(), as: .f32) }
        copy.activationQuantization = nil  // it names int8 layers, and an f32 file has none
        return copy
    }

    /// Decodes and validates a weights file's bytes; `path` names the file in errors.
    public init(bytes: [UInt8], path: String) throws(WeightsFileError) {
        func fail(_ problem: WeightsFileError.Problem) -> WeightsFileError { WeightsFileError(path: path, problem: problem) }
        func readInteger<Value: FixedWidthInteger>(_: Value.Type, at offset: Int) -> Value {
            var value: Value = 0
            for i in 0..<MemoryLayout<Value>.size { value |= Value(bytes[offset + i]) << (8 * i) }
            return value
        }

        let prefix = Array(bytes.prefix(Self.magic.count))
        guard prefix == Array(Self.magic.prefix(prefix.count)) else { throw fail(.wrongMagic(found: prefix)) }
        guard bytes.count <= WeightsLimits.maximumFileBytes else {
            throw fail(.fileTooLarge(bytes: bytes.count, limit: WeightsLimits.maximumFileBytes))
        }
        guard bytes.count >= Self.preambleBytes + 4 else {
            throw fail(.truncated(expectedBytes: Self.preambleBytes + 4, actualBytes: bytes.count))
        }
        let version = readInteger(UInt32.self, at: 8)
        guard Self.readableVersions.contains(version) else {
            throw fail(.unsupportedVersion(found: version, supported: Self.formatVersion))
        }
        let headerLength = Int(readInteger(UInt32.self, at: 12))
        let declaredLength = readInteger(UInt64.self, at: 16)
        guard declaredLength <= UInt64(Int.max), Int(declaredLength) == bytes.count else {
            let expected = declaredLength > UInt64(Int.max) ? Int.max : Int(declaredLength)
            throw fail(
                expected > bytes.count
                    ? .truncated(expectedBytes: expected, actualBytes: bytes.count)
                    : .trailingBytes(expectedBytes: expected, actualBytes: bytes.count))
        }
        let stored = readInteger(UInt32.self, at: bytes.count - 4)
        let computed = CRC32.checksum(bytes, range: 0..<(bytes.count - 4))
        guard stored == computed else { throw fail(.checksumMismatch(stored: stored, computed: computed)) }

        let dataStart = Self.aligned(Self.preambleBytes + headerLength)
        guard dataStart <= bytes.count - 4 else {
            throw fail(.corruptHeader("a header of \(headerLength) bytes does not fit a file of \(bytes.count) bytes"))
        }
        let headerBytes = bytes[Self.preambleBytes..<(Self.preambleBytes + headerLength)]
        let header: WeightsHeader
        do throws(HeaderJSONError) {
            header = try WeightsHeader(jsonBytes: headerBytes)
        } catch {
            throw fail(.corruptHeader(error.description))
        }

        let dataBytes = bytes.count - 4 - dataStart
        var tensors: [String: QuantizedTensor] = [:]
        var end = 0
        for entry in header.tensors.sorted(by: { $0.offset < $1.offset }) {
            guard Self.isPlausible(entry.shape, fileBytes: bytes.count) else {
                throw fail(.corruptHeader("tensor \(entry.name) has an impossible shape \(entry.shape)"))
            }
            let expected = entry.format.byteCount(for: entry.shape)
            guard entry.length == expected else {
                throw fail(
                    .tensorSizeMismatch(
                        tensor: entry.name, shape: entry.shape, format: entry.format, expectedBytes: expected, actualBytes: entry.length))
            }
            guard tensors[entry.name] == nil else { throw fail(.duplicateTensor(entry.name)) }
            guard entry.offset >= end, entry.offset % Self.alignment == 0, entry.length <= dataBytes - entry.offset else {
                throw fail(.tensorOutOfBounds(tensor: entry.name, offset: entry.offset, length: entry.length, dataBytes: dataBytes))
            }
            if let stray = (dataStart + end..<dataStart + entry.offset).first(where: { bytes[$0] != 0 }) {
                throw fail(.strayBytes(offset: stray))
            }
            let start = dataStart + entry.offset
            tensors[entry.name] = QuantizedTensor(
                shape: entry.shape, format: entry.format, bytes: Array(bytes[start..<(start + entry.length)]))
            end = entry.offset + entry.length
        }
        if let stray = (Self.preambleBytes + headerLength..<dataStart).first(where: { bytes[$0] != 0 }) {
            throw fail(.strayBytes(offset: stray))
        }
        if end != dataBytes {
            throw fail(.strayBytes(offset: dataStart + end))
        }
        name = header.name
        architecture = header.architecture
        labels = header.labels
        input = header.input
        preprocessing = header.preprocessing
        training = header.training
        decision = header.decision
        activationQuantization = header.activationQuantization
        self.version = version
        self.tensors = tensors
        if let reason = architecture.lazy.compactMap(\.invalidReason).first {
            throw fail(.invalidArchitecture(reason))
        }
        try validate(path: path)
    }
}
