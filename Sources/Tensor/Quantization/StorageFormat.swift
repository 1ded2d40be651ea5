/// How a tensor's numbers are stored: the byte layouts of the weights file, all little-endian.
///
/// A tensor is viewed as a matrix of `rows = shape[0]` (the output channels of Dense and convolution weights)
/// by `columns = count / rows` (everything else, row-major). Scalars are one row of one column.
///
/// | format | layout | bytes |
/// |---|---|---|
/// | `f32` | `count` × IEEE binary32 | `4·count` |
/// | `f16` | `count` × IEEE binary16 (values beyond ±65504 saturate) | `2·count` |
/// | `int8` | `rows` × binary32 scale `s_r`, then `count` × int8 `q` row-major; `w = q · s_r` | `4·rows + count` |
/// | `q4` | per row, `⌈columns / 32⌉` blocks of 18 bytes: binary16 scale `d`, then 16 bytes where byte `j` holds element `2j` in its low nibble and `2j+1` in its high nibble, each as `q + 8` with `q ∈ [-8, 7]`; `w = q · d`; a row's last block is padded with `q = 0` | `18·rows·⌈columns/32⌉` |
/// | `lutB` | `2^B` × binary32 table, ascending; then `count` indices of `B` bits as one little-endian bit stream (element `i` is bits `i·B ..< (i+1)·B`, bit `j` of the stream is bit `j mod 8` of byte `⌊j/8⌋`); `w = table[index]` | `4·2^B + ⌈B·count/8⌉` |
///
/// New formats are appended; changing a layout bumps the weights file's format version.
public enum StorageFormat: String, Sendable, Codable, CaseIterable {
    /// IEEE binary32, as computed.
    case f32
    /// IEEE binary16: half the size, about 3 significant digits.
    case f16
    /// Symmetric 8-bit integers with one binary32 scale per row (output channel).
    case int8
    /// Symmetric 4-bit integers in blocks of 32 along each row, one binary16 scale per block.
    case q4
    /// Palettized: 2-bit indices into a 4-entry table (k-means over the whole tensor).
    case lut2
    /// Palettized: 4-bit indices into a 16-entry table.
    case lut4
    /// Palettized: 6-bit indices into a 64-entry table.
    case lut6
    /// Palettized: 8-bit indices into a 256-entry table.
    case lut8

    /// The largest magnitude `int8` writes: 63, so that a product pair a0·w0 + a1·w1 of 8-bit activations (0…255)
    /// stays within ±32,130 and AVX2 sums it exactly with `vpmaddubsw` (at 127 it can saturate, and AVX2 needs 16-bit
    /// multiply-adds at about twice the time). Files written with 127 (before issue 49), or any value of −128…127,
    /// still load and run: a layer with a weight beyond ±63 takes the 16-bit path.
    public static let int8Magnitude: Float = 63

    /// Elements per `q4` block.
    public static let q4BlockElements = 32
    /// Bytes per `q4` block: a binary16 scale and 32 nibbles.
    public static let q4BlockBytes = 2 + q4BlockElements / 2

    /// Index bits of a palettized format, `nil` for the others.
    public var lookupBits: Int? {
        switch self {
        case .lut2: 2
        case .lut4: 4
        case .lut6: 6
        case .lut8: 8
        case .f32, .f16, .int8, .q4: nil
        }
    }

    /// Whether the format loses information (everything but `f32`).
    public var isQuantized: Bool { self != .f32 }

    /// The exact number of bytes a tensor of `shape` takes in this format.
    public func byteCount(for shape: [Int]) -> Int {
        let (rows, columns) = matrixView(of: shape)
        let count = rows * columns
        switch self {
        case .f32: return 4 * count
        case .f16: return 2 * count
        case .int8: return 4 * rows + count
        case .q4: return Self.q4BlockBytes * rows * ((columns + Self.q4BlockElements - 1) / Self.q4BlockElements)
        case .lut2, .lut4, .lut6, .lut8:
            let bits = lookupBits ?? 8
            return 4 * (1 << bits) + (bits * count + 7) / 8
        }
    }
}

/// A tensor's shape seen as the matrix the storage formats quantize: `shape[0]` rows of everything else.
public func matrixView(of shape: [Int]) -> (rows: Int, columns: Int) {
    guard let rows = shape.first else { return (1, 1) }
    let count = elementCount(shape)
    return (rows, rows == 0 ? 0 : count / rows)
}
