/// Batch normalization at inference: `y = γ · (x − mean) / √(variance + ε) + β` over the last (channel) axis,
/// with the statistics gathered in training.
///
/// - input: `[N, …, C]` → output: same shape
/// - gamma, beta, mean, variance: `[C]`
///
/// Before shipping, fold it into the layer before it (`Dense.folding(_:)`, `Conv2D.folding(_:)`,
/// `Conv1D.folding(_:)`): the result is one layer with the same outputs and no normalization cost.
public struct BatchNorm: Layer {
    /// Scale `[C]`.
    public var gamma: Tensor
    /// Shift `[C]`.
    public var beta: Tensor
    /// Running mean `[C]`.
    public var mean: Tensor
    /// Running variance `[C]`.
    public var variance: Tensor
    /// Added to the variance before the square root.
    public var epsilon: Float

    /// Creates the layer from its four `[C]` tensors.
    public init(gamma: Tensor, beta: Tensor, mean: Tensor, variance: Tensor, epsilon: Float = 1e-5) {
        let channels = gamma.count
        shapePrecondition(
            [gamma, beta, mean, variance].allSatisfy { $0.shape == [channels] },
            "BatchNorm needs gamma, beta, mean and variance all [C], got \(describeShape(gamma.shape)), "
                + "\(describeShape(beta.shape)), \(describeShape(mean.shape)), \(describeShape(variance.shape))")
        self.gamma = gamma
        self.beta = beta
        self.mean = mean
        self.variance = variance
        self.epsilon = epsilon
    }

    /// The identity normalization of `channels` channels: γ = 1, β = 0, mean 0, variance 1.
    public init(channels: Int, epsilon: Float = 1e-5) {
        self.init(
            gamma: Tensor(repeating: 1, shape: [channels]), beta: Tensor(zeros: [channels]),
            mean: Tensor(zeros: [channels]), variance: Tensor(repeating: 1, shape: [channels]), epsilon: epsilon)
    }

    /// Channels normalized.
    public var channels: Int { gamma.count }
    /// The four statistics vectors.
    public var parameterCount: Int { 4 * channels }

    /// The per-channel affine map this layer applies: `y = scale · x + shift`.
    public var affine: (scale: Tensor, shift: Tensor) {
        let scale = gamma / (variance + epsilon).map { $0.squareRoot() }
        return (scale, beta - mean * scale)
    }

    /// Same shape; the last axis must be the channels.
    public func outputShape(for inputShape: [Int]) -> [Int] {
        shapePrecondition(
            inputShape.count >= 2 && inputShape[inputShape.count - 1] == channels,
            "BatchNorm over \(channels) channels needs input [N, …, \(channels)], got \(describeShape(inputShape))")
        return inputShape
    }

    /// Normalizes `input` channel by channel.
    public func forward(_ input: Tensor) -> Tensor {
        _ = outputShape(for: input.shape)
        let (scale, shift) = affine
        return input * scale + shift
    }
}

/// Folding a following batch normalization into the weights of a layer whose output channels are weight rows.
func foldBatchNorm(weight: Tensor, bias: Tensor, into norm: BatchNorm, layer: String) -> (weight: Tensor, bias: Tensor) {
    let outChannels = weight.shape[0]
    shapePrecondition(
        norm.channels == outChannels,
        "cannot fold BatchNorm over \(norm.channels) channels into \(layer) with weight \(describeShape(weight.shape))")
    let (scale, shift) = norm.affine
    let rowLength = weight.count / Swift.max(outChannels, 1)
    // Each output channel's weight row is scaled by its factor: W'[o, …] = scale[o] · W[o, …].
    var folded = weight
    folded.withUnsafeMutableBufferPointer { values in
        for o in 0..<outChannels {
            for j in 0..<rowLength { values[o * rowLength + j] *= scale.scalars[o] }
        }
    }
    return (folded, bias * scale + shift)
}

extension Dense {
    /// This layer followed by `norm`, as one Dense layer with the same outputs.
    public func folding(_ norm: BatchNorm) -> Dense {
        let (weight, bias) = foldBatchNorm(weight: weight, bias: bias, into: norm, layer: "Dense")
        return Dense(weight: weight, bias: bias)
    }
}

extension Conv2D {
    /// This layer followed by `norm`, as one Conv2D layer with the same outputs.
    public func folding(_ norm: BatchNorm) -> Conv2D {
        let (weight, bias) = foldBatchNorm(weight: weight, bias: bias, into: norm, layer: "Conv2D")
        return Conv2D(weight: weight, bias: bias, stride: stride, padding: padding)
    }
}

extension Conv1D {
    /// This layer followed by `norm`, as one Conv1D layer with the same outputs.
    public func folding(_ norm: BatchNorm) -> Conv1D {
        let (weight, bias) = foldBatchNorm(weight: weight, bias: bias, into: norm, layer: "Conv1D")
        return Conv1D(weight: weight, bias: bias, stride: stride, padding: padding)
    }
}
