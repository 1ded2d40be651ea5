#if ONNX
import Foundation
import Models
import SwiftProtobuf
import Testing
import WeightsFormat

@testable import ONNX

/// Issue 46, hostile use round five: small files whose layers each held the chain's whole size (a `Neg`, a `Max`,
/// `Min`, `Sub`, `Div` or `Clip` of a scalar) or an expanded weight (a grouped convolution sharing one small
/// initializer) — a 1 KB file took 2 GB, an 11 KB one aborted — are refused at the node that passes the import's
/// budget, before its tensors are made; a recognizer so refused is a permanent failure the chain falls back from.
/// And three invalid graphs ONNX Runtime refuses are refused here too. The sizes are the scripts' (in
/// `scripts/onnx/hostile_round5.py`), scaled down.
@Suite("ONNX import: what a small file may make")
struct ONNXAmplificationTests {
    typealias Graph = ONNXChainBoundTests

    /// The budget's message for `node` of `op` in a file of `bytes` bytes, whose layers would hold `held` values
    /// with `adding` for this node.
    static func refusal(_ node: String, _ op: String, held: Int, adding: Int, bytes: Int) -> String {
        "node \(node) (\(op)): the model's layers would hold \(held) values (\(adding) for this node); a file of \(bytes) bytes may make at most \(ONNXLimits.maximumLayerValues(fileBytes: bytes)) (16 a byte, at least 262144, at most 1048576)"
    }

    /// A named node of `type`.
    static func node(_ type: String, _ name: String, _ inputs: [String], _ output: String, ints: [String: Int64] = [:]) -> Onnx_NodeProto {
        var node = Graph.node(type, inputs, output)
        node.name = name
        node.attribute = ints.sorted { $0.key < $1.key }.map { name, value in
            var attribute = Onnx_AttributeProto()
            (attribute.name, attribute.type, attribute.i) = (name, .int, value)
            return attribute
        }
        return node
    }

    /// The budget: 16 values a byte of the file, between 2^18 and the weights reader's 2^20 parameters.
    @Test func theBudgetGrowsWithTheFileBetweenItsBounds() {
        #expect(ONNXLimits.maximumLayerValues(fileBytes: 0) == 1 << 18)
        #expect(ONNXLimits.maximumLayerValues(fileBytes: 1_054) == 1 << 18)
        #expect(ONNXLimits.maximumLayerValues(fileBytes: 20_000) == 320_000)
        #expect(ONNXLimits.maximumLayerValues(fileBytes: 1 << 16) == 1 << 20)
        #expect(ONNXLimits.maximumLayerValues(fileBytes: ONNXLimits.maximumFileBytes) == WeightsLimits.maximumParameters)
    }

    /// H1: a chain of `Neg`s over `[N, 2^16]` (before: each a layer of 2^16 values, 60 of 2^22 took 2 GB): the
    /// fifth passes 2^18 and is refused, by name.
    @Test func aChainOfNegationsIsRefusedAtTheNodeThatPassesTheBudget() throws {
        let width = 1 << 16
        let nodes = (0..<10).map { Self.node("Neg", "Neg_\($0)", [$0 == 0 ? "x" : "v\($0 - 1)"], $0 == 9 ? "y" : "v\($0)") }
        let bytes = try Graph.raw([1, Int64(width)], nodes)
        #expect(Graph.reason(bytes) == Self.refusal("Neg_4", "Neg", held: 5 * width, adding: width, bytes: bytes.count))
        // Three of them import (four would fit the budget, but not a weights file as float: 1 MiB).
        #expect(Graph.reason(try Graph.raw([1, Int64(width)], Array(nodes.prefix(3)).renamingLastOutput("y"))) == "imported")
    }

    /// H1: `Max`, `Min`, `Sub`, `Div` of a scalar constant and `Clip` (two layers, a maximum and a minimum) are
    /// each a layer of the chain's size, counted alike.
    @Test(arguments: ["Max", "Min", "Sub", "Div", "Clip"])
    func operationsWithAScalarAreCountedAsTheChainsSize(op: String) throws {
        let width = 1 << 16
        let nodes = (0..<6).map { index in
            Self.node(op, "\(op)_\(index)", [index == 0 ? "x" : "v\(index - 1)", "c"] + (op == "Clip" ? ["c"] : []), index == 5 ? "y" : "v\(index)")
        }
        let bytes = try Graph.raw([1, Int64(width)], nodes, [Graph.floats("c", [2], [])])
        // A Clip's second layer is its minimum: its third node's first layer passes 2^18.
        let refused = op == "Clip" ? 2 : 4
        #expect(Graph.reason(bytes) == Self.refusal("\(op)_\(refused)", op, held: 5 * width, adding: width, bytes: bytes.count))
    }

    /// H1: depthwise convolutions sharing one `[256, 1, 1, 1]` weight, each made a dense `[256, 256, 1, 1]` one
    /// (65,536 values and 256 biases): the fourth passes 2^18, and is refused before its weight is expanded.
    @Test func groupedConvolutionsSharingOneWeightAreCountedExpanded() throws {
        let channels = 256
        let nodes = (0..<6).map { index in
            Self.node("Conv", "conv\(index)", [index == 0 ? "x" : "v\(index - 1)", "w"], index == 5 ? "y" : "v\(index)", ints: ["group": 256])
        }
        let weight = Graph.floats("w", [Float](repeating: 0.5, count: channels), [Int64(channels), 1, 1, 1])
        let bytes = try Graph.raw([1, Int64(channels), 1, 1], nodes, [weight])
        let each = channels * channels + channels
        #expect(Graph.reason(bytes) == Self.refusal("conv3", "Conv", held: 4 * each, adding: each, bytes: bytes.count))
    }

    /// Batch normalizations folded, one after another, into one dense layer (each remakes its weight and bias;
    /// 5,000 folded so into a 1 MB layer took 13 s): the fold that would pass 2^22 rewritten values is refused. The
    /// converter starts with its fold account nearly spent, so that two folds of a 16 × 16 layer reach the limit.
    @Test func foldsIntoOneLayerAreCounted() throws {
        let width = 16
        var nodes = [Self.node("Gemm", "gemm", ["x", "W", "B"], "v0")]
        nodes += (0..<3).map { Self.node("BatchNormalization", "bn\($0)", ["v\($0)", "s", "B", "B", "s"], $0 == 2 ? "y" : "v\($0 + 1)") }
        let bytes = try Graph.raw(
            [1, Int64(width)], nodes,
            [
                Graph.floats("W", [Float](repeating: 0.01, count: width * width), [Int64(width), Int64(width)]),
                Graph.floats("B", [Float](repeating: 0, count: width), [Int64(width)]),
                Graph.floats("s", [Float](repeating: 1, count: width), [Int64(width)]),
            ])
        let each = width * width + width, limit = ONNXLimits.maximumFoldedLayerValues
        var converter = try GraphConverter(model: try Onnx_ModelProto(serializedBytes: bytes), raw: true, fileBytes: bytes.count)
        converter.budget.foldedLayerValues = limit - each - 1
        do {
            try converter.run()
            Issue.record("the second fold was not refused")
        } catch {
            #expect(
                error.reason
                    == "node bn1 (BatchNormalization): folding it into layer 0 would rewrite \(each) more values (\(limit - 1) so far); folds may rewrite at most \(limit) in all"
            )
        }
        // Without the account spent, the same graph imports.
        #expect(Graph.reason(bytes) == "imported")
    }

    /// H1b: a recognizer (labels and a task) whose graph pads the 16×16 raster to 256×256 (free: a pad holds no
    /// tensor), then negates it 20 times: refused at the fifth `Neg`, a permanent failure of its link, so the
    /// chain answers from the next (before: SIGABRT at 2 GB with 500 of them at 1024×1024, no answer).
    @Test func aRefusedRecognizerIsAPermanentFailureTheChainFallsBackFrom() throws {
        var nodes = [Self.node("Pad", "pad", ["x", "p"], "v0")]
        nodes += (0..<20).map { Self.node("Neg", "Neg_\($0)", ["v\($0)"], "v\($0 + 1)") }
        var mean = Self.node("ReduceMean", "mean", ["v20"], "m", ints: ["keepdims": 0])
        var axes = Onnx_AttributeProto()
        (axes.name, axes.type, axes.ints) = ("axes", .ints, [2, 3])
        mean.attribute.append(axes)
        nodes += [mean, Graph.node("Gemm", ["m", "W", "B"], "y")]
        let initializers = [
            Graph.integers("p", [0, 0, 120, 120, 0, 0, 120, 120]), Graph.floats("W", [1, 1, 1, 1, 1], [1, 5]),
            Graph.floats("B", [0, 0, 0, 0, 0], [5]),
        ]
        let bytes = try Graph.raw([1, 1, 16, 16], nodes, initializers)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bomb-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = folder.appendingPathComponent("m.onnx")
        try bytes.write(to: model)
        try Data(#"{"labels": ["circle", "triangle", "square", "star", "other"], "task": "shape"}"#.utf8).write(
            to: URL(fileURLWithPath: model.path + ".json"))
        ONNXFormat.register()

        let links = [
            ChainLink<String>(name: "m") {
                _ = try ShapeRecognizer(contentsOf: model); return "m"
            },
            ChainLink<String>(name: "geometric") { "geometric" },
        ]
        let result = try runChain(links, policy: RetryPolicy(retries: 3, backoff: 0))
        #expect(result.model == "geometric")
        #expect(result.attempts.map(\.kind) == [.permanent])
        let expected = Self.refusal("Neg_4", "Neg", held: 5 * 256 * 256, adding: 256 * 256, bytes: bytes.count)
        #expect(result.attempts.first?.error.contains(expected) == true, "\(result.attempts)")
    }
}

extension [Onnx_NodeProto] {
    /// The nodes with the last one's output renamed `name` (the graph's output).
    func renamingLastOutput(_ name: String) -> [Onnx_NodeProto] {
        var nodes = self
        nodes[nodes.count - 1].output = [name]
        return nodes
    }
}
#endif
