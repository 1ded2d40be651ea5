#if ONNX
import Tensor
import WeightsFormat

// `Pad` (constant, reflect and edge; the pads as an attribute before opset 11, an input from it on), and the
// explicit pads of a convolution or pool that our `valid` / `same` do not make: a pad layer before the window.

extension GraphConverter {
    /// `Pad` of the chain's value: a pad layer over our axes (never the batch's).
    mutating func pad(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        let rank = chain.shape.count
        let mode = string(node, "mode") ?? "constant"
        guard let paddingMode = PaddingMode(rawValue: mode) else { throw unsupported(node, "with mode \(mode)") }
        var pads: [Int]
        var value: Float = 0
        if opset < 11 {
            pads = try ints(node, "pads") ?? []
            value = try float(node, "value") ?? 0
        } else {
            guard let given = try constantInput(1, of: node)?.integers else { throw unsupported(node, "without constant integer pads") }
            pads = given.map { Int(clamping: $0) }
            if let constant = try constantInput(2, of: node) {
                guard constant.values.count == 1, let first = constant.values.first else {
                    throw unsupported(node, "with a constant_value that is not one value")
                }
                value = first
            }
            if let axes = try constantInput(3, of: node)?.integers {
                // Pads for the given axes only: spread over every axis.
                guard pads.count == 2 * axes.count else { throw unsupported(node, "with \(pads.count) pads for \(axes.count) axes") }
                var full = [Int](repeating: 0, count: 2 * rank)
                var seen = Set<Int>()
                for (position, axis) in axes.enumerated() {
                    let resolved = Int(clamping: axis < 0 ? axis + Int64(rank) : axis)
                    guard (0..<rank).contains(resolved) else { throw unsupported(node, "with axis \(axis) of \(chain.shape)") }
                    // ONNX Runtime refuses an axis given twice (read, the last pads given for it would win).
                    guard seen.insert(resolved).inserted else {
                        throw ONNXImportError("node \(Self.describe(node)): axis \(resolved) appears twice in its axes \(axes) (each axis once)")
                    }
                    full[resolved] = pads[position]
                    full[rank + resolved] = pads[axes.count + position]
                }
                pads = full
            }
        }
        guard pads.count == 2 * rank else { throw unsupported(node, "with \(pads.count) pads for \(rank) axes") }
        guard pads.allSatisfy({ (-(1 << 20)...(1 << 20)).contains($0) }) else {
            throw unsupported(node, "with pads \(pads) (at most \(1 << 20) each way)")
        }
        guard pads[0] == 0, pads[rank] == 0 else { throw unsupported(node, "of the batch axis") }
        guard value.isFinite else { throw ONNXImportError("node \(Self.describe(node)): a constant value that is not finite") }
        if chain.pooledToVector || chain.pendingColumnOrder != nil { try inONNXOrder(node) }
        let before = ourAxes.dropFirst().map { pads[$0] }, after = ourAxes.dropFirst().map { pads[rank + $0] }
        // ONNX crops first, then pads what is left: reflecting needs each pad below that length, repeating the edge a
        // cell to repeat.
        let cropped = chain.shape.indices.map { chain.shape[$0] + min(pads[$0], 0) + min(pads[rank + $0], 0) }
        if paddingMode == .reflect, let axis = (1..<rank).first(where: { pads[$0] >= cropped[$0] || pads[rank + $0] >= cropped[$0] }) {
            throw unsupported(node, "reflecting by \(max(pads[axis], pads[rank + axis])) along an axis of \(cropped[axis]) (after its crop)")
        }
        if paddingMode == .edge, let axis = (1..<rank).first(where: { cropped[$0] < 1 && (pads[$0] > 0 || pads[rank + $0] > 0) }) {
            throw unsupported(node, "repeating the edge of axis \(axis), which its crop leaves empty")
        }
        // Negative pads crop; no axis may be cropped to nothing.
        if let axis = (1..<rank).first(where: { chain.shape[$0] + pads[$0] + pads[rank + $0] < 1 }) {
            throw unsupported(node, "cropping axis \(axis) of \(chain.shape) to nothing")
        }
        chain.shape = chain.shape.indices.map { chain.shape[$0] + pads[$0] + pads[rank + $0] }
        try checkChainSize(node)
        append(.pad(before: before, after: after, mode: paddingMode, value: value))
    }

    /// A pad layer (`mode`, of `value`) before a window over the chain's channel-last feature maps: ONNX's `pads`
    /// (`[before…, after…]` over the spatial axes, each at most 2^20 either way: a negative one crops) on our spatial
    /// axes, the channels not padded.
    mutating func padSpatially(_ pads: [Int], mode: PaddingMode, value: Float, _ node: Onnx_NodeProto) throws(ONNXImportError) {
        let spatial = chain.shape.count - 2
        guard pads.allSatisfy({ (-(1 << 20)...(1 << 20)).contains($0) }) else {
            throw unsupported(node, "with pads \(pads) (at most \(1 << 20) each way)")
        }
        chain.shape = [chain.shape[0], chain.shape[1]] + (0..<spatial).map { chain.shape[2 + $0] + pads[$0] + pads[spatial + $0] }
        guard chain.shape.allSatisfy({ $0 >= 1 }) else { throw unsupported(node, "cropping its input to nothing") }
        try checkChainSize(node)
        append(.pad(before: Array(pads.prefix(spatial)) + [0], after: Array(pads.suffix(spatial)) + [0], mode: mode, value: value))
    }
}
#endif
