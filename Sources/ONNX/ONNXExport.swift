#if ONNX
import Foundation
import Models
import SwiftProtobuf
import Tensor
import WeightsFormat

/// Our models as ONNX graphs (opset 13), for any runtime that reads ONNX.
///
/// - The input is `input`, NCHW for image models (`[N, C, H, W]`: with one channel, the same bytes as our
///   `[H, W, C]`), `[N, C, L]` for 1-D convolutions, `[N, F]` for vectors; the output is `output`.
/// - Convolutions get their weights transposed to ONNX's `[out, in, kh, kw]` and explicit pads (our `same` is
///   `SAME_UPPER`); a `Flatten` of feature maps first transposes back to our channel-last order, so dense weights
///   are stored as they are.
/// - `f32` weights are `FLOAT` initializers. `int8` weights are `INT8` initializers with one scale per output
///   channel (axis 0) and zero points of 0, dequantized by `DequantizeLinear`: exactly our values. The calibrated
///   input quantization of each 8-bit layer is a `QuantizeLinear` / `DequantizeLinear` pair (`UINT8`) before it,
///   as our integer kernels quantize. Other formats (`f16`, `q4`, palettes) are written dequantized, as `FLOAT`.
/// - Labels, preprocessing, decision rule and training metadata are `metadata_props` (`ONNXModelInfo`).
public enum ONNXExport {
    /// The ONNX model of `file`, serialized.
    public static func data(of file: ModelFile) throws(ONNXExportError) -> Data {
        do {
            return try model(of: file).serializedData()
        } catch let error as ONNXExportError {
            throw error
        } catch {
            throw ONNXExportError(reason: "protobuf encoding failed: \(error)")
        }
    }

    /// The ONNX model of `file`.
    static func model(of file: ModelFile) throws(ONNXExportError) -> Onnx_ModelProto {
        var builder = GraphBuilder()
        let input = file.input.shape
        // The ONNX layout of the value flowing through: its rank and whether it is channel-first (feature maps).
        var shape: [Int]
        switch input.count {
        case 3: shape = [1, input[2], input[0], input[1]]
        case 2: shape = [1, input[1], input[0]]
        case 1: shape = [1, input[0]]
        default: throw ONNXExportError(reason: "an input of shape \(input) has no ONNX layout here")
        }
        builder.graph.input = [valueInfo("input", elementType: .float, shape: shape)]
        var value = "input"
        let quantized = Dictionary((file.activationQuantization ?? []).map { ($0.layer, $0) }, uniquingKeysWith: { a, _ in a })
        for (index, spec) in file.architecture.enumerated() {
            if let activation = quantized[index] {
                value = builder.quantizeAndDequantize(value, activation, layer: index)
            }
            try builder.append(spec, index: index, tensors: file.tensors, value: &value, shape: &shape)
        }
        builder.rename(value, to: "output")
        builder.graph.output = [valueInfo("output", elementType: .float, shape: shape)]
        builder.graph.name = file.name

        return modelProto(builder.graph, of: file)
    }

    /// The model around `graph`: the format's versions, our producer and opset, and `file`'s information as
    /// `metadata_props` (`ONNXModelInfo`).
    private static func modelProto(_ graph: Onnx_GraphProto, of file: ModelFile) -> Onnx_ModelProto {
        var model = Onnx_ModelProto()
        model.irVersion = 8
        model.producerName = "classify"
        model.producerVersion = "0.1.0"
        model.modelVersion = 1
        var opset = Onnx_OperatorSetIdProto()
        opset.domain = ""
        opset.version = ONNXLimits.exportOpset
        model.opsetImport = [opset]
        model.graph = graph
        let info = ONNXModelInfo(
            name: file.name, labels: file.labels, preprocessing: file.preprocessing, decision: file.decision,
            description: file.input.description, training: file.training)
        model.metadataProps = info.metadataEntries().map { entry in
            var property = Onnx_StringStringEntryProto()
            property.key = entry.key
            property.value = entry.value
            return property
        }
        return model
    }

    /// `kernel_shape`, `strides` and the padding of a window over `input`: explicit `pads` (all befores, then all
    /// afters) where `same` pads, `auto_pad` where it pads nothing (`SAME_UPPER` or `VALID`: the same numbers, and
    /// the import gives back the padding it was).
    static func windowAttributes(
        kernel: [Int], strides: [Int], input: [Int], geometry: [WindowGeometry], padding: Padding
    ) -> [Onnx_AttributeProto] {
        let before = geometry.map(\.padBefore)
        let after = (0..<kernel.count).map { axis in
            max((geometry[axis].outputLength - 1) * strides[axis] + kernel[axis] - input[axis] - before[axis], 0)
        }
        let window = [intsAttribute("kernel_shape", kernel), intsAttribute("strides", strides)]
        if padding == .same && (before + after).contains(where: { $0 != 0 }) { return window + [intsAttribute("pads", before + after)] }
        var autoPad = Onnx_AttributeProto()
        autoPad.name = "auto_pad"
        autoPad.type = .string
        autoPad.s = Data((padding == .same ? "SAME_UPPER" : "VALID").utf8)
        return window + [autoPad]
    }
}

/// Why a model cannot be exported.
public struct ONNXExportError: Error, CustomStringConvertible, Sendable {
    /// What stands in the way.
    public let reason: String
    /// One line.
    public var description: String { "cannot be exported to ONNX: \(reason)" }
}

/// The graph as it is built: nodes in order, initializers, fresh value names.
private struct GraphBuilder {
    var graph = Onnx_GraphProto()
    private var values = 0

    /// A node of `operation` on `inputs`; returns its output's name.
    mutating func node(_ operation: String, _ inputs: [String], name: String, attributes: [Onnx_AttributeProto] = []) -> String {
        values += 1
        let output = "v\(values)"
        var node = Onnx_NodeProto()
        node.opType = operation
        node.name = name
        node.input = inputs
        node.output = [output]
        node.attribute = attributes
        graph.node.append(node)
        return output
    }

    /// Makes the last node's output `name` (the graph's output).
    mutating func rename(_ value: String, to name: String) {
        guard let last = graph.node.indices.last, graph.node[last].output == [value] else { return }
        graph.node[last].output = [name]
    }

    /// A `FLOAT` initializer of `tensor`'s values.
    mutating func initializer(_ tensor: QuantizedTensor, name: String) -> String {
        graph.initializer.append(floatTensor(tensor.dequantized(), name: name))
        return name
    }

    /// A weight in ONNX's axis order (`permutation` of ours): `int8` as an `INT8` initializer dequantized per
    /// output channel, anything else as `FLOAT`.
    mutating func weight(_ tensor: QuantizedTensor, name: String, permutation: [Int]?) -> String {
        guard let (scales, stored) = tensor.int8Parts else {
            let values = tensor.dequantized()
            graph.initializer.append(floatTensor(permutation.map { values.permuted($0) } ?? values, name: name))
            return name
        }
        let rows = scales.count
        var integers = stored
        var shape = tensor.shape
        if let permutation {
            integers = permute(integers, shape: shape, permutation)
            shape = permutation.map { shape[$0] }
        }
        var quantized = Onnx_TensorProto()
        quantized.name = name + ".quantized"
        quantized.dataType = Int32(Onnx_TensorProto.DataType.int8.rawValue)
        quantized.dims = shape.map(Int64.init)
        quantized.rawData = integers.withUnsafeBytes { Data($0) }
        graph.initializer.append(quantized)
        graph.initializer.append(floatTensor(Tensor(shape: [rows], scalars: scales), name: name + ".scale"))
        var zero = Onnx_TensorProto()
        zero.name = name + ".zero_point"
        zero.dataType = Int32(Onnx_TensorProto.DataType.int8.rawValue)
        zero.dims = [Int64(rows)]
        zero.rawData = Data(count: rows)
        graph.initializer.append(zero)
        values += 1
        var node = Onnx_NodeProto()
        node.opType = "DequantizeLinear"
        node.name = name + "_DequantizeLinear"
        node.input = [quantized.name, name + ".scale", zero.name]
        node.output = [name]
        node.attribute = [intAttribute("axis", 0)]
        graph.node.append(node)
        return name
    }

    /// `value` quantized to `UINT8` and back as `activation` says (the input of our 8-bit layer `layer`).
    mutating func quantizeAndDequantize(_ value: String, _ activation: ActivationQuantization, layer: Int) -> String {
        let scale = "\(layer).input_scale", zero = "\(layer).input_zero_point"
        var scaleTensor = floatTensor(Tensor(shape: [], scalars: [activation.scale]), name: scale)
        scaleTensor.dims = []
        graph.initializer.append(scaleTensor)
        var zeroTensor = Onnx_TensorProto()
        zeroTensor.name = zero
        zeroTensor.dataType = Int32(Onnx_TensorProto.DataType.uint8.rawValue)
        zeroTensor.rawData = Data([UInt8(clamping: activation.zeroPoint)])
        graph.initializer.append(zeroTensor)
        let quantized = node("QuantizeLinear", [value, scale, zero], name: "\(layer)_QuantizeLinear")
        return node("DequantizeLinear", [quantized, scale, zero], name: "\(layer)_DequantizeLinear")
    }
}

extension Tensor {
    /// The tensor with its axes in `permutation`'s order.
    func permuted(_ permutation: [Int]) -> Tensor {
        Tensor(shape: permutation.map { shape[$0] }, scalars: permute(scalars, shape: shape, permutation))
    }
}

/// A `FLOAT` tensor proto of `tensor` (raw little-endian bytes).
func floatTensor(_ tensor: Tensor, name: String) -> Onnx_TensorProto {
    var proto = Onnx_TensorProto()
    proto.name = name
    proto.dataType = Int32(Onnx_TensorProto.DataType.float.rawValue)
    proto.dims = tensor.shape.map(Int64.init)
    // Our f32 storage is ONNX's raw FLOAT data: little-endian binary32, row-major.
    proto.rawData = Data(QuantizedTensor(quantizing: tensor, as: .f32).bytes)
    return proto
}

/// A value's declaration: element type and shape, the first axis the symbolic batch `N`.
func valueInfo(_ name: String, elementType: Onnx_TensorProto.DataType, shape: [Int]) -> Onnx_ValueInfoProto {
    var info = Onnx_ValueInfoProto()
    info.name = name
    var tensorType = Onnx_TypeProto.Tensor()
    tensorType.elemType = Int32(elementType.rawValue)
    var tensorShape = Onnx_TensorShapeProto()
    tensorShape.dim = shape.enumerated().map { axis, size in
        var dimension = Onnx_TensorShapeProto.Dimension()
        if axis == 0 { dimension.dimParam = "N" } else { dimension.dimValue = Int64(size) }
        return dimension
    }
    tensorType.shape = tensorShape
    var type = Onnx_TypeProto()
    type.tensorType = tensorType
    info.type = type
    return info
}

func intAttribute(_ name: String, _ value: Int) -> Onnx_AttributeProto {
    var attribute = Onnx_AttributeProto()
    attribute.name = name
    attribute.type = .int
    attribute.i = Int64(value)
    return attribute
}

func intsAttribute(_ name: String, _ values: [Int]) -> Onnx_AttributeProto {
    var attribute = Onnx_AttributeProto()
    attribute.name = name
    attribute.type = .ints
    attribute.ints = values.map(Int64.init)
    return attribute
}

func floatAttribute(_ name: String, _ value: Float) -> Onnx_AttributeProto {
    var attribute = Onnx_AttributeProto()
    attribute.name = name
    attribute.type = .float
    attribute.f = value
    return attribute
}

extension GraphBuilder {
    /// Appends the nodes of layer `index` (`spec`, its tensors in `tensors` under `INDEX.ROLE`) after `value`, the
    /// name of the value flowing through, whose ONNX layout is `shape`; both become the layer's output.
    mutating func append(
        _ spec: LayerSpec, index: Int, tensors: [String: QuantizedTensor], value: inout String, shape: inout [Int]
    ) throws(ONNXExportError) {
        func tensor(_ role: String) throws(ONNXExportError) -> QuantizedTensor {
            guard let stored = tensors["\(index).\(role)"] else { throw ONNXExportError(reason: "layer \(index) lacks its \(role)") }
            return stored
        }
        switch spec {
        case let .dense(_, outFeatures):
            let weight = weight(try tensor("weight"), name: "\(index).weight", permutation: nil)
            let bias = initializer(try tensor("bias"), name: "\(index).bias")
            value = node("Gemm", [value, weight, bias], name: "\(index)_Gemm", attributes: [intAttribute("transB", 1)])
            shape = [1, outFeatures]
        case let .conv2D(_, outChannels, kh, kw, sh, sw, padding):
            let rows = WindowGeometry(inputLength: shape[2], window: kh, stride: sh, padding: padding)
            let columns = WindowGeometry(inputLength: shape[3], window: kw, stride: sw, padding: padding)
            let weight = weight(try tensor("weight"), name: "\(index).weight", permutation: [0, 3, 1, 2])
            let bias = initializer(try tensor("bias"), name: "\(index).bias")
            value = node(
                "Conv", [value, weight, bias], name: "\(index)_Conv",
                attributes: ONNXExport.windowAttributes(
                    kernel: [kh, kw], strides: [sh, sw], input: [shape[2], shape[3]], geometry: [rows, columns], padding: padding))
            shape = [1, outChannels, rows.outputLength, columns.outputLength]
        case let .conv1D(_, outChannels, k, s, padding):
            let length = WindowGeometry(inputLength: shape[2], window: k, stride: s, padding: padding)
            let weight = weight(try tensor("weight"), name: "\(index).weight", permutation: [0, 2, 1])
            let bias = initializer(try tensor("bias"), name: "\(index).bias")
            value = node(
                "Conv", [value, weight, bias], name: "\(index)_Conv",
                attributes: ONNXExport.windowAttributes(kernel: [k], strides: [s], input: [shape[2]], geometry: [length], padding: padding))
            shape = [1, outChannels, length.outputLength]
        case let .pool2D(kind, h, w, sh, sw, padding):
            let rows = WindowGeometry(inputLength: shape[2], window: h, stride: sh, padding: padding)
            let columns = WindowGeometry(inputLength: shape[3], window: w, stride: sw, padding: padding)
            value = node(
                kind == .max ? "MaxPool" : "AveragePool", [value], name: "\(index)_Pool",
                attributes: ONNXExport.windowAttributes(
                    kernel: [h, w], strides: [sh, sw], input: [shape[2], shape[3]], geometry: [rows, columns], padding: padding))
            shape = [1, shape[1], rows.outputLength, columns.outputLength]
        case let .pool1D(kind, size, s, padding):
            let length = WindowGeometry(inputLength: shape[2], window: size, stride: s, padding: padding)
            value = node(
                kind == .max ? "MaxPool" : "AveragePool", [value], name: "\(index)_Pool",
                attributes: ONNXExport.windowAttributes(kernel: [size], strides: [s], input: [shape[2]], geometry: [length], padding: padding))
            shape = [1, shape[1], length.outputLength]
        case .globalAveragePool:
            value = node("GlobalAveragePool", [value], name: "\(index)_GlobalAveragePool")
            value = node("Flatten", [value], name: "\(index)_Flatten", attributes: [intAttribute("axis", 1)])
            shape = [1, shape[1]]
        case .flatten:
            if shape.count > 2 {
                // Back to channel-last first: our dense weights read the features in that order.
                let permutation = [0] + Array(2..<shape.count) + [1]
                value = node("Transpose", [value], name: "\(index)_Transpose", attributes: [intsAttribute("perm", permutation)])
            }
            value = node("Flatten", [value], name: "\(index)_Flatten", attributes: [intAttribute("axis", 1)])
            shape = [1, shape.dropFirst().reduce(1, *)]
        case let .batchNorm(_, epsilon):
            let inputs = try ["gamma", "beta", "mean", "variance"].map { role throws(ONNXExportError) in
                initializer(try tensor(role), name: "\(index).\(role)")
            }
            value = node(
                "BatchNormalization", [value] + inputs, name: "\(index)_BatchNormalization",
                attributes: [floatAttribute("epsilon", epsilon)])
        case let .activation(function):
            value = activation(function, after: value, index: index, axis: shape.count > 2 ? 1 : -1)
        case .transpose, .reshape, .pad, .constantOperation, .reduce:
            // Layers that only imported models have: they say which ONNX layout they were made for, not ours.
            throw ONNXExportError(reason: "layer \(index) (\(spec.summary)) is one only an imported model has, and is not exported")
        }
    }

    /// The node of activation `function` after `value` (layer `index`); a softmax's `axis` is the channels'.
    private mutating func activation(_ function: Activation.Function, after value: String, index: Int, axis: Int) -> String {
        switch function {
        case .relu: return node("Relu", [value], name: "\(index)_Relu")
        case .leakyRelu(let alpha):
            return node("LeakyRelu", [value], name: "\(index)_LeakyRelu", attributes: [floatAttribute("alpha", alpha)])
        case .sigmoid: return node("Sigmoid", [value], name: "\(index)_Sigmoid")
        case .tanh: return node("Tanh", [value], name: "\(index)_Tanh")
        case .softmax:
            return node("Softmax", [value], name: "\(index)_Softmax", attributes: [intAttribute("axis", axis)])
        case .logSoftmax:
            return node("LogSoftmax", [value], name: "\(index)_LogSoftmax", attributes: [intAttribute("axis", axis)])
        case .elu(let alpha):
            return node("Elu", [value], name: "\(index)_Elu", attributes: [floatAttribute("alpha", alpha)])
        case let .selu(alpha, gamma):
            return node(
                "Selu", [value], name: "\(index)_Selu", attributes: [floatAttribute("alpha", alpha), floatAttribute("gamma", gamma)])
        case .softplus: return node("Softplus", [value], name: "\(index)_Softplus")
        case .softsign: return node("Softsign", [value], name: "\(index)_Softsign")
        }
    }
}
#endif
