#if ONNX
import Models
import Tensor
import WeightsFormat

// Our layers as the import makes them: each appended with its tensors (and the input quantization waiting for an
// int8 layer), and ONNX's weights in our layout, int8 kept where our int8 layers can keep it.

extension GraphConverter {
    /// `spec` appended with its tensors, by role; the quantization waiting for the next layer goes with it when
    /// its weight is int8. Their values are counted in the import's budget, which the caller checked before making
    /// them (`checkLayerValues`).
    mutating func append(_ spec: LayerSpec, _ layerTensors: [String: QuantizedTensor] = [:]) {
        let index = layers.count
        budget.layerValues += layerTensors.values.reduce(0) { $0 + $1.shape.reduce(1, *) }
        assert(budget.layerValues <= budget.layerValueLimit, "layer \(index) (\(spec.summary)) was made without checking the budget")
        // A quantization of the input of a layer with int8 weights is what our integer kernels run; before any
        // other layer it only rounds, and is left out.
        if let activation = chain.pendingActivation, layerTensors["weight"]?.format == .int8 {
            activationQuantization.append(ActivationQuantization(layer: index, scale: activation.scale, zeroPoint: activation.zeroPoint))
        }
        chain.pendingActivation = nil
        layers.append(spec)
        for (role, tensor) in layerTensors { tensors["\(index).\(role)"] = tensor }
    }

    /// A weight as our layer stores it: `values` laid out in our order, int8 kept when it was, its scales are per
    /// output row (`rowsAxis` of the ONNX tensor) or one for all, and it has `ModelFile.smallTensorLimit` values.
    func weightTensor(_ weight: Constant, ourShape: [Int], permutation: [Int]?, rowsAxis: Int) -> QuantizedTensor {
        let rows = ourShape[0]
        // int8 as our models keep it: a weight of fewer than `smallTensorLimit` values stays float, as in our own
        // files (the float kernels are faster there), and so runs without the input quantization.
        if let quantized = weight.quantized, quantized.axis == nil || quantized.axis == rowsAxis,
            quantized.values.count >= ModelFile.smallTensorLimit
        {
            let integers = permutation.map { permute(quantized.values, shape: weight.shape, $0) } ?? quantized.values
            let scales = quantized.axis == nil ? [Float](repeating: quantized.scales[0], count: rows) : quantized.scales
            return QuantizedTensor(int8Scales: scales, values: integers, shape: ourShape)
        }
        let values = permutation.map { permute(weight.values, shape: weight.shape, $0) } ?? weight.values
        return QuantizedTensor(quantizing: Tensor(shape: ourShape, scalars: values), as: .f32)
    }
}
#endif
