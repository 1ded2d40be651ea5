import ArgumentParser
import DataFiles
import Datasets
import Foundation
import Models
import Tensor
import WeightsFormat

/// `classify run MODEL --input FILE`: a model's raw outputs, to compare with another runtime's.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Print a model's raw outputs for given input tensors (no preprocessing, no decision).",
        discussion: """
            --input is a CSV file of numbers without a header, one input per row, flattened in the model's input \
            order (`classify inspect` shows the input shape: [H, W, C] for drawings, the same bytes as ONNX's NCHW \
            with one channel); - (or /dev/stdin) reads it from standard input. Or it is a .npy file of float32 \
            (little-endian, C order) whose first axis counts the inputs. Each output row is printed with 9 \
            significant digits; --json prints {"outputs": [...]} per input.

            The inputs are a stream: each is run and its outputs printed as soon as it is read (from a pipe, as soon \
            as its line ends), in memory that does not grow with the file. A bad row (a value that is not a number, \
            too many or too few values, outputs that are not finite) stops the run with exit 65 naming its line; the \
            rows before it stay printed.

            --dataset makes the inputs from a shape or motion dataset by the model's preprocessing instead, and \
            --save-inputs writes them as .npy for another runtime (all of them before any is run: the inputs are \
            then held in memory), in the layout `export onnx` declares: drawings as [N, 1, H, W] (NCHW, the same \
            bytes as [N, H, W, 1]), windows as [N, F]. --input takes either shape.

            Example: classify run shape.onnx --dataset Datasets/shapes/test.csv --save-inputs inputs.npy
            """
    )

    @Argument(help: "The model: a weights file or an .onnx file.")
    var model: String

    @Option(help: "The input tensors: a CSV file (one per row, no header; - for standard input) or a .npy file.")
    var input: String?

    @Option(help: "Or a shape or motion dataset: each drawing, or each window of each session, made into an input by the model's preprocessing.")
    var dataset: String?

    @Option(
        help:
            "Also write the inputs to this .npy file (float32; drawings [N, 1, H, W] as export onnx declares them, windows [N, F]), for another runtime."
    )
    var saveInputs: String?

    @Flag(help: "One JSON object per input.")
    var json = false

    func validate() throws {
        guard input != nil || dataset != nil else { throw ValidationError("give --input FILE or --dataset FILE") }
        guard input == nil || dataset == nil else { throw ValidationError("give --input FILE or --dataset FILE, not both") }
    }

    func run() throws {
        try refuseOutputs([saveInputs], thatAreAnyOf: filesRead(byModel: model) + [input, dataset].compactMap { $0 })
        let file: ModelFile
        do {
            file = try ModelFile(contentsOf: URL(fileURLWithPath: model))
        } catch {
            throw failure(error)
        }
        // A model's shapes were checked when it was read; counted with overflow checks all the same.
        guard let size = checkedElementCount(file.input.shape), let outputs = checkedElementCount(Array(file.outputShape.dropFirst())) else {
            reportError("\(model): the model's input \(file.input.shape) or output \(file.outputShape) holds too many values to count")
            throw ExitCode(ExitStatus.dataError)
        }
        var inputs = try inputRows(for: file, size: size)
        do {
            try runRows(&inputs, compiled: file.makeCompiledModel(), size: size, outputs: outputs)
        } catch {
            throw failure(error)
        }
    }

    /// The inputs: those of --input read as they are run; those of a dataset, or any that --save-inputs writes
    /// first, read whole (and saved).
    private func inputRows(for file: ModelFile, size: Int) throws -> InputRows {
        do {
            if let input, saveInputs == nil { return try InputRows(path: input, size: size) }
            let rows = try input.map { try InputTensors.read($0, size: size) } ?? InputTensors.preprocessed(dataset ?? "", for: file)
            if let saveInputs {
                try AtomicFile.write(
                    NPYRows.encode(rows, shape: InputTensors.savedShape(of: file.input.shape)), to: URL(fileURLWithPath: saveInputs))
            }
            return InputRows(rows: rows, file: input ?? dataset ?? "")
        } catch {
            throw failure(error)
        }
    }

    /// Each row through the model, its outputs printed as a line (or a JSON object) as soon as it is run; an output
    /// that is not finite is an error naming the input.
    private func runRows(_ inputs: inout InputRows, compiled: CompiledModel, size: Int, outputs: Int) throws {
        var row = [Float](repeating: 0, count: size)
        var result = [Float](repeating: 0, count: outputs)
        while try inputs.next(into: &row) {
            row.withUnsafeBufferPointer { values in result.withUnsafeMutableBufferPointer { compiled.run(values, into: $0) } }
            // Finite inputs can overflow inside the model: an answer of NaNs is not an answer (and JSON has no NaN).
            if let bad = result.first(where: { !$0.isFinite }) {
                throw DataError(
                    file: inputs.file, line: inputs.line,
                    message: "input \(inputs.count): the model's outputs are not finite (\(bad.isNaN ? "nan" : "\(bad)")) for this input")
            }
            let text = json ? jsonText(["outputs": result.map(Double.init)]) : result.map { String(format: "%.9g", $0) }.joined(separator: " ")
            // Nobody can read what follows: stop, and let the exit say why (74).
            guard StandardStreams.write(text + "\n") else { return }
            if inputs.mayWait { StandardStreams.flush() }
        }
    }
}
