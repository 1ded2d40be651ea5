#if ONNX
// `QuantizeLinear` and `DequantizeLinear`: of constants, `INT8` weights that stay int8; on the chain, a pair that
// becomes the next int8 layer's input quantization (and a ReLU, when the pair clamps at 0).

extension GraphConverter {
    /// `QuantizeLinear` or `DequantizeLinear` of constants: `INT8` weights dequantized keep their integers and
    /// scales when our int8 can hold them (zero points 0, one scale per row or one in all).
    func quantization(_ node: Onnx_NodeProto, _ x: Constant, scale: Constant, zeroPoint: Constant?) throws(ONNXImportError) -> Constant {
        let axisAttribute = try int(node, "axis") ?? 1
        let axis = axisAttribute < 0 ? axisAttribute + x.shape.count : axisAttribute
        guard !scale.values.isEmpty, zeroPoint.map({ !$0.values.isEmpty }) ?? true else {
            throw ONNXImportError("node \(Self.describe(node)): an empty scale or zero point")
        }
        guard x.values.allSatisfy(\.isFinite), zeroPoint?.values.allSatisfy(\.isFinite) ?? true else {
            throw ONNXImportError("node \(Self.describe(node)): a value that is not finite")
        }
        let perAxis = scale.values.count > 1
        guard !perAxis || (axis >= 0 && axis < x.shape.count && scale.values.count == x.shape[axis]) else {
            throw ONNXImportError("node \(Self.describe(node)): \(scale.values.count) scales for axis \(axisAttribute) of \(x.shape)")
        }
        guard scale.values.allSatisfy({ $0.isFinite && $0 > 0 }) else {
            throw ONNXImportError("node \(Self.describe(node)): a scale is not finite and positive")
        }
        let zeros = zeroPoint?.values ?? [0]
        guard zeros.count == 1 || zeros.count == scale.values.count else {
            throw ONNXImportError("node \(Self.describe(node)): \(zeros.count) zero points for \(scale.values.count) scales")
        }
        var strides = 1
        if perAxis { for later in (axis + 1)..<x.shape.count { strides *= x.shape[later] } }
        func channel(_ index: Int) -> Int { perAxis ? (index / strides) % scale.values.count : 0 }
        if node.opType == "QuantizeLinear" {
            return try quantized(node, x, scales: scale.values, zeros: zeros, zeroPoint: zeroPoint, channel: channel)
        }
        return try dequantized(node, x, scales: scale.values, zeros: zeros, axis: perAxis ? axis : nil, channel: channel)
    }

    /// `QuantizeLinear` of the constant `x`: its values rounded to `INT8` or `UINT8`, with the scale and zero point
    /// of each value's `channel`.
    private func quantized(
        _ node: Onnx_NodeProto, _ x: Constant, scales: [Float], zeros: [Float], zeroPoint: Constant?, channel: (Int) -> Int
    ) throws(ONNXImportError) -> Constant {
        let signed = try Self.quantizesToSigned(node, zeroPoint: zeroPoint, int: int)
        let (low, high): (Float, Float) = signed ? (-128, 127) : (0, 255)
        let integers = x.values.indices.map { index -> Int64 in
            let c = channel(index)
            let q = (x.values[index] / scales[c]).rounded(.toNearestOrEven) + zeros[zeros.count == 1 ? 0 : c]
            return Int64(min(max(q, low), high))
        }
        return Constant(shape: x.shape, values: integers.map(Float.init), integers: integers, type: signed ? .int8 : .uint8)
    }

    /// `DequantizeLinear` of the constant `x`: its float values, and its int8 values and scales (per index of
    /// `axis`, or one for all) when it is `INT8` with zero points of 0.
    private func dequantized(
        _ node: Onnx_NodeProto, _ x: Constant, scales: [Float], zeros: [Float], axis: Int?, channel: (Int) -> Int
    ) throws(ONNXImportError) -> Constant {
        guard let integers = x.integers else { throw ONNXImportError("node \(Self.describe(node)): dequantizes a float tensor") }
        let values = integers.indices.map { index in
            let c = channel(index)
            return (Float(integers[index]) - zeros[zeros.count == 1 ? 0 : c]) * scales[c]
        }
        var result = Constant(shape: x.shape, values: values, type: .float)
        if x.type == .int8, zeros.allSatisfy({ $0 == 0 }) {
            let narrow = integers.compactMap { Int8(exactly: $0) }
            guard narrow.count == integers.count else {
                throw ONNXImportError("node \(Self.describe(node)): an INT8 input holds a value outside -128...127")
            }
            result.quantized = (narrow, scales, axis)
        }
        return result
    }

    /// Whether a `QuantizeLinear` makes `INT8` (its zero point's type, or without one, `output_dtype`), not `UINT8`.
    static func quantizesToSigned(
        _ node: Onnx_NodeProto, zeroPoint: Constant?, int: (Onnx_NodeProto, String) throws(ONNXImportError) -> Int?
    ) throws(ONNXImportError) -> Bool {
        if let zeroPoint { return zeroPoint.type == .int8 }
        return try int(node, "output_dtype") == Int(Onnx_TensorProto.DataType.int8.rawValue)
    }

    /// `QuantizeLinear` on the chain: one scale and zero point, the next int8 layer's input quantization, waiting
    /// for the `DequantizeLinear` that undoes it.
    mutating func quantizeOnChain(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        guard let scale = try constantInput(1, of: node), scale.values.count == 1 else {
            throw unsupported(node, "with a scale per channel on the chain")
        }
        let zero = try constantInput(2, of: node)
        let signed = try Self.quantizesToSigned(node, zeroPoint: zero, int: int)
        let zeroValue = zero?.values.first ?? 0
        guard scale.values[0].isFinite && scale.values[0] > 0, zero?.values.count ?? 1 == 1,
            (signed ? -128...127 : 0...255).contains(zeroValue) && zeroValue == zeroValue.rounded()
        else {
            throw unsupported(
                node, "with scale \(scale.values[0]) and zero point \(zeroValue) (a positive scale, one zero point in its type's range)")
        }
        chain.pendingActivation = (scale.values[0], Int(zeroValue) + (signed ? 128 : 0))
        chain.quantizedOnChain = (scale.values[0], Int(zeroValue), signed)
    }

    /// `DequantizeLinear` on the chain, undoing the `QuantizeLinear` before it: a ReLU when the pair clamps at 0.
    mutating func dequantizeOnChain(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        guard let quantized = chain.quantizedOnChain else { throw unsupported(node, "on a value no QuantizeLinear made") }
        chain.quantizedOnChain = nil
        // It must undo its QuantizeLinear: the same scale and zero point.
        let zero = try constantInput(2, of: node)
        guard let scale = try constantInput(1, of: node), scale.values == [quantized.scale], zero?.values.count ?? 1 == 1,
            (zero?.values.first ?? 0) == Float(quantized.zeroPoint), zero.map({ ($0.type == .int8) == quantized.signed }) ?? true
        else {
            throw unsupported(node, "with another scale or zero point than its QuantizeLinear's")
        }
        // The pair clamps to [(qmin − zero point) · scale, (qmax − zero point) · scale]. A clamp at 0 (a zero
        // point at the bottom of the range) is a ReLU a quantizer folded into it (ONNX Runtime's QDQ
        // quantization does so); a ReLU already there makes it a no-op. The other bounds are the calibrated
        // range, left to the next layer's input quantization.
        if let activation = chain.pendingActivation, activation.zeroPoint == 0, !valueIsNonNegative {
            layers.append(.activation(function: .relu))
            chain.pendingActivation = activation
        }
    }

    /// Whether the chain's value cannot be negative: the last layer that can change a sign is a ReLU, sigmoid or
    /// softmax (pools and flattens keep it), or the clamp of a ReLU is already there.
    private var valueIsNonNegative: Bool {
        for spec in layers.reversed() {
            switch spec {
            case .pool1D, .pool2D, .globalAveragePool, .flatten: continue
            case .activation(.relu), .activation(.sigmoid), .activation(.softmax): return true
            default: return false
            }
        }
        return false
    }
}
#endif
