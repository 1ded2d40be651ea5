// The operators that change how the chain's value is laid out, not its values: `Transpose` (channel-first ↔
// channel-last), `Flatten`, `Reshape` and `Squeeze` as a flatten (or a one-channel reshape), `Shape`, and
// `Identity` and `Dropout`, which change nothing.

extension GraphConverter {
    /// `Identity`, or `Dropout` not in training mode: the value goes on as it is.
    func passThrough(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        if node.opType == "Dropout", node.input.count > 2, !node.input[2].isEmpty, try constantInput(2, of: node)?.values.first != 0 {
            throw unsupported(node, "in training mode")
        }
    }

    /// `Shape` of a value of the chain: a constant (the batch axis 1), from which converters compute reshapes.
    /// False, and nothing done, when `node` is not one.
    mutating func shapeOfChainValue(_ node: Onnx_NodeProto, inputs: [String]) throws(ONNXImportError) -> Bool {
        guard node.opType == "Shape", inputs.count == 1, let known = valueShapes[inputs[0]], let output = node.output.first else {
            return false
        }
        guard attribute(node, "start") == nil && attribute(node, "end") == nil else { throw unsupported(node, "with start or end") }
        constants[output] = Constant(shape: [known.count], values: known.map(Float.init), integers: known.map(Int64.init), type: .int64)
        return true
    }

    /// `Transpose` of feature maps between channel-first and channel-last: only ONNX's layout changes.
    mutating func transpose(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        let permutation = try ints(node, "perm") ?? Array((0..<chain.shape.count).reversed())
        let rank = chain.shape.count
        let toFirst = [0, rank - 1] + Array(1..<max(1, rank - 1))
        let toLast = [0] + Array(2..<max(2, rank)) + [1]
        if rank > 2 && chain.channelFirst && permutation == toLast {
            chain.channelFirst = false
            chain.shape = permutation.map { chain.shape[$0] }
        } else if rank > 2 && !chain.channelFirst && permutation == toFirst {
            chain.channelFirst = true
            chain.shape = permutation.map { chain.shape[$0] }
        } else {
            throw unsupported(node, "with perm \(permutation) on a value of shape \(chain.shape) (only channel-first ↔ channel-last is read)")
        }
    }

    /// `Flatten` at axis 1.
    mutating func flatten(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        let axis = try int(node, "axis") ?? 1
        guard axis == 1 || (axis == -1 && chain.shape.count == 2) else { throw unsupported(node, "with axis \(axis)") }
        flatten()
    }

    /// `Reshape` or `Squeeze`: a flatten (to `[N, -1]`, or the axes of 1 a global average pool left), or a reshape
    /// of a channel-last value with one channel to channel-first.
    mutating func reshape(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        if node.opType == "Reshape", try isOneChannelToChannelFirst(constantInput(1, of: node)) {
            // One channel: channel-last and channel-first hold the same bytes.
            chain.channelFirst = true
            chain.shape = [chain.shape[0], 1] + chain.shape.dropFirst().dropLast()
            return
        }
        var target = try constantInput(1, of: node)?.integers
        if target == nil, let axes = try ints(node, "axes") { target = axes.map(Int64.init) }
        let total = chain.shape.dropFirst().reduce(1, *)
        let flat: Bool
        if node.opType == "Reshape", let target {
            flat = target.count == 2 && [0, 1, -1].contains(target[0]) && (target[1] == -1 || target[1] == Int64(total))
        } else {
            flat = chain.pooledToVector && chain.shape.count > 2
        }
        guard flat else { throw unsupported(node, "except to [N, -1] (a flatten)") }
        flatten()
    }

    /// Whether a reshape to `target` makes the channel-last value with one channel channel-first (the same bytes).
    private func isOneChannelToChannelFirst(_ target: Constant?) -> Bool {
        guard chain.shape.count > 2, !chain.channelFirst, chain.shape.last == 1, let sizes = target?.integers else { return false }
        let toFirst = [chain.shape.count - 1] + Array(1..<(chain.shape.count - 1))
        return sizes.dropFirst().map { Int($0) } == toFirst.map { chain.shape[$0] }
    }

    /// The chain's value flattened to `[N, features]`: after a global average pool, only ONNX's axes of 1 go;
    /// feature maps get a flatten layer (and, channel-first, the column order for the next dense layer).
    mutating func flatten() {
        if let channels = chain.pooledChannels {
            chain.pooledChannels = nil
            chain.shape = [1, channels]
            chain.channelFirst = false
            return
        }
        guard chain.shape.count > 2 else { return }
        if chain.channelFirst { chain.pendingColumnOrder = (chain.shape[1], chain.shape.dropFirst(2).reduce(1, *)) }
        append(.flatten)
        chain.shape = [1, chain.shape.dropFirst().reduce(1, *)]
        chain.channelFirst = false
    }
}
