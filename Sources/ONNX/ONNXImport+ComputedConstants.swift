#if ONNX
import Tensor

// Nodes whose inputs are all constants, computed at load (`Constant`, `Identity`, `Transpose`, `Cast`, `Gather`,
// `Slice`, `Concat`, `Reshape`, `Squeeze`, `Unsqueeze`, `QuantizeLinear`, `DequantizeLinear`): what exporters
// compute shapes and weights with. Each allocation is counted in the import's budget (ONNXImport+Budget.swift)
// before it is made.

extension GraphConverter {
    /// A node whose inputs are all constants, computed now.
    mutating func computeConstant(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        let result: Constant
        switch node.opType {
        case "Constant": result = try constantNode(node)
        case "Identity": result = try foldedInput(0, of: node)
        case "Transpose": result = try transposedConstant(node)
        case "Cast": result = try castConstant(node)
        case "Gather": result = try gatheredConstant(node)
        case "Slice": result = try slicedConstant(node)
        case "Concat": result = try concatenatedConstant(node)
        case "Unsqueeze", "Squeeze": result = try squeezedConstant(node)
        case "Reshape" where node.input.count <= 2: result = try reshapedConstant(node)
        case "DequantizeLinear", "QuantizeLinear": result = try quantizationOfConstants(node)
        default: throw unsupported(node, "with constant inputs")
        }
        guard Constant.elementCount(result.shape) != nil else {
            throw ONNXImportError(
                "node \(Self.describe(node)) makes a constant of shape \(result.shape): more than \(ONNXLimits.maximumRank) axes or \(ONNXLimits.maximumElements) elements (each axis counted as at least 1)"
            )
        }
        guard let output = node.output.first else { return }
        constants[output] = result
    }

    /// Input `index` of a node of constants.
    private func foldedInput(_ index: Int, of node: Onnx_NodeProto) throws(ONNXImportError) -> Constant {
        guard index < node.input.count, let value = constants[node.input[index]] else {
            throw ONNXImportError("node \(Self.describe(node)) lacks input \(index + 1)")
        }
        return value
    }

    /// `Constant`: its tensor value, read as an initializer is.
    private mutating func constantNode(_ node: Onnx_NodeProto) throws(ONNXImportError) -> Constant {
        guard let attribute = node.attribute.first(where: { $0.name == "value" }), attribute.type == .tensor else {
            throw ONNXImportError("node \(Self.describe(node)): only a Constant with a tensor value is read")
        }
        let dims = attribute.t.dims
        if let count = Constant.elementCount(dims.map { Int($0) }) {
            try spend(count, bytesPerElement: 12, node)
        }
        return try Self.constant(attribute.t)
    }

    /// `Transpose` of a constant: its values (and integers, and int8 values) moved, a quantization axis with them.
    private mutating func transposedConstant(_ node: Onnx_NodeProto) throws(ONNXImportError) -> Constant {
        let value = try foldedInput(0, of: node)
        let permutation = try ints(node, "perm") ?? Array((0..<value.shape.count).reversed())
        guard permutation.sorted() == Array(value.shape.indices) else {
            throw ONNXImportError("node \(Self.describe(node)): perm \(permutation) for \(value.shape.count) axes")
        }
        try spend(value.values.count, bytesPerElement: value.bytesPerElement, node)
        var moved = Constant(
            shape: permutation.map { value.shape[$0] }, values: permute(value.values, shape: value.shape, permutation),
            integers: value.integers.map { permute($0, shape: value.shape, permutation) }, type: value.type)
        if let quantized = value.quantized {
            moved.quantized = (
                permute(quantized.values, shape: value.shape, permutation), quantized.scales,
                quantized.axis.flatMap { axis in permutation.firstIndex(of: axis) }
            )
        }
        return moved
    }

    /// `Cast` of a constant to `FLOAT`, `INT32` or `INT64` (integers rounded toward zero).
    private mutating func castConstant(_ node: Onnx_NodeProto) throws(ONNXImportError) -> Constant {
        let value = try foldedInput(0, of: node)
        guard let to = try int(node, "to"), let type = Onnx_TensorProto.DataType(rawValue: to), [.float, .int32, .int64].contains(type) else {
            throw unsupported(node, "to other than FLOAT, INT32 or INT64")
        }
        guard type == .float || value.values.allSatisfy({ $0.isFinite && abs($0) < 9e18 }) else {
            throw ONNXImportError("node \(Self.describe(node)): casts a value that is not a finite integer to \(type)")
        }
        try spend(value.values.count, bytesPerElement: 12, node)
        let integers = type == .float ? nil : value.values.map { Int64($0.rounded(.towardZero)) }
        return Constant(shape: value.shape, values: integers.map { $0.map(Float.init) } ?? value.values, integers: integers, type: type)
    }

    /// `Gather` of a 1-D constant at constant indices.
    private mutating func gatheredConstant(_ node: Onnx_NodeProto) throws(ONNXImportError) -> Constant {
        let data = try foldedInput(0, of: node), indices = try foldedInput(1, of: node)
        guard data.shape.count == 1, (try int(node, "axis") ?? 0) == 0, let picks = indices.integers,
            picks.allSatisfy({ $0 >= -Int64(data.values.count) && $0 < Int64(data.values.count) })
        else { throw unsupported(node, "except of a 1-D constant at valid indices") }
        try spend(picks.count, bytesPerElement: data.bytesPerElement, node)
        let positions = picks.map { Int($0 < 0 ? $0 + Int64(data.values.count) : $0) }
        return Constant(
            shape: indices.shape, values: positions.map { data.values[$0] }, integers: data.integers.map { all in positions.map { all[$0] } },
            type: data.type)
    }

    /// `Slice` of a 1-D constant with step 1.
    private mutating func slicedConstant(_ node: Onnx_NodeProto) throws(ONNXImportError) -> Constant {
        let data = try foldedInput(0, of: node)
        let axes = node.input.count > 3 ? try foldedInput(3, of: node).integers : [0]
        let steps = node.input.count > 4 ? try foldedInput(4, of: node).integers : [1]
        guard data.shape.count == 1, let starts = try foldedInput(1, of: node).integers?.first,
            let ends = try foldedInput(2, of: node).integers?.first, axes == [0], steps == [1]
        else { throw unsupported(node, "except of a 1-D constant with step 1") }
        let count = Int64(data.values.count)
        func clamp(_ bound: Int64) -> Int { Int(min(max(bound < 0 ? bound + count : bound, 0), count)) }
        let range = clamp(starts)..<max(clamp(starts), clamp(ends))
        try spend(range.count, bytesPerElement: data.bytesPerElement, node)
        return Constant(
            shape: [range.count], values: Array(data.values[range]), integers: data.integers.map { Array($0[range]) }, type: data.type)
    }

    /// `Concat` of 1-D constants of one element type.
    private mutating func concatenatedConstant(_ node: Onnx_NodeProto) throws(ONNXImportError) -> Constant {
        let parts = try (0..<node.input.count).map { index throws(ONNXImportError) in try foldedInput(index, of: node) }
        guard parts.allSatisfy({ $0.shape.count == 1 }), parts.count <= ONNXLimits.maximumRank * 2 else {
            throw unsupported(node, "except of 1-D constants")
        }
        let types = Set(parts.map(\.type))
        guard types.count <= 1 else {
            throw ONNXImportError(
                "node \(Self.describe(node)): its inputs have different element types (\(parts.map { "\($0.type)" }.joined(separator: ", ")))")
        }
        // At most 16 parts of 2^22 each: the sum cannot overflow.
        let total = parts.reduce(0) { $0 + $1.values.count }
        guard total <= ONNXLimits.maximumElements else {
            throw ONNXImportError("node \(Self.describe(node)): \(total) elements, more than \(ONNXLimits.maximumElements)")
        }
        try spend(total, bytesPerElement: parts.map(\.bytesPerElement).max() ?? 4, node)
        let integers = parts.allSatisfy({ $0.integers != nil }) ? parts.flatMap { $0.integers ?? [] } : nil
        return Constant(
            shape: [parts.reduce(0) { $0 + $1.values.count }], values: parts.flatMap(\.values), integers: integers,
            type: parts.first?.type ?? .float)
    }

    /// `Reshape` of a constant to a constant shape: the values stay.
    private func reshapedConstant(_ node: Onnx_NodeProto) throws(ONNXImportError) -> Constant {
        var value = try foldedInput(0, of: node)
        guard let target = try foldedInput(1, of: node).integers, target.allSatisfy({ $0 >= -1 }), target.filter({ $0 == -1 }).count <= 1 else {
            throw unsupported(node, "with a shape that is not constant")
        }
        guard target.count <= ONNXLimits.maximumRank, target.allSatisfy({ $0 <= Int64(ONNXLimits.maximumElements) }),
            (try int(node, "allowzero") ?? 0) == 0 || !target.contains(0)
        else {
            throw unsupported(node, "to \(target)")
        }
        let shape = Self.reshapedShape(of: value, to: target)
        guard let count = Constant.elementCount(shape) else {
            throw ONNXImportError(
                "node \(Self.describe(node)): a reshape to \(shape), more than \(ONNXLimits.maximumElements) elements (its axes counted as at least 1)"
            )
        }
        guard count == value.values.count else {
            throw ONNXImportError("node \(Self.describe(node)): reshape of \(value.shape) to \(target)")
        }
        value.shape = shape
        value.quantized = nil
        return value
    }

    /// The shape a reshape of `value` to `target` makes: a 0 keeps the size of that axis (1 past its axes), a -1
    /// takes what the other sizes leave.
    private static func reshapedShape(of value: Constant, to target: [Int64]) -> [Int] {
        let known = target.enumerated().reduce(1) { total, entry in
            min(
                ONNXLimits.maximumElements + 1,
                entry.element > 0
                    ? total * Int(entry.element)
                    : (entry.element == 0 ? total * (entry.offset < value.shape.count ? value.shape[entry.offset] : 1) : total))
        }
        return target.enumerated().map { offset, size in
            size == -1 ? value.values.count / max(known, 1) : (size == 0 ? (offset < value.shape.count ? value.shape[offset] : 1) : Int(size))
        }
    }

    /// `Squeeze` or `Unsqueeze` of a constant.
    private func squeezedConstant(_ node: Onnx_NodeProto) throws(ONNXImportError) -> Constant {
        var value = try foldedInput(0, of: node)
        // Only the axes of size 1 change: the values stay.
        var axes = try ints(node, "axes") ?? []
        if node.input.count > 1 { axes = try foldedInput(1, of: node).integers?.map { Int($0) } ?? [] }
        if node.opType == "Squeeze" {
            let rank = value.shape.count
            guard axes.allSatisfy({ (-rank..<rank).contains($0) && value.shape[$0 < 0 ? $0 + rank : $0] == 1 }) else {
                throw unsupported(node, "of axes \(axes) of \(value.shape) (only axes of size 1 can go)")
            }
            value.shape = value.shape.enumerated().filter {
                !(axes.isEmpty ? $0.element == 1 : axes.contains($0.offset) || axes.contains($0.offset - value.shape.count))
            }.map(\.element)
        } else {
            guard axes.count <= ONNXLimits.maximumRank else { throw unsupported(node, "with \(axes.count) axes") }
            var shape = value.shape
            for axis in axes.sorted() { shape.insert(1, at: min(max(axis < 0 ? axis + shape.count + 1 : axis, 0), shape.count)) }
            value.shape = shape
        }
        value.quantized = nil
        return value
    }

    /// `QuantizeLinear` or `DequantizeLinear` of constants (`quantization`).
    private mutating func quantizationOfConstants(_ node: Onnx_NodeProto) throws(ONNXImportError) -> Constant {
        try spend(try foldedInput(0, of: node).values.count, bytesPerElement: 13, node)
        return try quantization(
            node, foldedInput(0, of: node), scale: foldedInput(1, of: node),
            zeroPoint: node.input.count > 2 && !node.input[2].isEmpty ? foldedInput(2, of: node) : nil)
    }
}
#endif
