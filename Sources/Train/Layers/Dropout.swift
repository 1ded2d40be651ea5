import Tensor

/// Dropout: in training, zeroes each element with probability `rate` and scales the rest by `1 / (1 − rate)`;
/// at inference it passes everything through, so it is not exported.
///
/// - input: any shape → output: same shape
public struct Dropout: TrainableLayer {
    /// The probability of dropping an element, in [0, 1).
    public let rate: Float

    /// Creates the layer.
    public init(rate: Float) {
        shapePrecondition(rate >= 0 && rate < 1, "Dropout rate must be in [0, 1), got \(rate)")
        self.rate = rate
    }

    /// The input's shape.
    public func outputShape(for inputShape: [Int]) -> [Int] { inputShape }

    /// Inference: the identity.
    public func forward(_ input: Tensor) -> Tensor { input }

    /// None.
    public var parameters: [Tensor] {
        get { [] }
        set {}
    }

    /// Training: a fresh mask from `generator`, recorded for the backward pass.
    public func trainingForward(_ input: Tensor, mode: Mode, generator: inout SeededGenerator) -> ForwardRecord {
        guard mode == .training, rate > 0 else { return ForwardRecord(input: input, output: input) }
        let keep = 1 / (1 - rate)
        var mask = [Float](repeating: 0, count: input.count)
        for i in mask.indices where generator.nextUnitDouble() >= Double(rate) { mask[i] = keep }
        let maskTensor = Tensor(shape: input.shape, scalars: mask)
        return ForwardRecord(input: input, output: input * maskTensor, saved: .dropoutMask(maskTensor))
    }

    /// The gradient through the same mask (or unchanged at inference).
    public func backward(_ dOutput: Tensor, record: ForwardRecord) -> (dInput: Tensor, gradients: [Tensor]) {
        guard case let .dropoutMask(mask) = record.saved else { return (dOutput, []) }
        return (dOutput * mask, [])
    }

    /// Only without dropping: the mask is drawn from the step's generator in batch order.
    public var trainsSampleBySample: Bool { rate == 0 }

    /// Not exported: inference skips dropout.
    public var exported: (any Layer)? { nil }
}
