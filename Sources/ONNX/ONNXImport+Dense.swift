#if ONNX
import Models
import Tensor

// The dense layers: `Gemm`, and `MatMul` of a constant (its bias an `Add` after it, ONNXImport+ScaleAndShift.swift),
// their weights in our `[outputs, inputs]` layout and in our column order after a flatten of channel-first maps.

extension GraphConverter {
    /// `Gemm` of `[N, K]` and a constant 2-D B (`alpha` and `beta` folded into the weight and bias).
    mutating func gemm(_ node: Onnx_NodeProto, b: Constant?, c: Constant?) throws(ONNXImportError) {
        guard let b, b.shape.count == 2, chain.shape.count == 2 else { throw unsupported(node, "except of [N, K] and a constant 2-D B") }
        guard (try int(node, "transA") ?? 0) == 0 else { throw unsupported(node, "with transA") }
        let transposed = (try int(node, "transB") ?? 0) != 0
        let alpha = try float(node, "alpha") ?? 1, beta = try float(node, "beta") ?? 1
        try checkLayerValues(b.values.count, node)
        var weight = b
        if alpha != 1 {
            weight = Constant(shape: b.shape, values: b.values.map { $0 * alpha }, type: .float)
        }
        let bias = c.map { Constant(shape: $0.shape, values: $0.values.map { $0 * beta }, type: .float) }
        try dense(weight: weight, transposed: transposed, bias: bias, node: node)
    }

    /// `MatMul` of `[N, K]` and a constant `[K, M]`: a dense layer without bias.
    mutating func matMul(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        guard let b = try constantInput(1, of: node), chain.shape.count == 2, b.shape.count == 2, b.shape[0] == chain.shape[1] else {
            throw unsupported(node, "except of [N, K] and a constant [K, M]")
        }
        try dense(weight: b, transposed: false, bias: nil, node: node)
    }

    /// A dense layer from a `[K, M]` weight (`[M, K]` when `transposed`): ours is `[M, K]`, its columns in our order
    /// after a channel-first flatten.
    private mutating func dense(weight: Constant, transposed: Bool, bias: Constant?, node: Onnx_NodeProto) throws(ONNXImportError) {
        let (outputs, inputs) = transposed ? (weight.shape[0], weight.shape[1]) : (weight.shape[1], weight.shape[0])
        guard inputs == chain.shape[1] else {
            throw ONNXImportError("node \(Self.describe(node)): a weight \(weight.shape) for \(chain.shape[1]) features")
        }
        try checkLayerValues(outputs * inputs + outputs, node)
        var tensor = weightTensor(weight, ourShape: [outputs, inputs], permutation: transposed ? nil : [1, 0], rowsAxis: transposed ? 0 : 1)
        if let order = chain.pendingColumnOrder {
            // ONNX's feature c·S + s is our s·C + c.
            let columns = (0..<inputs).map { ours in (ours % order.channels) * order.spatial + ours / order.channels }
            tensor = reorderColumns(tensor, columns)
            chain.pendingColumnOrder = nil
        }
        let biasValues =
            bias.map { bias in bias.values.count == 1 ? [Float](repeating: bias.values[0], count: outputs) : bias.values }
            ?? [Float](repeating: 0, count: outputs)
        guard biasValues.count == outputs else {
            throw ONNXImportError("node \(Self.describe(node)): \(biasValues.count) biases for \(outputs) outputs")
        }
        append(
            .dense(inFeatures: inputs, outFeatures: outputs),
            ["weight": tensor, "bias": QuantizedTensor(quantizing: Tensor(shape: [outputs], scalars: biasValues), as: .f32)])
        chain.shape = [1, outputs]
    }

    /// `tensor` (a matrix) with column `j` taken from column `columns[j]`.
    private func reorderColumns(_ tensor: QuantizedTensor, _ columns: [Int]) -> QuantizedTensor {
        let rows = tensor.rows, count = tensor.columns
        if let (scales, values) = tensor.int8Parts {
            let moved = (0..<rows).flatMap { row in columns.map { values[row * count + $0] } }
            return QuantizedTensor(int8Scales: scales, values: moved, shape: tensor.shape)
        }
        let values = tensor.dequantized().scalars
        let moved = (0..<rows).flatMap { row in columns.map { values[row * count + $0] } }
        return QuantizedTensor(quantizing: Tensor(shape: tensor.shape, scalars: moved), as: .f32)
    }
}
#endif
