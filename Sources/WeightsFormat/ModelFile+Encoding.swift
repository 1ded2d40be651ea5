import DataFiles
import Foundation
import Tensor

// MARK: - Encoding

extension ModelFile {
    /// The file's bytes: preamble, JSON header, aligned tensor data, CRC-32.
    public func encoded() -> [UInt8] {
        var entries: [TensorEntry] = []
        var offset = 0
        for name in tensors.keys.sorted(by: Self.tensorOrder) {
            guard let tensor = tensors[name] else { continue }
            entries.append(TensorEntry(name: name, shape: tensor.shape, format: tensor.format, offset: offset, length: tensor.bytes.count))
            offset = Self.aligned(offset + tensor.bytes.count)
        }
        let header = WeightsHeader(
            name: name, architecture: architecture, labels: labels, input: input, preprocessing: preprocessing,
            training: training, decision: decision, activationQuantization: activationQuantization, tensors: entries)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding these plain structs cannot fail; an empty header would be caught on reading.
        let headerBytes = (try? encoder.encode(header)).map { [UInt8]($0) } ?? []
        let dataStart = Self.aligned(Self.preambleBytes + headerBytes.count)
        let dataBytes = entries.last.map { $0.offset + $0.length } ?? 0
        let fileLength = dataStart + dataBytes + 4

        var bytes = Self.magic
        bytes.reserveCapacity(fileLength)
        appendLittleEndian(Self.formatVersion, to: &bytes)
        appendLittleEndian(UInt32(headerBytes.count), to: &bytes)
        appendLittleEndian(UInt64(fileLength), to: &bytes)
        bytes += headerBytes
        bytes += [UInt8](repeating: 0, count: dataStart - bytes.count)
        for entry in entries {
            bytes += [UInt8](repeating: 0, count: dataStart + entry.offset - bytes.count)
            bytes += tensors[entry.name]?.bytes ?? []
        }
        appendLittleEndian(CRC32.checksum(bytes), to: &bytes)
        return bytes
    }

    /// Writes the file atomically: to a temporary file beside `url`, flushed to disk, then renamed over it, so an
    /// interrupted write never leaves a half-written file where a good one was. The rules of `AtomicFile` apply
    /// (symbolic links followed, permissions kept); a directory, device or FIFO at `url` is an error and stays.
    public func write(to url: URL) throws(WeightsFileError) {
        try Self.writeAtomically(encoded(), to: url)
    }

    static func writeAtomically(_ bytes: [UInt8], to url: URL) throws(WeightsFileError) {
        do {
            try AtomicFile.write(bytes, to: url, specialFiles: .refuse)
        } catch {
            throw WeightsFileError(path: url.path, problem: .unwritable(error.reason))
        }
    }

    /// Layer order, then role order within a layer: `0.weight`, `0.bias`, `1.weight`, …
    package static func tensorOrder(_ a: String, _ b: String) -> Bool {
        let roles = ["weight", "bias", "gamma", "beta", "mean", "variance"]
        func key(_ name: String) -> (Int, Int, String) {
            let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
            return (Int(parts.first ?? "") ?? Int.max, roles.firstIndex(of: parts.last ?? "") ?? roles.count, name)
        }
        return key(a) < key(b)
    }

    static func aligned(_ offset: Int) -> Int { (offset + alignment - 1) / alignment * alignment }
}

private func appendLittleEndian<Value: FixedWidthInteger>(_ value: Value, to bytes: inout [UInt8]) {
    withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
}
