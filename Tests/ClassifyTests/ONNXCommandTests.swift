#if ONNX
import Foundation
import Testing

/// `classify export`, `import` and `run`, and `.onnx` files wherever a weights file goes, checked against the
/// committed fixtures (models exported by PyTorch and by Keras through tf2onnx, with ONNX Runtime's outputs:
/// `scripts/onnx/make_fixtures.py` regenerates them outside the tests).
@Suite("classify and ONNX")
struct ONNXCommandTests {
    static let fixtures = packageRoot.appendingPathComponent("Tests/ONNXTests/Fixtures")

    /// The rows of numbers `text` holds, one row per line.
    static func rows(_ text: String) -> [[Double]] {
        text.split(separator: "\n").map { $0.split(separator: " ").compactMap { Double($0) } }
    }

    /// One fixture through `classify run`: ONNX Runtime's outputs printed (the library's run of every fixture is
    /// in ONNXTests, ONNXRuntimeFixtureTests).
    @Test func runPrintsTheOutputsOfONNXRuntime() throws {
        let name = "torch-shape-cnn"
        let model = Self.fixtures.appendingPathComponent("\(name).onnx").path
        let run = try CommandRun.classify(["run", model, "--input", Self.fixtures.appendingPathComponent("\(name).inputs.npy").path])
        #expect(run.status == 0, "\(run.standardError)")
        let expected = Self.rows(try String(contentsOf: Self.fixtures.appendingPathComponent("\(name).outputs.csv"), encoding: .utf8))
        let ours = Self.rows(run.standardOutput)
        #expect(ours.count == expected.count && ours.count == 16 && zip(ours, expected).allSatisfy { $0.count == $1.count })
        let worst = zip(ours, expected).flatMap { zip($0, $1).map { abs($0 - $1) } }.max() ?? .infinity
        #expect(worst <= 1e-5, "\(name): largest difference \(worst)")
    }

    /// A shape CNN trained by Keras on our training rasters, exported with tf2onnx and evaluated by `classify
    /// evaluate --weights model.onnx`: the accuracy its reference reported for it on today's test file (Keras when
    /// the model was trained, ONNX Runtime on the exported graph since the test file was regenerated), within half a point.
    @Test func aKerasModelEvaluatesAsItsReferenceReported() throws {
        let record = try JSONSerialization.jsonObject(with: Data(contentsOf: Self.fixtures.appendingPathComponent("keras-shape-cnn.accuracy.json")))
        let keras = try #require((record as? [String: Any])?["reference_accuracy"] as? Double)
        let run = try CommandRun.classifyAtRoot([
            "evaluate", "shape", "--weights", Self.fixtures.appendingPathComponent("keras-shape-cnn.onnx").path, "--data",
            "Datasets/shapes/test.csv", "--json",
        ])
        #expect(run.status == 0, "\(run.standardError)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
        let accuracy = try #require(report["accuracy"] as? Double)
        #expect(abs(accuracy - keras) <= 0.005, "ours \(accuracy), the reference \(keras)")
    }

    /// Export and import on the command line: the shipped models exported, imported back into weights files whose
    /// tensors are the shipped ones byte for byte, and answers through `--weights model.onnx` the same as the
    /// shipped weights give.
    @Test(arguments: ["shape-classifier.int8", "shape-classifier.f32", "motion-state.int8", "motion-state.f32"])
    func exportedModelsComeBackAndAnswerTheSame(variant: String) throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let weights = packageRoot.appendingPathComponent("Weights/\(variant).weights").path
        let onnx = folder.appendingPathComponent("\(variant).onnx").path
        let back = folder.appendingPathComponent("\(variant).weights").path
        let export = try CommandRun.classify(["export", "onnx", weights, "-o", onnx])
        #expect(export.status == 0 && export.standardError.hasPrefix("note: wrote \(onnx)"), "\(export.standardError)")
        let imported = try CommandRun.classify(["import", "onnx", onnx, "-o", back])
        #expect(imported.status == 0, "\(imported.standardError)")
        let identical = try Data(contentsOf: URL(fileURLWithPath: back)) == Data(contentsOf: URL(fileURLWithPath: weights))
        #expect(identical)
        let task = variant.hasPrefix("shape") ? "shape" : "motion"
        let example = packageRoot.appendingPathComponent("Datasets/examples/\(task == "shape" ? "star" : "running").csv").path
        let shipped = try CommandRun.classify([task, example, "--weights", weights, "--json"])
        let viaONNX = try CommandRun.classify([task, example, "--weights", onnx, "--json"])
        #expect(shipped.status == 0 && viaONNX.status == 0, "\(viaONNX.standardError)")
        #expect(viaONNX.standardOutput == shipped.standardOutput.replacingOccurrences(of: weights, with: onnx))
    }

    /// Bad `.onnx` files: exit 65 naming what is wrong, 66 for a missing one; nothing written by import.
    @Test func badModelFilesArePreciseErrors() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let garbage = folder.appendingPathComponent("garbage.onnx")
        try Data("not a protobuf at all".utf8).write(to: garbage)
        let out = folder.appendingPathComponent("out.weights").path
        let bad = try CommandRun.classify(["import", "onnx", garbage.path, "-o", out])
        #expect(bad.status == 65)
        #expect(bad.standardError.hasPrefix("error: \(garbage.path): cannot be read as an ONNX model: not an ONNX model"), "\(bad.standardError)")
        #expect(!FileManager.default.fileExists(atPath: out))
        let missing = try CommandRun.classify(["shape", "x.csv", "--weights", folder.appendingPathComponent("none.onnx").path])
        #expect(missing.status == 66, "\(missing.standardError)")
        // A model from elsewhere without labels or a task runs raw (issue 37): the graph's own outputs (this one ends
        // in logits), whose softmax is what it answers with its sidecar (which makes it a recognizer).
        let bare = folder.appendingPathComponent("bare.onnx")
        try FileManager.default.copyItem(at: Self.fixtures.appendingPathComponent("torch-shape-gap.onnx"), to: bare)
        let inputs = Self.fixtures.appendingPathComponent("torch-shape-gap.inputs.npy").path
        let unlabelled = try CommandRun.classify(["run", bare.path, "--input", inputs])
        let labelled = try CommandRun.classify(["run", Self.fixtures.appendingPathComponent("torch-shape-gap.onnx").path, "--input", inputs])
        #expect(unlabelled.status == 0, "\(unlabelled.standardError)")
        let logits = Self.rows(unlabelled.standardOutput), probabilities = Self.rows(labelled.standardOutput)
        #expect(logits.count == 16 && logits.count == probabilities.count)
        for (row, expected) in zip(logits, probabilities) {
            let exponentials = row.map { exp($0 - (row.max() ?? 0)) }
            let softmax = exponentials.map { $0 / exponentials.reduce(0, +) }
            #expect(row != expected && zip(softmax, expected).allSatisfy { abs($0 - $1) <= 1e-6 }, "\(row) \(expected)")
        }
        // As a recognizer it needs labels and a task: the error says what to write.
        let recognizer = try CommandRun.classifyAtRoot(["shape", "Datasets/examples/star.csv", "--weights", bare.path])
        #expect(recognizer.status == 70)
        #expect(recognizer.standardError.contains("is a raw model (no labels, no preprocessing)"), "\(recognizer.standardError)")
        #expect(recognizer.standardError.contains(#"{"labels": [...], "task": "shape"}"#), "\(recognizer.standardError)")
    }

    /// `classify run` on one of ONNX's own test models (Tests/ONNXTests/Suite): a 3-D grouped convolution whose input
    /// is `.npy` in ONNX's NCDHW layout prints, per input, ONNX's expected output in that layout, and `inspect` shows
    /// the declared input shape; an operator not read is exit 65 naming it and the node.
    @Test func runTakesAndPrintsTheModelsOwnLayout() throws {
        let suite = packageRoot.appendingPathComponent("Tests/ONNXTests/Suite")
        let model = suite.appendingPathComponent("test_Conv3d_groups.onnx").path
        let run = try CommandRun.classify(["run", model, "--input", suite.appendingPathComponent("test_Conv3d_groups.inputs.npy").path, "--json"])
        #expect(run.status == 0, "\(run.standardError)")
        let printed = run.standardOutput.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["outputs"] as? [Double]
        }
        // The expected output, [2, 6, 2, 3, 2] float32 after a 128-byte .npy header (numpy's for this shape).
        let bytes = try Data(contentsOf: suite.appendingPathComponent("test_Conv3d_groups.outputs.npy"))
        let expected = stride(from: 128, to: bytes.count, by: 4).map { offset in
            Double(Float(bitPattern: bytes[offset..<(offset + 4)].enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * $1.offset) }))
        }
        #expect(printed.count == 2 && printed.allSatisfy { $0.count == 72 } && expected.count == 144)
        let ours = printed.flatMap { $0 }
        #expect(zip(ours, expected).allSatisfy { abs($0 - $1) <= 1e-4 + 1e-3 * abs($1) }, "\(ours.prefix(6)) vs \(expected.prefix(6))")
        let inspect = try CommandRun.classify(["inspect", model])
        #expect(inspect.standardOutput.contains("input           [4, 4, 5, 4]  imported from ONNX"), "\(inspect.standardOutput)")
        let refused = try CommandRun.classify(["run", suite.appendingPathComponent("test_GLU.onnx").path, "--input", "-"])
        #expect(refused.status == 65)
        #expect(
            refused.standardError.contains("operator Split (node (unnamed), opset 6) is not supported with more than one output"),
            "\(refused.standardError)")
    }

    /// `inspect` on an `.onnx` file shows the model as imported, and says so (text and JSON).
    @Test func inspectSaysAModelWasImported() throws {
        let model = Self.fixtures.appendingPathComponent("torch-motion-mlp.onnx").path
        let text = try CommandRun.classify(["inspect", model])
        #expect(text.status == 0)
        #expect(text.standardOutput.hasPrefix("\(model): torch-motion-mlp, imported from ONNX (as a weights file: format version 2"))
        #expect(text.standardOutput.contains("Dense 194→24"))
        let json = try CommandRun.classify(["inspect", model, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        #expect(object["importedFrom"] as? String == "ONNX")
        let weights = try CommandRun.classify(["inspect", packageRoot.appendingPathComponent("Weights/motion-state.int8.weights").path, "--json"])
        #expect(!weights.standardOutput.contains("importedFrom"))
    }

    /// A sidecar's fields replace the metadata's one by one (labels alone keep the exported preprocessing and
    /// calibrated decision); a sidecar that is there but cannot be read is an I/O error naming it, never "no
    /// sidecar"; labels that do not fit the outputs, or a task whose inputs do not fit the model, are refused at
    /// import, not at the first answer.
    @Test func sidecarsOverrideFieldByFieldAndAreChecked() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = folder.appendingPathComponent("m.onnx").path
        let export = try CommandRun.classify([
            "export", "onnx", packageRoot.appendingPathComponent("Weights/shape-classifier.int8.weights").path, "-o", model,
        ])
        #expect(export.status == 0)
        func inspect() throws -> (status: Int32, json: [String: Any]?, error: String) {
            let run = try CommandRun.classify(["inspect", model, "--json"])
            return (run.status, try? JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any], run.standardError)
        }
        let sidecar = URL(fileURLWithPath: model + ".json")
        try Data(#"{"labels": ["ring", "tri", "box", "star", "other"]}"#.utf8).write(to: sidecar)
        let relabelled = try inspect()
        #expect(relabelled.status == 0, "\(relabelled.error)")
        #expect(relabelled.json?["labels"] as? [String] == ["ring", "tri", "box", "star", "other"])
        // The rest of the model's own metadata stays: the shipped file's temperature, as inspect reads it there.
        let original = try CommandRun.classify([
            "inspect", packageRoot.appendingPathComponent("Weights/shape-classifier.int8.weights").path, "--json",
        ])
        let temperature = try #require(
            ((try? JSONSerialization.jsonObject(with: Data(original.standardOutput.utf8)) as? [String: Any])?["decision"] as? [String: Any])?[
                "temperature"]
                as? Double)
        #expect((relabelled.json?["decision"] as? [String: Any])?["temperature"] as? Double == temperature)
        #expect(relabelled.json?["name"] as? String == "shape-classifier")
        try Data(#"{"labels": ["a", "b", "c"], "task": "shape"}"#.utf8).write(to: sidecar)
        let fewer = try inspect()
        #expect(fewer.status == 65 && fewer.error.contains("the model has 5 outputs, and the labels name 3 (a, b, c)"), "\(fewer.error)")
        try Data(#"{"labels": ["a", "b", "c", "d", "other"], "task": "motion"}"#.utf8).write(to: sidecar)
        let task = try inspect()
        #expect(
            task.status == 65 && task.error.contains("the preprocessing (motion) makes inputs of shape [194], and the model takes [16, 16, 1]"),
            "\(task.error)")
        // A partial decision: the rest is the default's, the reject class `other` included.
        try Data(#"{"labels": ["a", "b", "c", "d", "other"], "decision": {"temperature": 2}}"#.utf8).write(to: sidecar)
        let decision = try inspect().json?["decision"] as? [String: Any]
        #expect(
            decision?["temperature"] as? Double == 2 && decision?["rejectLabel"] as? String == "other"
                && decision?["uncertainBelow"] as? Double == 0.7)
        try Data(#"{"labels": []}"#.utf8).write(to: sidecar)
        #expect(try inspect().error.contains("labels is empty"))
        try FileManager.default.removeItem(at: sidecar)
        try FileManager.default.createDirectory(at: sidecar, withIntermediateDirectories: false)
        let unreadable = try inspect()
        #expect(
            unreadable.status == 74
                && unreadable.error.hasPrefix("error: \(sidecar.path): cannot be opened: it is a directory, not a JSON sidecar (a regular file)"),
            "\(unreadable.error)")
    }

    /// `import onnx` reads ONNX whatever the file is named: a weights file is not an ONNX model. `run` checks a
    /// `.npy` file's declared shape against its data and the model's input.
    @Test func importAndRunCheckWhatTheyAreGiven() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let weights = packageRoot.appendingPathComponent("Weights/motion-state.int8.weights").path
        let imported = try CommandRun.classify(["import", "onnx", weights, "-o", folder.appendingPathComponent("x.weights").path])
        #expect(imported.status == 65 && imported.standardError.contains("not an ONNX model"), "\(imported.standardError)")
        // A header that says 9 inputs over the data of 3, and one whose inputs are not the model's size.
        let inputs = try Data(contentsOf: Self.fixtures.appendingPathComponent("torch-shape-cnn.inputs.npy"))
        for (from, to, message) in [
            ("(16, 1, 16, 16)", "(19, 1, 16, 16)", "needs 19456 bytes of data, and it holds 16384"),
            ("(16, 1, 16, 16)", "(32, 1, 16, 8) ", "holds inputs of 128 values, but the model's input has 256"),
        ] {
            var changed = inputs
            let place = try #require(changed.range(of: Data(from.utf8)))
            changed.replaceSubrange(place, with: Data(to.utf8))
            #expect(changed.count == inputs.count)
            let file = folder.appendingPathComponent("bad.npy")
            try changed.write(to: file)
            let run = try CommandRun.classify(["run", Self.fixtures.appendingPathComponent("torch-shape-cnn.onnx").path, "--input", file.path])
            #expect(run.status == 65 && run.standardError.contains(message), "\(run.standardError)")
        }
    }
}
#endif
