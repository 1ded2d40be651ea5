#if ONNX
import Tensor
import WeightsFormat

// Arithmetic of the chain's value with a constant: `Add`, `Sub`, `Mul`, `Div`, `PRelu`, `Max`, `Min`, `Sum`, and
// `Neg` and `Clip`, with ONNX's broadcasting (and opset 6's `broadcast` / `axis`). A per-channel `Add` or `Mul`
// right after a convolution or dense layer is folded into it (ONNXImport+ScaleAndShift.swift); anything else is a
// constant-operation layer holding the constant broadcast to one sample, in our layout.

extension GraphConverter {
    /// `Add`, `Sub`, `Mul`, `Div`, `PRelu`, `Max`, `Min` or `Sum` of the chain's value and one constant.
    mutating func elementwise(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        let operands = node.input.filter { !$0.isEmpty }
        guard operands.count == 2, let constantName = operands.first(where: { $0 != chain.value }), let constant = constants[constantName]
        else {
            throw unsupported(node, "except of the chain's value and one constant")
        }
        let chainFirst = operands[0] == chain.value
        let legacyAxis = try legacyBroadcastAxis(node, constant)
        if ["Add", "Mul"].contains(node.opType), legacyAxis == nil, (try? foldConstant(node)) != nil { return }
        let operation: ConstantOperation.Operation
        switch node.opType {
        case "Add", "Sum": operation = .add
        case "Mul": operation = .multiply
        case "Sub": operation = chainFirst ? .subtract : .subtractFrom
        case "Div": operation = chainFirst ? .divide : .divideInto
        case "Max": operation = .maximum
        case "Min": operation = .minimum
        case "PRelu":
            guard chainFirst else { throw unsupported(node, "with the slope first") }
            operation = .preluSlope
        default: throw unsupported(node)
        }
        try appendConstantOperation(operation, constant, node: node, alignedAt: legacyAxis)
    }

    /// Where opset 6's broadcasting aligns `constant`: its `axis` when `broadcast` is 1 (the last axes without one);
    /// a `PRelu` slope of one value per channel at axis 1. Nil at opsets from 7 on (ONNX's multidirectional rule).
    private func legacyBroadcastAxis(_ node: Onnx_NodeProto, _ constant: Constant) throws(ONNXImportError) -> Int? {
        guard opset < 7 else { return nil }
        if node.opType == "PRelu" {
            // Opset 6 has no broadcasting for PRelu: one slope for all, one per channel, or one per value.
            return constant.values.count == 1 || constant.shape.count >= chain.shape.count - 1 ? nil : 1
        }
        let broadcast = try int(node, "broadcast") ?? 0
        guard broadcast == 0 || broadcast == 1 else {
            throw ONNXImportError("node \(Self.describe(node)): broadcast \(broadcast) (opset \(opset)'s broadcast is 0 or 1)")
        }
        guard broadcast != 0 else {
            guard constant.shape == chain.shape || constant.values.count == 1 && constant.shape.count <= 1 else {
                throw unsupported(node, "of \(chain.shape) and \(constant.shape) without broadcast (opset \(opset) needs equal shapes)")
            }
            return nil
        }
        guard let axis = try int(node, "axis") else { return nil }
        let resolved = axis < 0 ? axis + chain.shape.count : axis
        guard resolved >= 0, resolved + constant.shape.count <= chain.shape.count else {
            throw unsupported(node, "with broadcast axis \(axis) for \(constant.shape) on \(chain.shape)")
        }
        return resolved
    }

    /// `Neg`: the chain's value times −1.
    mutating func negate(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        try appendConstantOperation(.multiply, Constant(shape: [], values: [-1], type: .float), node: node, alignedAt: nil)
    }

    /// `Clip`: a maximum with its lower bound and a minimum with its upper bound (attributes before opset 11,
    /// inputs from it on), each left out when absent.
    mutating func clip(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        var bounds: [(ConstantOperation.Operation, Float)] = []
        if opset < 11 {
            if let low = try float(node, "min") { bounds.append((.maximum, low)) }
            if let high = try float(node, "max") { bounds.append((.minimum, high)) }
        } else {
            for (index, operation) in [(1, ConstantOperation.Operation.maximum), (2, .minimum)] {
                guard let bound = try constantInput(index, of: node) else { continue }
                guard bound.values.count == 1, let value = bound.values.first, value.isFinite else {
                    throw unsupported(node, "with a bound that is not one finite value")
                }
                bounds.append((operation, value))
            }
        }
        for (operation, value) in bounds {
            try appendConstantOperation(operation, Constant(shape: [], values: [value], type: .float), node: node, alignedAt: nil)
        }
        if bounds.isEmpty { try passThrough(node) }
    }

    /// A constant-operation layer of `constant` broadcast to one sample of the chain's value.
    private mutating func appendConstantOperation(
        _ operation: ConstantOperation.Operation, _ constant: Constant, node: Onnx_NodeProto, alignedAt axis: Int?
    ) throws(ONNXImportError) {
        if chain.pooledToVector { try inONNXOrder(node) }
        guard constant.values.allSatisfy(\.isFinite) else { throw ONNXImportError("node \(Self.describe(node)): a constant that is not finite") }
        // The operand holds one value of the chain's size, whatever the constant's.
        try checkLayerValues(chain.shape.dropFirst().reduce(1, *), node)
        guard let values = broadcastToChain(constant, alignedAt: axis) else {
            throw unsupported(node, "of \(chain.shape) and a constant \(constant.shape) that does not broadcast to it (or makes it larger)")
        }
        let shape = Array(ourShape.dropFirst())
        append(
            .constantOperation(operation: operation, shape: shape),
            ["operand": QuantizedTensor(quantizing: Tensor(shape: shape, scalars: values), as: .f32)])
    }
}
#endif
