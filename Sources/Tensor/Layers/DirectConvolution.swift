import CKernels

/// A stride-1 2-D convolution's training passes by direct kernels instead of im2col and `sgemm`: the forward pass
/// and the input gradient run the inference plan's convolution kernel (`odml_conv2d_f32`; the input gradient is
/// the convolution of the bordered output gradient with the weights turned 180° and their channel axes swapped),
/// the weight and bias gradients `odml_conv2d_weight_gradient_f32`. At training shapes (batches of small images,
/// few channels) these beat unrolling the batch and multiplying: the unrolled matrices are 9× the image, and
/// col2im scatters back through all of it.
///
/// - input: `[N, H, W, in]`, bordered first by `bordered(_:)` to `[N, H + top + bottom, W + left + right, in]`
/// - weight: `[out, kh, kw, in]`, bias: `[out]` → output: `[N, OH, OW, out]`
public struct DirectConvolution2D: Sendable {
    /// Images, input height and width, input and output channels.
    public let batch: Int, height: Int, width: Int, inChannels: Int, outChannels: Int
    /// Kernel extents.
    public let kernelHeight: Int, kernelWidth: Int
    /// Zero cells added on each side by `bordered(_:)`.
    public let padTop: Int, padBottom: Int, padLeft: Int, padRight: Int
    /// Output extents.
    public let outHeight: Int, outWidth: Int
    /// The kernels' instruction-set level.
    public let level: Kernels.Level

    /// The direct passes for `weightShape` `[out, kh, kw, in]` over `inputShape` `[N, H, W, in]`, or `nil` when the
    /// stride is not 1 along both axes (those convolutions keep im2col).
    public init?(
        inputShape: [Int], weightShape: [Int], stride: (height: Int, width: Int), padding: Padding,
        level: Kernels.Level = Kernels.level
    ) {
        shapePrecondition(
            inputShape.count == 4 && weightShape.count == 4 && inputShape[3] == weightShape[3],
            "a direct convolution needs input [N, H, W, C] and weight [out, kh, kw, C], got \(describeShape(inputShape)) "
                + "and \(describeShape(weightShape))")
        guard stride == (1, 1) else { return nil }
        (batch, height, width, inChannels) = (inputShape[0], inputShape[1], inputShape[2], inputShape[3])
        (outChannels, kernelHeight, kernelWidth) = (weightShape[0], weightShape[1], weightShape[2])
        let rows = WindowGeometry(inputLength: height, window: kernelHeight, stride: 1, padding: padding)
        let columns = WindowGeometry(inputLength: width, window: kernelWidth, stride: 1, padding: padding)
        (outHeight, outWidth) = (rows.outputLength, columns.outputLength)
        (padTop, padLeft) = (rows.padBefore, columns.padBefore)
        padBottom = outHeight - 1 + kernelHeight - height - padTop
        padRight = outWidth - 1 + kernelWidth - width - padLeft
        self.level = level
    }

    /// `[N, OH, OW, out]`.
    public var outputShape: [Int] { [batch, outHeight, outWidth, outChannels] }

    /// The shape `bordered(_:)` returns.
    public var borderedShape: [Int] { [batch, height + padTop + padBottom, width + padLeft + padRight, inChannels] }

    /// `input` `[N, H, W, in]` with zero borders: `[N, H + top + bottom, W + left + right, in]`.
    public func bordered(_ input: Tensor) -> Tensor {
        shapePrecondition(
            input.shape == [batch, height, width, inChannels],
            "direct convolution built for input \(describeShape([batch, height, width, inChannels])), got \(describeShape(input.shape))")
        return Tensor(shape: borderedShape, scalars: border(input, top: padTop, bottom: padBottom, left: padLeft, right: padRight, slack: 0))
    }

    /// The convolution of a bordered input `[N, H + top + bottom, W + left + right, in]`.
    public func forward(bordered: Tensor, weight: Tensor, bias: Tensor) -> Tensor {
        checkBordered(bordered, weight: weight)
        shapePrecondition(bias.shape == [outChannels], "bias must be [\(outChannels)], got \(describeShape(bias.shape))")
        let packed = Self.pack(weight, turned: false)
        var paddedBias = [Float](repeating: 0, count: paddedToEight(outChannels))
        for o in 0..<outChannels { paddedBias[o] = bias.scalars[o] }
        let (rowStride, imageStride) = (borderedShape[2] * inChannels, borderedShape[1] * borderedShape[2] * inChannels)
        return Tensor(uninitializedShape: outputShape) { output in
            guard let out = output.baseAddress else { return }
            bordered.withUnsafeBufferPointer { input in
                guard let input = input.baseAddress else { return }
                convolve(
                    input: input, imageStride: imageStride, rowStride: rowStride, inChannels: inChannels,
                    weights: packed, bias: paddedBias, outChannels: outChannels, output: out)
            }
        }
    }

    /// The gradients from `dOutput` `[N, OH, OW, out]`: the weight's `[out, kh, kw, in]`, the bias's `[out]`, and the
    /// input's `[N, H, W, in]` when `inputGradient` is set (a first layer does not need it).
    public func gradients(
        bordered: Tensor, weight: Tensor, dOutput: Tensor, inputGradient: Bool = true
    ) -> (dInput: Tensor?, dWeight: Tensor, dBias: Tensor) {
        checkBordered(bordered, weight: weight)
        shapePrecondition(
            dOutput.shape == outputShape,
            "output gradient must be \(describeShape(outputShape)), got \(describeShape(dOutput.shape))")
        // The output gradient bordered for the input gradient (a full correlation with the turned kernel), with 8
        // floats of slack after it for the weight gradient's blocks of 8 channels.
        let (top, left) = (kernelHeight - 1 - padTop, kernelWidth - 1 - padLeft)
        let (bottom, right) = (kernelHeight - 1 - padBottom, kernelWidth - 1 - padRight)
        let gradient = border(dOutput, top: top, bottom: bottom, left: left, right: right, slack: 8)
        let gradientWidth = outWidth + left + right
        let gradientImage = (outHeight + top + bottom) * gradientWidth * outChannels
        let (rowStride, imageStride) = (borderedShape[2] * inChannels, borderedShape[1] * borderedShape[2] * inChannels)
        var dBias = [Float](repeating: 0, count: outChannels)
        let dWeight = Tensor(uninitializedShape: weight.shape) { dW in
            guard let dW = dW.baseAddress else { return }
            bordered.withUnsafeBufferPointer { input in
                gradient.withUnsafeBufferPointer { g in
                    dBias.withUnsafeMutableBufferPointer { dB in
                        guard let input = input.baseAddress, let g = g.baseAddress, let dB = dB.baseAddress else { return }
                        Kernels.conv2DWeightGradient(
                            odml_conv2d_weight_gradient_f32_args(
                                input: input, inImageStride: imageStride, inRowStride: rowStride, inPixelStride: inChannels,
                                inChannels: Int32(inChannels), kernelHeight: Int32(kernelHeight), kernelWidth: Int32(kernelWidth),
                                strideHeight: 1, strideWidth: 1,
                                dOutput: g + (top * gradientWidth + left) * outChannels, dOutImageStride: gradientImage,
                                dOutRowStride: gradientWidth * outChannels, dOutPixelStride: outChannels, images: Int32(batch),
                                outHeight: Int32(outHeight), outWidth: Int32(outWidth), outChannels: Int32(outChannels),
                                dWeight: dW, dBias: dB), level: level)
                    }
                }
            }
        }
        guard inputGradient else { return (nil, dWeight, Tensor(shape: [outChannels], scalars: dBias)) }
        let turned = Self.pack(weight, turned: true)
        let zeros = [Float](repeating: 0, count: paddedToEight(inChannels))
        let dInput = Tensor(uninitializedShape: [batch, height, width, inChannels]) { output in
            guard let out = output.baseAddress else { return }
            gradient.withUnsafeBufferPointer { g in
                guard let g = g.baseAddress else { return }
                // The input gradient is a convolution of the bordered output gradient (out channels in) giving
                // `in` channels, over an "image" of the input's height and width.
                DirectConvolution2D(transposeOf: self).convolve(
                    input: g, imageStride: gradientImage, rowStride: gradientWidth * outChannels, inChannels: outChannels,
                    weights: turned, bias: zeros, outChannels: inChannels, output: out)
            }
        }
        return (dInput, dWeight, Tensor(shape: [outChannels], scalars: dBias))
    }

    /// The convolution that computes the input gradient: output extents are the input's, channels swapped.
    private init(transposeOf forward: DirectConvolution2D) {
        (batch, height, width) = (forward.batch, forward.outHeight, forward.outWidth)
        (inChannels, outChannels) = (forward.outChannels, forward.inChannels)
        (kernelHeight, kernelWidth) = (forward.kernelHeight, forward.kernelWidth)
        (padTop, padBottom, padLeft, padRight) = (0, 0, 0, 0)
        (outHeight, outWidth) = (forward.height, forward.width)
        level = forward.level
    }

    /// Runs `odml_conv2d_f32` on each image of a bordered batch into a dense `[N, OH, OW, outChannels]` output.
    private func convolve(
        input: UnsafePointer<Float>, imageStride: Int, rowStride: Int, inChannels: Int, weights: [Float], bias: [Float],
        outChannels: Int, output: UnsafeMutablePointer<Float>
    ) {
        weights.withUnsafeBufferPointer { weights in
            bias.withUnsafeBufferPointer { bias in
                guard let weights = weights.baseAddress, let bias = bias.baseAddress else { return }
                for n in 0..<batch {
                    Kernels.conv2D(
                        odml_conv2d_f32_args(
                            input: input + n * imageStride, inRowStride: rowStride, inPixelStride: inChannels,
                            inChannels: Int32(inChannels), kernelHeight: Int32(kernelHeight), kernelWidth: Int32(kernelWidth),
                            strideHeight: 1, strideWidth: 1, outHeight: Int32(outHeight), outWidth: Int32(outWidth),
                            outChannels: Int32(outChannels), weights: weights, bias: bias,
                            output: output + n * outHeight * outWidth * outChannels, outRowStride: outWidth * outChannels,
                            outPixelStride: outChannels, relu: 0, maxPool2x2: 0, output8: nil, outInverseScale: 1, outZeroPoint: 0),
                        level: level)
                }
            }
        }
    }

    private func checkBordered(_ bordered: Tensor, weight: Tensor) {
        shapePrecondition(
            bordered.shape == borderedShape && weight.shape == [outChannels, kernelHeight, kernelWidth, inChannels],
            "direct convolution needs bordered input \(describeShape(borderedShape)) and weight "
                + "\(describeShape([outChannels, kernelHeight, kernelWidth, inChannels])), got \(describeShape(bordered.shape)) "
                + "and \(describeShape(weight.shape))")
    }

    /// The weight `[out, kh, kw, in]` packed for `odml_conv2d_f32` as `[kh][kw][in][paddedToEight(out)]`; turned, as
    /// the weight of the input gradient: `[kh][kw][out][paddedToEight(in)]` holding `W[o, kh−1−ky, kw−1−kx, c]`.
    static func pack(_ weight: Tensor, turned: Bool) -> [Float] {
        let (outChannels, kernelHeight, kernelWidth, inChannels) = (weight.shape[0], weight.shape[1], weight.shape[2], weight.shape[3])
        let taps = kernelHeight * kernelWidth
        let (reduced, produced) = turned ? (outChannels, inChannels) : (inChannels, outChannels)
        let padded = paddedToEight(produced)
        var packed = [Float](repeating: 0, count: taps * reduced * padded)
        weight.withUnsafeBufferPointer { w in
            for o in 0..<outChannels {
                for tap in 0..<taps {
                    for c in 0..<inChannels {
                        let value = w[(o * taps + tap) * inChannels + c]
                        if turned {
                            packed[((taps - 1 - tap) * reduced + o) * padded + c] = value
                        } else {
                            packed[(tap * reduced + c) * padded + o] = value
                        }
                    }
                }
            }
        }
        return packed
    }
}

/// `images` `[N, H, W, C]` with `top` … `right` zero cells around each image, as a flat array, plus `slack` zeros.
private func border(_ images: Tensor, top: Int, bottom: Int, left: Int, right: Int, slack: Int) -> [Float] {
    let (batch, height, width, channels) = (images.shape[0], images.shape[1], images.shape[2], images.shape[3])
    let (outHeight, outWidth) = (height + top + bottom, width + left + right)
    let rowLength = width * channels
    var result = [Float](repeating: 0, count: batch * outHeight * outWidth * channels + slack)
    result.withUnsafeMutableBufferPointer { out in
        images.withUnsafeBufferPointer { source in
            guard let out = out.baseAddress, let source = source.baseAddress else { return }
            for n in 0..<batch {
                for y in 0..<height {
                    let to = out + ((n * outHeight + y + top) * outWidth + left) * channels
                    to.update(from: source + (n * height + y) * rowLength, count: rowLength)
                }
            }
        }
    }
    return result
}
