import Foundation
import Tensor

// MARK: - Decoding

extension ModelFile {
    /// Reads and validates the weights file at `url`: every byte is checked before anything is built.
    public init(contentsOf url: URL) throws(WeightsFileError) {
        self = try Self.load(url).file
    }

    /// Reads and validates the weights file at `url`, and returns its bytes too (for tools that show them).
    public static func load(_ url: URL) throws(WeightsFileError) -> (file: ModelFile, bytes: [UInt8]) {
        let path = url.path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw WeightsFileError(path: path, problem: .fileNotFound)
        }
        if isDirectory.boolValue { throw WeightsFileError(path: path, problem: .unreadable("it is a directory")) }
        let bytes: [UInt8]
        do {
            bytes = [UInt8](try Data(contentsOf: url))
        } catch {
            throw WeightsFileError(path: path, problem: .unreadable(error.localizedDescription))
        }
        return (try ModelFile(bytes: bytes, path: path), bytes)
    }

    /// The CRC-32 stored in the last 4 bytes of an encoded file.
    public static func storedChecksum(of bytes: [UInt8]) -> UInt32? {
        guard bytes.count >= 4 else { return nil }
        return bytes.suffix(4).reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The same model with every tensor stored as `f32`: what the file would be without quantization.
    public var float32Equivalent: ModelFile {
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
            throw fail(expected > bytes.count
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
        let header: WeightsHeader
        do {
            header = try JSONDecoder().decode(
                WeightsHeader.self, from: Data(bytes[Self.preambleBytes..<(Self.preambleBytes + headerLength)]))
        } catch {
            throw fail(.corruptHeader(Self.describe(decodingError: error)))
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
                throw fail(.tensorSizeMismatch(
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

    /// A decoding error as one line: what was wrong and where in the header.
    static func describe(decodingError error: any Error) -> String {
        func location(_ context: DecodingError.Context) -> String {
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
        }
        switch error {
        case DecodingError.dataCorrupted(let context): return location(context)
        case DecodingError.keyNotFound(let key, let context): return "missing \(key.stringValue) at \(location(context))"
        case DecodingError.typeMismatch(_, let context): return location(context)
        case DecodingError.valueNotFound(_, let context): return location(context)
        default: return "\(error)"
        }
    }
}
