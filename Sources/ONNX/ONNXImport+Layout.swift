#if ONNX
import Tensor
import WeightsFormat

// How the chain's value is laid out in our layers against ONNX's axes, and the layers that change it: a value runs
// channel-last where a convolution, pool or normalization needs it, and in ONNX's own axis order where an operator
// names axes by their ONNX number (a reshape, a transpose, a softmax or reduction over any axis, a pad). A raw model
// starts and ends in ONNX's order, so its inputs and outputs keep the layout and rank the model declares.

extension GraphConverter {
    /// The ONNX axis each of our axes holds (the batch axis included): channel-first maps run channel-last.
    var ourAxes: [Int] {
        let rank = chain.shape.count
        return chain.channelFirst && rank > 2 ? [0] + Array(2..<rank) + [1] : Array(0..<rank)
    }

    /// The chain's value as our layers see it (the batch axis included).
    var ourShape: [Int] { ourAxes.map { chain.shape[$0] } }

    /// An error when the chain's value after `node` holds more than `ONNXLimits.maximumElements` values per input
    /// (each axis counted as at least 1): checked after every step, before a later one sizes anything by it.
    func checkChainSize(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        guard Constant.elementCount(chain.shape) == nil else { return }
        throw ONNXImportError(
            "node \(Self.describe(node)) makes a value of shape \(chain.shape.prefix(12)): more than \(ONNXLimits.maximumRank) axes or \(ONNXLimits.maximumElements) values per input"
        )
    }

    /// The chain's value made to run in ONNX's own axis order: a transpose (a reshape, when only an axis of 1
    /// moves) when it runs channel-last; the axes of 1 a global average pool left, back.
    mutating func inONNXOrder(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        if chain.pooledChannels != nil {
            chain.pooledChannels = nil
            append(.reshape(shape: Array(chain.shape.dropFirst())))
            chain.channelFirst = false
            return
        }
        if chain.pendingColumnOrder != nil {
            throw unsupported(node, "after a Flatten of channel-first feature maps (its features are in our channel-last order)")
        }
        let rank = chain.shape.count
        guard chain.channelFirst, rank > 2 else { return }
        // Ours is [spatial…, C] per sample; ONNX's [C, spatial…].
        let permutation = [rank - 2] + Array(0..<(rank - 2))
        append(chain.shape[1] == 1 ? .reshape(shape: Array(chain.shape.dropFirst())) : .transpose(permutation: permutation))
        chain.channelFirst = false
    }

    /// The chain's value made to run channel-last, as convolutions, pools and normalizations run: ONNX's axis 1 is
    /// their channels. Nothing to do for a value of 2 axes or one already channel-last.
    mutating func channelLast(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        // After a global average pool, ours is [C] and ONNX's [C, 1, …]: its maps first.
        if chain.pooledToVector { try inONNXOrder(node) }
        let rank = chain.shape.count
        guard !chain.channelFirst, rank > 2 else { return }
        guard chain.shape.count - 1 <= LayerSpec.maximumSampleRank else { throw unsupported(node, "on \(chain.shape)") }
        // Ours is [C, spatial…] per sample; channel-last [spatial…, C].
        let permutation = Array(1..<(rank - 1)) + [0]
        append(chain.shape[1] == 1 ? .reshape(shape: Array(chain.shape.dropFirst(2)) + [1]) : .transpose(permutation: permutation))
        chain.channelFirst = true
    }

    /// `values` of a constant of ONNX shape `shape`, broadcast to the chain's value (`ONNX`'s multidirectional rule,
    /// the constant aligned at its last axis; or at `axis`, for the legacy `broadcast` attribute) and laid out in our
    /// order, without the batch axis: one value per value of a sample. Nil when it does not broadcast to the chain's
    /// shape (or would make it larger).
    func broadcastToChain(_ constant: Constant, alignedAt axis: Int? = nil) -> [Float]? {
        let target = chain.shape, rank = target.count
        var shape = constant.shape
        if let axis {
            guard axis >= 0, axis + shape.count <= rank else { return nil }
            shape += [Int](repeating: 1, count: rank - axis - shape.count)
        }
        guard shape.count <= rank else { return nil }
        shape = [Int](repeating: 1, count: rank - shape.count) + shape
        guard zip(shape, target).allSatisfy({ $0 == $1 || $0 == 1 }), shape[0] == 1 else { return nil }
        // The constant's strides, 0 along the axes it repeats over.
        var strides = [Int](repeating: 0, count: rank)
        var step = 1
        for axis in stride(from: rank - 1, through: 0, by: -1) {
            strides[axis] = shape[axis] == 1 ? 0 : step
            step *= shape[axis]
        }
        let axes = Array(ourAxes.dropFirst()), sizes = axes.map { target[$0] }
        let total = sizes.reduce(1, *)
        // After a Flatten of channel-first maps, our feature s·C + c is ONNX's c·S + s.
        let order = rank == 2 ? chain.pendingColumnOrder : nil
        var result = [Float](repeating: 0, count: total)
        var index = [Int](repeating: 0, count: sizes.count)
        for flat in 0..<total {
            var source = 0
            for (position, axis) in axes.enumerated() { source += index[position] * strides[axis] }
            result[flat] = constant.values[source]
            advanceIndex(&index, in: sizes)
        }
        if let order {
            // ONNX's feature c·S + s is our s·C + c.
            return (0..<total).map { ours in result[(ours % order.channels) * order.spatial + ours / order.channels] }
        }
        return result
    }
}
#endif
