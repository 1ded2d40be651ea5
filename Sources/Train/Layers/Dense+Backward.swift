import Tensor

extension Dense: TrainableLayer {
    /// `[weight, bias]`.
    public var parameters: [Tensor] {
        get { [weight, bias] }
        set { assign(newValue, to: &weight, &bias, layer: "Dense") }
    }

    /// For `Y = X · Wᵀ + b`: `dX = dY · W`, `dW = dYᵀ · X`, `db = Σ_rows dY`.
    public func backward(_ dOutput: Tensor, record: ForwardRecord) -> (dInput: Tensor, gradients: [Tensor]) {
        let dX = Tensor.matmul(dOutput, weight)
        let dW = Tensor.matmul(dOutput, record.input, transposeA: true)
        return (dX, [dW, dOutput.sum(axis: 0)])
    }
}
