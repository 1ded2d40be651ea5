import ArgumentParser
import WeightsFormat

#if ONNX
import ONNX
#endif

// What this classify was built with. The package's traits (Package.swift) decide which commands exist: `ONNX`
// brings export and import (and .onnx models wherever a model is read), `Serve` brings serve. A build without
// one still lists its commands, and each says how to get it instead of "unexpected argument".

/// Makes `.onnx` files readable wherever a model is read, when this build has the ONNX trait; without it, such a
/// file is an error that says how to build a classify that reads them.
func registerONNX() {
    #if ONNX
    ONNXFormat.register()
    #else
    ForeignModelReaders.register(fileExtension: "onnx") { url throws(WeightsFileError) in
        throw WeightsFileError(
            path: url.path,
            problem: .importFailed(format: "ONNX", reason: "this classify was built without ONNX; \(missingTrait("ONNX"))"))
    }
    #endif
}

/// How to build a classify with `trait`: one sentence for an error message.
func missingTrait(_ trait: String) -> String {
    "build one with `make install` (every trait) or `swift build -c release --traits default,\(trait)`"
}

/// A command this build does not have: it takes any arguments and stops with exit 64 and how to get it.
protocol MissingCommand: ParsableCommand {
    /// The package trait that brings the command.
    static var trait: String { get }
    var arguments: [String] { get }
}

extension MissingCommand {
    func run() throws {
        reportError(
            "classify \(Self.configuration.commandName ?? "") is not in this build (the package's \(Self.trait) trait): \(missingTrait(Self.trait))")
        throw ExitCode(ExitStatus.usage)
    }
}

#if !ONNX
/// `classify export` without the ONNX trait.
struct ExportCommand: MissingCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Write a model as ONNX (not in this build: it needs the ONNX trait).")
    static let trait = "ONNX"
    @Argument(parsing: .allUnrecognized) var arguments: [String] = []
}

/// `classify import` without the ONNX trait.
struct ImportCommand: MissingCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Convert an ONNX model into a weights file (not in this build: it needs the ONNX trait).")
    static let trait = "ONNX"
    @Argument(parsing: .allUnrecognized) var arguments: [String] = []
}
#endif

#if !Serve
/// `classify serve` without the Serve trait.
struct Serve: MissingCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "A local web server with pages to draw on (not in this build: it needs the Serve trait).")
    static let trait = "Serve"
    @Argument(parsing: .allUnrecognized) var arguments: [String] = []
}
#endif
