#if ONNX
import Tensor
import WeightsFormat

// The activation functions: `Relu`, `LeakyRelu`, `Sigmoid`, `Tanh`, `Elu`, `Selu`, `Softplus`, `Softsign`, and
// `Softmax` and `LogSoftmax` over any axis (or, before opset 13, the axes from one on).

extension GraphConverter {
    /// `Relu`, `LeakyRelu`, `Sigmoid`, `Tanh`, `Elu`, `Selu`, `Softplus` or `Softsign`: a layer of that function,
    /// with ONNX's default constants.
    mutating func activation(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        switch node.opType {
        case "Relu": append(.activation(function: .relu))
        case "LeakyRelu": append(.activation(function: .leakyRelu(alpha: try float(node, "alpha") ?? 0.01)))
        case "Sigmoid": append(.activation(function: .sigmoid))
        case "Tanh": append(.activation(function: .tanh))
        case "Elu": append(.activation(function: .elu(alpha: try float(node, "alpha") ?? 1)))
        case "Selu":
            append(
                .activation(
                    function: .selu(
                        alpha: try float(node, "alpha") ?? 1.67326319217681884765625, gamma: try float(node, "gamma") ?? 1.05070102214813232421875)))
        case "Softplus": append(.activation(function: .softplus))
        case "Softsign": append(.activation(function: .softsign))
        default: throw unsupported(node)
        }
    }

    /// `Softmax` or `LogSoftmax` over any axis but the batch's; before opset 13, over the axes from `axis` on,
    /// flattened together. Over the axis ours has last it is one layer; over another, the value is put in ONNX's
    /// order and the axis moved last (or the axes flattened) and back around it.
    mutating func softmax(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        let shape = chain.shape
        let axis = try int(node, "axis") ?? (opset >= 13 ? -1 : 1)
        let resolved = axis < 0 ? axis + shape.count : axis
        guard shape.indices.contains(resolved) else { throw unsupported(node, "over axis \(axis) of \(shape)") }
        guard resolved >= 1 else { throw unsupported(node, "over the batch axis") }
        let function: Activation.Function = node.opType == "Softmax" ? .softmax : .logSoftmax
        let together = opset < 13 && shape.dropFirst(resolved + 1).contains { $0 != 1 }
        if !together, ourAxes.last == resolved { return append(.activation(function: function)) }
        try inONNXOrder(node)
        let sample = Array(chain.shape.dropFirst())
        let first = resolved - 1
        if together {
            append(.reshape(shape: Array(sample.prefix(first)) + [sample.dropFirst(first).reduce(1, *)]))
            append(.activation(function: function))
            append(.reshape(shape: sample))
            return
        }
        var moved = Array(sample.indices)
        moved.remove(at: first)
        moved.append(first)
        append(.transpose(permutation: moved))
        append(.activation(function: function))
        append(.transpose(permutation: Array(0..<first) + [sample.count - 1] + Array(first..<(sample.count - 1))))
    }
}
#endif
