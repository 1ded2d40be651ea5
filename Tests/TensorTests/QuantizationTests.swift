import Tensor
import Testing

/// Round-trip RMSE limits on N(0, 1) weights, per format. Where a bound is known it is the reason for the limit:
/// binary16 keeps 11 significant bits; int8 per row of 256 N(0,1) values has a step of max|w|/63 ≈ 0.046 (7-bit
/// magnitudes, `StorageFormat.int8Magnitude`), so RMSE ≈ step/√12 ≈ 0.013; q4 per block of 32 has a step of max|w|/7 ≈ 0.3, so ≈ 0.09. The palettes are
/// held a few percent above the optimum for a Gaussian: Lloyd–Max RMSE 0.3428 at 4 levels and 0.0975 at 16
/// (MSE 0.1175, 0.009497), Panter–Dite √(2.72 · 4^-B) ≈ 0.0258 at 64 and 0.0064 at 256.
enum RoundTripRMSE {
    static let f16: Double = 3e-4
    static let int8: Double = 0.015
    static let q4: Double = 0.11
    static let lut2: Double = 0.35
    static let lut4: Double = 0.1
    static let lut6: Double = 0.027
    static let lut8: Double = 0.0078

    static func limit(_ format: StorageFormat) -> Double {
        switch format {
        case .f32: 0
        case .f16: f16
        case .int8: int8
        case .q4: q4
        case .lut2: lut2
        case .lut4: lut4
        case .lut6: lut6
        case .lut8: lut8
        }
    }
}

func rmse(_ a: Tensor, _ b: Tensor) -> Double {
    let total = zip(a.scalars, b.scalars).reduce(0.0) { $0 + Double($1.0 - $1.1) * Double($1.0 - $1.1) }
    return (total / Double(max(a.count, 1))).squareRoot()
}

@Suite("Quantized storage formats")
struct QuantizationTests {
    static let awkwardShapes: [[Int]] = [[1], [7], [3, 7], [17, 33], [2, 65], [33, 32], [4, 3, 3, 5], [1, 1, 1, 1]]

    @Test func blockAndFieldSizesAreTheDocumentedOnes() {
        #expect(StorageFormat.q4BlockElements == 32)
        #expect(StorageFormat.q4BlockBytes == 18)
        #expect(MemoryLayout<Float16>.size == 2)
        // [rows, columns] = [3, 40]: q4 pads each row to 2 blocks.
        let shape = [3, 40]
        #expect(StorageFormat.f32.byteCount(for: shape) == 480)
        #expect(StorageFormat.f16.byteCount(for: shape) == 240)
        #expect(StorageFormat.int8.byteCount(for: shape) == 3 * 4 + 120)
        #expect(StorageFormat.q4.byteCount(for: shape) == 3 * 2 * 18)
        #expect(StorageFormat.lut2.byteCount(for: shape) == 4 * 4 + 30)
        #expect(StorageFormat.lut4.byteCount(for: shape) == 16 * 4 + 60)
        #expect(StorageFormat.lut6.byteCount(for: shape) == 64 * 4 + 90)
        #expect(StorageFormat.lut8.byteCount(for: shape) == 256 * 4 + 120)
        #expect(StorageFormat.lut6.byteCount(for: [7]) == 64 * 4 + 6)  // 42 bits → 6 bytes
    }

    @Test(arguments: StorageFormat.allCases)
    func fastQuantizerMatchesItsNaiveTwin(format: StorageFormat) {
        for shape in Self.awkwardShapes {
            let tensor = randomTensor(shape, seed: 70)
            let fast = QuantizedTensor(quantizing: tensor, as: format)
            let naive = Reference.quantize(tensor, as: format)
            #expect(fast.bytes.count == format.byteCount(for: shape))
            if format.lookupBits == nil {
                #expect(fast.bytes == naive, "\(format) \(shape): bytes differ")
            } else {
                // The palettes sum in different orders (sorted vs input order), so tables may differ in the
                // last bits; what must agree is the table within rounding and the reconstruction's error.
                let naiveTable = Reference.dequantize(naive, format: format, shape: shape)
                expectClose(fast.dequantized(), naiveTable, relativeTolerance: Tolerance.kernelRelative, "\(format) \(shape)")
            }
            // Reading the same bytes, the fast and naive dequantizers agree exactly.
            #expect(fast.dequantized() == Reference.dequantize(fast.bytes, format: format, shape: shape), "\(format) \(shape)")
        }
    }

    @Test(arguments: StorageFormat.allCases)
    func roundTripErrorOnGaussianWeightsIsUnderItsLimit(format: StorageFormat) {
        let weights = randomTensor([256, 256], seed: 71)
        let error = rmse(QuantizedTensor(quantizing: weights, as: format).dequantized(), weights)
        #expect(error <= RoundTripRMSE.limit(format), "\(format): RMSE \(error)")
        if format == .f32 { #expect(error == 0) }
    }

    @Test(arguments: StorageFormat.allCases)
    func rowRangesMatchTheWholeTensor(format: StorageFormat) {
        // Odd column counts put row starts mid-byte for every packed format.
        for shape in [[7, 5], [9, 3, 3], [5, 33], [4, 65]] {
            let quantized = QuantizedTensor(quantizing: randomTensor(shape, seed: 85), as: format)
            let whole = quantized.dequantized().scalars
            let columns = quantized.columns
            for first in 0..<quantized.rows {
                for last in (first + 1)...quantized.rows {
                    var rows = [Float](repeating: .nan, count: (last - first) * columns)
                    rows.withUnsafeMutableBufferPointer { quantized.dequantizeRows(first..<last, into: $0.baseAddress!) }
                    if rows != Array(whole[(first * columns)..<(last * columns)]) {
                        Issue.record("\(format) \(shape): rows \(first)..<\(last) differ from the whole tensor")
                        return
                    }
                }
            }
        }
    }

    @Test func int8BlockWithKnownAnswer() {
        // Two rows: scale 0.5 then scale 2, values q = [1, -2, 127] and [-127, 0, 3].
        var bytes: [UInt8] = [0x00, 0x00, 0x00, 0x3F, 0x00, 0x00, 0x00, 0x40]
        bytes += [1, 0xFE, 127, 0x81, 0, 3]
        let tensor = QuantizedTensor(shape: [2, 3], format: .int8, bytes: bytes).dequantized()
        #expect(tensor.scalars == [0.5, -1, 63.5, -254, 0, 6])
    }

    @Test func q4BlockWithKnownAnswer() {
        // One row of 3 values: one block, scale binary16 0x3400 = 0.25, nibbles q+8.
        // Elements: q = -8, 7, 1 → nibbles 0, 15, 9; the 29 padding elements are q = 0 (nibble 8).
        var bytes: [UInt8] = [0x00, 0x34, 0xF0, 0x89]
        bytes += [UInt8](repeating: 0x88, count: 14)
        let tensor = QuantizedTensor(shape: [1, 3], format: .q4, bytes: bytes).dequantized()
        #expect(tensor.scalars == [-2, 1.75, 0.25])
    }

    @Test func lut2BlockWithKnownAnswer() {
        // Table [-1, 0, 0.5, 2]; indices 3, 0, 2, 1, 1, least significant bit first: 11 00 01 10 | 10 → bytes
        // 0b0110_0011 (bits 7…0) and 0b0000_0001.
        var bytes: [UInt8] = []
        for value: Float in [-1, 0, 0.5, 2] { bytes += withUnsafeBytes(of: value.bitPattern.littleEndian, Array.init) }
        bytes += [0b0110_0011, 0b0000_0001]
        let tensor = QuantizedTensor(shape: [5], format: .lut2, bytes: bytes).dequantized()
        #expect(tensor.scalars == [2, -1, 0.5, 0, 0])
    }

    @Test func lut6IndicesStraddleBytes() {
        // Table entry i = i; four 6-bit indices 1, 62, 33, 17 → 24 bits.
        var bytes: [UInt8] = []
        for i in 0..<64 { bytes += withUnsafeBytes(of: Float(i).bitPattern.littleEndian, Array.init) }
        let stream: UInt32 = 1 | 62 << 6 | 33 << 12 | 17 << 18
        bytes += [UInt8(stream & 0xFF), UInt8((stream >> 8) & 0xFF), UInt8((stream >> 16) & 0xFF)]
        let tensor = QuantizedTensor(shape: [4], format: .lut6, bytes: bytes).dequantized()
        #expect(tensor.scalars == [1, 62, 33, 17])
    }

    @Test func f16WithKnownAnswer() {
        let bytes: [UInt8] = [0x00, 0x3C, 0x00, 0xC0, 0xFF, 0x7B]  // 1, -2, 65504
        #expect(QuantizedTensor(shape: [3], format: .f16, bytes: bytes).dequantized().scalars == [1, -2, 65504])
    }

    @Test func palettesOfFewDistinctValuesAreExact() {
        let values = Tensor(shape: [2, 5], scalars: [0.5, -3, 0.5, 7, 7, 0, -3, 0.5, 0, 7])
        for format in [StorageFormat.lut2, .lut4, .lut8] {
            #expect(QuantizedTensor(quantizing: values, as: format).dequantized() == values, "\(format)")
        }
        #expect(QuantizedTensor(quantizing: values, as: .int8).dequantized()[0, 3] == 7)
    }

    @Test func paletteIsDeterministicAndAscending() {
        let values = randomTensor([5000], seed: 72).scalars
        let a = kMeansPalette(values, size: 16), b = kMeansPalette(values, size: 16)
        #expect(a == b)
        #expect(zip(a, a.dropFirst()).allSatisfy { $0 < $1 })
    }

    @Test func zeroRowsAndHugeValuesStayFinite() {
        let t = Tensor(shape: [2, 3], scalars: [0, 0, 0, 3e38, -3e38, 1])
        for format in StorageFormat.allCases {
            let q = QuantizedTensor(quantizing: t, as: format)
            #expect(q.firstNonFiniteElement() == nil, "\(format)")
            #expect(q.dequantized()[0, 0] == 0 && q.dequantized()[0, 2] == 0, "\(format): zero row")
        }
    }

    @Test func firstNonFiniteElementFindsABadScale() {
        // int8 with a NaN scale on row 1.
        var bytes: [UInt8] = [0, 0, 0x80, 0x3F, 0, 0, 0xC0, 0x7F]
        bytes += [1, 2, 3, 4]
        #expect(QuantizedTensor(shape: [2, 2], format: .int8, bytes: bytes).firstNonFiniteElement() == 2)
    }
}

@Suite("Quantized layers: dequantize, then run the float path")
struct QuantizedLayerTests {
    @Test(arguments: StorageFormat.allCases)
    func quantizedDenseMatchesDenseOfDequantizedWeight(format: StorageFormat) {
        for (batch, inFeatures, outFeatures) in [(1, 1, 1), (1, 33, 17), (3, 576, 128), (7, 17, 300), (2, 700, 40)] {
            let dense = Dense(weight: randomTensor([outFeatures, inFeatures], seed: 73), bias: randomTensor([outFeatures], seed: 74))
            let quantized = QuantizedDense(quantizing: dense, as: format)
            let input = randomTensor([batch, inFeatures], seed: 75)
            expectClose(
                quantized(input), quantized.dequantized()(input), relativeTolerance: Tolerance.kernelRelative,
                "\(format) \(batch)x\(inFeatures)→\(outFeatures)")
            #expect(quantized.outputShape(for: input.shape) == dense.outputShape(for: input.shape))
        }
    }

    @Test(arguments: [StorageFormat.int8, .q4, .lut4, .f16])
    func quantizedConvolutionsMatchTheirDequantizedFloatLayers(format: StorageFormat) {
        let conv2d = Conv2D(weight: randomTensor([17, 3, 3, 5], seed: 76), bias: randomTensor([17], seed: 77), stride: (2, 1), padding: .same)
        let q2d = QuantizedConv2D(quantizing: conv2d, as: format)
        let image = randomTensor([2, 9, 7, 5], seed: 78)
        expectClose(q2d(image), q2d.dequantized()(image), relativeTolerance: Tolerance.kernelRelative, "\(format) Conv2D")

        let conv1d = Conv1D(weight: randomTensor([33, 5, 12], seed: 79), bias: randomTensor([33], seed: 80), padding: .valid)
        let q1d = QuantizedConv1D(quantizing: conv1d, as: format)
        let sequence = randomTensor([3, 40, 12], seed: 81)
        expectClose(q1d(sequence), q1d.dequantized()(sequence), relativeTolerance: Tolerance.kernelRelative, "\(format) Conv1D")
    }

    @Test func tilesCoverWeightsLargerThanOneScratchBuffer() {
        // 300 rows × 100 columns = 30,000 weights: two tiles of 163 and 137 rows.
        let dense = Dense(weight: randomTensor([300, 100], seed: 82), bias: randomTensor([300], seed: 83))
        let quantized = QuantizedDense(quantizing: dense, as: .f32)
        let input = randomTensor([4, 100], seed: 84)
        expectClose(quantized(input), dense(input), relativeTolerance: Tolerance.kernelRelative)
    }
}
