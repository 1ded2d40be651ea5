import Foundation
import Testing

/// An output that is one of the command's inputs — the same path, a symbolic link to it, a hard link of it — is
/// refused before anything is read or written, as `cp x x` refuses: exit 64, one line naming both, nothing on
/// standard output, and every file as it was (issue 31, defect 7). Before: each command replaced its input, exit 0.
@Suite("classify refuses to write over its inputs")
struct SameFileOutputTests {
    /// How an output names an input.
    enum Alias: CaseIterable {
        /// The input's own path.
        case samePath
        /// A symbolic link to the input.
        case symbolicLink
        /// A hard link of the input.
        case hardLink
    }

    /// A folder with a weights file, an ONNX export of it, a drawing and a small shape dataset.
    struct Files {
        let folder: URL
        func path(_ name: String) -> String { folder.appendingPathComponent(name).path }
        var weights: String { path("w.weights") }
        var onnx: String { path("m.onnx") }
        var drawing: String { path("star.csv") }
        var dataset: String { path("small.csv") }

        init() throws {
            folder = try testFolder()
            try FileManager.default.copyItem(
                atPath: packageRoot.appendingPathComponent("Weights/shape-classifier.int8.weights").path, toPath: weights)
            try FileManager.default.copyItem(atPath: packageRoot.appendingPathComponent("Datasets/examples/star.csv").path, toPath: drawing)
            let test = try String(contentsOf: packageRoot.appendingPathComponent("Datasets/shapes/test.csv"), encoding: .utf8)
            try (test.split(separator: "\n").prefix(3000).joined(separator: "\n") + "\n").write(toFile: dataset, atomically: false, encoding: .utf8)
            #if ONNX
            let export = try CommandRun.classify(["export", "onnx", weights, "-o", onnx])
            #expect(export.status == 0, "\(export.standardError)")
            #endif
        }

        /// Every file of the folder (links as where they point) and its bytes.
        func snapshot() throws -> [String: Data] {
            var files: [String: Data] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
                if let destination = try? FileManager.default.destinationOfSymbolicLink(atPath: path(name)) {
                    files[name] = Data(destination.utf8)
                } else {
                    files[name] = try Data(contentsOf: URL(fileURLWithPath: path(name)))
                }
            }
            return files
        }

        /// The output path that names `input` as `alias` does, made at `name` (for the same path, `input` itself).
        func output(_ alias: Alias, of input: String, at name: String) throws -> String {
            switch alias {
            case .samePath:
                return input
            case .symbolicLink:
                #expect(symlink((input as NSString).lastPathComponent, path(name)) == 0)
            case .hardLink:
                #expect(link(input, path(name)) == 0)
            }
            return path(name)
        }

        /// Runs `arguments` and checks the refusal of `output` (as the error shows it) for `input`.
        func expectRefused(_ arguments: [String], output: String, input: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let before = try snapshot()
            let run = try CommandRun.classify(arguments)
            #expect(run.status == 64, "\(arguments): \(run.standardError)", sourceLocation: sourceLocation)
            #expect(run.standardOutput == "", sourceLocation: sourceLocation)
            #expect(
                run.standardError.hasPrefix("error: \(output): the output is the input \(input) (the same file"), "\(run.standardError)",
                sourceLocation: sourceLocation)
            #expect(
                run.standardError.hasSuffix("); writing it would replace the input, so nothing was written: give another output path\n"),
                "\(run.standardError)", sourceLocation: sourceLocation)
            #expect(run.standardError.split(separator: "\n").count == 1, sourceLocation: sourceLocation)
            #expect(try snapshot() == before, "every file as it was", sourceLocation: sourceLocation)
        }
    }

    #if ONNX
    @Test(arguments: Alias.allCases)
    func importRefusesTheModelAndItsSidecar(alias: Alias) throws {
        let files = try Files()
        defer { try? FileManager.default.removeItem(at: files.folder) }
        var output = try files.output(alias, of: files.onnx, at: "out.weights")
        try files.expectRefused(["import", "onnx", files.onnx, "-o", output], output: output, input: files.onnx)
        let sidecar = files.onnx + ".json"
        try #"{"task": "shape"}"#.write(toFile: sidecar, atomically: false, encoding: .utf8)
        output = try files.output(alias, of: sidecar, at: "sidecar.weights")
        try files.expectRefused(["import", "onnx", files.onnx, "-o", output], output: output, input: sidecar)
    }
    #endif

    #if ONNX
    @Test(arguments: Alias.allCases)
    func exportRefusesTheWeights(alias: Alias) throws {
        let files = try Files()
        defer { try? FileManager.default.removeItem(at: files.folder) }
        var output = try files.output(alias, of: files.weights, at: "out.onnx")
        try files.expectRefused(["export", "onnx", files.weights, "-o", output], output: output, input: files.weights)
        // An .onnx model's sidecar is read too.
        let sidecar = files.onnx + ".json"
        try "{}".write(toFile: sidecar, atomically: false, encoding: .utf8)
        output = try files.output(alias, of: sidecar, at: "sidecar.onnx")
        try files.expectRefused(["export", "onnx", files.onnx, "-o", output], output: output, input: sidecar)
    }
    #endif

    @Test(arguments: Alias.allCases)
    func trainRefusesItsDataInEveryFileItWrites(alias: Alias) throws {
        let files = try Files()
        defer { try? FileManager.default.removeItem(at: files.folder) }
        // The f32 weights, a quantized variant, the curves and the lock (removed when the run ends), each against
        // --data or --validation.
        for (suffix, quantize) in [("f32.weights", "f16"), ("int8.weights", "int8"), ("curves.svg", "f16")] {
            for option in ["--data", "--validation"] {
                let prefix = files.path("run-\(option.dropFirst(2))-\(suffix.split(separator: ".")[0])")
                let input = alias == .samePath ? "\(prefix).\(suffix)" : files.dataset
                if alias == .samePath { try FileManager.default.copyItem(atPath: files.dataset, toPath: input) }
                let output = try files.output(alias, of: input, at: (prefix as NSString).lastPathComponent + "." + suffix)
                let data = option == "--data" ? ["--data", input] : ["--data", files.drawing, "--validation", input]
                try files.expectRefused(
                    ["train", "shape"] + data + ["--epochs", "1", "--quantize", quantize, "--out", prefix], output: output, input: input)
            }
        }
        let lock = files.path(".locked.lock")
        if alias == .samePath { try FileManager.default.copyItem(atPath: files.dataset, toPath: lock) }
        let input = alias == .samePath ? lock : files.dataset
        let output = try files.output(alias, of: input, at: ".locked.lock")
        try files.expectRefused(["train", "shape", "--data", input, "--epochs", "1", "--out", files.path("locked")], output: output, input: input)
    }

    @Test(arguments: Alias.allCases)
    func shapeRenderRefusesTheDrawingAndTheWeights(alias: Alias) throws {
        let files = try Files()
        defer { try? FileManager.default.removeItem(at: files.folder) }
        var output = try files.output(alias, of: files.drawing, at: "drawing.svg")
        try files.expectRefused(["shape", files.drawing, "--render", output], output: output, input: files.drawing)
        output = try files.output(alias, of: files.weights, at: "weights.svg")
        try files.expectRefused(["shape", files.drawing, "--weights", files.weights, "--render", output], output: output, input: files.weights)
    }

    #if ONNX
    @Test(arguments: Alias.allCases)
    func runSaveInputsRefusesTheModelTheInputAndTheDataset(alias: Alias) throws {
        let files = try Files()
        defer { try? FileManager.default.removeItem(at: files.folder) }
        var output = try files.output(alias, of: files.onnx, at: "model.npy")
        try files.expectRefused(["run", files.onnx, "--dataset", files.dataset, "--save-inputs", output], output: output, input: files.onnx)
        output = try files.output(alias, of: files.dataset, at: "dataset.npy")
        try files.expectRefused(["run", files.weights, "--dataset", files.dataset, "--save-inputs", output], output: output, input: files.dataset)
        let inputs = files.path("inputs.npy")
        let save = try CommandRun.classify(["run", files.weights, "--dataset", files.dataset, "--save-inputs", inputs])
        #expect(save.status == 0, "\(save.standardError)")
        output = try files.output(alias, of: inputs, at: "input.npy")
        try files.expectRefused(["run", files.weights, "--input", inputs, "--save-inputs", output], output: output, input: inputs)
    }
    #endif
}
