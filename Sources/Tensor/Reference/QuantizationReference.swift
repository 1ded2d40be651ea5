/// Naive twins of the quantizers: each format's definition as plain loops, element by element and bit by bit.
extension Reference {
    /// The bytes of `tensor` in `format`, built one field at a time.
    public static func quantize(_ tensor: Tensor, as format: StorageFormat) -> [UInt8] {
        let rows = tensor.shape.first ?? 1
        let columns = rows == 0 ? 0 : tensor.count / rows
        var bytes: [UInt8] = []
        func put32(_ bits: UInt32) { for i in 0..<4 { bytes.append(UInt8((bits >> (8 * UInt32(i))) & 0xFF)) } }
        func put16(_ bits: UInt16) { for i in 0..<2 { bytes.append(UInt8((bits >> (8 * UInt16(i))) & 0xFF)) } }
        switch format {
        case .f32:
            for x in tensor.scalars { put32(x.bitPattern) }
        case .f16:
            for x in tensor.scalars { put16(Float16(max(-65504, min(65504, x))).bitPattern) }
        case .int8:
            var scales: [Float] = []
            for r in 0..<rows {
                let row = tensor.scalars[(r * columns)..<((r + 1) * columns)]
                scales.append((row.map { abs($0) }.max() ?? 0) / StorageFormat.int8Magnitude)
                put32(scales[r].bitPattern)
            }
            for r in 0..<rows {
                for j in 0..<columns {
                    var q: Float = 0
                    if scales[r] > 0 { q = (tensor.scalars[r * columns + j] / scales[r]).rounded() }
                    q = max(-StorageFormat.int8Magnitude, min(StorageFormat.int8Magnitude, q))
                    bytes.append(UInt8(bitPattern: Int8(q)))
                }
            }
        case .q4:
            let blocks = (columns + 31) / 32
            for r in 0..<rows {
                for b in 0..<blocks {
                    var block = [Float](repeating: 0, count: 32)
                    var largest: Float = 0
                    for j in 0..<32 where b * 32 + j < columns {
                        block[j] = tensor.scalars[r * columns + b * 32 + j]
                        largest = max(largest, abs(block[j]))
                    }
                    let scale = Float(Float16(min(largest / 7, Float(Float16.greatestFiniteMagnitude))))
                    put16(Float16(scale).bitPattern)
                    var nibbles = [UInt8](repeating: 8, count: 32)
                    for j in 0..<32 where scale > 0 {
                        nibbles[j] = UInt8(Int(max(-8, min(7, (block[j] / scale).rounded()))) + 8)
                    }
                    for j in 0..<16 { bytes.append(nibbles[2 * j] + 16 * nibbles[2 * j + 1]) }
                }
            }
        case .lut2, .lut4, .lut6, .lut8:
            let bits = format.lookupBits ?? 8
            let table = palette(tensor.scalars, size: 1 << bits)
            for entry in table { put32(entry.bitPattern) }
            var stream: [Bool] = []
            for x in tensor.scalars {
                let index = nearest(x, in: table)
                for bit in 0..<bits { stream.append((index >> bit) & 1 == 1) }
            }
            while stream.count % 8 != 0 { stream.append(false) }
            for start in stride(from: 0, to: stream.count, by: 8) {
                var byte: UInt8 = 0
                for bit in 0..<8 where stream[start + bit] { byte += UInt8(1 << bit) }
                bytes.append(byte)
            }
        }
        return bytes
    }

    /// The values `bytes` encode, read field by field and bit by bit.
    public static func dequantize(_ bytes: [UInt8], format: StorageFormat, shape: [Int]) -> Tensor {
        let count = shape.reduce(1, *)
        let rows = shape.first ?? 1
        let columns = rows == 0 ? 0 : count / rows
        func get32(_ at: Int) -> Float {
            var bits: UInt32 = 0
            for i in 0..<4 { bits += UInt32(bytes[at + i]) << (8 * UInt32(i)) }
            return Float(bitPattern: bits)
        }
        func get16(_ at: Int) -> Float { Float(Float16(bitPattern: UInt16(bytes[at]) + UInt16(bytes[at + 1]) << 8)) }
        var out = [Float](repeating: 0, count: count)
        for element in 0..<count {
            let (r, j) = columns == 0 ? (0, 0) : (element / columns, element % columns)
            switch format {
            case .f32: out[element] = get32(4 * element)
            case .f16: out[element] = get16(2 * element)
            case .int8: out[element] = Float(Int8(bitPattern: bytes[4 * rows + element])) * get32(4 * r)
            case .q4:
                let block = (r * ((columns + 31) / 32) + j / 32) * 18
                let byte = bytes[block + 2 + (j % 32) / 2]
                let nibble = (j % 2 == 0) ? byte % 16 : byte / 16
                out[element] = Float(Int(nibble) - 8) * get16(block)
            case .lut2, .lut4, .lut6, .lut8:
                let bits = format.lookupBits ?? 8
                var index = 0
                for bit in 0..<bits {
                    let position = element * bits + bit
                    if (bytes[4 * (1 << bits) + position / 8] >> (position % 8)) & 1 == 1 { index += 1 << bit }
                }
                out[element] = get32(4 * index)
            }
        }
        return Tensor(shape: shape, scalars: out)
    }

    /// Textbook Lloyd's algorithm: every value compared with every centroid, means in input order.
    /// Starts where the fast palette starts (`paletteStart`): the twins differ in how they iterate.
    public static func palette(_ values: [Float], size: Int, maximumIterations: Int = 2000) -> [Float] {
        if values.isEmpty { return [Float](repeating: 0, count: size) }
        let distinct = Array(Set(values)).sorted()
        if distinct.count <= size { return distinct + [Float](repeating: distinct[distinct.count - 1], count: size - distinct.count) }
        var centroids = paletteStart(sorted: values.sorted(), distinct: distinct, size: size)
        for _ in 0..<maximumIterations {
            var sums = [Double](repeating: 0, count: size)
            var counts = [Int](repeating: 0, count: size)
            for x in values {
                let c = nearest(x, in: centroids)
                sums[c] += Double(x)
                counts[c] += 1
            }
            var updated = centroids
            for c in 0..<size where counts[c] > 0 { updated[c] = Float(sums[c] / Double(counts[c])) }
            updated.sort()
            var strictlyIncreasing = true
            for c in 1..<size where updated[c] <= updated[c - 1] { strictlyIncreasing = false }
            if updated == centroids || !strictlyIncreasing { break }
            centroids = updated
        }
        return centroids
    }

    /// The lowest index of the entries nearest to `x`, by comparing with every entry.
    public static func nearest(_ x: Float, in table: [Float]) -> Int {
        var best = 0
        for i in 1..<table.count where abs(x - table[i]) < abs(x - table[best]) { best = i }
        return best
    }
}
