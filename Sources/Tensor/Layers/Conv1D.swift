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
        _ = ConvolutionGeometry(conv1DWeightShape: weight.shape, stride: stride, padding: padding, layerName: "Conv1D")
        shapePrecondition(
            bias.shape == [weight.shape[0]],
            "Conv1D needs bias [\(weight.shape[0])] for weight \(describeShape(weight.shape)), got \(describeShape(bias.shape))")
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

    var geometry: ConvolutionGeometry {
        ConvolutionGeometry(conv1DWeightShape: weight.shape, stride: stride, padding: padding, layerName: "Conv1D")
    }

    /// `[N, L, in]` → `[N, OL, out]`.
    public func outputShape(for inputShape: [Int]) -> [Int] { geometry.outputShape(for: inputShape) }

    /// The convolution of `input` `[N, L, in]`: the 2-D kernel over an image of height 1.
    public func forward(_ input: Tensor) -> Tensor {
        geometry.forward(input) { rows, outputShape in
            affineProduct(rows: rows, columnsWeight: weight, bias: bias, outputShape: outputShape)
        }
    }
}
