import Testing

@testable import Tensor

/// The naive twins of the direct training convolution (`DirectConvolution2D`): loops over every index,
/// accumulating in Double, written from the definitions and nothing else.
enum DirectConvolutionReference {
    /// `dW[o, ky, kx, c] = Σ_(n, oy, ox) dY[n, oy, ox, o] · x[n, oy − top + ky, ox − left + kx, c]` (zero outside
    /// the image) and `db[o] = Σ dY[n, oy, ox, o]`, stride 1.
    static func parameterGradients(
        input: Tensor, dOutput: Tensor, kernel: (height: Int, width: Int), padTop: Int, padLeft: Int
    ) -> (dWeight: Tensor, dBias: Tensor) {
        let (batch, height, width, inChannels) = (input.shape[0], input.shape[1], input.shape[2], input.shape[3])
        let (outHeight, outWidth, outChannels) = (dOutput.shape[1], dOutput.shape[2], dOutput.shape[3])
        var dW = [Double](repeating: 0, count: outChannels * kernel.height * kernel.width * inChannels)
        var dB = [Double](repeating: 0, count: outChannels)
        for n in 0..<batch {
            for oy in 0..<outHeight {
                for ox in 0..<outWidth {
                    for o in 0..<outChannels {
                        let g = Double(dOutput[n, oy, ox, o])
                        dB[o] += g
                        for ky in 0..<kernel.height {
                            let iy = oy - padTop + ky
                            guard iy >= 0 && iy < height else { continue }
                            for kx in 0..<kernel.width {
                                let ix = ox - padLeft + kx
                                guard ix >= 0 && ix < width else { continue }
                                for c in 0..<inChannels {
                                    dW[((o * kernel.height + ky) * kernel.width + kx) * inChannels + c] += g * Double(input[n, iy, ix, c])
                                }
                            }
                        }
                    }
                }
            }
        }
        return (
            Tensor(shape: [outChannels, kernel.height, kernel.width, inChannels], scalars: dW.map { Float($0) }),
            Tensor(shape: [outChannels], scalars: dB.map { Float($0) })
        )
    }

    /// `dX[n, iy, ix, c] = Σ_(oy, ox, o) dY[n, oy, ox, o] · W[o, iy − oy + top, ix − ox + left, c]` over the kernel
    /// cells that exist, stride 1.
    static func inputGradient(
        dOutput: Tensor, weight: Tensor, inputShape: [Int], padTop: Int, padLeft: Int
    ) -> Tensor {
        let (batch, height, width, inChannels) = (inputShape[0], inputShape[1], inputShape[2], inputShape[3])
        let (outHeight, outWidth, outChannels) = (dOutput.shape[1], dOutput.shape[2], dOutput.shape[3])
        let (kernelHeight, kernelWidth) = (weight.shape[1], weight.shape[2])
        var dX = [Double](repeating: 0, count: elementCount(inputShape))
        for n in 0..<batch {
            for iy in 0..<height {
                for ix in 0..<width {
                    for c in 0..<inChannels {
                        var sum = 0.0
                        for oy in 0..<outHeight {
                            let ky = iy - oy + padTop
                            guard ky >= 0 && ky < kernelHeight else { continue }
                            for ox in 0..<outWidth {
                                let kx = ix - ox + padLeft
                                guard kx >= 0 && kx < kernelWidth else { continue }
                                for o in 0..<outChannels { sum += Double(dOutput[n, oy, ox, o]) * Double(weight[o, ky, kx, c]) }
                            }
                        }
                        dX[((n * height + iy) * width + ix) * inChannels + c] = sum
                    }
                }
            }
        }
        return Tensor(shape: inputShape, scalars: dX.map { Float($0) })
    }
}

/// The direct kernels of the training convolution against their naive twins, at every instruction-set level this
/// CPU runs, on awkward sizes (channel counts off the blocks of 8, images narrower than a vector, kernels of 1–5).
/// Their sums run in float in another order than the Double twins: `Tolerance.kernelRelative` of the largest value.
@Suite("Direct training convolution against naive twins")
struct DirectConvolutionTests {
    static let cases: [(input: [Int], weight: [Int], padding: Padding)] = [
        ([2, 16, 16, 1], [12, 3, 3, 1], .same), ([3, 8, 8, 12], [24, 3, 3, 12], .same), ([2, 4, 4, 24], [32, 3, 3, 24], .same),
        ([1, 7, 17, 3], [7, 3, 3, 3], .same), ([2, 5, 9, 2], [33, 3, 2, 2], .valid), ([1, 3, 2, 17], [1, 1, 1, 17], .same),
        ([2, 6, 33, 1], [9, 5, 5, 1], .same), ([1, 9, 7, 4], [40, 2, 4, 4], .same), ([3, 1, 19, 2], [3, 1, 3, 2], .same),
    ]

    @Test(arguments: cases.indices)
    func forwardAndGradients(index: Int) {
        let (inputShape, weightShape, padding) = Self.cases[index]
        let x = randomTensor(inputShape, seed: 1), weight = randomTensor(weightShape, seed: 2)
        let bias = randomTensor([weightShape[0]], seed: 3)
        let expected = Reference.conv2d(x, weight: weight, bias: bias, stride: (1, 1), padding: padding)
        let dY = randomTensor(expected.shape, seed: 4)
        for level in Kernels.availableLevels {
            guard
                let direct = DirectConvolution2D(
                    inputShape: inputShape, weightShape: weightShape, stride: (1, 1), padding: padding, level: level)
            else {
                Issue.record("stride 1 must give a direct convolution")
                return
            }
            let what = "\(inputShape) * \(weightShape) \(padding) at \(level)"
            let bordered = direct.bordered(x)
            expectClose(
                direct.forward(bordered: bordered, weight: weight, bias: bias), expected,
                relativeTolerance: Tolerance.kernelRelative, "forward \(what)")
            let (dX, dW, dB) = direct.gradients(bordered: bordered, weight: weight, dOutput: dY)
            let reference = DirectConvolutionReference.parameterGradients(
                input: x, dOutput: dY, kernel: (weightShape[1], weightShape[2]), padTop: direct.padTop, padLeft: direct.padLeft)
            expectClose(dW, reference.dWeight, relativeTolerance: Tolerance.kernelRelative, "dW \(what)")
            expectClose(dB, reference.dBias, relativeTolerance: Tolerance.kernelRelative, "db \(what)")
            let expectedDX = DirectConvolutionReference.inputGradient(
                dOutput: dY, weight: weight, inputShape: inputShape, padTop: direct.padTop, padLeft: direct.padLeft)
            if let dX {
                expectClose(dX, expectedDX, relativeTolerance: Tolerance.kernelRelative, "dX \(what)")
            } else {
                Issue.record("dX was asked for: \(what)")
            }
            let parametersOnly = direct.gradients(bordered: bordered, weight: weight, dOutput: dY, inputGradient: false)
            #expect(
                parametersOnly.dInput == nil && parametersOnly.dWeight == dW && parametersOnly.dBias == dB,
                "skipping dX leaves dW and db as they were: \(what)")
        }
    }

    @Test func otherStridesKeepIm2col() {
        #expect(DirectConvolution2D(inputShape: [1, 8, 8, 2], weightShape: [3, 3, 3, 2], stride: (2, 1), padding: .same) == nil)
    }

    @Test func borderedInputHasZerosAround() {
        let x = Tensor(shape: [1, 2, 2, 1], scalars: [1, 2, 3, 4])
        let direct = DirectConvolution2D(inputShape: x.shape, weightShape: [1, 3, 3, 1], stride: (1, 1), padding: .same)
        #expect(direct?.bordered(x) == Tensor(shape: [1, 4, 4, 1], scalars: [0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0, 0, 0, 0]))
    }
}

/// The ReLU and max-pooling backward kernels against loop-only twins. They only select and copy, so the results
/// must be identical, not close.
@Suite("ReLU and max-pooling backward kernels against naive twins")
struct ActivationGradientTests {
    /// `dX[i] = output[i] > 0 ? dY[i] : 0`.
    static func reluReference(_ dOutput: Tensor, output: Tensor) -> Tensor {
        Tensor(shape: output.shape, scalars: zip(dOutput.scalars, output.scalars).map { $1 > 0 ? $0 : 0 })
    }

    /// Each window's gradient to the first cell (row by row) holding its maximum, none when every cell is NaN.
    static func maxPoolReference(input: Tensor, dOutput: Tensor, window: (height: Int, width: Int)) -> Tensor {
        let (batch, channels) = (input.shape[0], input.shape[3])
        var dX = Tensor(zeros: input.shape)
        for n in 0..<batch {
            for py in 0..<dOutput.shape[1] {
                for px in 0..<dOutput.shape[2] {
                    for c in 0..<channels {
                        var best = -Float.infinity, at: (Int, Int)?
                        for y in (py * window.height)..<((py + 1) * window.height) {
                            for x in (px * window.width)..<((px + 1) * window.width) where input[n, y, x, c] > best {
                                best = input[n, y, x, c]
                                at = (y, x)
                            }
                        }
                        if let (y, x) = at { dX[n, y, x, c] += dOutput[n, py, px, c] }
                    }
                }
            }
        }
        return dX
    }

    @Test(arguments: awkwardSizes)
    func relu(count: Int) {
        var output = randomTensor([count, 3], seed: 5).relu()
        if count > 1 { output.withUnsafeMutableBufferPointer { $0[1] = .nan } }
        let dY = randomTensor([count, 3], seed: 6)
        for level in Kernels.availableLevels {
            let dX = ActivationGradients.relu(dY, output: output, level: level)
            #expect(dX == Self.reluReference(dY, output: output), "ReLU backward of \(count)x3 at \(level)")
        }
    }

    @Test(arguments: [
        ([2, 16, 16, 12], 2, 2), ([1, 8, 8, 24], 2, 2), ([3, 5, 7, 3], 2, 2), ([1, 6, 9, 17], 3, 3), ([2, 4, 6, 33], 2, 3),
        ([1, 2, 2, 1], 2, 2), ([1, 7, 7, 8], 1, 1),
    ])
    func maxPool(shape: [Int], windowHeight: Int, windowWidth: Int) {
        var x = randomTensor(shape, seed: 7)
        // Ties and NaNs: the first cell of a tie wins; a window of NaNs passes nothing on.
        x.withUnsafeMutableBufferPointer { values in
            if values.count > shape[3] { values[shape[3]] = values[0] }
            if values.count > 2 * shape[3] + 1 { values[2 * shape[3] + 1] = .nan }
        }
        let window = SlidingWindow2D(
            inputShape: shape, windowHeight: windowHeight, windowWidth: windowWidth,
            strideHeight: windowHeight, strideWidth: windowWidth, padding: .valid)
        let dY = randomTensor([shape[0], window.rows.outputLength, window.columns.outputLength, shape[3]], seed: 8)
        let expected = Self.maxPoolReference(input: x, dOutput: dY, window: (windowHeight, windowWidth))
        for level in Kernels.availableLevels {
            let dX = ActivationGradients.maxPool(input: x, dOutput: dY, window: window, level: level)
            #expect(dX == expected, "max pool backward \(shape) \(windowHeight)x\(windowWidth) at \(level)")
        }
    }

    @Test func overlappingOrPaddedWindowsAreLeftToTheGeneralPath() {
        let x = randomTensor([1, 5, 5, 2], seed: 9)
        let overlapping = SlidingWindow2D(inputShape: x.shape, windowHeight: 3, windowWidth: 3, strideHeight: 2, strideWidth: 2, padding: .valid)
        let padded = SlidingWindow2D(inputShape: x.shape, windowHeight: 2, windowWidth: 2, strideHeight: 2, strideWidth: 2, padding: .same)
        #expect(ActivationGradients.maxPool(input: x, dOutput: randomTensor([1, 2, 2, 2]), window: overlapping) == nil)
        #expect(ActivationGradients.maxPool(input: x, dOutput: randomTensor([1, 3, 3, 2]), window: padded) == nil)
    }
}
