/// Activation functions and the softmax family.
extension Tensor {
    /// `max(x, 0)` element-wise.
    public func relu() -> Tensor { map { $0 > 0 ? $0 : 0 } }

    /// `x` where positive, `alpha · x` elsewhere.
    public func leakyRelu(alpha: Float = 0.01) -> Tensor { map { $0 > 0 ? $0 : alpha * $0 } }

    /// The logistic function `1 / (1 + e^-x)`, computed without overflow for large |x|.
    public func sigmoid() -> Tensor {
        map { x in
            if x >= 0 { return 1 / (1 + _expf(-x)) }
            let e = _expf(x)
            return e / (1 + e)
        }
    }

    /// The hyperbolic tangent element-wise.
    public func tanh() -> Tensor { map { _tanhf($0) } }

    /// Softmax over the last axis: each row becomes probabilities that sum to 1.
    ///
    /// The row maximum is subtracted before exponentiating, so logits near ±1e4 stay finite.
    public func softmax() -> Tensor { rowwise(logarithmic: false) }

    /// Log-softmax over the last axis: `x - max - log Σ exp(x - max)`, finite for any finite logits.
    public func logSoftmax() -> Tensor { rowwise(logarithmic: true) }

    private func rowwise(logarithmic: Bool) -> Tensor {
        shapePrecondition(rank >= 1, "softmax needs a tensor of rank ≥ 1, got \(describeShape(shape))")
        let width = shape[rank - 1]
        if width == 0 || count == 0 { return self }
        return Tensor(uninitializedShape: shape) { out in
            withUnsafeBufferPointer { input in
                var start = 0
                while start < input.count {
                    var maximum = -Float.infinity
                    for j in start..<(start + width) { maximum = Swift.max(maximum, input[j]) }
                    var total: Float = 0
                    for j in start..<(start + width) {
                        let e = _expf(input[j] - maximum)
                        out[j] = e
                        total += e
                    }
                    if logarithmic {
                        let logTotal = _logf(total)
                        for j in start..<(start + width) { out[j] = input[j] - maximum - logTotal }
                    } else {
                        let scale = 1 / total
                        for j in start..<(start + width) { out[j] *= scale }
                    }
                    start += width
                }
            }
        }
    }
}
