import Tensor

extension Dense: TrainableLayer {
    /// `[weight, bias]`.
    public var parameters: [Tensor] {
        get { [weight, bias] }
        set {
            shapePrecondition(
                newValue.count == 2 && newValue[0].shape == weight.shape && newValue[1].shape == bias.shape,
                "Dense parameters must be weight \(describeShape(weight.shape)) and bias \(describeShape(bias.shape)), "
                    + "got \(newValue.map { describeShape($0.shape) })")
            weight = newValue[0]
            bias = newValue[1]
        }
    }

    /// For `Y = X · Wᵀ + b`: `dX = dY · W`, `dW = dYᵀ · X`, `db = Σ_rows dY`.
    public func backward(_ dOutput: Tensor, record: ForwardRecord) -> (dInput: Tensor, gradients: [Tensor]) {
        let dX = Tensor.matmul(dOutput, weight)
        let dW = Tensor.matmul(dOutput, record.input, transposeA: true)
        return (dX, [dW, dOutput.sum(axis: 0)])
    }
}
