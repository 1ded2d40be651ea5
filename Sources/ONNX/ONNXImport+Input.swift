#if ONNX
import WeightsFormat

// The graph's input: its ONNX shape, ours (channel-last), and whether ONNX's is channel-first or a channel-last
// input that its first node makes channel-first.

extension GraphConverter {
    /// The graph's input: its ONNX shape, and ours (channel-last).
    mutating func start(_ input: Onnx_ValueInfoProto, firstUse: Onnx_NodeProto?) throws(ONNXImportError) {
        guard input.type.tensorType.elemType == Int32(Onnx_TensorProto.DataType.float.rawValue) else {
            throw ONNXImportError("input \(input.name) is not a FLOAT tensor")
        }
        let dimensions = input.type.tensorType.shape.dim
        let ranks = raw ? 2...(LayerSpec.maximumSampleRank + 1) : 2...4
        guard ranks.contains(dimensions.count) else {
            throw ONNXImportError(
                "input \(input.name) has \(dimensions.count) axes; "
                    + (raw
                        ? "\(ranks.lowerBound) to \(ranks.upperBound) (the batch first) are read"
                        : "2 ([N, F]), 3 ([N, C, L]) or 4 ([N, C, H, W] or [N, H, W, C]) are read"))
        }
        if case .dimValue(let size)? = dimensions.first?.value, size >= 1, size <= 1 << 24 { declaredBatch = Int(size) }
        var sizes: [Int] = [1]
        for dimension in dimensions.dropFirst() {
            guard case .dimValue(let size)? = dimension.value, size >= 1, size <= 1 << 24 else {
                throw ONNXImportError("input \(input.name) needs a fixed size on every axis but the first")
            }
            sizes.append(Int(size))
        }
        guard sizes.reduce(1, { min($0 * $1, ONNXLimits.maximumElements + 1) }) <= ONNXLimits.maximumElements else {
            throw ONNXImportError("input \(input.name) \(sizes) has more than \(ONNXLimits.maximumElements) values")
        }
        chain.value = input.name
        chain.shape = sizes
        valueShapes[input.name] = sizes
        let transposedFirst = isMadeChannelFirst(sizes, by: firstUse)
        switch sizes.count {
        case 2: inputShape = [sizes[1]]
        case _ where raw:
            // In the order ONNX declares: the first convolution or pool makes it channel-last (ONNXImport+Layout.swift).
            inputShape = Array(sizes.dropFirst())
        default:
            chain.channelFirst = !transposedFirst
            inputShape = chain.channelFirst ? Array(sizes.dropFirst(2)) + [sizes[1]] : Array(sizes.dropFirst())
        }
    }

    /// Whether an input of `sizes` is channel-last, made channel-first by `firstUse`, the first node that reads it.
    private func isMadeChannelFirst(_ sizes: [Int], by firstUse: Onnx_NodeProto?) -> Bool {
        // A channel-last input (Keras through tf2onnx) is made channel-first by its first node: a Transpose, or a
        // Reshape when it has one channel.
        let toFirst = [0, sizes.count - 1] + Array(1..<max(1, sizes.count - 1))
        guard let firstUse, sizes.count > 2 else { return false }
        // Flattened before any layer that knows channels, the bytes are read in the order ONNX declares them
        // (channel-last here, whatever the axes mean); with one channel first, that is the same order.
        let flattenedFirst = sizes[1] != 1
        switch firstUse.opType {
        case "Transpose":
            return (try? ints(firstUse, "perm")) == toFirst
        case "Reshape":
            if firstUse.input.count > 1, let target = constants[firstUse.input[1]]?.integers, target.count == sizes.count {
                return sizes.last == 1 && target.dropFirst().map { Int($0) } == toFirst.dropFirst().map { sizes[$0] }
            }
            return flattenedFirst
        case "Flatten", "Gemm", "MatMul":
            return flattenedFirst
        case "ReduceMean":
            // A mean over the middle axes first: they are the spatial ones, the channels last.
            var axes = try? ints(firstUse, "axes")
            if axes == nil, firstUse.input.count > 1 { axes = constants[firstUse.input[1]]?.integers?.map { Int($0) } }
            return axes?.map { $0 < 0 ? $0 + sizes.count : $0 }.sorted() == Array(1..<(sizes.count - 1))
        default:
            return false
        }
    }
}
#endif
