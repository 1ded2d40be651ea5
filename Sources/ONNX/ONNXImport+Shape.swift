#if ONNX
import Tensor
import WeightsFormat

// The operators that change how the chain's value is laid out, not its values: `Transpose` (channel-first ↔
// channel-last costs nothing; any other order of the axes after the batch is a transpose layer), `Flatten`,
// `Reshape`, `Squeeze` and `Unsqueeze` (a flatten, a one-channel reshape, or a reshape layer of the value in ONNX's
// order), `Shape`, and `Identity` and `Dropout`, which change nothing.

extension GraphConverter {
    /// `Identity`, or `Dropout` not in training mode: the value goes on as it is.
    func passThrough(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        if node.opType == "Dropout", node.input.count > 2, !node.input[2].isEmpty, try constantInput(2, of: node)?.values.first != 0 {
            throw unsupported(node, "in training mode")
        }
        // Before opset 7, `is_test` 0 is training mode.
        if node.opType == "Dropout", opset < 7, (try int(node, "is_test") ?? 0) == 0, node.output.dropFirst().contains(where: { !$0.isEmpty }) {
            throw unsupported(node, "in training mode (is_test 0, its mask used)")
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
            guard permutation.sorted() == Array(0..<rank), permutation.first == 0 else {
                throw unsupported(node, "with perm \(permutation) on a value of shape \(chain.shape) (the batch axis stays first)")
            }
            guard rank - 1 <= LayerSpec.maximumSampleRank else { throw unsupported(node, "on \(chain.shape)") }
            try inONNXOrder(node)
            append(.transpose(permutation: permutation.dropFirst().map { $0 - 1 }))
            chain.shape = permutation.map { chain.shape[$0] }
        }
    }

    /// `Flatten` at axis 1; at a later axis, a reshape of each sample (ONNX's `[N · a, b]` holds each sample's
    /// values together, as ours `[N, a, b]` does).
    mutating func flatten(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        let rank = chain.shape.count
        let axis = try int(node, "axis") ?? 1
        let resolved = axis < 0 ? axis + rank : axis
        guard (1...rank).contains(resolved) else { throw unsupported(node, "with axis \(axis) of \(chain.shape)") }
        if resolved == 1 || (resolved == rank && rank == 2) { return flatten() }
        try inONNXOrder(node)
        let sample = Array(chain.shape.dropFirst())
        let split = [sample.prefix(resolved - 1).reduce(1, *), sample.dropFirst(resolved - 1).reduce(1, *)]
        append(.reshape(shape: split))
        chain.shape = [1] + split
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
        // ONNX infers one axis at most: ONNX Runtime refuses a second -1 at load, and so does this (not a flatten).
        if node.opType == "Reshape", let target, target.filter({ $0 == -1 }).count > 1 {
            throw ONNXImportError("node \(Self.describe(node)): the shape \(target) has more than one -1 (ONNX allows one)")
        }
        if target == nil, let axes = try ints(node, "axes") { target = axes.map(Int64.init) }
        let total = chain.shape.dropFirst().reduce(1, *)
        let flat: Bool
        if node.opType == "Reshape", let target {
            flat = target.count == 2 && [0, 1, -1].contains(target[0]) && (target[1] == -1 || target[1] == Int64(total))
        } else {
            // A squeeze of the axes of 1 a global average pool left (all of them).
            let rank = chain.shape.count
            flat =
                node.opType == "Squeeze" && chain.pooledToVector && rank > 2
                && (target.map { Set($0.map { Int($0 < 0 ? $0 + Int64(rank) : $0) }) == Set(2..<rank) } ?? true)
        }
        if flat { return flatten() }
        try reshapeLayer(node)
    }

    /// `Reshape`, `Squeeze` or `Unsqueeze` of the chain's value: a reshape layer of the value in ONNX's order, to the
    /// shape ONNX computes (the batch axis staying first).
    mutating func reshapeLayer(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        let shape = chain.shape
        let total = shape.dropFirst().reduce(1, *)
        var axes = try ints(node, "axes")
        if axes == nil, node.opType != "Reshape", node.input.count > 1, !node.input[1].isEmpty {
            axes = try constantInput(1, of: node)?.integers?.map { Int(clamping: $0) }
        }
        var target: [Int]
        switch node.opType {
        case "Squeeze":
            let resolved = (axes ?? shape.indices.filter { shape[$0] == 1 && $0 > 0 }).map { $0 < 0 ? $0 + shape.count : $0 }
            guard resolved.allSatisfy({ shape.indices.contains($0) && $0 > 0 && shape[$0] == 1 }) else {
                throw unsupported(node, "of axes \(axes ?? []) of \(shape) (axes of 1 after the batch's are squeezed)")
            }
            target = shape.indices.filter { !resolved.contains($0) }.map { shape[$0] }
        case "Unsqueeze":
            guard let axes else { throw unsupported(node, "without constant axes") }
            guard shape.count + axes.count - 1 <= LayerSpec.maximumSampleRank else {
                throw unsupported(node, "to \(shape.count + axes.count) axes (at most \(LayerSpec.maximumSampleRank + 1) are read)")
            }
            let rank = shape.count + axes.count
            let resolved = axes.map { $0 < 0 ? $0 + rank : $0 }
            guard resolved.allSatisfy({ (1..<rank).contains($0) }), Set(resolved).count == resolved.count else {
                throw unsupported(node, "at axes \(axes) of \(shape) (the batch axis stays first)")
            }
            var rest = shape.makeIterator()
            target = (0..<rank).map { resolved.contains($0) ? 1 : rest.next() ?? 1 }
        default:
            guard let given = try constantInput(1, of: node)?.integers else { throw unsupported(node, "without a constant shape") }
            guard given.count - 1 <= LayerSpec.maximumSampleRank else {
                throw unsupported(node, "to \(given.count) axes (at most \(LayerSpec.maximumSampleRank + 1) are read)")
            }
            let allowZero = (try int(node, "allowzero") ?? 0) != 0
            target = given.enumerated().map { axis, size in size == 0 && !allowZero && axis < shape.count ? shape[axis] : Int(clamping: size) }
            // The first axis is the batch's: the model's declared batch size, 1, 0 or -1 all mean it.
            guard let first = target.first, first == -1 || first == 1 || first == declaredBatch else {
                throw unsupported(node, "to \(given) (the batch axis stays first)")
            }
            target[0] = 1
            if let unknown = target.firstIndex(of: -1) {
                let others = target.enumerated().filter { $0.offset != unknown }.map(\.element)
                let known = others.allSatisfy { $0 >= 1 } ? checkedElementCount(others, limit: ONNXLimits.maximumElements) ?? 0 : 0
                guard target.filter({ $0 == -1 }).count == 1, known > 0, total % known == 0 else {
                    throw unsupported(node, "to \(given) for \(shape)")
                }
                target[unknown] = total / known
            }
        }
        guard target.count >= 1, target.count - 1 <= LayerSpec.maximumSampleRank, target.allSatisfy({ $0 >= 1 }),
            checkedElementCount(Array(target.dropFirst()), limit: ONNXLimits.maximumElements) == total, target.first == 1
        else {
            throw unsupported(node, "to \(target) for \(shape)")
        }
        try inONNXOrder(node)
        append(.reshape(shape: Array(target.dropFirst())))
        chain.shape = target
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
        // A raw model's features are in ONNX's order, whatever reads them; a recognizer's next dense layer takes ours.
        if raw, chain.channelFirst {
            // Cannot throw: nothing is pending and no pool is left.
            try? inONNXOrder(Onnx_NodeProto())
        }
        if chain.channelFirst { chain.pendingColumnOrder = (chain.shape[1], chain.shape.dropFirst(2).reduce(1, *)) }
        append(.flatten)
        chain.shape = [1, chain.shape.dropFirst().reduce(1, *)]
        chain.channelFirst = false
    }
}
#endif
