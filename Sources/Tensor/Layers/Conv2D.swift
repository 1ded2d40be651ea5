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
        _ = ConvolutionGeometry(conv2DWeightShape: weight.shape, stride: stride, padding: padding, layerName: "Conv2D")
        shapePrecondition(
            bias.shape == [weight.shape[0]],
            "Conv2D needs bias [\(weight.shape[0])] for weight \(describeShape(weight.shape)), got \(describeShape(bias.shape))")
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

    var geometry: ConvolutionGeometry {
        ConvolutionGeometry(conv2DWeightShape: weight.shape, stride: stride, padding: padding, layerName: "Conv2D")
    }

    /// `[N, H, W, in]` → `[N, OH, OW, out]`.
    public func outputShape(for inputShape: [Int]) -> [Int] { geometry.outputShape(for: inputShape) }

    /// The convolution of `input` `[N, H, W, in]`.
    public func forward(_ input: Tensor) -> Tensor {
        geometry.forward(input) { rows, outputShape in
            affineProduct(rows: rows, columnsWeight: weight, bias: bias, outputShape: outputShape)
        }
    }
}
