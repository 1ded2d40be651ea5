/// Little-endian reads and writes of the storage formats' fields.
extension Array where Element == UInt8 {
    /// Appends `value` as 4 little-endian bytes.
    mutating func appendLittleEndian(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    /// Appends `value` as 2 little-endian bytes.
    mutating func appendLittleEndian(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }
}

extension UnsafeRawBufferPointer {
    /// The binary32 whose 4 little-endian bytes start at `offset`.
    @inline(__always)
    func float32(at offset: Int) -> Float {
        Float(
            bitPattern: UInt32(self[offset]) | UInt32(self[offset + 1]) << 8
                | UInt32(self[offset + 2]) << 16 | UInt32(self[offset + 3]) << 24)
    }

    /// The binary16 whose 2 little-endian bytes start at `offset`, widened to binary32.
    @inline(__always)
    func float16(at offset: Int) -> Float {
        Float(Float16(bitPattern: UInt16(self[offset]) | UInt16(self[offset + 1]) << 8))
    }
}
