/// A 1-D convolution over channels-last sequences (time × channels), computed by im2col and one `sgemm`.
///
/// - input: `[N, L, inChannels]` → output: `[N, OL, outChannels]` (see `Padding` for OL)
/// - weight: `[outChannels, kernelSize, inChannels]`
/// - bias: `[outChannels]`
public struct Conv1D: Layer {
    /// `[outChannels, kernelSize, inChannels]`
    public var weight: Tensor
    /// `[outChannels]`
    public var bias: Tensor
    /// Steps between windows.
    public var stride: Int
    /// Border handling.
    public var padding: Padding

    /// Creates the layer from its weight `[out, k, in]`, bias `[out]`, stride and padding.
    public init(weight: Tensor, bias: Tensor, stride: Int = 1, padding: Padding = .valid) {
        shapePrecondition(
            weight.rank == 3 && bias.shape == [weight.shape[0]],
            "Conv1D needs weight [out, k, in] and bias [out], got weight \(describeShape(weight.shape)) "
                + "and bias \(describeShape(bias.shape))")
        shapePrecondition(stride >= 1, "Conv1D stride must be ≥ 1, got \(stride)")
        self.weight = weight
        self.bias = bias
        self.stride = stride
        self.padding = padding
    }

    /// Creates a layer with He-normal weights and zero bias.
    public init(
        inChannels: Int, outChannels: Int, kernelSize: Int, stride: Int = 1, padding: Padding = .valid,
        generator: inout SeededGenerator
    ) {
        let fanIn = Swift.max(kernelSize * inChannels, 1)
        let weight = Tensor(
            randomNormal: [outChannels, kernelSize, inChannels],
            standardDeviation: (2 / Float(fanIn)).squareRoot(), generator: &generator)
        self.init(weight: weight, bias: Tensor(zeros: [outChannels]), stride: stride, padding: padding)
    }

    /// Weights and biases.
    public var parameterCount: Int { weight.count + bias.count }

    /// `[N, L, in]` → `[N, OL, out]`.
    public func outputShape(for inputShape: [Int]) -> [Int] {
        shapePrecondition(
            inputShape.count == 3 && inputShape[2] == weight.shape[2],
            "Conv1D needs input [N, L, \(weight.shape[2])], got \(describeShape(inputShape)) "
                + "(weight \(describeShape(weight.shape)))")
        let geometry = WindowGeometry(
            inputLength: inputShape[1], window: weight.shape[1], stride: stride, padding: padding)
        return [inputShape[0], geometry.outputLength, weight.shape[0]]
    }

    /// The convolution of `input` `[N, L, in]`: the 2-D kernel over an image of height 1.
    public func forward(_ input: Tensor) -> Tensor {
        let outputShape = outputShape(for: input.shape)
        let output = convolve(
            input.reshaped([input.shape[0], 1, input.shape[1], input.shape[2]]),
            weight: weight.reshaped([weight.shape[0], 1, weight.shape[1], weight.shape[2]]),
            bias: bias, strideHeight: 1, strideWidth: stride, padding: padding)
        return output.reshaped(outputShape)
    }
}
