#if ONNX
import Foundation
import SwiftProtobuf
import Testing
import WeightsFormat

@testable import ONNX

/// Issue 46, hostile use round five: graphs ONNX Runtime refuses at load (or the spec rules out) that the import
/// read as something else, and a refusal whose message contradicted itself.
@Suite("ONNX import: invalid graphs and their messages")
struct ONNXInvalidGraphTests {
    typealias Graph = ONNXChainBoundTests

    /// `node` named `name`.
    static func named(_ name: String, _ node: Onnx_NodeProto) -> Onnx_NodeProto {
        var node = node
        node.name = name
        return node
    }

    /// A Reshape to `[-1, -1]` (before: read as a flatten).
    @Test func aReshapeWithTwoInferredAxesIsRefused() throws {
        let bytes = try Graph.raw([1, 2, 8, 8], [Self.named("reshape", Graph.node("Reshape", ["x", "s"], "y"))], [Graph.integers("s", [-1, -1])])
        #expect(Graph.reason(bytes) == "node reshape (Reshape): the shape [-1, -1] has more than one -1 (ONNX allows one)")
    }

    /// An opset-18 Pad whose `axes` input names axis 2 twice (before: the last pads given for it won).
    @Test func aPadWithARepeatedAxisIsRefused() throws {
        var model = try Onnx_ModelProto(
            serializedBytes: try Graph.raw(
                [1, 2, 8, 8], [Self.named("pad", Graph.node("Pad", ["x", "p", "v", "a"], "y"))],
                [Graph.integers("p", [1, 2, 1, 2]), Graph.floats("v", [0], []), Graph.integers("a", [2, 2])]))
        model.opsetImport[0].version = 18
        #expect(Graph.reason(try model.serializedData()) == "node pad (Pad): axis 2 appears twice in its axes [2, 2] (each axis once)")
        // -2 is axis 2 of 4 as well.
        model.graph.initializer[2] = Graph.integers("a", [2, -2])
        #expect(Graph.reason(try model.serializedData()) == "node pad (Pad): axis 2 appears twice in its axes [2, -2] (each axis once)")
    }

    /// An opset-6 Add with `broadcast` 2: opset 6 defines 0 and 1 (before: read as 1).
    @Test func anOpset6BroadcastOtherThan0Or1IsRefused() throws {
        var add = Self.named("add", Graph.node("Add", ["x", "c"], "y"))
        var broadcast = Onnx_AttributeProto()
        (broadcast.name, broadcast.type, broadcast.i) = ("broadcast", .int, 2)
        add.attribute = [broadcast]
        var model = try Onnx_ModelProto(
            serializedBytes: try Graph.raw([1, 2, 8, 8], [add], [Graph.floats("c", [Float](repeating: 1, count: 8), [8])]))
        (model.opsetImport[0].version, model.irVersion) = (6, 3)
        #expect(Graph.reason(try model.serializedData()) == "node add (Add): broadcast 2 (opset 6's broadcast is 0 or 1)")
        // Broadcast 1 along the last axis is read.
        model.graph.node[0].attribute[0].i = 1
        #expect(Graph.reason(try model.serializedData()) == "imported")
    }

    /// L8: an Elu with alpha 1e38 can reach 1e38, inside the float range but past the quarter of it the weights
    /// reader allows (before: "up to 1e+38, beyond the float range (±3.4e38)").
    @Test func theMagnitudeRefusalNamesTheLimitItApplies() throws {
        var elu = Graph.node("Elu", ["g"], "y")
        var alpha = Onnx_AttributeProto()
        (alpha.name, alpha.type, alpha.f) = ("alpha", .float, 1e38)
        elu.attribute = [alpha]
        var gemm = Graph.node("Gemm", ["f", "W", "B"], "g")
        var transB = Onnx_AttributeProto()
        (transB.name, transB.type, transB.i) = ("transB", .int, 1)
        gemm.attribute = [transB]
        let bytes = try Graph.raw(
            [1, 1, 16, 16], [Graph.node("Flatten", ["x"], "f"), gemm, elu],
            [Graph.floats("W", [Float](repeating: 0.01, count: 5 * 256), [5, 256]), Graph.floats("B", [0, 0, 0, 0, 0], [5])])
        let sidecar = ONNXModelInfo(labels: ["circle", "triangle", "square", "star", "other"], task: .shape)
        do {
            _ = try ONNXImport.modelFile(bytes: bytes, path: "m.onnx", sidecar: sidecar)
            Issue.record("an Elu with alpha 1e38 imported")
        } catch {
            guard case let .importFailed(_, reason) = error.problem else {
                Issue.record("\(error)")
                return
            }
            #expect(
                reason.contains(
                    "can give values up to 1e+38, over 8.51e+37, the most any layer may reach (a quarter of the float range ±3.4e38, kept for rounding and softmax)"
                ), "\(reason)")
            #expect(!reason.contains("beyond"), "\(reason)")
        }
    }
}
#endif
