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
            dX = ActivationGradients.relu(dOutput, output: y)
        case .leakyRelu(let alpha):
            dX = elementwise(dOutput, x) { dy, x in x > 0 ? dy : alpha * dy }
        case .sigmoid:
            dX = elementwise(dOutput, y) { dy, y in dy * y * (1 - y) }
        case .tanh:
            dX = elementwise(dOutput, y) { dy, y in dy * (1 - y * y) }
        case .softmax:
            // dX = y ⊙ (dY − Σ_j dY_j y_j), row by row.
            let dot = (dOutput * y).sum(axis: -1)
            dX = rowwise(dOutput, y, dot) { dy, y, dot in y * (dy - dot) }
        case .logSoftmax:
            // dX = dY − softmax(x) · Σ_j dY_j, row by row; softmax(x) = exp(y).
            let total = dOutput.sum(axis: -1)
            dX = rowwise(dOutput, y, total) { dy, y, total in dy - Foundation.exp(y) * total }
        case .elu(let alpha):
            // For x ≤ 0, y = α(eˣ − 1), so dy/dx = αeˣ = y + α.
            dX = elementwise(dOutput, x) { dy, x in x > 0 ? dy : dy * alpha * Foundation.exp(x) }
        case .selu(let alpha, let gamma):
            dX = elementwise(dOutput, x) { dy, x in x > 0 ? dy * gamma : dy * gamma * alpha * Foundation.exp(x) }
        case .softplus:
            // The derivative of log(1 + eˣ) is the sigmoid.
            dX = elementwise(dOutput, x) { dy, x in dy / (1 + Foundation.exp(-x)) }
        case .softsign:
            dX = elementwise(dOutput, x) { dy, x in dy / ((1 + abs(x)) * (1 + abs(x))) }
        }
        return (dX, [])
    }
}

/// `combine(a[i], b[i])` for tensors of one shape, in a loop the compiler sees whole (so it inlines `combine` and
/// vectorizes), unlike `Tensor.broadcasting`, which calls its closure once per element from another module.
@inline(__always)
func elementwise(_ a: Tensor, _ b: Tensor, _ combine: (Float, Float) -> Float) -> Tensor {
    shapePrecondition(a.shape == b.shape, "activation backward: gradient \(describeShape(a.shape)) and recorded \(describeShape(b.shape)) differ")
    let count = a.count
    return Tensor(uninitializedShape: a.shape) { out in
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                guard let out = out.baseAddress, let a = a.baseAddress, let b = b.baseAddress else { return }
                for i in 0..<count { out[i] = combine(a[i], b[i]) }
            }
        }
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
