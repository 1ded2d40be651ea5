import CKernels

extension Step {
    /// Runs the step on the workspace at `base`.
    func run(base: UnsafeMutablePointer<Float>, activations: [ActivationLayout], level: Kernels.Level) {
        switch self {
        case let .convolution(input, output, step):
            let (source, destination) = (activations[input], activations[output])
            _ = step.withPointers { weights, bias in
                let requantize = step.requantize
                Kernels.conv2D(
                    odml_conv2d_f32_args(
                        input: base + source.corner, inRowStride: source.rowStride, inPixelStride: source.channels,
                        inChannels: Int32(step.inChannels), kernelHeight: Int32(step.kernel.height),
                        kernelWidth: Int32(step.kernel.width), strideHeight: Int32(step.stride.height),
                        strideWidth: Int32(step.stride.width), outHeight: Int32(step.outputSize.height),
                        outWidth: Int32(step.outputSize.width), outChannels: Int32(step.outChannels), weights: weights, bias: bias,
                        output: requantize == nil ? base + destination.interior : nil, outRowStride: destination.rowStride,
                        outPixelStride: destination.channels, relu: step.relu ? 1 : 0, maxPool2x2: step.maxPool ? 1 : 0,
                        output8: requantize == nil ? nil : destination.interiorBytes(base),
                        outInverseScale: requantize.map { 1 / $0.scale } ?? 1, outZeroPoint: Int32(requantize?.zeroPoint ?? 0)),
                    level: level)
            }
        case let .dense(input, output, numbers, outFeatures, relu):
            let (source, destination) = (activations[input], activations[output])
            _ = numbers.withPointers { weights, bias in
                Kernels.dense(
                    input: base + source.interior, inFeatures: source.count, weights: weights, bias: bias,
                    outFeatures: outFeatures, output: base + destination.interior, relu: relu, level: level)
            }
        case let .pool(input, output, kind, window, stride):
            let (source, destination) = (activations[input], activations[output])
            Kernels.pool2D(
                odml_pool2d_f32_args(
                    input: base + source.interior, inRowStride: source.rowStride, inPixelStride: source.channels,
                    channels: Int32(source.channels), windowHeight: Int32(window.height), windowWidth: Int32(window.width),
                    strideHeight: Int32(stride.height), strideWidth: Int32(stride.width), outHeight: Int32(destination.height),
                    outWidth: Int32(destination.width), output: base + destination.interior, outRowStride: destination.rowStride,
                    outPixelStride: destination.channels, kind: kind == .max ? 0 : 1), level: level)
        case let .globalAverage(input, output):
            let (source, destination) = (activations[input], activations[output])
            let channels = source.channels
            let sum = base + destination.interior
            sum.update(repeating: 0, count: channels)
            source.forEachRow(base: base) { row in
                for x in 0..<source.width {
                    let cell = row + x * channels
                    for c in 0..<channels { sum[c] += cell[c] }
                }
            }
            let scale = 1 / Float(Swift.max(source.height * source.width, 1))
            for c in 0..<channels { sum[c] *= scale }
        case let .activation(input, output, function):
            let (source, destination) = (activations[input], activations[output])
            let width = source.width * source.channels
            for y in 0..<source.height {
                let from = base + source.interior + y * source.rowStride
                let to = base + destination.interior + y * destination.rowStride
                switch function {
                case .softmax, .logSoftmax:
                    for x in 0..<source.width {
                        softmax(
                            from + x * source.channels, to + x * source.channels, count: source.channels,
                            logarithmic: function == .logSoftmax)
                    }
                case .relu:
                    // The function chosen once per row, not per element: a plain loop the compiler vectorizes.
                    for i in 0..<width { to[i] = Swift.max(from[i], 0) }
                default:
                    for i in 0..<width { to[i] = apply(function, from[i]) }
                }
            }
        case let .copy(input, output):
            // Flatten: neither side has a border (nothing pads a flattened vector or reads a flatten's input padded).
            let (source, destination) = (activations[input], activations[output])
            source.load(into: UnsafeMutableBufferPointer(start: base + destination.interior, count: destination.count), base: base)
        case let .quantize(input, output, quantization):
            let (source, destination) = (activations[input], activations[output])
            let row = destination.interiorBytes(base)
            for y in 0..<source.height {
                Kernels.quantize(
                    base + source.interior + y * source.rowStride, pixels: source.width, channels: source.channels,
                    pixelStride: source.channels, into: row + y * destination.rowStride, outChannels: destination.channels,
                    quantization: quantization, level: level)
            }
        case let .integerConvolution(input, output, step):
            let (source, destination) = (activations[input], activations[output])
            let requantize = step.requantize
            _ = step.withPointers { weights, correction, scale, bias in
                Kernels.integerConv2D(
                    odml_conv2d_i8_args(
                        input: source.bytes(base), inRowStride: source.rowStride, inChannels: Int32(step.inChannels),
                        kernelHeight: Int32(step.kernel.height), kernelWidth: Int32(step.kernel.width),
                        strideHeight: Int32(step.stride.height), strideWidth: Int32(step.stride.width),
                        outHeight: Int32(step.outputSize.height), outWidth: Int32(step.outputSize.width),
                        outChannels: Int32(step.outChannels), weights: weights, correction: correction, scale: scale, bias: bias,
                        output: requantize == nil ? base + destination.interior : nil,
                        output8: requantize == nil ? nil : destination.interiorBytes(base),
                        outRowStride: destination.rowStride, outPixelStride: destination.channels,
                        outInverseScale: requantize.map { 1 / $0.scale } ?? 1, outZeroPoint: Int32(requantize?.zeroPoint ?? 0),
                        relu: step.relu ? 1 : 0, maxPool2x2: step.maxPool ? 1 : 0, narrowWeights: step.numbers.narrow ? 1 : 0),
                    level: level)
            }
        case let .integerDense(input, output, step, quantization):
            let (source, destination) = (activations[input], activations[output])
            _ = step.withPointers { weights, correction, scale, bias in
                Kernels.integerDense(
                    base + source.interior, inFeatures: source.count, quantization: quantization, paddedIn: step.inChannels,
                    weights: weights, correction: correction, scale: scale, bias: bias, outFeatures: step.outChannels,
                    output: base + destination.interior, relu: step.relu, narrowWeights: step.numbers.narrow, level: level)
            }
        case let .fallback(input, output, layer, inputShape, _):
            let (source, destination) = (activations[input], activations[output])
            let values = Tensor(uninitializedShape: [1] + inputShape) { buffer in source.load(into: buffer, base: base) }
            layer.forward(values).withUnsafeBufferPointer { destination.store($0, base: base) }
        }
    }
}

@inline(__always)
func apply(_ function: Activation.Function, _ x: Float) -> Float {
    switch function {
    case .relu: Swift.max(x, 0)
    case .leakyRelu(let alpha): x > 0 ? x : alpha * x
    case .sigmoid: x >= 0 ? 1 / (1 + _expf(-x)) : _expf(x) / (1 + _expf(x))
    case .tanh: _tanhf(x)
    case .softmax, .logSoftmax: x
    case .elu(let alpha): x > 0 ? x : alpha * _expm1f(x)
    case .selu(let alpha, let gamma): gamma * (x > 0 ? x : alpha * _expm1f(x))
    // log(1 + e^x) = max(x, 0) + log(1 + e^−|x|): no overflow for a large x, no lost digits for a small one.
    case .softplus: Swift.max(x, 0) + _log1pf(_expf(-Swift.abs(x)))
    case .softsign: x / (1 + Swift.abs(x))
    }
}

/// Softmax (or log-softmax) of `count` values, as `Tensor.softmax` computes it.
func softmax(_ input: UnsafeMutablePointer<Float>, _ output: UnsafeMutablePointer<Float>, count: Int, logarithmic: Bool) {
    var maximum = -Float.infinity
    for j in 0..<count { maximum = Swift.max(maximum, input[j]) }
    var total: Float = 0
    if logarithmic {
        for j in 0..<count { total += _expf(input[j] - maximum) }
        let logTotal = _logf(total)
        for j in 0..<count { output[j] = input[j] - maximum - logTotal }
        return
    }
    for j in 0..<count {
        let e = _expf(input[j] - maximum)
        output[j] = e
        total += e
    }
    let scale = 1 / total
    for j in 0..<count { output[j] *= scale }
}
