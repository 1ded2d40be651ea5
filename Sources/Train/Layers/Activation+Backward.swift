import Foundation
import Tensor

extension Activation: TrainableLayer {
    /// None.
    public var parameters: [Tensor] {
        get { [] }
        set {}
    }

    /// The derivative of each function, from the recorded input or output.
    public func backward(_ dOutput: Tensor, record: ForwardRecord) -> (dInput: Tensor, gradients: [Tensor]) {
        let x = record.input, y = record.output
        let dX: Tensor
        switch function {
        case .relu:
            dX = Tensor.broadcasting(dOutput, x) { dy, x in x > 0 ? dy : 0 }
        case .leakyRelu(let alpha):
            dX = Tensor.broadcasting(dOutput, x) { dy, x in x > 0 ? dy : alpha * dy }
        case .sigmoid:
            dX = Tensor.broadcasting(dOutput, y) { dy, y in dy * y * (1 - y) }
        case .tanh:
            dX = Tensor.broadcasting(dOutput, y) { dy, y in dy * (1 - y * y) }
        case .softmax:
            // dX = y ⊙ (dY − Σ_j dY_j y_j), row by row.
            let dot = (dOutput * y).sum(axis: -1)
            dX = rowwise(dOutput, y, dot) { dy, y, dot in y * (dy - dot) }
        case .logSoftmax:
            // dX = dY − softmax(x) · Σ_j dY_j, row by row; softmax(x) = exp(y).
            let total = dOutput.sum(axis: -1)
            dX = rowwise(dOutput, y, total) { dy, y, total in dy - Foundation.exp(y) * total }
        }
        return (dX, [])
    }
}

/// Combines `a` and `b` (same shape) with one value per row of the last axis.
func rowwise(_ a: Tensor, _ b: Tensor, _ perRow: Tensor, _ combine: (Float, Float, Float) -> Float) -> Tensor {
    let width = a.shape[a.rank - 1]
    return Tensor(uninitializedShape: a.shape) { out in
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                perRow.withUnsafeBufferPointer { row in
                    for i in 0..<a.count { out[i] = combine(a[i], b[i], row[i / width]) }
                }
            }
        }
    }
}
