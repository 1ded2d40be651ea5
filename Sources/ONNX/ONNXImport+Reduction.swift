#if ONNX
import Tensor
import WeightsFormat

// `ReduceMean` and `ReduceSum` over any axes but the batch's (over every spatial axis of feature maps, a mean is a
// global average pool: ONNXImport+Convolution.swift), with `keepdims`.

extension GraphConverter {
    /// `ReduceMean` or `ReduceSum`: a reduce layer over the axes in ONNX's order, then the axes dropped unless
    /// `keepdims`.
    mutating func reduce(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        if try reduceMeanAsPool(node) { return }
        let rank = chain.shape.count
        var axes = try ints(node, "axes")
        if axes == nil, node.input.count > 1, !node.input[1].isEmpty {
            guard let given = try constantInput(1, of: node)?.integers else { throw unsupported(node, "without constant integer axes") }
            axes = given.map { Int(clamping: $0) }
        }
        guard (axes?.count ?? 0) < rank else { throw unsupported(node, "over \(axes?.count ?? 0) axes of \(chain.shape)") }
        let resolved = (axes ?? []).map { $0 < 0 ? $0 + rank : $0 }
        guard let axes, !axes.isEmpty else {
            if (try int(node, "noop_with_empty_axes") ?? 0) != 0 { return try passThrough(node) }
            throw unsupported(node, "over every axis (the batch's with them)")
        }
        guard resolved.allSatisfy({ (1..<rank).contains($0) }), Set(resolved).count == resolved.count else {
            throw unsupported(node, "over axes \(axes) of \(chain.shape) (the batch axis is not reduced)")
        }
        let kind: Reduce.Kind = node.opType == "ReduceSum" ? .sum : .mean
        try inONNXOrder(node)
        append(.reduce(kind: kind, axes: resolved.map { $0 - 1 }.sorted()))
        if (try int(node, "keepdims") ?? 1) != 0 {
            chain.shape = chain.shape.indices.map { resolved.contains($0) ? 1 : chain.shape[$0] }
        } else {
            chain.shape = chain.shape.indices.filter { !resolved.contains($0) }.map { chain.shape[$0] }
            append(.reshape(shape: Array(chain.shape.dropFirst())))
        }
    }
}
#endif
