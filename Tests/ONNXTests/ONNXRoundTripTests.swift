#if ONNX
import Foundation
import Models
import SwiftProtobuf
import Tensor
import Testing
import WeightsFormat

@testable import ONNX

/// Our models out to ONNX and back, and what the import refuses.
@Suite("ONNX export and import")
struct ONNXRoundTripTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// A shipped model, read as the engine reads it.
    static func shipped(_ variant: String) throws -> ModelFile {
        try ModelFile(bytes: try #require(ShippedWeights.bytes(of: variant)), path: variant)
    }

    /// Ours → ONNX → ours: the same file, byte for byte (every tensor, the labels, preprocessing, decision rule,
    /// training record and the int8 layers' input quantization).
    @Test(arguments: ShippedWeights.variants)
    func aShippedModelComesBackByteForByte(variant: String) throws {
        let file = try Self.shipped(variant)
        let data = try ONNXExport.data(of: file)
        let back = try ONNXImport.modelFile(bytes: data, path: "\(variant).onnx")
        #expect(back.tensors == file.tensors)
        #expect(back.architecture == file.architecture)
        #expect(back.activationQuantization == file.activationQuantization)
        let same = back.encoded() == file.encoded()
        #expect(same)
    }

    /// `ShapeRecognizer(contentsOf:)` with an `.onnx` URL (after `ONNXFormat.register()`) answers as the model it
    /// was exported from, and the export's metadata names the labels and preprocessing.
    @Test func aRecognizerReadsAnONNXFile() throws {
        ONNXFormat.register()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("onnx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = try Self.shipped("shape-classifier.int8")
        let url = folder.appendingPathComponent("shape.onnx")
        try ONNXExport.data(of: file).write(to: url)
        let model = try Onnx_ModelProto(serializedBytes: Data(contentsOf: url))
        let metadata = Dictionary(uniqueKeysWithValues: model.metadataProps.map { ($0.key, $0.value) })
        #expect(metadata["labels"] == "[\"circle\",\"triangle\",\"square\",\"star\",\"other\"]")
        #expect(metadata["preprocessing"]?.contains("\"kind\":\"raster\"") == true)
        let fromONNX = try ShapeRecognizer(contentsOf: url)
        let builtIn = try ShapeRecognizer(weights: try #require(ShippedWeights.bytes(of: "shape-classifier.int8")), model: "shape-classifier.int8")
        let circle = Drawing(strokes: [
            (0...40).map { step in DrawingPoint(x: 100 * cos(Double(step) * .pi / 20), y: 100 * sin(Double(step) * .pi / 20)) }
        ])
        let a = try fromONNX.recognize(circle), b = try builtIn.recognize(circle)
        #expect(a.label == "circle" && a.label == b.label && a.confidence == b.confidence)
    }

    /// The exported shape model, as protobuf, for the hostile cases below.
    static func exportedShapeModel() throws -> Onnx_ModelProto {
        try ONNXExport.model(of: try shipped("shape-classifier.f32"))
    }

    /// The import's error for `model`.
    static func importError(_ model: Onnx_ModelProto) throws -> String {
        let data = try model.serializedData()
        do {
            _ = try ONNXImport.modelFile(bytes: data, path: "m.onnx")
        } catch {
            guard case let .importFailed(format, reason) = error.problem else { return error.description }
            #expect(format == "ONNX")
            return reason
        }
        return "imported"
    }

    /// A model with neither labels nor a task imports as a raw model (issue 37): no labels, no preprocessing, no
    /// decision, and the same outputs as the labelled model; a task without labels is still an error.
    @Test func aModelWithoutLabelsOrTaskImportsRaw() throws {
        let labelled = try Self.exportedShapeModel()
        var bare = labelled
        bare.metadataProps.removeAll()
        let raw = try ONNXImport.modelFile(bytes: try bare.serializedData(), path: "bare.onnx")
        #expect(raw.labels.isEmpty && raw.preprocessing.isEmpty && raw.decision == nil)
        #expect(raw.otherTaskProblem(.shape)?.hasPrefix("is a raw model") == true)
        let full = try ONNXImport.modelFile(bytes: try labelled.serializedData(), path: "m.onnx")
        // The raw model takes the input as ONNX declares it, NCHW [1, 16, 16]: with one channel, the same bytes as the
        // recognizer's [16, 16, 1].
        #expect(raw.input.shape == [1, 16, 16] && full.input.shape == [16, 16, 1])
        var generator = SeededGenerator(seed: 37)
        let input = (0..<raw.input.shape.reduce(1, *)).map { _ in Float.random(in: 0...1, using: &generator) }
        var rawOutput = [Float](repeating: .nan, count: full.labels.count), fullOutput = rawOutput
        input.withUnsafeBufferPointer { input in
            rawOutput.withUnsafeMutableBufferPointer { raw.makeCompiledModel().run(input, into: $0) }
            fullOutput.withUnsafeMutableBufferPointer { full.makeCompiledModel().run(input, into: $0) }
        }
        #expect(rawOutput == fullOutput)
        var taskOnly = labelled
        taskOnly.metadataProps.removeAll { $0.key == "labels" }
        #expect(try Self.importError(taskOnly).hasPrefix("no labels"))
    }

    /// Every cut of a model is an error, never a crash.
    @Test func everyTruncationIsAnError() throws {
        let data = try Self.exportedShapeModel().serializedData()
        for length in stride(from: 0, to: data.count, by: 61) {
            #expect(throws: WeightsFileError.self) { _ = try ONNXImport.modelFile(bytes: data.prefix(length), path: "cut.onnx") }
        }
    }

    /// Unknown operators, huge dimensions, cycles, dangling inputs and branches: errors naming the node, operator
    /// and opset, or the limit.
    @Test func hostileGraphsArePreciseErrors() throws {
        var model = try Self.exportedShapeModel()
        let relu = try #require(model.graph.node.firstIndex { $0.opType == "Relu" })
        model.graph.node[relu].opType = "Gelu"
        #expect(try Self.importError(model) == "operator Gelu (node \(model.graph.node[relu].name), opset 13) is not supported")

        model = try Self.exportedShapeModel()
        model.graph.initializer[0].dims = [1 << 40]
        #expect(try Self.importError(model).contains("has an axis of 1099511627776"))

        model = try Self.exportedShapeModel()
        model.graph.initializer[0].dims = [1 << 20, 1 << 20]
        #expect(try Self.importError(model).contains("more than 4194304 elements"))

        model = try Self.exportedShapeModel()
        // The first node reads the last one's output: a cycle.
        let last = try #require(model.graph.node.last?.output.first)
        model.graph.node[0].input[0] = last
        #expect(try Self.importError(model).contains("cycle") || Self.importError(model).contains("reads"))

        model = try Self.exportedShapeModel()
        model.graph.node[3].input[0] = "nowhere"
        #expect(try Self.importError(model).contains("reads nowhere, which no node, input or initializer makes"))

        model = try Self.exportedShapeModel()
        model.opsetImport[0].version = 99
        #expect(try Self.importError(model) == "opset 99 is not read here (opsets 6–23)")

        model = try Self.exportedShapeModel()
        model.metadataProps.removeAll { $0.key == "labels" }
        #expect(try Self.importError(model).hasPrefix("no labels"))

        model = try Self.exportedShapeModel()
        model.graph.node.append(model.graph.node[model.graph.node.count - 1])
        #expect(try Self.importError(model).contains("is made twice"))
    }

    /// A graph as large as the limits allow in nodes is refused before it is walked.
    @Test func tooManyNodesAreRefused() throws {
        var model = try Self.exportedShapeModel()
        model.graph.node += Array(repeating: Onnx_NodeProto(), count: ONNXLimits.maximumNodes)
        #expect(try Self.importError(model) == "more than \(ONNXLimits.maximumNodes) nodes (counted before decoding)")
    }

    /// A model from elsewhere takes its labels and task from a sidecar; a sidecar that is not the JSON it
    /// documents is an error naming it.
    @Test func aSidecarGivesLabelsAndTask() throws {
        let data = try Data(contentsOf: Self.fixtures.appendingPathComponent("torch-motion-mlp.onnx"))
        let info = ONNXModelInfo(labels: ["walking", "running", "still"], task: .motion)
        let file = try ONNXImport.modelFile(bytes: data, path: "mlp.onnx", sidecar: info)
        #expect(file.labels == ["walking", "running", "still"])
        #expect(file.preprocessing["kind"] == .string("motion-autocorrelation"))
        #expect(file.name == "mlp")
        // Batch normalization after the first dense layer is folded into it.
        #expect(file.architecture.map(\.summary) == ["Dense 194→24", "Activation leakyRelu(alpha: 0.1)", "Dense 24→3", "Activation softmax"])
        #expect(throws: ONNXImportError.self) {
            _ = try ONNXModelInfo.merged(metadata: [], sidecar: (Data("{\"labels\": 3}".utf8), "x.json"), modelPath: "m.onnx")
        }
    }

    /// Files a code review built to crash the import (Int64.min attributes, NaN casts and zero points, overflowing
    /// reshapes and input shapes, a squeeze of a long axis, an empty scale, int8 values out of range) or to make it
    /// compute wrongly (batch normalization on channel-last maps, a DequantizeLinear that does not undo its
    /// QuantizeLinear): each is an import error naming what is wrong, never a trap. Before: 10 traps, 2 wrong answers.
    @Test(arguments: [
        ("attr-int64-min", "attribute axis is not a small integer"), ("softmax-old-axis", "is not supported over axis -6"),
        ("int8-int32data-range", "holds a value outside -128...127"), ("cast-nan", "casts a value that is not a finite integer"),
        ("quantize-const-nan", "a value that is not finite"), ("chain-q-zero-nan", "zero point nan"),
        ("chain-q-zero-i64max", "zero point 9.223372e+18"), ("const-reshape-overflow", "Reshape"),
        ("const-squeeze-non1", "only axes of size 1 can go"), ("dq-empty-scale", "an empty scale or zero point"),
        ("qdq-dq-scale", "another scale or zero point than its QuantizeLinear's"),
        ("input-dims-overflow", "values"),
    ])
    func reviewedHostileFilesAreErrors(name: String, message: String) throws {
        let url = Self.fixtures.deletingLastPathComponent().appendingPathComponent("Hostile/\(name).onnx")
        do {
            _ = try ONNXImport.modelFile(contentsOf: url)
            Issue.record("\(name) was imported")
        } catch {
            guard case let .importFailed(_, reason) = error.problem else {
                Issue.record("\(name): \(error)")
                return
            }
            #expect(reason.contains(message), "\(name): \(reason)")
        }
    }
}
#endif
