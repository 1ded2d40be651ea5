import Models
import Tensor

// Convolutions and pools of feature maps: `Conv` (1-D and 2-D), `MaxPool`, `AveragePool`, `GlobalAveragePool` and
// `ReduceMean` over every spatial axis (a global average pool), with the padding ONNX's `pads` / `auto_pad` make.

extension GraphConverter {
    /// `Conv` of channel-first feature maps with a constant weight: group 1, dilation 1, pads ours make.
    mutating func convolution(_ node: Onnx_NodeProto, weight: Constant?, bias: Constant?) throws(ONNXImportError) {
        let shape = chain.shape
        guard let weight, chain.channelFirst, (3...4).contains(shape.count), weight.shape.count == shape.count else {
            throw unsupported(node, "except on channel-first feature maps with a constant weight")
        }
        guard (try int(node, "group") ?? 1) == 1 else { throw unsupported(node, "with groups") }
        let spatial = shape.count - 2
        guard (try ints(node, "dilations") ?? [Int](repeating: 1, count: spatial)).allSatisfy({ $0 == 1 }) else {
            throw unsupported(node, "with dilation")
        }
        let outChannels = weight.shape[0], inChannels = weight.shape[1]
        guard inChannels == shape[1] else {
            throw ONNXImportError("node \(Self.describe(node)): a weight \(weight.shape) for \(shape[1]) input channels")
        }
        let kernel = Array(weight.shape.dropFirst(2))
        if let declared = try ints(node, "kernel_shape"), declared != kernel {
            throw ONNXImportError("node \(Self.describe(node)): kernel_shape \(declared), weight \(weight.shape)")
        }
        let strides = try ints(node, "strides") ?? [Int](repeating: 1, count: spatial)
        guard strides.count == spatial, strides.allSatisfy({ $0 >= 1 }) else { throw unsupported(node, "with strides \(strides)") }
        let padding = try windowPadding(node, kernel: kernel, strides: strides)
        let biasValues = bias?.values ?? [Float](repeating: 0, count: outChannels)
        guard biasValues.count == outChannels else {
            throw ONNXImportError("node \(Self.describe(node)): \(biasValues.count) biases for \(outChannels) channels")
        }
        appendConvolution(weight: weight, biasValues: biasValues, kernel: kernel, strides: strides, padding: padding)
    }

    /// The convolution layer of a `Conv` whose attributes are checked: its weight in our layout (output channels,
    /// then the kernel's axes, then input channels), and the chain's shape after it.
    private mutating func appendConvolution(weight: Constant, biasValues: [Float], kernel: [Int], strides: [Int], padding: Padding) {
        let outChannels = weight.shape[0], inChannels = weight.shape[1]
        let biasTensor = QuantizedTensor(quantizing: Tensor(shape: [outChannels], scalars: biasValues), as: .f32)
        if kernel.count == 2 {
            let ours = [outChannels, kernel[0], kernel[1], inChannels]
            append(
                .conv2D(
                    inChannels: inChannels, outChannels: outChannels, kernelHeight: kernel[0], kernelWidth: kernel[1],
                    strideHeight: strides[0], strideWidth: strides[1], padding: padding),
                ["weight": weightTensor(weight, ourShape: ours, permutation: [0, 2, 3, 1], rowsAxis: 0), "bias": biasTensor])
        } else {
            let ours = [outChannels, kernel[0], inChannels]
            append(
                .conv1D(inChannels: inChannels, outChannels: outChannels, kernelSize: kernel[0], stride: strides[0], padding: padding),
                ["weight": weightTensor(weight, ourShape: ours, permutation: [0, 2, 1], rowsAxis: 0), "bias": biasTensor])
        }
        let geometry = zip(zip(chain.shape.dropFirst(2), kernel), strides).map {
            WindowGeometry(inputLength: $0.0, window: $0.1, stride: $1, padding: padding)
        }
        chain.shape = [1, outChannels] + geometry.map(\.outputLength)
    }

    /// Our padding for a window's `pads` / `auto_pad` over the current shape: `valid` (no pads) or `same` (the pads
    /// `same` makes, extra after); anything else is an error.
    private func windowPadding(_ node: Onnx_NodeProto, kernel: [Int], strides: [Int]) throws(ONNXImportError) -> Padding {
        let spatial = Array(chain.shape.dropFirst(2))
        guard kernel.allSatisfy({ $0 >= 1 }), spatial.allSatisfy({ $0 >= 1 }) else { throw unsupported(node, "with kernel \(kernel)") }
        func samePads() -> [Int] {
            let geometry = zip(zip(spatial, kernel), strides).map { WindowGeometry(inputLength: $0.0, window: $0.1, stride: $1, padding: .same) }
            let before = geometry.map(\.padBefore)
            let after = geometry.indices.map { axis in
                max((geometry[axis].outputLength - 1) * strides[axis] + kernel[axis] - spatial[axis] - before[axis], 0)
            }
            return before + after
        }
        if (try int(node, "ceil_mode") ?? 0) != 0 { throw unsupported(node, "with ceil_mode") }
        switch string(node, "auto_pad") ?? "NOTSET" {
        case "VALID":
            guard zip(spatial, kernel).allSatisfy({ $0 >= $1 }) else { throw unsupported(node, "with a window larger than its input") }
            return .valid
        case "SAME_UPPER": return .same
        case "SAME_LOWER":
            let pads = samePads()
            guard pads.prefix(spatial.count) == pads.suffix(spatial.count) else {
                throw unsupported(node, "with SAME_LOWER padding that is not symmetric")
            }
            return .same
        case "NOTSET", "":
            let pads = try ints(node, "pads") ?? [Int](repeating: 0, count: 2 * spatial.count)
            if pads.allSatisfy({ $0 == 0 }), zip(spatial, kernel).allSatisfy({ $0 >= $1 }) { return .valid }
            guard pads == samePads() else { throw unsupported(node, "with pads \(pads) (ours are none, or \(samePads()) for this input)") }
            return .same
        case let other:
            throw unsupported(node, "with auto_pad \(other)")
        }
    }

    /// `MaxPool` or `AveragePool` of channel-first feature maps (no dilation, no `count_include_pad` where ours
    /// would count otherwise).
    mutating func pool(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        let shape = chain.shape
        guard chain.channelFirst, (3...4).contains(shape.count) else { throw unsupported(node, "except on channel-first feature maps") }
        let spatial = shape.count - 2
        guard let kernel = try ints(node, "kernel_shape"), kernel.count == spatial else { throw unsupported(node, "without kernel_shape") }
        let strides = try ints(node, "strides") ?? [Int](repeating: 1, count: spatial)
        guard strides.count == spatial, strides.allSatisfy({ $0 >= 1 }) else { throw unsupported(node, "with strides \(strides)") }
        guard (try ints(node, "dilations") ?? [Int](repeating: 1, count: spatial)).allSatisfy({ $0 == 1 }) else {
            throw unsupported(node, "with dilation")
        }
        guard (try int(node, "storage_order") ?? 0) == 0 else { throw unsupported(node, "with storage_order") }
        let padding = try windowPadding(node, kernel: kernel, strides: strides)
        let kind: PoolingKind = node.opType == "MaxPool" ? .max : .average
        if kind == .average, (try int(node, "count_include_pad") ?? 0) != 0, padding == .same,
            zip(zip(shape.dropFirst(2), kernel), strides).contains(where: {
                WindowGeometry(inputLength: $0.0, window: $0.1, stride: $1, padding: .same).padBefore > 0
                    || ($0.0 + $1 - 1) / $1 * $1 - $1 + $0.1 > $0.0
            })
        {
            throw unsupported(node, "with count_include_pad (ours leaves the padding out)")
        }
        if spatial == 2 {
            append(.pool2D(kind: kind, height: kernel[0], width: kernel[1], strideHeight: strides[0], strideWidth: strides[1], padding: padding))
        } else {
            append(.pool1D(kind: kind, size: kernel[0], stride: strides[0], padding: padding))
        }
        let geometry = zip(zip(shape.dropFirst(2), kernel), strides).map {
            WindowGeometry(inputLength: $0.0, window: $0.1, stride: $1, padding: padding)
        }
        chain.shape = [shape[0], shape[1]] + geometry.map(\.outputLength)
    }

    /// `GlobalAveragePool` of channel-first feature maps: ONNX keeps axes of 1 around the channels, ours does not.
    mutating func globalAveragePool(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        let shape = chain.shape
        guard shape.count > 2, chain.channelFirst else { throw unsupported(node, "on \(shape)") }
        append(.globalAveragePool)
        chain.pooledChannels = shape[1]
        chain.shape = [1, shape[1]] + [Int](repeating: 1, count: shape.count - 2)
    }

    /// `ReduceMean` over every spatial axis of feature maps: a global average pool.
    mutating func reduceMean(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        // A mean over every spatial axis (dynamo's and Keras's global average pooling) is a global average pool.
        var axes = try ints(node, "axes")
        if axes == nil, node.input.count > 1 { axes = try constantInput(1, of: node)?.integers?.map { Int($0) } }
        let shape = chain.shape, channelFirst = chain.channelFirst
        let rank = shape.count
        let spatial = channelFirst ? Array(2..<max(2, rank)) : Array(1..<max(1, rank - 1))
        guard rank > 2, let axes, axes.map({ $0 < 0 ? $0 + rank : $0 }).sorted() == spatial else {
            throw unsupported(node, "except over every spatial axis of feature maps (a global average pool)")
        }
        let channels = channelFirst ? shape[1] : shape[rank - 1]
        append(.globalAveragePool)
        if (try int(node, "keepdims") ?? 1) != 0 {
            chain.pooledChannels = channels
            chain.shape = shape.enumerated().map { axis, size in axis == 0 || size == channels && !spatial.contains(axis) ? size : 1 }
        } else {
            chain.shape = [1, channels]
            chain.channelFirst = false
        }
    }
}
