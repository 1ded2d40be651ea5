#if ONNX
import Tensor
import WeightsFormat

// `ConvTranspose` (1-D, 2-D and 3-D; grouped, dilated, strided, with pads and `output_padding`), made of the layers
// a convolution is: a transposed convolution is the convolution, with the kernel flipped and its channels swapped,
// of the input with `stride − 1` zeros between its cells and `kernel − 1 − pads` around them. The zeros come from a
// reshape that gives each cell an axis of 1, a pad of that axis to the stride, and a reshape back: no new layer.

extension GraphConverter {
    /// `ConvTranspose` of feature maps with a constant weight `[in, out / groups, k…]`.
    mutating func convTranspose(_ node: Onnx_NodeProto, weight: Constant?, bias: Constant?) throws(ONNXImportError) {
        guard let weight, (3...5).contains(chain.shape.count), weight.shape.count == chain.shape.count else {
            throw unsupported(node, "except on feature maps of 1, 2 or 3 spatial axes with a constant weight of as many axes")
        }
        try channelLast(node)
        let spatial = chain.shape.count - 2, inChannels = chain.shape[1]
        let group = try int(node, "group") ?? 1
        guard group >= 1, inChannels % group == 0, weight.shape[0] == inChannels else {
            throw ONNXImportError("node \(Self.describe(node)): a weight \(weight.shape) in \(group) groups for \(inChannels) input channels")
        }
        let (inPerGroup, outPerGroup) = (inChannels / group, weight.shape[1])
        let outChannels = outPerGroup * group
        let kernel = Array(weight.shape.dropFirst(2))
        guard kernel.allSatisfy({ $0 >= 1 }), outPerGroup >= 1 else { throw unsupported(node, "with a weight \(weight.shape)") }
        if let declared = try ints(node, "kernel_shape"), declared != kernel {
            throw ONNXImportError("node \(Self.describe(node)): kernel_shape \(declared), weight \(weight.shape)")
        }
        let ones = [Int](repeating: 1, count: spatial)
        let dilations = try ints(node, "dilations") ?? ones, strides = try ints(node, "strides") ?? ones
        guard dilations.count == spatial, dilations.allSatisfy({ (1...64).contains($0) }) else {
            throw unsupported(node, "with dilations \(dilations)")
        }
        guard strides.count == spatial, strides.allSatisfy({ (1...64).contains($0) }) else { throw unsupported(node, "with strides \(strides)") }
        guard attribute(node, "output_shape") == nil else { throw unsupported(node, "with output_shape (give pads and output_padding)") }
        let autoPad = string(node, "auto_pad") ?? "NOTSET"
        guard ["NOTSET", "", "VALID"].contains(autoPad) else { throw unsupported(node, "with auto_pad \(autoPad)") }
        let pads =
            autoPad == "VALID" ? ones.map { _ in 0 } + ones.map { _ in 0 } : try ints(node, "pads") ?? ones.map { _ in 0 } + ones.map { _ in 0 }
        let outputPadding = try ints(node, "output_padding") ?? ones.map { _ in 0 }
        guard pads.count == 2 * spatial, pads.allSatisfy({ (0...(1 << 20)).contains($0) }) else { throw unsupported(node, "with pads \(pads)") }
        // Below the stride, as ONNX Runtime requires (PyTorch also allows up to the dilation).
        guard outputPadding.count == spatial, outputPadding.indices.allSatisfy({ (0..<strides[$0]).contains(outputPadding[$0]) }) else {
            throw unsupported(node, "with output_padding \(outputPadding) (each below its stride)")
        }
        // The convolution's weight, [out, in / groups, k…]: each kernel flipped (reversed along every axis is
        // reversed as one row-major run), its input and output channels swapped within each group.
        let taps = kernel.reduce(1, *)
        guard let count = Constant.elementCount([outChannels, inPerGroup] + kernel) else {
            throw unsupported(node, "with a weight of more than \(ONNXLimits.maximumElements) values")
        }
        try checkLayerValues(count + outChannels, node)
        var values = [Float](repeating: 0, count: count)
        for g in 0..<group {
            for o in 0..<outPerGroup {
                for i in 0..<inPerGroup {
                    for tap in 0..<taps {
                        values[((g * outPerGroup + o) * inPerGroup + i) * taps + tap] =
                            weight.values[((g * inPerGroup + i) * outPerGroup + o) * taps + (taps - 1 - tap)]
                    }
                }
            }
        }
        var convolutionWeight = Constant(shape: [outChannels, inPerGroup] + kernel, values: values, type: .float)
        if group > 1 || dilations.contains(where: { $0 > 1 }) {
            convolutionWeight = try dense(convolutionWeight, groups: group, dilations: dilations, node)
        }
        let dilated = Array(convolutionWeight.shape.dropFirst(2))
        // The full convolution's pads less ONNX's, plus output_padding after; the stride − 1 zeros each cell gets go
        // after it, or before it where the pads after would then crop.
        var before = (0..<spatial).map { dilated[$0] - 1 - pads[$0] }
        var after = (0..<spatial).map { dilated[$0] - 1 - pads[spatial + $0] + outputPadding[$0] }
        let zerosAfter = (0..<spatial).map { after[$0] >= strides[$0] - 1 }
        for axis in 0..<spatial {
            if zerosAfter[axis] { after[axis] -= strides[axis] - 1 } else { before[axis] -= strides[axis] - 1 }
        }
        // The output ONNX gives, (size − 1) · stride + output_padding + dilated kernel − pads, has at least one cell.
        let outputs = (0..<spatial).map {
            (chain.shape[2 + $0] - 1) * strides[$0] + outputPadding[$0] + dilated[$0] - pads[$0] - pads[spatial + $0]
        }
        guard outputs.allSatisfy({ $0 >= 1 }) else { throw unsupported(node, "with pads \(pads): its output \(outputs) would have no cells") }
        if strides.contains(where: { $0 > 1 }) { try insertZeros(strides, after: zerosAfter, node) }
        // Negative widths crop: pads over the kernel less one take cells off the full convolution's input.
        if (before + after).contains(where: { $0 != 0 }) { try padSpatially(before + after, mode: .constant, value: 0, node) }
        guard zip(chain.shape.dropFirst(2), dilated).allSatisfy({ $0 >= $1 }) else { throw unsupported(node, "with an output of no cells") }
        try appendConvolution(weight: convolutionWeight, bias: bias, strides: ones, padding: .valid, node)
    }

    /// `stride − 1` zeros after (or, where `after` says not, before) each cell of the chain's channel-last maps, along
    /// each spatial axis: `[d1, 1, d2, 1, …, C]`, each axis of 1 padded to its stride, reshaped to `[d1 · s1, …, C]`.
    private mutating func insertZeros(_ strides: [Int], after: [Bool], _ node: Onnx_NodeProto) throws(ONNXImportError) {
        let channels = chain.shape[1], sizes = Array(chain.shape.dropFirst(2))
        let interleaved = sizes.flatMap { [$0, 1] } + [channels]
        guard interleaved.count <= LayerSpec.maximumSampleRank else { throw unsupported(node, "on \(chain.shape)") }
        chain.shape = [1, channels] + zip(sizes, strides).map { $0 * $1 }
        try checkChainSize(node)
        append(.reshape(shape: interleaved))
        let zeros = strides.indices.map { (before: after[$0] ? 0 : strides[$0] - 1, after: after[$0] ? strides[$0] - 1 : 0) }
        append(.pad(before: zeros.flatMap { [0, $0.before] } + [0], after: zeros.flatMap { [0, $0.after] } + [0], mode: .constant, value: 0))
        append(.reshape(shape: Array(chain.shape.dropFirst(2)) + [channels]))
    }
}
#endif
