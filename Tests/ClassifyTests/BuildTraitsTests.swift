import Foundation
import Testing

/// A classify built without a trait (Package.swift: `ONNX`, `Serve`) still lists the commands the trait brings, and
/// each says how to get it: exit 64 and one line naming the trait, never "unexpected argument". Each build tests
/// its own side: `make test` builds every trait, and its build with no BLAS library has neither.
@Suite("Commands of traits a build does not have")
struct BuildTraitsTests {
    @Test func helpListsEveryCommandInEveryBuild() throws {
        let help = try CommandRun.classify(["--help"])
        #expect(help.status == 0)
        for command in ["export", "import", "run", "serve"] {
            #expect(help.standardOutput.contains("\n  \(command) "), "\(command) in:\n\(help.standardOutput)")
        }
    }

    #if !ONNX
    @Test func withoutONNXExportImportAndOnnxModelsSayHowToGetThem() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        for arguments in [["export", "onnx", "w.weights", "-o", "m.onnx"], ["import", "onnx", "m.onnx", "-o", "w.weights"]] {
            let run = try CommandRun.run(CommandRun.builtClassify, arguments, directory: folder)
            #expect(run.status == 64, "\(arguments)")
            #expect(
                run.standardError == "error: classify \(arguments[0]) is not in this build (the package's ONNX trait): build one "
                    + "with `make install` (every trait) or `swift build -c release --traits default,ONNX`\n", "\(run.standardError)")
            #expect(run.standardOutput.isEmpty)
        }
        let model = folder.appendingPathComponent("m.onnx")
        try Data([8, 7]).write(to: model)
        let shape = try CommandRun.classify(
            ["shape", packageRoot.appendingPathComponent("Datasets/examples/star.csv").path, "--weights", model.path])
        #expect(shape.status == 70, "the named model cannot answer, as for any unreadable model")
        #expect(shape.standardError.contains("this classify was built without ONNX; build one with `make install`"), "\(shape.standardError)")
    }
    #endif

    #if !Serve
    @Test func withoutServeServeSaysHowToGetIt() throws {
        let run = try CommandRun.classify(["serve", "--port", "0"])
        #expect(run.status == 64)
        #expect(
            run.standardError == "error: classify serve is not in this build (the package's Serve trait): build one with "
                + "`make install` (every trait) or `swift build -c release --traits default,Serve`\n", "\(run.standardError)")
    }
    #endif
}
