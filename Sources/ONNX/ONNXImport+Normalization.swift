#if ONNX
import Models
import Tensor

// `BatchNormalization`: folded into the convolution or dense layer right before it (ONNXImport+ScaleAndShift.swift),
// else a batch-normalization layer of its own.

extension GraphConverter {
    /// `BatchNormalization`: folded into the convolution or dense layer right before it, else a layer.
    mutating func batchNorm(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        // Scale, bias, mean and variance: inputs 2 to 5.
        let parts = try (1...4).map { index throws(ONNXImportError) in try constantInput(index, of: node) }.compactMap { $0 }
        guard parts.count == 4 else { throw unsupported(node, "without constant scale, bias, mean and variance") }
        guard (try int(node, "training_mode") ?? 0) == 0, node.output.dropFirst().allSatisfy(\.isEmpty) else {
            throw unsupported(node, "in training mode")
        }
        // Before opset 7, `is_test` 0 (the default) is training mode, and `spatial` 0 one statistic per value.
        if opset < 7 {
            guard (try int(node, "is_test") ?? 0) != 0 else { throw unsupported(node, "in training mode (is_test 0)") }
            guard (try int(node, "spatial") ?? 1) != 0 else { throw unsupported(node, "with spatial 0") }
        }
        let epsilon = try float(node, "epsilon") ?? 1e-5
        // ONNX normalizes axis 1: ours the last, so feature maps run channel-last.
        guard chain.shape.count >= 2 else { throw unsupported(node, "on \(chain.shape)") }
        // After a global average pool of channel-first maps ours is already [C], ONNX's [C, 1, …].
        if !(chain.pooledToVector && chain.channelFirst) { try channelLast(node) }
        let channels = chain.shape[1]
        guard parts.allSatisfy({ $0.values.count == channels }) else {
            throw ONNXImportError("node \(Self.describe(node)): parameters for other than \(channels) channels")
        }
        var (gamma, beta, mean, variance) = (parts[0].values, parts[1].values, parts[2].values, parts[3].values)
        if let order = chain.pendingColumnOrder {
            // After a flatten of channel-first maps: ONNX's feature c·S + s is our s·C + c.
            let onnxIndex = (0..<channels).map { ours in (ours % order.channels) * order.spatial + ours / order.channels }
            (gamma, beta, mean, variance) = (
                onnxIndex.map { gamma[$0] }, onnxIndex.map { beta[$0] }, onnxIndex.map { mean[$0] }, onnxIndex.map { variance[$0] }
            )
        }
        guard variance.allSatisfy({ $0 >= 0 && $0.isFinite }), epsilon > 0 else {
            throw ONNXImportError("node \(Self.describe(node)): a variance below 0, or epsilon not above 0")
        }
        let index = layers.count - 1
        if index >= 0, biasChannels(layers[index]) == channels {
            let factors = (0..<channels).map { gamma[$0] / (variance[$0] + epsilon).squareRoot() }
            try fold(into: index, factors: factors, shifts: (0..<channels).map { beta[$0] - mean[$0] * factors[$0] }, node)
            return
        }
        try checkLayerValues(4 * channels, node)
        func stored(_ values: [Float]) -> QuantizedTensor { QuantizedTensor(quantizing: Tensor(shape: [channels], scalars: values), as: .f32) }
        append(
            .batchNorm(channels: channels, epsilon: epsilon),
            ["gamma": stored(gamma), "beta": stored(beta), "mean": stored(mean), "variance": stored(variance)])
    }
}
#endif
