#if ONNX
import Models
import Tensor
import WeightsFormat

// A per-channel scale and shift right after a convolution or dense layer, folded into that layer's weights and
// bias: `Add` and `Mul` of a constant here, and `BatchNormalization` (ONNXImport+Normalization.swift) through the
// same `fold(into:factors:shifts:_:)`.

extension GraphConverter {
    /// An `Add` or `Mul` of a constant (one value, or one per channel) right after a convolution or dense layer:
    /// folded into its bias, or its weights and bias.
    mutating func foldConstant(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        let shape = chain.shape
        let other = node.input.first { $0 != chain.value }.flatMap { constants[$0] }
        let index = layers.count - 1
        guard let other, index >= 0, let channels = biasChannels(layers[index]) else {
            throw unsupported(node, "except of a constant right after a convolution or dense layer")
        }
        let values: [Float]
        let channelAxis = other.shape.count - shape.count + 1
        if other.values.count == 1 {
            values = [Float](repeating: other.values[0], count: channels)
        } else if other.values.count == channels, other.shape.filter({ $0 != 1 }).count == 1,
            other.shape.firstIndex(where: { $0 != 1 }) == (shape.count == 2 || chain.channelFirst ? channelAxis : other.shape.count - 1)
        {
            values = other.values
        } else {
            throw unsupported(node, "of a constant \(other.shape) that is not one value per channel of \(shape)")
        }
        if node.opType == "Add" {
            try fold(into: index, factors: [Float](repeating: 1, count: channels), shifts: values, node)
        } else {
            try fold(into: index, factors: values, shifts: [Float](repeating: 0, count: channels), node)
        }
    }

    /// Layer `index`'s outputs become `output · factor + shift` per channel: its weight rows scaled (an int8
    /// weight keeps its integers when every factor is positive) and its bias scaled and shifted, for `node`. What it
    /// rewrites is counted in the import's budget first (`spendOnFold`).
    mutating func fold(into index: Int, factors: [Float], shifts: [Float], _ node: Onnx_NodeProto) throws(ONNXImportError) {
        try spendOnFold(into: index, rewritingWeight: factors.contains { $0 != 1 }, node)
        // A quantization waiting for the next int8 layer was made for the value before this change: a product by
        // one positive factor scales it the same way; anything else leaves it out (its clamp with it).
        if let activation = chain.pendingActivation, let factor = factors.first, factor > 0,
            factors.allSatisfy({ $0 == factor }), shifts.allSatisfy({ $0 == 0 })
        {
            chain.pendingActivation = (activation.scale * factor, activation.zeroPoint)
        } else {
            chain.pendingActivation = nil
        }
        guard let weight = tensors["\(index).weight"], let bias = tensors["\(index).bias"] else { return }
        if factors.contains(where: { $0 != 1 }) {
            if let (scales, values) = weight.int8Parts, factors.allSatisfy({ $0 > 0 }) {
                let scaled = zip(scales, factors).map { $0 * $1 }
                tensors["\(index).weight"] = QuantizedTensor(int8Scales: scaled, values: values, shape: weight.shape)
            } else {
                let columns = weight.columns
                var scaled = weight.dequantized().scalars
                for row in 0..<weight.rows { for column in 0..<columns { scaled[row * columns + column] *= factors[row] } }
                tensors["\(index).weight"] = QuantizedTensor(quantizing: Tensor(shape: weight.shape, scalars: scaled), as: .f32)
            }
        }
        let moved = bias.dequantized().scalars.enumerated().map { channel, b in b * factors[channel] + shifts[channel] }
        tensors["\(index).bias"] = QuantizedTensor(quantizing: Tensor(shape: bias.shape, scalars: moved), as: .f32)
    }

    /// The output channels of a layer with a bias (a convolution or dense layer); nil for any other.
    func biasChannels(_ spec: LayerSpec) -> Int? {
        switch spec {
        case let .dense(_, outputs): outputs
        case let .conv2D(_, outputs, _, _, _, _, _), let .conv1D(_, outputs, _, _, _): outputs
        default: nil
        }
    }
}
#endif
