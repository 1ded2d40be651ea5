import Tensor

/// Whether a forward pass is part of training (batch statistics, dropout) or inference.
public enum Mode: Sendable {
    /// Batch normalization uses the batch's statistics; dropout drops.
    case training
    /// Batch normalization uses its running statistics; dropout passes everything through.
    case inference
}

/// What a training forward pass keeps for its backward pass.
public struct ForwardRecord: Sendable {
    /// The layer's input.
    public var input: Tensor
    /// The layer's output.
    public var output: Tensor
    /// What else the layer kept for its backward pass.
    public var saved: Saved = .nothing

    /// What a layer keeps beyond its input and output, by name.
    public enum Saved: Sendable {
        /// Nothing (and, for batch normalization and dropout, the sign of an inference-mode pass).
        case nothing
        /// Dropout's mask: 0 for a dropped value, the keep-rate's inverse for a kept one.
        case dropoutMask(Tensor)
        /// Batch normalization in training mode: the normalized input and the inverse deviations (for the
        /// backward pass), the batch's mean and variance (for the running statistics).
        case batchStatistics(normalized: Tensor, inverseDeviation: Tensor, mean: Tensor, variance: Tensor)
        /// A convolution's input with its zero border, as the direct kernels read it.
        case borderedInput(Tensor)
    }

    /// Creates a record.
    public init(input: Tensor, output: Tensor, saved: Saved = .nothing) {
        self.input = input
        self.output = output
        self.saved = saved
    }
}

/// A layer that can be trained: a forward pass that records what its backward pass needs, the backward pass,
/// and access to its learned parameters. Gradients are named after what they differentiate: `dInput` for the
/// input, then one per parameter in `parameters` order.
public protocol TrainableLayer: Layer {
    /// The forward pass, recording what `backward` needs. `generator` feeds dropout.
    func trainingForward(_ input: Tensor, mode: Mode, generator: inout SeededGenerator) -> ForwardRecord

    /// The gradients of the loss with respect to the input and to each parameter, given its gradient with
    /// respect to the output.
    func backward(_ dOutput: Tensor, record: ForwardRecord) -> (dInput: Tensor, gradients: [Tensor])

    /// The gradients of the parameters alone, for a first layer whose input gradient nobody uses (a layer that can
    /// skip computing it says so here).
    func parameterGradients(_ dOutput: Tensor, record: ForwardRecord) -> [Tensor]

    /// The learned parameters, in a fixed order (weight, bias; gamma, beta).
    var parameters: [Tensor] { get set }

    /// Takes in what a training forward pass measured (batch normalization's running statistics).
    mutating func absorb(_ record: ForwardRecord)

    /// The inference layer to export, or `nil` when inference skips it (dropout).
    var exported: (any Layer)? { get }

    /// Whether the layer's training forward pass treats each sample on its own and draws no random numbers, so that a
    /// batch may be cut into parts trained on separate threads (not batch normalization, which measures the whole
    /// batch, nor dropout, which draws its mask).
    var trainsSampleBySample: Bool { get }
}

extension TrainableLayer {
    /// Layers without parameters or training behaviour: the inference forward pass, recorded.
    public func trainingForward(_ input: Tensor, mode: Mode, generator: inout SeededGenerator) -> ForwardRecord {
        ForwardRecord(input: input, output: forward(input))
    }

    /// The gradients `backward` gives.
    public func parameterGradients(_ dOutput: Tensor, record: ForwardRecord) -> [Tensor] {
        backward(dOutput, record: record).gradients
    }

    /// Most layers measure nothing.
    public mutating func absorb(_ record: ForwardRecord) {}

    /// Most layers export themselves.
    public var exported: (any Layer)? { self }

    /// Most layers treat samples one by one.
    public var trainsSampleBySample: Bool { true }
}

/// Replaces a layer's two parameter tensors with `values`, which must have the same shapes: the setter of
/// `parameters` for every layer with a pair (weight and bias, gamma and beta).
func assign(_ values: [Tensor], to first: inout Tensor, _ second: inout Tensor, layer: String) {
    shapePrecondition(
        values.count == 2 && values[0].shape == first.shape && values[1].shape == second.shape,
        "\(layer) parameters must be \(describeShape(first.shape)) and \(describeShape(second.shape)), "
            + "got \(values.map { describeShape($0.shape) })")
    first = values[0]
    second = values[1]
}
