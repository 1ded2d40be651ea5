#if ONNX
import Foundation
import SwiftProtobuf
import Testing
import WeightsFormat

@testable import ONNX

/// Issue 37's review: crafted graphs that made the chain's value grow past every limit, or sized an allocation by a
/// product that overflowed, while the new operators converted it (before: a trap, a 17 TB allocation, 8 GB and 26 s,
/// a 2.5-minute loop). Each is now refused at the node, by name, in milliseconds.
@Suite("ONNX import: the chain's value stays bounded")
struct ONNXChainBoundTests {
    /// A raw model (no labels, no task): input `x` of `shape`, `nodes`, output `y`, at opset 13.
    static func raw(_ shape: [Int64], _ nodes: [Onnx_NodeProto], _ initializers: [Onnx_TensorProto] = []) throws -> Data {
        var input = Onnx_ValueInfoProto()
        input.name = "x"
        input.type.tensorType.elemType = 1
        input.type.tensorType.shape.dim = shape.map { size in
            var dimension = Onnx_TensorShapeProto.Dimension()
            dimension.dimValue = size
            return dimension
        }
        var output = Onnx_ValueInfoProto()
        output.name = "y"
        var model = Onnx_ModelProto()
        model.irVersion = 8
        var opset = Onnx_OperatorSetIdProto()
        opset.version = 13
        model.opsetImport = [opset]
        model.graph.input = [input]
        model.graph.output = [output]
        model.graph.node = nodes
        model.graph.initializer = initializers
        return try model.serializedData()
    }

    static func node(_ type: String, _ inputs: [String], _ output: String, ints: [String: [Int64]] = [:]) -> Onnx_NodeProto {
        var node = Onnx_NodeProto()
        (node.opType, node.input, node.output) = (type, inputs, [output])
        node.attribute = ints.sorted { $0.key < $1.key }.map { name, values in
            var attribute = Onnx_AttributeProto()
            (attribute.name, attribute.type, attribute.ints) = (name, .ints, values)
            return attribute
        }
        return node
    }

    static func integers(_ name: String, _ values: [Int64]) -> Onnx_TensorProto {
        var tensor = Onnx_TensorProto()
        (tensor.name, tensor.dataType, tensor.dims, tensor.int64Data) = (name, 7, [Int64(values.count)], values)
        return tensor
    }

    static func floats(_ name: String, _ values: [Float], _ dims: [Int64]) -> Onnx_TensorProto {
        var tensor = Onnx_TensorProto()
        (tensor.name, tensor.dataType, tensor.dims, tensor.floatData) = (name, 1, dims, values)
        return tensor
    }

    /// The import's reason for refusing `bytes`, or "imported".
    static func reason(_ bytes: Data) -> String {
        do {
            _ = try ONNXImport.modelFile(bytes: bytes, path: "m.onnx")
            return "imported"
        } catch {
            guard case let .importFailed(_, reason) = error.problem else { return error.description }
            return reason
        }
    }

    @Test func growingOrOverflowingShapesAreRefusedAtTheirNode() throws {
        let p: Int64 = 1 << 20
        let padded = Self.reason(
            try Self.raw([1, 1, 1, 1, 1], [Self.node("Pad", ["x", "p"], "y")], [Self.integers("p", [0, p, p, p, p, 0, p, p, p, p])]))
        #expect(padded.hasPrefix("node (unnamed) (Pad) makes a value of shape [1, 2097153, 2097153, 2097153, 2097153]"), "\(padded)")
        let paddedThenAdded = Self.reason(
            try Self.raw(
                [1, 1, 1], [Self.node("Pad", ["x", "p"], "q"), Self.node("Add", ["q", "c"], "y")],
                [Self.integers("p", [0, p, p, 0, p, p]), Self.floats("c", [1], [])]))
        #expect(paddedThenAdded.hasPrefix("node (unnamed) (Pad) makes a value of shape [1, 2097153, 2097153]"), "\(paddedThenAdded)")
        let pool = Self.reason(
            try Self.raw([1, 1, 1], [Self.node("AveragePool", ["x"], "y", ints: ["kernel_shape": [1], "pads": [1 << 30, 1 << 30]])]))
        #expect(pool.hasSuffix("is not supported with pads [1073741824, 1073741824] (from 0 to 1048576 each)"), "\(pool)")
        let reshape = Self.reason(
            try Self.raw([1, 4], [Self.node("Reshape", ["x", "s"], "y")], [Self.integers("s", [1, -1, 1 << 62, 4])]))
        #expect(reshape.hasSuffix("is not supported to [1, -1, 4611686018427387904, 4] for [1, 4]"), "\(reshape)")
        let unsqueeze = Self.reason(
            try Self.raw([1, 4], [Self.node("Unsqueeze", ["x", "a"], "y")], [Self.integers("a", (1...400_000).map(Int64.init))]))
        #expect(unsqueeze.hasSuffix("is not supported to 400002 axes (at most 9 are read)"), "\(unsqueeze)")
    }

    /// The second review's files: a transposed convolution whose kernel has an axis of 0 (before: a trap), one whose
    /// output_padding reaches its stride (ONNX Runtime refuses it; we answered PyTorch's shape), and reflect or edge
    /// pads that ONNX, cropping first, cannot make.
    @Test func malformedTransposedConvolutionsAndCropsAreRefused() throws {
        let empty = Self.reason(try Self.raw([1, 2, 3, 3], [Self.node("ConvTranspose", ["x", "w"], "y")], [Self.floats("w", [], [2, 3, 0, 3])]))
        #expect(empty.hasSuffix("is not supported with a weight [2, 3, 0, 3]"), "\(empty)")
        let padding = Self.reason(
            try Self.raw(
                [1, 2, 4, 4], [Self.node("ConvTranspose", ["x", "w"], "y", ints: ["dilations": [3, 3], "output_padding": [2, 1]])],
                [Self.floats("w", [Float](repeating: 0.5, count: 36), [2, 2, 3, 3])]))
        #expect(padding.hasSuffix("is not supported with output_padding [2, 1] (each below its stride)"), "\(padding)")
        var reflect = Self.node("Pad", ["x", "p"], "y")
        var mode = Onnx_AttributeProto()
        (mode.name, mode.type, mode.s) = ("mode", .string, Data("reflect".utf8))
        reflect.attribute = [mode]
        let reflected = Self.reason(try Self.raw([1, 2, 5, 6], [reflect], [Self.integers("p", [0, 0, -2, 3, 0, 0, 4, -1])]))
        #expect(reflected.hasSuffix("is not supported reflecting by 4 along an axis of 3 (after its crop)"), "\(reflected)")
    }
}
#endif
