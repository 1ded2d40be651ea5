#if ONNX
import Foundation
import Models
import SwiftProtobuf
import Testing
import WeightsFormat

@testable import ONNX

/// Texts a model or its sidecar brings (operator, domain, node names, `auto_pad`, the sidecar's `task`,
/// `preprocessing.kind`, labels) reach an import error with their control characters as `?`, so printing the
/// error never drives the terminal (colours, window titles) or forges a line (issue 31, defect 8).
@Suite("ONNX import errors are safe to print")
struct ONNXErrorTextTests {
    /// Hostile texts and how an error shows them: an OSC window title, CR LF and a forged line, a colour (CSI),
    /// a C1 CSI, DEL.
    static let hostile: [(text: String, shown: String)] = [
        ("\u{1B}]0;title\u{07}", "?]0;title?"), ("\r\nFAKE: ok", "??FAKE: ok"), ("\u{1B}[31mred", "?[31mred"), ("\u{9B}2J", "?2J"),
        ("a\u{7F}b", "a?b"),
    ]

    /// Whether `text` holds no control character (C0, DEL, C1).
    static func isTerminalSafe(_ text: String) -> Bool {
        !text.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    /// The import's error for `model` (with `sidecar`), checked to be safe to print in both its forms.
    static func importError(
        _ model: Onnx_ModelProto, sidecar: ONNXModelInfo? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> String {
        let data = try model.serializedData()
        do throws(WeightsFileError) {
            _ = try ONNXImport.modelFile(bytes: data, path: "m.onnx", sidecar: sidecar)
        } catch {
            #expect(isTerminalSafe(error.description), "\(error.description.debugDescription)", sourceLocation: sourceLocation)
            #expect(isTerminalSafe(error.problemText), "\(error.problemText.debugDescription)", sourceLocation: sourceLocation)
            return error.description
        }
        Issue.record("imported", sourceLocation: sourceLocation)
        return ""
    }

    @Test(arguments: hostile)
    func operatorAndNodeNames(text: String, shown: String) throws {
        var model = try ONNXRoundTripTests.exportedShapeModel()
        let relu = try #require(model.graph.node.firstIndex { $0.opType == "Relu" })
        model.graph.node[relu].opType = "Elu" + text
        model.graph.node[relu].name = text + "relu"
        #expect(
            try Self.importError(model)
                == "m.onnx: cannot be read as an ONNX model: operator Elu\(shown) (node \(shown)relu, opset 13) is not supported")
    }

    @Test(arguments: hostile)
    func domain(text: String, shown: String) throws {
        var model = try ONNXRoundTripTests.exportedShapeModel()
        let relu = try #require(model.graph.node.firstIndex { $0.opType == "Relu" })
        model.graph.node[relu].domain = text
        #expect(try Self.importError(model).contains("operator \(shown).Relu (node"))
    }

    @Test(arguments: hostile)
    func autoPad(text: String, shown: String) throws {
        var model = try ONNXRoundTripTests.exportedShapeModel()
        let pool = try #require(model.graph.node.firstIndex { $0.opType == "MaxPool" && $0.attribute.contains { $0.name == "auto_pad" } })
        let attribute = try #require(model.graph.node[pool].attribute.firstIndex { $0.name == "auto_pad" })
        model.graph.node[pool].attribute[attribute].s = Data(text.utf8)
        #expect(try Self.importError(model).contains("with auto_pad \(shown)"))
    }

    @Test(arguments: hostile)
    func sidecarTaskKindAndLabels(text: String, shown: String) throws {
        let model = try ONNXRoundTripTests.exportedShapeModel()
        let labels = ["circle", "triangle", "square", "star", "other"]
        // A task is typed in code: an unknown one can only come from JSON (here the model's metadata).
        var unknownTask = model
        var entry = Onnx_StringStringEntryProto()
        (entry.key, entry.value) = ("task", String(decoding: try JSONEncoder().encode(text), as: UTF8.self))
        unknownTask.metadataProps.removeAll { $0.key == "task" || $0.key == "preprocessing" }
        unknownTask.metadataProps.append(entry)
        #expect(try Self.importError(unknownTask).contains("task '\(shown)' is not shape or motion"))
        // Beside a preprocessing that says it in full, an unknown task is passed over, as before the task was typed.
        var withPreprocessing = model
        withPreprocessing.metadataProps.removeAll { $0.key == "task" }
        withPreprocessing.metadataProps.append(entry)
        let imported = try ONNXImport.modelFile(bytes: try withPreprocessing.serializedData(), path: "m.onnx")
        #expect(imported.preprocessingKind == .raster)
        _ = try Self.importError(model, sidecar: ONNXModelInfo(labels: labels, preprocessing: ["kind": .string(text)]))
        _ = try Self.importError(model, sidecar: ONNXModelInfo(labels: ["circle", "triangle", "square", "star", text], task: .shape))
    }
}
#endif
