import Foundation
import Models
import Tensor
import Testing
import WeightsFormat

/// Texts from a model, its sidecar or a weights file (operator and node names, the sidecar's task, a model's name,
/// description and dataset) reach the terminal with their control characters as `?`, and JSON with them escaped
/// — never raw: no colour change, window title or forged `FAKE: ok` line (issue 31, defect 8).
@Suite("classify prints what a model holds safely")
struct TerminalSafeOutputTests {
    /// Whether `text` holds no control character (C0, DEL, C1) other than the line feeds between its lines.
    static func isTerminalSafe(_ text: String) -> Bool {
        !text.unicodeScalars.contains { $0 != "\n" && $0.properties.generalCategory == .control }
    }

    /// The shipped int8 shape model exported to ONNX in `folder`, with its first `Relu` node's operator made
    /// `ESC [2J` (clear the screen) and its name (`1_Relu`) `CR LF FAKE`: the same lengths, so the protobuf stays
    /// valid.
    static func hostileONNX(in folder: URL) throws -> String {
        let model = folder.appendingPathComponent("hostile.onnx").path
        let export = try CommandRun.classify([
            "export", "onnx", packageRoot.appendingPathComponent("Weights/shape-classifier.int8.weights").path, "-o", model,
        ])
        #expect(export.status == 0, "\(export.standardError)")
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: model)))
        // NodeProto: name is field 3 (tag 0x1A), op_type field 4 (tag 0x22), each a length and the bytes.
        let node: [UInt8] = [0x1A, 6] + Array("1_Relu".utf8) + [0x22, 4] + Array("Relu".utf8)
        let start = try #require((0...(bytes.count - node.count)).first { bytes[$0..<($0 + node.count)].elementsEqual(node) })
        bytes.replaceSubrange(start..<(start + node.count), with: [0x1A, 6] + Array("\r\nFAKE".utf8) + [0x22, 4] + Array("\u{1B}[2J".utf8))
        try Data(bytes).write(to: URL(fileURLWithPath: model))
        return model
    }

    #if ONNX
    @Test func importAndTheChainShowHostileNamesAsQuestionMarks() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = try Self.hostileONNX(in: folder)
        let problem = "\(model): cannot be read as an ONNX model: operator ?[2J (node ??FAKE, opset 13) is not supported"
        let imported = try CommandRun.classify(["import", "onnx", model, "-o", folder.appendingPathComponent("out.weights").path])
        #expect(imported.status == 65)
        #expect(imported.standardError == "error: \(problem)\n")

        let drawing = packageRoot.appendingPathComponent("Datasets/examples/star.csv").path
        let recording = packageRoot.appendingPathComponent("Datasets/examples/running.csv").path
        for input in [["shape", drawing], ["motion", recording]] {
            // The named model is an error (70)…
            let named = try CommandRun.classify(input + ["--weights", model])
            #expect(named.status == 70)
            #expect(named.standardError.contains(problem), "\(named.standardError)")
            #expect(Self.isTerminalSafe(named.standardError), "\(named.standardError.debugDescription)")
            // …or, with --fallback, an attempt: a warning line, and in --json an escaped string.
            let fallback = try CommandRun.classify(input + ["--weights", model, "--fallback"])
            #expect(fallback.status == 0, "\(fallback.standardError)")
            #expect(fallback.standardError.contains(problem), "\(fallback.standardError)")
            #expect(Self.isTerminalSafe(fallback.standardError + fallback.standardOutput), "\(fallback.standardError.debugDescription)")
            let json = try CommandRun.classify(input + ["--weights", model, "--fallback", "--json"])
            #expect(json.status == 0, "\(json.standardError)")
            #expect(Self.isTerminalSafe(json.standardError + json.standardOutput), "\(json.standardOutput.debugDescription)")
            let answer = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
            let attempts = try #require(answer["attempts"] as? [[String: Any]])
            #expect(attempts.contains { ($0["error"] as? String)?.contains(problem) == true }, "\(attempts)")
        }
    }
    #endif

    #if ONNX
    /// A sidecar's task with an escape sequence and a forged line: one safe error line.
    @Test func aHostileSidecarTaskIsShownAsQuestionMarks() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = folder.appendingPathComponent("m.onnx").path
        let export = try CommandRun.classify([
            "export", "onnx", packageRoot.appendingPathComponent("Weights/shape-classifier.f32.weights").path, "-o", model,
        ])
        #expect(export.status == 0, "\(export.standardError)")
        try #"{"task": "\u001b]0;title\u0007\r\nFAKE: ok"}"#.write(toFile: model + ".json", atomically: false, encoding: .utf8)
        let imported = try CommandRun.classify(["import", "onnx", model, "-o", folder.appendingPathComponent("out.weights").path])
        #expect(imported.status == 65)
        #expect(
            imported.standardError
                == "error: \(model): cannot be read as an ONNX model: \(model).json: task '?]0;title???FAKE: ok' is not shape or motion\n")
    }
    #endif

    /// A weights file whose name, input description and dataset hold escape sequences, a forged line, DEL and a
    /// C1 CSI: `inspect` shows each as `?`; `inspect --json` escapes them, and they read back whole.
    @Test func inspectShowsAHostileWeightsFileSafely() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (name, description, dataset) = ("\u{1B}]0;title\u{07}tiny\u{7F}", "\r\nFAKE: ok", "\u{1B}[31mred\u{9B}2J")
        var g = SeededGenerator(seed: 5)
        let network = Sequential([Dense(inFeatures: 8, outFeatures: 3, generator: &g), Activation(.softmax)])
        let file = try ModelFile(
            name: name, model: network, labels: ["a", "b", "c"], input: InputSpec(shape: [8], description: description),
            training: TrainingMetadata(dataset: dataset, seed: 11, epochs: 2), format: .f32)
        let url = folder.appendingPathComponent("hostile.weights")
        try file.write(to: url)

        let text = try CommandRun.classify(["inspect", url.path])
        #expect(text.status == 0, "\(text.standardError)")
        #expect(Self.isTerminalSafe(text.standardOutput), "\(text.standardOutput.debugDescription)")
        #expect(text.standardOutput.hasPrefix("\(url.path): ?]0;title?tiny?, weights format version"))
        #expect(text.standardOutput.contains("[8]  ??FAKE: ok\n"))
        #expect(text.standardOutput.contains("dataset ?[31mred?2J"))

        let json = try CommandRun.classify(["inspect", url.path, "--json"])
        #expect(json.status == 0, "\(json.standardError)")
        #expect(Self.isTerminalSafe(json.standardOutput), "\(json.standardOutput.debugDescription)")
        #expect(json.standardOutput.contains(#""name" : "\u001b]0;title\u0007tiny\u007f""#), "\(json.standardOutput)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        #expect(object["name"] as? String == name)
        #expect((object["input"] as? [String: Any])?["description"] as? String == description)
        #expect((object["training"] as? [String: Any])?["dataset"] as? String == dataset)
    }
}
