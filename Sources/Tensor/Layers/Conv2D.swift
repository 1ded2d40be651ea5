/// A 2-D convolution over channels-last images, computed by im2col and one `sgemm`.
///
/// - input: `[N, H, W, inChannels]` → output: `[N, OH, OW, outChannels]` (see `Padding` for OH, OW)
/// - weight: `[outChannels, kernelHeight, kernelWidth, inChannels]`
/// - bias: `[outChannels]`
public struct Conv2D: Layer {
    /// `[outChannels, kernelHeight, kernelWidth, inChannels]`
    public var weight: Tensor
    /// `[outChannels]`
    public var bias: Tensor
    /// Steps between windows: (rows, columns).
    public var stride: (height: Int, width: Int)
    /// Border handling.
    public var padding: Padding

    /// Creates the layer from its weight `[out, kh, kw, in]`, bias `[out]`, stride and padding.
    public init(weight: Tensor, bias: Tensor, stride: (height: Int, width: Int) = (1, 1), padding: Padding = .valid) {
        shapePrecondition(
            weight.rank == 4 && bias.shape == [weight.shape[0]],
            "Conv2D needs weight [out, kh, kw, in] and bias [out], got weight \(describeShape(weight.shape)) "
                + "and bias \(describeShape(bias.shape))")
        shapePrecondition(stride.height >= 1 && stride.width >= 1, "Conv2D stride must be ≥ 1, got \(stride)")
        self.weight = weight
        self.bias = bias
        self.stride = stride
        self.padding = padding
    }

    /// Creates a layer with He-normal weights and zero bias.
    public init(
        inChannels: Int, outChannels: Int, kernel: (height: Int, width: Int),
        stride: (height: Int, width: Int) = (1, 1), padding: Padding = .valid, generator: inout SeededGenerator
    ) {
        let fanIn = Swift.max(kernel.height * kernel.width * inChannels, 1)
        let weight = Tensor(
            randomNormal: [outChannels, kernel.height, kernel.width, inChannels],
            standardDeviation: (2 / Float(fanIn)).squareRoot(), generator: &generator)
        self.init(weight: weight, bias: Tensor(zeros: [outChannels]), stride: stride, padding: padding)
    }

    /// Weights and biases.
    public var parameterCount: Int { weight.count + bias.count }

    private func window(for inputShape: [Int]) -> SlidingWindow2D {
        shapePrecondition(
            inputShape.count == 4 && inputShape[3] == weight.shape[3],
            "Conv2D needs input [N, H, W, \(weight.shape[3])], got \(describeShape(inputShape)) "
                + "(weight \(describeShape(weight.shape)))")
        return SlidingWindow2D(
            inputShape: inputShape, windowHeight: weight.shape[1], windowWidth: weight.shape[2],
            strideHeight: stride.height, strideWidth: stride.width, padding: padding)
    }

    /// `[N, H, W, in]` → `[N, OH, OW, out]`.
    public func outputShape(for inputShape: [Int]) -> [Int] {
        let window = window(for: inputShape)
        return [inputShape[0], window.rows.outputLength, window.columns.outputLength, weight.shape[0]]
    }

    /// The convolution of `input` `[N, H, W, in]`.
    public func forward(_ input: Tensor) -> Tensor {
        _ = window(for: input.shape)
        return convolve(
            input, weight: weight, bias: bias, strideHeight: stride.height, strideWidth: stride.width,
            padding: padding)
    }
}
