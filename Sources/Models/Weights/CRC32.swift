/// CRC-32 (IEEE 802.3: polynomial 0xEDB88320 reflected, initial and final XOR 0xFFFFFFFF — the checksum of zip,
/// PNG and zlib's `crc32`). It detects every error burst up to 32 bits long, so every flipped byte of a weights
/// file is caught; it is an integrity check, not a defence against tampering.
public struct CRC32: Sendable {
    private static let table: [UInt32] = (0..<256).map { byte in
        var value = UInt32(byte)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    /// The checksum of `bytes`.
    public static func checksum<Bytes: Sequence>(_ bytes: Bytes) -> UInt32 where Bytes.Element == UInt8 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }

    /// The checksum of `bytes[range]` without copying them.
    public static func checksum(_ bytes: [UInt8], range: Range<Int>) -> UInt32 {
        bytes.withUnsafeBufferPointer { checksum(UnsafeBufferPointer(rebasing: $0[range])) }
    }
}
