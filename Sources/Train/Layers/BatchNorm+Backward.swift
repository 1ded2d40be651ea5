import Tensor

/// How fast the running statistics follow the batches: `running ← (1 − m) · running + m · batch`.
public let batchNormMomentum: Float = 0.1

extension BatchNorm: TrainableLayer {
    /// `[gamma, beta]`; the running mean and variance are statistics, not trained.
    public var parameters: [Tensor] {
        get { [gamma, beta] }
        set { assign(newValue, to: &gamma, &beta, layer: "BatchNorm") }
    }

    /// Training: normalizes with the batch's mean and (biased) variance over every axis but the last, and
    /// records them. Inference: the running statistics.
    public func trainingForward(_ input: Tensor, mode: Mode, generator: inout SeededGenerator) -> ForwardRecord {
        guard mode == .training else { return ForwardRecord(input: input, output: forward(input)) }
        _ = outputShape(for: input.shape)
        let rows = input.reshaped([-1, channels])
        let mean = rows.mean(axis: 0)
        let centered = rows - mean
        let variance = (centered * centered).mean(axis: 0)
        let inverseDeviation = (variance + epsilon).map { 1 / $0.squareRoot() }
        let normalized = centered * inverseDeviation
        let output = (normalized * gamma + beta).reshaped(input.shape)
        return ForwardRecord(
            input: input, output: output,
            saved: .batchStatistics(normalized: normalized, inverseDeviation: inverseDeviation, mean: mean, variance: variance))
    }

    /// `dβ = Σ dY`, `dγ = Σ dY·x̂`, `dX = (γ·σ⁻¹ / m) · (m·dY − Σ dY − x̂ · Σ dY·x̂)` with sums over the batch.
    public func backward(_ dOutput: Tensor, record: ForwardRecord) -> (dInput: Tensor, gradients: [Tensor]) {
        let dY = dOutput.reshaped([-1, channels])
        guard case let .batchStatistics(normalized, inverseDeviation, _, _) = record.saved else {
            // Inference mode: a fixed affine map per channel.
            let inverseDeviation = (variance + epsilon).map { 1 / $0.squareRoot() }
            let normalized = (record.input.reshaped([-1, channels]) - mean) * inverseDeviation
            return (
                (dY * (gamma * inverseDeviation)).reshaped(record.input.shape),
                [(dY * normalized).sum(axis: 0), dY.sum(axis: 0)]
            )
        }
        let m = Float(dY.shape[0])
        let dBeta = dY.sum(axis: 0)
        let dGamma = (dY * normalized).sum(axis: 0)
        let dNormalized = dY * gamma
        let dX =
            (dNormalized * m - dNormalized.sum(axis: 0) - normalized * (dNormalized * normalized).sum(axis: 0))
            * (inverseDeviation * (1 / m))
        return (dX.reshaped(record.input.shape), [dGamma, dBeta])
    }

    /// No: training normalizes with the whole batch's statistics.
    public var trainsSampleBySample: Bool { false }

    /// Moves the running statistics towards the batch's; the variance is made unbiased (`m / (m − 1)`).
    public mutating func absorb(_ record: ForwardRecord) {
        guard case let .batchStatistics(_, _, batchMean, batchVariance) = record.saved else { return }
        let m = Float(record.input.count / channels)
        let unbiased = batchVariance * (m > 1 ? m / (m - 1) : 1)
        mean = mean * (1 - batchNormMomentum) + batchMean * batchNormMomentum
        variance = variance * (1 - batchNormMomentum) + unbiased * batchNormMomentum
    }
}
