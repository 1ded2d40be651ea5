import CKernels

/// One step of a plan, reading activation `input` and writing activation `output`.
enum Step: Sendable, CustomStringConvertible {
    /// A direct convolution; `weights` packed `[kh][kw][in][paddedToEight(out)]`, `bias` padded likewise.
    case convolution(input: Int, output: Int, ConvolutionStep)
    /// `output = relu?(bias + input · weights)`, weights packed `[in][paddedToEight(out)]` (in one object, as a
    /// convolution's).
    case dense(input: Int, output: Int, numbers: ConvolutionStep.Numbers, outFeatures: Int, relu: Bool)
    /// Unpadded max or average pooling.
    case pool(input: Int, output: Int, kind: PoolingKind, window: (height: Int, width: Int), stride: (height: Int, width: Int))
    /// The mean over all cells, per channel.
    case globalAverage(input: Int, output: Int)
    /// An element-wise function or a softmax over channels.
    case activation(input: Int, output: Int, Activation.Function)
    /// The same values in a new shape.
    case copy(input: Int, output: Int)
    /// A float image quantized to an 8-bit one (channels padded to a multiple of 4 with the zero point).
    case quantize(input: Int, output: Int, ActivationQuantization)
    /// A direct convolution (or a dense layer as a 1×1 one) in 8-bit integers.
    case integerConvolution(input: Int, output: Int, IntegerConvolutionStep)
    /// A dense layer in 8-bit integers reading a float input: the input quantized with the
    /// `ActivationQuantization` and the integer kernel in one call (a 1×1 convolution step's weights).
    case integerDense(input: Int, output: Int, IntegerConvolutionStep, ActivationQuantization)
    /// The layer's own `forward` on a batch of one (allocates).
    case fallback(input: Int, output: Int, any Layer, inputShape: [Int], outputShape: [Int])

    struct ConvolutionStep: Sendable {
        /// The packed numbers in one object: every run binds the step (a copy), which then retains one reference
        /// rather than one per array. Dense steps keep theirs in one too.
        final class Numbers: Sendable {
            let weights: [Float], bias: [Float]
            init(weights: [Float], bias: [Float]) { (self.weights, self.bias) = (weights, bias) }

            /// `body` with the kernel's view of the weights and biases, in place.
            func withPointers<R>(_ body: (UnsafePointer<Float>, UnsafePointer<Float>) -> R) -> R? {
                weights.withUnsafeBufferPointer { weights in
                    bias.withUnsafeBufferPointer { bias in
                        guard let weights = weights.baseAddress, let bias = bias.baseAddress else { return nil }
                        return body(weights, bias)
                    }
                }
            }
        }
        let numbers: Numbers
        var weights: [Float] { numbers.weights }
        var bias: [Float] { numbers.bias }
        let inChannels: Int, outChannels: Int
        let kernel: (height: Int, width: Int), stride: (height: Int, width: Int)
        /// The convolution's own output size (before any fused pooling).
        let outputSize: (height: Int, width: Int)
        var relu: Bool
        /// Whether a 2×2, stride-2 max pooling is fused in (the step's output is then the pooled image).
        var maxPool = false
        /// When set, the output is written as bytes quantized with this (for a following 8-bit layer), as the
        /// quantize step would make them.
        var requantize: ActivationQuantization?

        init(
            weights: [Float], bias: [Float], inChannels: Int, outChannels: Int, kernel: (height: Int, width: Int),
            stride: (height: Int, width: Int), outputSize: (height: Int, width: Int), relu: Bool
        ) {
            numbers = Numbers(weights: weights, bias: bias)
            (self.inChannels, self.outChannels, self.kernel, self.stride, self.outputSize, self.relu) =
                (inChannels, outChannels, kernel, stride, outputSize, relu)
        }

        /// `body` with the kernel's view of the weights and biases, in place.
        func withPointers<R>(_ body: (UnsafePointer<Float>, UnsafePointer<Float>) -> R) -> R? { numbers.withPointers(body) }
    }

    /// The packed weights and per-channel numbers of an 8-bit convolution (see `odml_conv2d_i8_args`).
    struct IntegerConvolutionStep: Sendable {
        /// The packed numbers in one object (see `ConvolutionStep.Numbers`).
        final class Numbers: Sendable {
            /// `[kh][kw · inChannels / 4][paddedToEight(out)][4]`.
            let weights: [Int8]
            /// `−zeroPoint · Σ w` per output channel (padded).
            let correction: [Int32]
            /// Input scale × weight scale per output channel (padded).
            let scale: [Float]
            let bias: [Float]
            /// Whether every weight lies in −63…63, so that AVX2 may sum with `vpmaddubsw` (`narrowWeights`).
            let narrow: Bool
            init(weights: [Int8], correction: [Int32], scale: [Float], bias: [Float]) {
                (self.weights, self.correction, self.scale, self.bias) = (weights, correction, scale, bias)
                narrow = weights.allSatisfy { $0 >= -63 && $0 <= 63 }
            }
        }
        let numbers: Numbers
        var weights: [Int8] { numbers.weights }
        var correction: [Int32] { numbers.correction }
        var scale: [Float] { numbers.scale }
        var bias: [Float] { numbers.bias }
        /// Input channels padded to a multiple of 4.
        let inChannels: Int, outChannels: Int
        let kernel: (height: Int, width: Int), stride: (height: Int, width: Int)
        let outputSize: (height: Int, width: Int)
        var relu = false
        var maxPool = false
        /// The next layer's input quantization when the output is written as bytes.
        var requantize: ActivationQuantization?

        init(
            weights: [Int8], correction: [Int32], scale: [Float], bias: [Float], inChannels: Int, outChannels: Int,
            kernel: (height: Int, width: Int), stride: (height: Int, width: Int), outputSize: (height: Int, width: Int)
        ) {
            numbers = Numbers(weights: weights, correction: correction, scale: scale, bias: bias)
            (self.inChannels, self.outChannels, self.kernel, self.stride, self.outputSize) = (inChannels, outChannels, kernel, stride, outputSize)
        }

        /// `body` with the kernel's view of the step: weights, corrections, scales and biases in place.
        func withPointers<R>(
            _ body: (UnsafePointer<Int8>, UnsafePointer<Int32>, UnsafePointer<Float>, UnsafePointer<Float>) -> R
        ) -> R? {
            numbers.weights.withUnsafeBufferPointer { weights in
                numbers.correction.withUnsafeBufferPointer { correction in
                    numbers.scale.withUnsafeBufferPointer { scale in
                        numbers.bias.withUnsafeBufferPointer { bias in
                            guard let weights = weights.baseAddress, let correction = correction.baseAddress,
                                let scale = scale.baseAddress, let bias = bias.baseAddress
                            else { return nil }
                            return body(weights, correction, scale, bias)
                        }
                    }
                }
            }
        }
    }

    var isFallback: Bool { if case .fallback = self { true } else { false } }
    var isInteger: Bool {
        switch self {
        case .integerConvolution, .integerDense: true
        default: false
        }
    }
    /// An 8-bit step whose weights all lie in −63…63 (AVX2 sums it with `vpmaddubsw`).
    var isNarrowInteger: Bool {
        switch self {
        case .integerConvolution(_, _, let step), .integerDense(_, _, let step, _): step.numbers.narrow
        default: false
        }
    }

    var description: String {
        switch self {
        case let .convolution(_, _, c):
            "conv \(c.kernel.height)x\(c.kernel.width) stride \(c.stride.height)x\(c.stride.width) \(c.inChannels)→\(c.outChannels)"
                + (c.relu ? " + relu" : "") + (c.maxPool ? " + max pool 2x2" : "") + (c.requantize != nil ? " → int8" : "")
                + " (direct)"
        case let .dense(_, _, numbers, out, relu):
            "dense \(numbers.weights.count / Swift.max(paddedToEight(out), 1))→\(out)" + (relu ? " + relu" : "")
        case let .pool(_, _, kind, window, stride):
            "\(kind == .max ? "max" : "average") pool \(window.height)x\(window.width) stride \(stride.height)x\(stride.width)"
        case .globalAverage: "global average pool"
        case let .activation(_, _, function): "activation \(function)"
        case .copy: "reshape"
        case let .quantize(_, _, q): "quantize to 8 bits (scale \(q.scale), zero point \(q.zeroPoint))"
        case let .integerConvolution(_, _, c):
            "int8 conv \(c.kernel.height)x\(c.kernel.width) stride \(c.stride.height)x\(c.stride.width) \(c.inChannels)→\(c.outChannels)"
                + (c.relu ? " + relu" : "") + (c.maxPool ? " + max pool 2x2" : "") + (c.requantize != nil ? " → int8" : "")
        case let .integerDense(_, _, c, q):
            "int8 dense \(c.inChannels)→\(c.outChannels)" + (c.relu ? " + relu" : "")
                + " (input quantized in the kernel: scale \(q.scale), zero point \(q.zeroPoint))"
        case let .fallback(_, _, layer, inputShape, outputShape):
            "\(type(of: layer)) \(describeShape(inputShape)) → \(describeShape(outputShape)) (layer forward, allocates)"
        }
    }
}

/// Builds a plan's steps and activation layouts layer by layer.
struct PlanCompiler {
    var steps: [Step] = []
    var activations: [ActivationLayout]
    /// The current per-sample shape as the layers see it.
    private var shape: [Int]

    init(inputShape: [Int]) {
        shape = inputShape
        activations = [Self.layout(of: inputShape)]
    }

    /// How a per-sample shape sits in the workspace: `[H, W, C]` as is, `[L, C]` as an image of height 1,
    /// `[F]` as one cell of F channels; more axes as an image whose rows are all the axes before the last two (so
    /// that the channels are the last axis, which a softmax runs over).
    func layoutOf(_ shape: [Int]) -> ActivationLayout { Self.layout(of: shape) }

    private static func layout(of shape: [Int]) -> ActivationLayout {
        switch shape.count {
        case 3...: ActivationLayout(height: elementCount(shape.dropLast(2)), width: shape[shape.count - 2], channels: shape[shape.count - 1])
        case 2: ActivationLayout(height: 1, width: shape[0], channels: shape[1])
        default: ActivationLayout(height: 1, width: 1, channels: elementCount(shape))
        }
    }

    /// Adds the step for `layer` (or fuses it into the previous one); `quantization`, when given, is how an int8
    /// layer's input is quantized.
    mutating func append(_ layer: any Layer, quantization: ActivationQuantization? = nil) {
        let outputShape = Array(layer.outputShape(for: [1] + shape).dropFirst())
        if let quantization, let integer = IntegerLayer(layer) {
            appendInteger(integer, quantization: quantization, outputShape: outputShape)
            shape = outputShape
            return
        }
        let input = activations.count - 1
        func addStep(_ step: Step) {
            activations.append(Self.layout(of: outputShape))
            steps.append(step)
        }
        defer { shape = outputShape }
        switch layer {
        case let conv as Conv2D:
            pad(input, height: (conv.kernelHeight, conv.stride.height), width: (conv.kernelWidth, conv.stride.width), conv.padding)
            addStep(
                .convolution(
                    input: input, output: input + 1,
                    Self.convolution(
                        weight: conv.weight, bias: conv.bias, kernel: (conv.kernelHeight, conv.kernelWidth), stride: conv.stride,
                        outputSize: (outputShape[0], outputShape[1]))))
        case let conv as Conv1D:
            pad(input, height: (1, 1), width: (conv.weight.shape[1], conv.stride), conv.padding)
            addStep(
                .convolution(
                    input: input, output: input + 1,
                    Self.convolution(
                        weight: conv.weight, bias: conv.bias, kernel: (1, conv.weight.shape[1]), stride: (1, conv.stride),
                        outputSize: (1, outputShape[0]))))
        case let dense as Dense:
            let (inFeatures, outFeatures) = (dense.weight.shape[1], dense.weight.shape[0])
            let padded = paddedToEight(outFeatures)
            var weights = [Float](repeating: 0, count: inFeatures * padded)
            var bias = [Float](repeating: 0, count: padded)
            dense.weight.withUnsafeBufferPointer { w in
                for o in 0..<outFeatures { for k in 0..<inFeatures { weights[k * padded + o] = w[o * inFeatures + k] } }
            }
            for o in 0..<outFeatures { bias[o] = dense.bias.scalars[o] }
            addStep(
                .dense(
                    input: input, output: input + 1, numbers: Step.ConvolutionStep.Numbers(weights: weights, bias: bias),
                    outFeatures: outFeatures, relu: false))
        case let pool as Pool2D
        where pool.kind == .max && pool.padding == .valid && pool.size == (2, 2) && pool.stride == (2, 2)
            && fuseMaxPool(outputShape):
            shape = outputShape
            return
        case let pool as Pool2D where pool.padding == .valid:
            addStep(.pool(input: input, output: input + 1, kind: pool.kind, window: pool.size, stride: pool.stride))
        case let pool as Pool1D where pool.padding == .valid:
            addStep(.pool(input: input, output: input + 1, kind: pool.kind, window: (1, pool.size), stride: (1, pool.stride)))
        case is GlobalAveragePool:
            addStep(.globalAverage(input: input, output: input + 1))
        case is Flatten:
            addStep(.copy(input: input, output: input + 1))
        case let activation as Activation:
            if activation.function == .relu, let last = steps.indices.last, fuseReLU(into: last) {
                shape = outputShape
                return
            }
            addStep(.activation(input: input, output: input + 1, activation.function))
        case let quantized as QuantizedConv2D:
            // A quantized layer without an input scale runs its weights dequantized, as a float layer would.
            append(quantized.dequantized())
        case let quantized as QuantizedConv1D:
            append(quantized.dequantized())
        case let quantized as QuantizedDense:
            append(quantized.dequantized())
        default:
            addStep(.fallback(input: input, output: input + 1, layer, inputShape: shape, outputShape: outputShape))
        }
    }

    /// Sets the ReLU flag of step `index` when it is a convolution or dense step without one.
    private mutating func fuseReLU(into index: Int) -> Bool {
        switch steps[index] {
        case let .convolution(input, output, step) where !step.relu && step.requantize == nil:
            var fused = step
            fused.relu = true
            steps[index] = .convolution(input: input, output: output, fused)
            return true
        case let .dense(input, output, numbers, out, false):
            steps[index] = .dense(input: input, output: output, numbers: numbers, outFeatures: out, relu: true)
            return true
        case let .integerConvolution(input, output, step) where !step.relu && step.requantize == nil:
            var fused = step
            fused.relu = true
            steps[index] = .integerConvolution(input: input, output: output, fused)
            return true
        case let .integerDense(input, output, step, quantization) where !step.relu:
            var fused = step
            fused.relu = true
            steps[index] = .integerDense(input: input, output: output, fused, quantization)
            return true
        default:
            return false
        }
    }

    /// Makes the last step, when it is a convolution without fused pooling whose output is the last activation,
    /// also pool 2×2 with stride 2; its output becomes the pooled image of `pooledShape`.
    private mutating func fuseMaxPool(_ pooledShape: [Int]) -> Bool {
        guard let index = steps.indices.last, pooledShape.count == 3 else { return false }
        switch steps[index] {
        case let .convolution(input, output, step) where !step.maxPool && step.requantize == nil && output == activations.count - 1:
            var fused = step
            fused.maxPool = true
            steps[index] = .convolution(input: input, output: output, fused)
            activations[output] = Self.layout(of: pooledShape)
            return true
        case let .integerConvolution(input, output, step) where !step.maxPool && step.requantize == nil && output == activations.count - 1:
            var fused = step
            fused.maxPool = true
            steps[index] = .integerConvolution(input: input, output: output, fused)
            activations[output] = Self.layout(of: pooledShape)
            return true
        default:
            return false
        }
    }

    /// Gives activation `index` the zero border a window of `height`/`width` (size, stride) reads with `padding`.
    mutating func pad(_ index: Int, height: (Int, Int), width: (Int, Int), _ padding: Padding) {
        guard padding == .same else { return }
        var layout = activations[index]
        let rows = WindowGeometry(inputLength: layout.height, window: height.0, stride: height.1, padding: .same)
        let columns = WindowGeometry(inputLength: layout.width, window: width.0, stride: width.1, padding: .same)
        layout.padTop = rows.padBefore
        layout.padBottom = Swift.max((rows.outputLength - 1) * height.1 + height.0 - layout.height - rows.padBefore, 0)
        layout.padLeft = columns.padBefore
        layout.padRight = Swift.max((columns.outputLength - 1) * width.1 + width.0 - layout.width - columns.padBefore, 0)
        activations[index] = layout
    }

    /// Packs a convolution weight `[out, kh, kw, in]` (or `[out, k, in]`) as `[kh][kw][in][paddedToEight(out)]`.
    private static func convolution(
        weight: Tensor, bias: Tensor, kernel: (height: Int, width: Int), stride: (height: Int, width: Int),
        outputSize: (height: Int, width: Int)
    ) -> Step.ConvolutionStep {
        let outChannels = weight.shape[0]
        let inChannels = weight.shape[weight.rank - 1]
        let taps = kernel.height * kernel.width
        let padded = paddedToEight(outChannels)
        var packed = [Float](repeating: 0, count: taps * inChannels * padded)
        weight.withUnsafeBufferPointer { w in
            for o in 0..<outChannels {
                for tap in 0..<taps {
                    for c in 0..<inChannels { packed[(tap * inChannels + c) * padded + o] = w[(o * taps + tap) * inChannels + c] }
                }
            }
        }
        var paddedBias = [Float](repeating: 0, count: padded)
        for o in 0..<outChannels { paddedBias[o] = bias.scalars[o] }
        return Step.ConvolutionStep(
            weights: packed, bias: paddedBias, inChannels: inChannels, outChannels: outChannels, kernel: kernel, stride: stride,
            outputSize: outputSize, relu: false)
    }

    /// The activations placed one after another, and the floats they take.
    func placedActivations() -> ([ActivationLayout], Int) {
        var placed = activations
        var offset = 0
        for index in placed.indices {
            placed[index].offset = offset
            // Keep each activation 64-byte aligned relative to the block.
            offset += (placed[index].storedFloats + 15) & ~15
        }
        return (placed, offset)
    }
}

extension Conv2D {
    var kernelHeight: Int { weight.shape[1] }
    var kernelWidth: Int { weight.shape[2] }
}
