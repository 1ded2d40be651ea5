// The activation functions: `Relu`, `LeakyRelu`, `Sigmoid`, `Tanh`, and `Softmax` and `LogSoftmax` over the
// channels or features.

extension GraphConverter {
    /// `Relu`, `LeakyRelu`, `Sigmoid` or `Tanh`: a layer of that function.
    mutating func activation(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        switch node.opType {
        case "Relu": append(.activation(function: .relu))
        case "LeakyRelu": append(.activation(function: .leakyRelu(alpha: try float(node, "alpha") ?? 0.01)))
        case "Sigmoid": append(.activation(function: .sigmoid))
        case "Tanh": append(.activation(function: .tanh))
        default: throw unsupported(node)
        }
    }

    /// `Softmax` or `LogSoftmax` over the channels of feature maps or the features of a vector.
    mutating func softmax(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        let shape = chain.shape
        let axis = try int(node, "axis") ?? (opset >= 13 ? -1 : 1)
        let resolved = axis < 0 ? axis + shape.count : axis
        guard shape.indices.contains(resolved) else { throw unsupported(node, "over axis \(axis) of \(shape)") }
        if opset < 13, shape.count > 2, shape.dropFirst(resolved + 1).contains(where: { $0 != 1 }) {
            // Before opset 13, a softmax runs over every axis from `axis` on, flattened together.
            throw unsupported(node, "over axes \(resolved)… of \(shape) together (before opset 13 a softmax flattens them)")
        }
        let channelFirst = chain.channelFirst
        guard shape.count == 2 ? resolved == 1 : (channelFirst && resolved == 1) || (!channelFirst && resolved == shape.count - 1) else {
            throw unsupported(node, "over axis \(axis) of \(shape) (over the channels or the features is read)")
        }
        append(.activation(function: node.opType == "Softmax" ? .softmax : .logSoftmax))
    }
}
