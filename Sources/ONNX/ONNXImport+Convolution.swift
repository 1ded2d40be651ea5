#if ONNX
import Models
import Tensor
import WeightsFormat

// Convolutions and pools of feature maps: `Conv` (1-D, 2-D and 3-D; grouped, depthwise and dilated), `MaxPool`
// and `AveragePool` (1-D, 2-D and 3-D), `GlobalAveragePool` and `ReduceMean` over every spatial axis (a global
// average pool), with the padding ONNX's `pads` / `auto_pad` / `ceil_mode` make.
//
// Our convolutions are dense, undilated and 1-D or 2-D, so the rest is made of them, exactly:
// - a grouped (or depthwise) convolution is a dense one whose weight is 0 between channels of different groups;
// - a dilated kernel is the larger kernel with zeros between its taps;
// - a 3-D convolution over (D, H, W) is a 2-D one over (D, H) whose channels are the W positions times the
//   channels, its weight banded along W (so the 2-D kernel does the third axis's sliding);
// - a 3-D pool is a 2-D pool over (D, H) and then one over W (max and mean over a box are separable);
// - pads our `valid` / `same` do not make are a pad layer before a `valid` window (zeros; for a max pool, the edge
//   repeated), an average then rescaled to ONNX's divisor.
// Each costs multiply-adds with zeros (groups×, dilation², W×), not accuracy; the layers run as they always do.

extension GraphConverter {
    /// `Conv` of feature maps with a constant weight.
    mutating func convolution(_ node: Onnx_NodeProto, weight: Constant?, bias: Constant?) throws(ONNXImportError) {
        guard var weight, (3...5).contains(chain.shape.count), weight.shape.count == chain.shape.count else {
            throw unsupported(node, "except on feature maps of 1, 2 or 3 spatial axes with a constant weight of as many axes")
        }
        guard weight.shape.dropFirst(2).allSatisfy({ $0 >= 1 }) else { throw unsupported(node, "with a weight \(weight.shape)") }
        try channelLast(node)
        let shape = chain.shape, spatial = shape.count - 2
        let group = try int(node, "group") ?? 1
        guard group >= 1, shape[1] % group == 0, weight.shape[0] % group == 0, weight.shape[1] * group == shape[1] else {
            throw ONNXImportError(
                "node \(Self.describe(node)): a weight \(weight.shape) in \(try int(node, "group") ?? 1) groups for \(shape[1]) input channels")
        }
        let dilations = try ints(node, "dilations") ?? [Int](repeating: 1, count: spatial)
        guard dilations.count == spatial, dilations.allSatisfy({ (1...64).contains($0) }) else {
            throw unsupported(node, "with dilations \(dilations)")
        }
        if let declared = try ints(node, "kernel_shape"), declared != Array(weight.shape.dropFirst(2)) {
            throw ONNXImportError("node \(Self.describe(node)): kernel_shape \(declared), weight \(weight.shape)")
        }
        if group > 1 || dilations.contains(where: { $0 > 1 }) {
            weight = try dense(weight, groups: group, dilations: dilations, node)
        }
        let kernel = Array(weight.shape.dropFirst(2))
        let strides = try ints(node, "strides") ?? [Int](repeating: 1, count: spatial)
        guard strides.count == spatial, strides.allSatisfy({ $0 >= 1 }) else { throw unsupported(node, "with strides \(strides)") }
        let padding = try windowPadding(node, kernel: kernel, strides: strides, padMode: .constant, sameAsOurs: true).padding
        try appendConvolution(weight: weight, bias: bias, strides: strides, padding: padding, node)
    }

    /// The layers of a convolution by a dense, undilated `weight` (`[out, in, k…]`, ONNX's layout) and `bias` (none:
    /// zeros) over the chain's channel-last maps: a 1-D or 2-D convolution layer, or the 3-D one's (its input already
    /// padded, `padding` `valid`).
    mutating func appendConvolution(weight: Constant, bias: Constant?, strides: [Int], padding: Padding, _ node: Onnx_NodeProto)
        throws(ONNXImportError)
    {
        let outChannels = weight.shape[0]
        let biasValues = bias?.values ?? [Float](repeating: 0, count: outChannels)
        guard biasValues.count == outChannels else {
            throw ONNXImportError("node \(Self.describe(node)): \(biasValues.count) biases for \(outChannels) channels")
        }
        if weight.shape.count == 5 {
            try appendConvolution3D(weight: weight, biasValues: biasValues, strides: strides, node)
        } else {
            try checkLayerValues(weight.values.count + outChannels, node)
            appendConvolution(weight: weight, biasValues: biasValues, kernel: Array(weight.shape.dropFirst(2)), strides: strides, padding: padding)
        }
    }

    /// `weight` (`[out, in / groups, k…]`) as the dense, undilated weight of the same convolution: `[out, in,
    /// (k − 1) · dilation + 1…]`, zero between groups and between taps.
    mutating func dense(_ weight: Constant, groups: Int, dilations: [Int], _ node: Onnx_NodeProto) throws(ONNXImportError) -> Constant {
        let (outChannels, groupChannels) = (weight.shape[0], weight.shape[1])
        let kernel = Array(weight.shape.dropFirst(2))
        let dilated = zip(kernel, dilations).map { ($0 - 1) * $1 + 1 }
        let shape = [outChannels, groupChannels * groups] + dilated
        guard let count = Constant.elementCount(shape) else {
            throw unsupported(node, "whose weight without groups and dilation, \(shape), would be larger than \(ONNXLimits.maximumElements) values")
        }
        try checkLayerValues(count + outChannels, node)
        let taps = kernel.reduce(1, *), dilatedTaps = dilated.reduce(1, *)
        let outPerGroup = outChannels / groups
        var values = [Float](repeating: 0, count: count)
        for o in 0..<outChannels {
            let firstInput = (o / outPerGroup) * groupChannels
            for c in 0..<groupChannels {
                for tap in 0..<taps {
                    // The tap's position in the kernel, and in the dilated kernel.
                    var rest = tap, position = 0, scale = 1
                    for axis in stride(from: kernel.count - 1, through: 0, by: -1) {
                        position += (rest % kernel[axis]) * dilations[axis] * scale
                        rest /= kernel[axis]
                        scale *= dilated[axis]
                    }
                    values[((o * groupChannels * groups) + firstInput + c) * dilatedTaps + position] =
                        weight.values[(o * groupChannels + c) * taps + tap]
                }
            }
        }
        return Constant(shape: shape, values: values, type: .float)
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

    /// A 3-D convolution (its input already padded: `valid`) as a 2-D one over (D, H) of `[D, H, W · C]`, whose
    /// weight is banded along W: output channel `(w′, o)` reads input channel `(w, c)` through tap `w − w′ · stride`.
    private mutating func appendConvolution3D(weight: Constant, biasValues: [Float], strides: [Int], _ node: Onnx_NodeProto) throws(ONNXImportError) {
        let (outChannels, inChannels) = (weight.shape[0], weight.shape[1])
        let (kd, kh, kw) = (weight.shape[2], weight.shape[3], weight.shape[4])
        let (depth, height, width) = (chain.shape[2], chain.shape[3], chain.shape[4])
        guard depth >= kd, height >= kh, width >= kw else { throw unsupported(node, "with a window larger than its input") }
        let outWidth = (width - kw) / strides[2] + 1
        let (rows, columns) = (outWidth * outChannels, width * inChannels)
        guard let count = checkedElementCount([rows, kd, kh, columns], limit: ONNXLimits.maximumElements) else {
            throw unsupported(
                node, "whose weight as a 2-D convolution, \([rows, kd, kh, columns]), would be larger than \(ONNXLimits.maximumElements) values")
        }
        try checkLayerValues(count + rows, node)
        // Ours: [w′ · O + o, kd, kh, w · C + c].
        var values = [Float](repeating: 0, count: count)
        for w2 in 0..<outWidth {
            for o in 0..<outChannels {
                for d in 0..<kd {
                    for h in 0..<kh {
                        for tap in 0..<kw {
                            let w = w2 * strides[2] + tap
                            for c in 0..<inChannels {
                                values[(((w2 * outChannels + o) * kd + d) * kh + h) * columns + w * inChannels + c] =
                                    weight.values[(((o * inChannels + c) * kd + d) * kh + h) * kw + tap]
                            }
                        }
                    }
                }
            }
        }
        append(.reshape(shape: [depth, height, width * inChannels]))
        let bias = (0..<rows).map { biasValues[$0 % outChannels] }
        append(
            .conv2D(
                inChannels: columns, outChannels: rows, kernelHeight: kd, kernelWidth: kh, strideHeight: strides[0], strideWidth: strides[1],
                padding: .valid),
            [
                "weight": QuantizedTensor(quantizing: Tensor(shape: [rows, kd, kh, columns], scalars: values), as: .f32),
                "bias": QuantizedTensor(quantizing: Tensor(shape: [rows], scalars: bias), as: .f32),
            ])
        let (outDepth, outHeight) = ((depth - kd) / strides[0] + 1, (height - kh) / strides[1] + 1)
        append(.reshape(shape: [outDepth, outHeight, outWidth, outChannels]))
        chain.shape = [1, outChannels, outDepth, outHeight, outWidth]
    }

    /// Our padding for a window's `pads` / `auto_pad` / `ceil_mode` over the current shape: `valid` (no pads),
    /// `same` (the pads `same` makes, extra after, when `sameAsOurs`: our `same` window does what ONNX's does with
    /// them), or a pad layer appended and then `valid`: zeros (`.constant`), or each edge cell repeated (`.edge`, for
    /// a max pool: every window holds a cell of the input, so repeating the nearest one leaves its maximum as it is,
    /// where ONNX's padding is −∞). With the pad layer come ONNX's pads
    /// (`declared`, `[before…, after…]` over the spatial axes); `ceilExtra` is the cells a `ceil_mode` window adds
    /// after them.
    private mutating func windowPadding(
        _ node: Onnx_NodeProto, kernel: [Int], strides: [Int], padMode: PaddingMode, sameAsOurs: Bool
    ) throws(ONNXImportError) -> (padding: Padding, declared: [Int]?, ceilExtra: [Int]) {
        let spatial = Array(chain.shape.dropFirst(2))
        guard kernel.allSatisfy({ $0 >= 1 }), spatial.allSatisfy({ $0 >= 1 }) else { throw unsupported(node, "with kernel \(kernel)") }
        let geometry = zip(zip(spatial, kernel), strides).map { WindowGeometry(inputLength: $0.0, window: $0.1, stride: $1, padding: .same) }
        let sameBefore = geometry.map(\.padBefore)
        let sameAfter = geometry.indices.map { axis in
            max((geometry[axis].outputLength - 1) * strides[axis] + kernel[axis] - spatial[axis] - sameBefore[axis], 0)
        }
        var pads: [Int]
        switch string(node, "auto_pad") ?? "NOTSET" {
        case "VALID": pads = [Int](repeating: 0, count: 2 * spatial.count)
        case "SAME_UPPER": pads = sameBefore + sameAfter
        // The extra cell before.
        case "SAME_LOWER": pads = sameAfter + sameBefore
        case "NOTSET", "": pads = try ints(node, "pads") ?? [Int](repeating: 0, count: 2 * spatial.count)
        case let other: throw unsupported(node, "with auto_pad \(other)")
        }
        guard pads.count == 2 * spatial.count, pads.allSatisfy({ (0...(1 << 20)).contains($0) }) else {
            throw unsupported(node, "with pads \(pads) (from 0 to \(1 << 20) each)")
        }
        // A max pool's window wholly in its padding would have no maximum (ONNX asks for pads below the kernel).
        if padMode == .edge,
            !(zip(pads.prefix(spatial.count), kernel).allSatisfy { $0 < $1 } && zip(pads.suffix(spatial.count), kernel).allSatisfy { $0 < $1 })
        {
            throw unsupported(node, "with pads \(pads) not below its kernel \(kernel)")
        }
        let declared = pads
        var ceilExtra = [Int](repeating: 0, count: spatial.count)
        if (try int(node, "ceil_mode") ?? 0) != 0 {
            // The last window may start past the end (not past the padding before): more cells after.
            for axis in spatial.indices {
                let padded = spatial[axis] + pads[axis] + pads[spatial.count + axis]
                guard padded >= kernel[axis] else { continue }
                var outputs = (padded - kernel[axis] + strides[axis] - 1) / strides[axis] + 1
                if (outputs - 1) * strides[axis] >= spatial[axis] + pads[axis] { outputs -= 1 }
                let extra = (outputs - 1) * strides[axis] + kernel[axis] - padded
                guard extra > 0 else { continue }
                pads[spatial.count + axis] += extra
                ceilExtra[axis] = extra
            }
        }
        if pads.allSatisfy({ $0 == 0 }) {
            guard zip(spatial, kernel).allSatisfy({ $0 >= $1 }) else { throw unsupported(node, "with a window larger than its input") }
            return (.valid, nil, ceilExtra)
        }
        if pads == sameBefore + sameAfter && spatial.count <= 2 && sameAsOurs { return (.same, nil, ceilExtra) }
        try padSpatially(pads, mode: padMode, value: 0, node)
        guard zip(chain.shape.dropFirst(2), kernel).allSatisfy({ $0 >= $1 }) else { throw unsupported(node, "with a window larger than its input") }
        return (.valid, declared, ceilExtra)
    }

    /// `MaxPool` or `AveragePool` of feature maps (no dilation; `count_include_pad` as ONNX defines it).
    mutating func pool(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        guard (3...5).contains(chain.shape.count) else { throw unsupported(node, "except on feature maps of 1, 2 or 3 spatial axes") }
        try channelLast(node)
        let shape = chain.shape, spatial = shape.count - 2
        guard let kernel = try ints(node, "kernel_shape"), kernel.count == spatial else { throw unsupported(node, "without kernel_shape") }
        let strides = try ints(node, "strides") ?? [Int](repeating: 1, count: spatial)
        guard strides.count == spatial, strides.allSatisfy({ $0 >= 1 }) else { throw unsupported(node, "with strides \(strides)") }
        guard (try ints(node, "dilations") ?? [Int](repeating: 1, count: spatial)).allSatisfy({ $0 == 1 }) else {
            throw unsupported(node, "with dilation")
        }
        guard (try int(node, "storage_order") ?? 0) == 0 else { throw unsupported(node, "with storage_order") }
        let kind: PoolingKind = node.opType == "MaxPool" ? .max : .average
        let includePad = try int(node, "count_include_pad") ?? 0
        let countsPadding = kind == .average && includePad != 0
        // A max pool's padding repeats the edge (its maximum is the cells'); an average's zeros are then counted or not
        // by `averageDivisors`. Our `same` pool leaves its padding out, as a max or such an average does.
        let (padding, declared, ceilExtra) = try windowPadding(
            node, kernel: kernel, strides: strides, padMode: kind == .max ? .edge : .constant, sameAsOurs: !countsPadding)
        let padded = Array(chain.shape.dropFirst(2))
        switch spatial {
        case 3:
            // (D, H) with the W positions and channels as channels, then W with (D, H) as rows: both valid.
            let (depth, height, width, channels) = (padded[0], padded[1], padded[2], shape[1])
            let outD = (depth - kernel[0]) / strides[0] + 1, outH = (height - kernel[1]) / strides[1] + 1
            let outW = (width - kernel[2]) / strides[2] + 1
            append(.reshape(shape: [depth, height, width * channels]))
            append(.pool2D(kind: kind, height: kernel[0], width: kernel[1], strideHeight: strides[0], strideWidth: strides[1], padding: .valid))
            append(.reshape(shape: [outD * outH, width, channels]))
            append(.pool2D(kind: kind, height: 1, width: kernel[2], strideHeight: 1, strideWidth: strides[2], padding: .valid))
            append(.reshape(shape: [outD, outH, outW, channels]))
            chain.shape = [shape[0], channels, outD, outH, outW]
        case 2:
            append(.pool2D(kind: kind, height: kernel[0], width: kernel[1], strideHeight: strides[0], strideWidth: strides[1], padding: padding))
        default:
            append(.pool1D(kind: kind, size: kernel[0], stride: strides[0], padding: padding))
        }
        if spatial < 3 {
            let geometry = zip(zip(padded, kernel), strides).map {
                WindowGeometry(inputLength: $0.0, window: $0.1, stride: $1, padding: padding)
            }
            chain.shape = [shape[0], shape[1]] + geometry.map(\.outputLength)
        }
        if kind == .average, let declared {
            try averageDivisors(
                input: Array(shape.dropFirst(2)), kernel: kernel, strides: strides, pads: declared, ceilExtra: ceilExtra,
                countsPadding: countsPadding, node)
        }
    }

    /// After an average pool over a pad layer (which divides every window by its whole size): each output scaled by
    /// size / ONNX's divisor — the window's cells inside the input, or, counting the padding, inside the input and
    /// its declared pads (never the cells `ceil_mode` adds). Nothing when every window is whole.
    private mutating func averageDivisors(
        input: [Int], kernel: [Int], strides: [Int], pads: [Int], ceilExtra: [Int], countsPadding: Bool, _ node: Onnx_NodeProto
    ) throws(ONNXImportError) {
        let spatial = input.count
        // Per axis, each output position's factor.
        let factors = (0..<spatial).map { axis -> [Float] in
            let outputs = (input[axis] + pads[axis] + pads[spatial + axis] + ceilExtra[axis] - kernel[axis]) / strides[axis] + 1
            return (0..<outputs).map { position in
                let start = position * strides[axis] - pads[axis], end = start + kernel[axis]
                let counted = countsPadding ? min(end, input[axis] + pads[spatial + axis]) - start : min(end, input[axis]) - max(start, 0)
                return Float(kernel[axis]) / Float(max(counted, 1))
            }
        }
        guard factors.contains(where: { $0.contains { $0 != 1 } }) else { return }
        let channels = chain.shape[1], sizes = factors.map(\.count)
        try checkLayerValues(sizes.reduce(channels, *), node)
        var values: [Float] = []
        values.reserveCapacity(sizes.reduce(channels, *))
        var index = [Int](repeating: 0, count: spatial)
        for _ in 0..<sizes.reduce(1, *) {
            let factor = (0..<spatial).reduce(Float(1)) { $0 * factors[$1][index[$1]] }
            values.append(contentsOf: repeatElement(factor, count: channels))
            advanceIndex(&index, in: sizes)
        }
        let shape = sizes + [channels]
        append(
            .constantOperation(operation: .multiply, shape: shape),
            ["operand": QuantizedTensor(quantizing: Tensor(shape: shape, scalars: values), as: .f32)])
    }

    /// `GlobalAveragePool` of feature maps: ONNX keeps axes of 1 around the channels, ours does not.
    mutating func globalAveragePool(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        guard chain.shape.count > 2 else { throw unsupported(node, "on \(chain.shape)") }
        try channelLast(node)
        let shape = chain.shape
        append(.globalAveragePool)
        chain.pooledChannels = shape[1]
        chain.shape = [1, shape[1]] + [Int](repeating: 1, count: shape.count - 2)
    }

    /// `ReduceMean` over every spatial axis of feature maps: a global average pool. False, and nothing done, for
    /// another reduction.
    mutating func reduceMeanAsPool(_ node: Onnx_NodeProto) throws(ONNXImportError) -> Bool {
        // A mean over every spatial axis (dynamo's and Keras's global average pooling) is a global average pool.
        guard node.opType == "ReduceMean", chain.pooledChannels == nil else { return false }
        var axes = try ints(node, "axes")
        if axes == nil, node.input.count > 1 { axes = try constantInput(1, of: node)?.integers?.map { Int($0) } }
        let shape = chain.shape, channelFirst = chain.channelFirst
        let rank = shape.count
        let spatial = channelFirst ? Array(2..<max(2, rank)) : Array(1..<max(1, rank - 1))
        guard rank > 2, let axes, axes.map({ $0 < 0 ? $0 + rank : $0 }).sorted() == spatial else { return false }
        // Ours must hold the channels last: channel-first maps run so; channel-last ones are ONNX's order.
        let channels = channelFirst ? shape[1] : shape[rank - 1]
        append(.globalAveragePool)
        if (try int(node, "keepdims") ?? 1) != 0 {
            chain.pooledChannels = channels
            chain.shape = shape.enumerated().map { axis, size in axis == 0 || size == channels && !spatial.contains(axis) ? size : 1 }
        } else {
            chain.shape = [1, channels]
            chain.channelFirst = false
        }
        return true
    }
}
#endif
