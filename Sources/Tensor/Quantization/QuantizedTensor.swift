/// A tensor stored in one of the `StorageFormat` layouts: the bytes a weights file holds, and what the compact
/// layers keep in memory.
public struct QuantizedTensor: Sendable, Equatable {
    /// The shape of the tensor the bytes encode.
    public let shape: [Int]
    /// The layout of `bytes`.
    public let format: StorageFormat
    /// Exactly `format.byteCount(for: shape)` bytes.
    public let bytes: [UInt8]

    /// Wraps stored bytes; their count must match the format and shape (callers reading files check it first
    /// and report a typed error).
    public init(shape: [Int], format: StorageFormat, bytes: [UInt8]) {
        shapePrecondition(
            bytes.count == format.byteCount(for: shape),
            "\(format) tensor of shape \(describeShape(shape)) needs \(format.byteCount(for: shape)) bytes, got \(bytes.count)")
        self.shape = shape
        self.format = format
        self.bytes = bytes
    }

    /// Quantizes `tensor` into `format`. `f32` and `f16` store any value; the other formats compute scales or
    /// palettes from the values, so every element must be finite (check with `firstNonFiniteElement()` first).
    public init(quantizing tensor: Tensor, as format: StorageFormat) {
        if format != .f32 && format != .f16, let bad = tensor.scalars.firstIndex(where: { !$0.isFinite }) {
            shapePrecondition(
                false,
                "cannot quantize a tensor of shape \(describeShape(tensor.shape)) holding "
                    + "\(tensor.scalars[bad]) at index \(bad)")
        }
        let (rows, columns) = matrixView(of: tensor.shape)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(format.byteCount(for: tensor.shape))
        tensor.withUnsafeBufferPointer { values in
            switch format {
            case .f32:
                for value in values { bytes.appendLittleEndian(value.bitPattern) }
            case .f16:
                for value in values { bytes.appendLittleEndian(saturatingFloat16(value).bitPattern) }  // NaN stays NaN
            case .int8:
                encodeInt8(values, rows: rows, columns: columns, into: &bytes)
            case .q4:
                encodeQ4(values, rows: rows, columns: columns, into: &bytes)
            case .lut2, .lut4, .lut6, .lut8:
                encodePalettized(values, bits: format.lookupBits ?? 8, into: &bytes)
            }
        }
        self.init(shape: tensor.shape, format: format, bytes: bytes)
    }

    /// An `int8` tensor from its parts: one scale per row of the matrix view, then the values row-major (a
    /// converter that moves weights between formats without dequantizing them).
    public init(int8Scales scales: [Float], values: [Int8], shape: [Int]) {
        let (rows, columns) = matrixView(of: shape)
        shapePrecondition(
            scales.count == rows && values.count == rows * columns,
            "int8 tensor of shape \(describeShape(shape)) needs \(rows) scales and \(rows * columns) values, got \(scales.count) and \(values.count)")
        var bytes: [UInt8] = []
        bytes.reserveCapacity(4 * rows + values.count)
        for scale in scales { bytes.appendLittleEndian(scale.bitPattern) }
        bytes += values.map { UInt8(bitPattern: $0) }
        self.init(shape: shape, format: .int8, bytes: bytes)
    }

    /// An `int8` tensor's parts (one scale per row, the values row-major); `nil` for other formats.
    public var int8Parts: (scales: [Float], values: [Int8])? {
        guard format == .int8 else { return nil }
        let rows = rows
        return bytes.withUnsafeBytes { raw in
            (
                (0..<rows).map { raw.float32(at: 4 * $0) },
                raw[(4 * rows)...].map { Int8(bitPattern: $0) }
            )
        }
    }

    /// Rows of the matrix view (`shape[0]`).
    public var rows: Int { matrixView(of: shape).rows }
    /// Columns of the matrix view (the product of the other axes).
    public var columns: Int { matrixView(of: shape).columns }

    /// The float tensor these bytes encode.
    public func dequantized() -> Tensor {
        Tensor(uninitializedShape: shape) { out in
            guard let base = out.baseAddress else { return }
            dequantizeRows(0..<rows, into: base)
        }
    }

    /// Writes rows `range` of the matrix view, dequantized, to `destination` (`range.count · columns` floats).
    public func dequantizeRows(_ range: Range<Int>, into destination: UnsafeMutablePointer<Float>) {
        shapePrecondition(
            range.lowerBound >= 0 && range.upperBound <= rows,
            "rows \(range) are outside the \(rows) rows of a tensor of shape \(describeShape(shape))")
        let columns = columns
        bytes.withUnsafeBytes { raw in
            switch format {
            case .f32:
                for (i, element) in (range.lowerBound * columns..<range.upperBound * columns).enumerated() {
                    destination[i] = raw.float32(at: 4 * element)
                }
            case .f16:
                for (i, element) in (range.lowerBound * columns..<range.upperBound * columns).enumerated() {
                    destination[i] = raw.float16(at: 2 * element)
                }
            case .int8:
                let values = raw.baseAddress.map { ($0 + 4 * rows).assumingMemoryBound(to: Int8.self) }
                for (r, row) in range.enumerated() {
                    guard let source = values.map({ $0 + row * columns }) else { break }
                    let scale = raw.float32(at: 4 * row)
                    let out = destination + r * columns
                    for j in 0..<columns { out[j] = Float(source[j]) * scale }
                }
            case .q4:
                let blocks = (columns + StorageFormat.q4BlockElements - 1) / StorageFormat.q4BlockElements
                var full = [Float](repeating: 0, count: StorageFormat.q4BlockElements)
                for (r, row) in range.enumerated() {
                    let out = destination + r * columns
                    for block in 0..<blocks {
                        let offset = (row * blocks + block) * StorageFormat.q4BlockBytes
                        let scale = raw.float16(at: offset)
                        let first = block * StorageFormat.q4BlockElements
                        let count = Swift.min(StorageFormat.q4BlockElements, columns - first)
                        if count == StorageFormat.q4BlockElements {
                            for pair in 0..<(StorageFormat.q4BlockElements / 2) {
                                let byte = raw[offset + 2 + pair]
                                out[first + 2 * pair] = Float(Int(byte & 0x0F) - 8) * scale
                                out[first + 2 * pair + 1] = Float(Int(byte >> 4) - 8) * scale
                            }
                        } else {
                            for pair in 0..<(StorageFormat.q4BlockElements / 2) {
                                let byte = raw[offset + 2 + pair]
                                full[2 * pair] = Float(Int(byte & 0x0F) - 8) * scale
                                full[2 * pair + 1] = Float(Int(byte >> 4) - 8) * scale
                            }
                            for j in 0..<count { out[first + j] = full[j] }
                        }
                    }
                }
            case .lut2, .lut4, .lut6, .lut8:
                let bits = format.lookupBits ?? 8
                let tableSize = 1 << bits
                var table = [Float](repeating: 0, count: tableSize)
                for i in 0..<tableSize { table[i] = raw.float32(at: 4 * i) }
                let stream = 4 * tableSize
                let elements = (range.lowerBound * columns)..<(range.upperBound * columns)
                table.withUnsafeBufferPointer { table in
                    if 8 % bits == 0 {
                        // 2, 4 or 8 bits: an element never straddles a byte.
                        let perByte = 8 / bits, mask = UInt8(tableSize - 1), step = UInt8(bits)
                        guard let streamBase = raw.baseAddress.map({ ($0 + stream).assumingMemoryBound(to: UInt8.self) }),
                            let tableBase = table.baseAddress
                        else { return }
                        var element = elements.lowerBound, out = destination
                        func decodeOne() {
                            let byte = streamBase[element / perByte]
                            out.pointee = tableBase[Int((byte >> (UInt8(element % perByte) * step)) & mask)]
                            out += 1
                            element += 1
                        }
                        while element < elements.upperBound && element % perByte != 0 { decodeOne() }
                        let wholeBytes = (elements.upperBound - element) / perByte
                        var byte = streamBase + element / perByte
                        for _ in 0..<wholeBytes {
                            let value = byte.pointee
                            for k in 0..<perByte { out[k] = tableBase[Int((value >> (UInt8(k) * step)) & mask)] }
                            out += perByte
                            byte += 1
                        }
                        element += wholeBytes * perByte
                        while element < elements.upperBound { decodeOne() }
                    } else {
                        let mask = UInt32(tableSize - 1)
                        for (i, element) in elements.enumerated() {
                            let bit = element * bits
                            let byte = stream + bit >> 3
                            var window = UInt32(raw[byte])
                            if byte + 1 < raw.count { window |= UInt32(raw[byte + 1]) << 8 }
                            destination[i] = table[Int((window >> UInt32(bit & 7)) & mask)]
                        }
                    }
                }
            }
        }
    }

    /// The first element (row-major) whose dequantized value is NaN or infinite, if any.
    public func firstNonFiniteElement() -> Int? {
        let columns = Swift.max(columns, 1)
        var row = [Float](repeating: 0, count: columns)
        for r in 0..<rows {
            let bad = row.withUnsafeMutableBufferPointer { buffer -> Int? in
                guard let base = buffer.baseAddress else { return nil }
                dequantizeRows(r..<(r + 1), into: base)
                return buffer.prefix(self.columns).firstIndex { !$0.isFinite }
            }
            if let bad { return r * self.columns + bad }
        }
        return nil
    }
}

/// `value` in binary16, saturating at ±65504 instead of becoming infinite.
@inline(__always)
func saturatingFloat16(_ value: Float) -> Float16 {
    let limit = Float(Float16.greatestFiniteMagnitude)
    return Float16(Swift.min(Swift.max(value, -limit), limit))
}

/// `int8`: a binary32 scale per row, then the int8 values row-major.
private func encodeInt8(_ values: UnsafeBufferPointer<Float>, rows: Int, columns: Int, into bytes: inout [UInt8]) {
    var scales = [Float](repeating: 0, count: rows)
    for r in 0..<rows {
        var largest: Float = 0
        for j in 0..<columns { largest = Swift.max(largest, abs(values[r * columns + j])) }
        scales[r] = largest / StorageFormat.int8Magnitude
        bytes.appendLittleEndian(scales[r].bitPattern)
    }
    for r in 0..<rows {
        let scale = scales[r]
        for j in 0..<columns {
            let limit = StorageFormat.int8Magnitude
            let q = scale > 0 ? Swift.min(Swift.max((values[r * columns + j] / scale).rounded(), -limit), limit) : 0
            bytes.append(UInt8(bitPattern: Int8(q)))
        }
    }
}

/// `q4`: per row, blocks of 32 with a binary16 scale `max|w| / 7` and nibbles `q + 8`.
private func encodeQ4(_ values: UnsafeBufferPointer<Float>, rows: Int, columns: Int, into bytes: inout [UInt8]) {
    let blockSize = StorageFormat.q4BlockElements
    let blocks = (columns + blockSize - 1) / blockSize
    for r in 0..<rows {
        for block in 0..<blocks {
            let first = r * columns + block * blockSize
            let length = Swift.min(blockSize, columns - block * blockSize)
            var largest: Float = 0
            for j in 0..<length { largest = Swift.max(largest, abs(values[first + j])) }
            let scale = Float(saturatingFloat16(largest / 7))
            bytes.appendLittleEndian(Float16(scale).bitPattern)
            for pair in 0..<(blockSize / 2) {
                var byte: UInt8 = 0
                for half in 0..<2 {
                    let j = 2 * pair + half
                    var q: Float = 0
                    if j < length && scale > 0 { q = Swift.min(Swift.max((values[first + j] / scale).rounded(), -8), 7) }
                    byte |= UInt8(Int(q) + 8) << UInt8(4 * half)
                }
                bytes.append(byte)
            }
        }
    }
}

/// `lutB`: the k-means table, then each element's nearest-entry index as a `B`-bit little-endian bit stream.
private func encodePalettized(_ values: UnsafeBufferPointer<Float>, bits: Int, into bytes: inout [UInt8]) {
    let table = kMeansPalette(Array(values), size: 1 << bits)
    for entry in table { bytes.appendLittleEndian(entry.bitPattern) }
    var accumulator: UInt64 = 0
    var pending = 0
    for value in values {
        accumulator |= UInt64(nearestPaletteIndex(value, in: table)) << UInt64(pending)
        pending += bits
        while pending >= 8 {
            bytes.append(UInt8(truncatingIfNeeded: accumulator))
            accumulator >>= 8
            pending -= 8
        }
    }
    if pending > 0 { bytes.append(UInt8(truncatingIfNeeded: accumulator)) }
}

/// The index of the entry of the ascending `table` nearest to `value`; a tie goes to the lower index.
@inline(__always)
func nearestPaletteIndex(_ value: Float, in table: [Float]) -> Int {
    // The first entry ≥ value, by binary search; the answer is it or the one before.
    var low = 0, high = table.count
    while low < high {
        let middle = (low + high) / 2
        if table[middle] < value { low = middle + 1 } else { high = middle }
    }
    if low == table.count {
        // Above every entry: the largest, at its first index (a padded table repeats its largest entry).
        var first = table.count - 1
        while first > 0 && table[first - 1] == table[first] { first -= 1 }
        return first
    }
    if low == 0 { return 0 }
    return abs(value - table[low - 1]) <= abs(table[low] - value) ? low - 1 : low
}
