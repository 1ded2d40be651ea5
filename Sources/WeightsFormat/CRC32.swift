import DataFiles
import Foundation

/// CRC-32 (IEEE 802.3: polynomial 0xEDB88320 reflected, initial and final XOR 0xFFFFFFFF — the checksum of zip,
/// PNG and zlib's `crc32`). It detects every error burst up to 32 bits long, so every flipped byte of a weights
/// file is caught; it is an integrity check, not a defence against tampering.
package struct CRC32: Sendable {
    private static let table: [UInt32] = (0..<256).map { byte in
        var value = UInt32(byte)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    private var state: UInt32 = 0xFFFF_FFFF

    /// A checksum to feed piece by piece.
    package init() {}

    /// Adds `bytes` to the checksum.
    package mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        var crc = state
        for byte in bytes { crc = Self.table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        state = crc
    }

    /// The checksum of everything added so far.
    package var value: UInt32 { state ^ 0xFFFF_FFFF }

    /// The checksum of `bytes`.
    package static func checksum<Bytes: Sequence>(_ bytes: Bytes) -> UInt32 where Bytes.Element == UInt8 {
        var crc = CRC32()
        crc.update(bytes)
        return crc.value
    }

    /// The checksum of the regular file at `path`, read in 1 MiB pieces, or `nil` when it cannot be read or is not a
    /// regular file: a device (`/dev/zero`, endless) is refused by `InputFile` without being read, and a FIFO is left
    /// whole for its one reader.
    package static func checksum(ofFile path: String) -> UInt32? {
        guard let descriptor = try? InputFile.descriptor(path, as: "a file") else { return nil }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        defer { try? handle.close() }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        var crc = CRC32()
        while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty { crc.update(chunk) }
        return crc.value
    }

    /// The checksum of `bytes[range]` without copying them.
    package static func checksum(_ bytes: [UInt8], range: Range<Int>) -> UInt32 {
        bytes.withUnsafeBufferPointer { checksum(UnsafeBufferPointer(rebasing: $0[range])) }
    }
}
