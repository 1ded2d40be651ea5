/// An int8 layer the integer kernel runs: a 2-D or 1-D convolution, or a dense layer as a 1×1 convolution over
/// a one-cell image.
struct IntegerLayer {
    /// int8 `[out, kh, kw, in]`, `[out, k, in]` or `[out, in]`.
    let weight: QuantizedTensor
    let bias: Tensor
    let kernel: (height: Int, width: Int), stride: (height: Int, width: Int)
    let padding: Padding
    let isDense: Bool

    init?(_ layer: any Layer) {
        switch layer {
        case let conv as QuantizedConv2D where conv.weight.format == .int8:
            (weight, bias, stride, padding, isDense) = (conv.weight, conv.bias, conv.stride, conv.padding, false)
            kernel = (conv.weight.shape[1], conv.weight.shape[2])
        case let conv as QuantizedConv1D where conv.weight.format == .int8:
            (weight, bias, stride, padding, isDense) = (conv.weight, conv.bias, (1, conv.stride), conv.padding, false)
            kernel = (1, conv.weight.shape[1])
        case let dense as QuantizedDense where dense.weight.format == .int8:
            (weight, bias, kernel, stride, padding, isDense) = (dense.weight, dense.bias, (1, 1), (1, 1), .valid, true)
        default:
            return nil
        }
    }

    var inChannels: Int { weight.shape[weight.shape.count - 1] }
    var outChannels: Int { weight.shape[0] }
}

extension PlanCompiler {
    /// Adds an 8-bit convolution: the input quantized with `quantization` (by the previous convolution step, 8-bit
    /// or float, when there is one, else by a quantize step), then the integer kernel, whose output is float.
    mutating func appendInteger(_ layer: IntegerLayer, quantization: ActivationQuantization, outputShape: [Int]) {
        var input = activations.count - 1
        let source = activations[input]
        let paddedIn = (layer.inChannels + 3) & ~3
        if layer.isDense, source.height == 1, source.width == 1, source.channels == layer.inChannels, !source.isBytes,
            paddedIn <= Kernels.integerDenseMaxInput
        {
            // A dense layer on a float vector: quantizing and the dot products in one kernel call, no byte activation.
            activations.append(layoutOf(outputShape))
            steps.append(
                .integerDense(
                    input: input, output: input + 1,
                    Self.integerConvolution(
                        layer, paddedIn: paddedIn, quantization: quantization, outputSize: (1, 1)), quantization))
            return
        }
        var bytes =
            layer.isDense
            ? ActivationLayout(height: 1, width: 1, channels: paddedIn)
            : ActivationLayout(height: source.height, width: source.width, channels: paddedIn)
        bytes.isBytes = true
        bytes.fill = UInt8(quantization.zeroPoint)
        if let last = steps.indices.last, case let .integerConvolution(from, to, step) = steps[last], to == input,
            step.requantize == nil, !layer.isDense
        {
            var fused = step
            fused.requantize = quantization
            steps[last] = .integerConvolution(input: from, output: to, fused)
            activations[input] = bytes
        } else if let last = steps.indices.last, case let .convolution(from, to, step) = steps[last], to == input,
            step.requantize == nil, !layer.isDense
        {
            // A float convolution before it writes the bytes itself: no quantize pass over its output.
            var fused = step
            fused.requantize = quantization
            steps[last] = .convolution(input: from, output: to, fused)
            activations[input] = bytes
        } else {
            activations.append(bytes)
            steps.append(.quantize(input: input, output: input + 1, quantization))
            input += 1
        }
        pad(input, height: (layer.kernel.height, layer.stride.height), width: (layer.kernel.width, layer.stride.width), layer.padding)
        let outputSize = layer.isDense ? (1, 1) : outputShape.count == 3 ? (outputShape[0], outputShape[1]) : (1, outputShape[0])
        activations.append(layoutOf(outputShape))
        steps.append(
            .integerConvolution(
                input: input, output: input + 1,
                Self.integerConvolution(
                    layer, paddedIn: paddedIn, quantization: quantization, outputSize: outputSize)))
    }

    /// Packs an int8 weight as `[kh][kw · paddedIn / 4][paddedToEight(out)][4]` with its per-channel numbers.
    static func integerConvolution(
        _ layer: IntegerLayer, paddedIn: Int, quantization: ActivationQuantization, outputSize: (Int, Int)
    ) -> Step.IntegerConvolutionStep {
        let (outChannels, inChannels) = (layer.outChannels, layer.inChannels)
        let (kernelHeight, kernelWidth) = layer.kernel
        let padded = paddedToEight(outChannels)
        let groups = kernelWidth * paddedIn / 4
        var packed = [Int8](repeating: 0, count: kernelHeight * groups * padded * 4)
        var correction = [Int32](repeating: 0, count: padded)
        var scale = [Float](repeating: 0, count: padded)
        var bias = [Float](repeating: 0, count: padded)
        let (weightScales, values) = layer.weight.int8Rows()
        for o in 0..<outChannels {
            var sum: Int32 = 0
            for ky in 0..<kernelHeight {
                for kx in 0..<kernelWidth {
                    for c in 0..<inChannels {
                        let value = values[((o * kernelHeight + ky) * kernelWidth + kx) * inChannels + c]
                        let r = kx * paddedIn + c
                        packed[((ky * groups + r / 4) * padded + o) * 4 + r % 4] = value
                        sum += Int32(value)
                    }
                }
            }
            correction[o] = -Int32(quantization.zeroPoint) * sum
            scale[o] = quantization.scale * weightScales[o]
            bias[o] = layer.bias.scalars[o]
        }
        return Step.IntegerConvolutionStep(
            weights: packed, correction: correction, scale: scale, bias: bias, inChannels: paddedIn, outChannels: outChannels,
            kernel: layer.kernel, stride: layer.stride, outputSize: outputSize)
    }
}

extension QuantizedTensor {
    /// An `int8` tensor's per-row scales and its values, row-major.
    func int8Rows() -> (scales: [Float], values: [Int8]) {
        shapePrecondition(format == .int8, "int8Rows of a \(format) tensor of shape \(describeShape(shape))")
        let rows = self.rows
        return bytes.withUnsafeBytes { raw in
            ((0..<rows).map { raw.float32(at: 4 * $0) }, bytes[(4 * rows)...].map { Int8(bitPattern: $0) })
        }
    }
}
