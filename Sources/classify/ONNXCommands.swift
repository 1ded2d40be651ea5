#if ONNX
import ArgumentParser
import DataFiles
import Datasets
import Foundation
import Models
import ONNX
import Tensor
import WeightsFormat

/// The model formats `export` and `import` convert to and from.
enum ModelFormat: String, ExpressibleByArgument, CaseIterable {
    case onnx
}

/// `classify export onnx WEIGHTS -o model.onnx`.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a model in another format (ONNX), for other runtimes.",
        discussion: """
            The ONNX file (opset 13) has the model's input as `input` (NCHW for drawings: [N, 1, 16, 16]; [N, F] for \
            motion windows) and its probabilities as `output`. f32 weights are FLOAT; int8 weights are INT8 with one \
            scale per output channel, dequantized by DequantizeLinear, and each 8-bit layer's input quantization is a \
            QuantizeLinear/DequantizeLinear pair. Labels, preprocessing and the decision rule are metadata_props.

            Example: classify export onnx Weights/shape-classifier.int8.weights -o shape.onnx
            """
    )

    @Argument(help: "The format to write: onnx.")
    var format: ModelFormat

    @Argument(help: "The model: a weights file (or an .onnx file).")
    var weights: String

    @Option(name: [.short, .customLong("output")], help: "Where to write the model (replaced atomically).")
    var output: String

    func run() throws {
        try refuseOutputs([output], thatAreAnyOf: filesRead(byModel: weights))
        let file: ModelFile
        do {
            file = try ModelFile(contentsOf: URL(fileURLWithPath: weights))
        } catch {
            throw failure(error)
        }
        let data: Data
        do {
            data = try ONNXExport.data(of: file)
        } catch {
            reportError("\(weights): \(error.description)")
            throw ExitCode(ExitStatus.dataError)
        }
        do {
            try AtomicFile.write(Array(data), to: URL(fileURLWithPath: output))
        } catch {
            throw failure(error)
        }
        reportNote("wrote \(output) (\(data.count) bytes, \(file.architecture.count) layers, labels \(file.labels.joined(separator: ", ")))")
    }
}

/// `classify import onnx model.onnx -o model.weights`.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Convert a model from another format (ONNX) into a weights file, once.",
        discussion: """
            The labels and preprocessing come from the model's metadata_props (our export writes them) or from a \
            sidecar MODEL.onnx.json: {"labels": ["circle", "triangle", "square", "star", "other"], "task": "shape"} \
            (see docs/onnx.md). --weights model.onnx reads the same file without this step.

            Example: classify import onnx model.onnx -o my-models/model.weights
            """
    )

    @Argument(help: "The format to read: onnx.")
    var format: ModelFormat

    @Argument(help: "The model file.")
    var model: String

    @Option(name: [.short, .customLong("output")], help: "The weights file to write (replaced atomically).")
    var output: String

    func run() throws {
        try refuseOutputs([output], thatAreAnyOf: [model, ONNXModelInfo.sidecarPath(ofModel: model)])
        let file: ModelFile
        do {
            // An ONNX file, whatever its name: a weights file given here is not one.
            file = try ONNXImport.modelFile(contentsOf: URL(fileURLWithPath: model))
            try file.write(to: URL(fileURLWithPath: output))
        } catch {
            throw failure(error)
        }
        reportNote("wrote \(output): \(file.architecture.map(\.summary).joined(separator: ", "))")
    }
}
#endif
