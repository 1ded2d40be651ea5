import Tensor
import Testing

@Suite("Convolutions and pooling against the naive references")
struct ConvolutionAndPoolingTests {
    /// Image sizes, kernels, channels: none a multiple of a block, non-square, down to 1×1.
    static let imageCases: [(height: Int, width: Int, inChannels: Int, outChannels: Int, kernel: (Int, Int))] = [
        (1, 1, 1, 1, (1, 1)), (3, 7, 2, 3, (3, 3)), (7, 3, 3, 1, (2, 3)), (17, 17, 1, 2, (3, 3)),
        (9, 33, 2, 17, (5, 1)), (2, 2, 33, 7, (1, 1)), (8, 8, 3, 4, (3, 2)),
    ]

    @Test(arguments: [1, 2], [Padding.valid, .same])
    func conv2dMatchesReference(stride: Int, padding: Padding) {
        for batch in [1, 2] {
            for c in Self.imageCases where padding == .same || (c.height >= c.kernel.0 && c.width >= c.kernel.1) {
                let input = randomTensor([batch, c.height, c.width, c.inChannels], seed: 30)
                let weight = randomTensor([c.outChannels, c.kernel.0, c.kernel.1, c.inChannels], seed: 31)
                let bias = randomTensor([c.outChannels], seed: 32)
                let layer = Conv2D(weight: weight, bias: bias, stride: (stride, stride), padding: padding)
                let output = layer(input)
                let expected = Reference.conv2d(
                    input, weight: weight, bias: bias, stride: (stride, stride), padding: padding)
                #expect(layer.outputShape(for: input.shape) == expected.shape)
                expectClose(output, expected, relativeTolerance: Tolerance.kernelRelative, "case \(c) batch \(batch)")
            }
        }
    }

    @Test func conv2dWithUnequalStrides() {
        let input = randomTensor([2, 9, 10, 3]), weight = randomTensor([5, 3, 2, 3]), bias = randomTensor([5])
        for padding in Padding.allCases {
            let layer = Conv2D(weight: weight, bias: bias, stride: (2, 3), padding: padding)
            expectClose(
                layer(input), Reference.conv2d(input, weight: weight, bias: bias, stride: (2, 3), padding: padding),
                relativeTolerance: Tolerance.kernelRelative)
        }
    }

    @Test(arguments: [1, 2], [Padding.valid, .same])
    func conv1dMatchesReference(stride: Int, padding: Padding) {
        for batch in [1, 3] {
            for (length, inChannels, outChannels, kernel) in [
                (1, 1, 1, 1), (7, 12, 3, 5), (17, 2, 17, 3), (33, 3, 7, 7), (128, 12, 32, 5), (2, 5, 2, 2),
            ] where padding == .same || length >= kernel {
                let input = randomTensor([batch, length, inChannels], seed: 33)
                let weight = randomTensor([outChannels, kernel, inChannels], seed: 34)
                let bias = randomTensor([outChannels], seed: 35)
                let layer = Conv1D(weight: weight, bias: bias, stride: stride, padding: padding)
                let expected = Reference.conv1d(input, weight: weight, bias: bias, stride: stride, padding: padding)
                #expect(layer.outputShape(for: input.shape) == expected.shape)
                expectClose(
                    layer(input), expected, relativeTolerance: Tolerance.kernelRelative,
                    "L=\(length) in=\(inChannels) out=\(outChannels) k=\(kernel) batch \(batch)")
            }
        }
    }

    @Test(arguments: PoolingKind.allCases, [Padding.valid, .same])
    func pool2dMatchesReference(kind: PoolingKind, padding: Padding) {
        for (height, width, channels) in [(1, 1, 1), (3, 7, 2), (7, 3, 17), (17, 17, 3), (33, 2, 1)] {
            for (size, stride) in [((2, 2), (2, 2)), ((3, 3), (2, 2)), ((3, 2), (1, 1)), ((1, 1), (1, 1))]
            where padding == .same || (height >= size.0 && width >= size.1) {
                for batch in [1, 2] {
                    let input = randomTensor([batch, height, width, channels], seed: 36)
                    let layer = Pool2D(kind, size: size, stride: stride, padding: padding)
                    let expected = Reference.pool2d(input, kind: kind, size: size, stride: stride, padding: padding)
                    #expect(layer.outputShape(for: input.shape) == expected.shape)
                    expectClose(
                        layer(input), expected, relativeTolerance: Tolerance.elementwiseRelative,
                        "\(height)x\(width)x\(channels) window \(size) stride \(stride) batch \(batch)")
                }
            }
        }
    }

    @Test(arguments: PoolingKind.allCases, [Padding.valid, .same])
    func pool1dMatchesReference(kind: PoolingKind, padding: Padding) {
        for (length, channels) in [(1, 1), (7, 3), (17, 12), (33, 2)] {
            for (size, stride) in [(2, 2), (3, 2), (3, 1), (1, 1), (5, 3)] where padding == .same || length >= size {
                let input = randomTensor([2, length, channels], seed: 37)
                let layer = Pool1D(kind, size: size, stride: stride, padding: padding)
                let expected = Reference.pool1d(input, kind: kind, size: size, stride: stride, padding: padding)
                #expect(layer.outputShape(for: input.shape) == expected.shape)
                expectClose(
                    layer(input), expected, relativeTolerance: Tolerance.elementwiseRelative,
                    "L=\(length) C=\(channels) size \(size) stride \(stride)")
            }
        }
    }

    @Test func samePaddingKeepsCeilOfInputOverStride() {
        let layer = Conv2D(weight: randomTensor([4, 3, 3, 2]), bias: randomTensor([4]), stride: (2, 2), padding: .same)
        #expect(layer.outputShape(for: [1, 7, 8, 2]) == [1, 4, 4, 4])
        #expect(Pool1D(.max, size: 2, padding: .same).outputShape(for: [3, 7, 5]) == [3, 4, 5])
    }
}
