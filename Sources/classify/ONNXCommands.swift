import ArgumentParser
import Foundation
import Models
import ONNX
import Tensor

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

/// `classify run MODEL --input FILE`: a model's raw outputs, to compare with another runtime's.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Print a model's raw outputs for given input tensors (no preprocessing, no decision).",
        discussion: """
            --input is a CSV file of numbers, one input per row, flattened in the model's input order (`classify \
            inspect` shows the input shape: [H, W, C] for drawings, the same bytes as ONNX's NCHW with one channel), \
            or a .npy file of float32 (little-endian, C order) whose first axis counts the inputs. Each output row \
            is printed with 9 significant digits; --json prints {"outputs": [...]} per input.

            --dataset makes the inputs from a shape or motion dataset by the model's preprocessing instead, and \
            --save-inputs writes them as .npy for another runtime.

            Example: classify run shape.onnx --dataset Datasets/shapes/test.csv --save-inputs inputs.npy
            """
    )

    @Argument(help: "The model: a weights file or an .onnx file.")
    var model: String

    @Option(help: "The input tensors: a CSV file (one per row) or a .npy file.")
    var input: String?

    @Option(help: "Or a shape or motion dataset: each drawing, or each window of each session, made into an input by the model's preprocessing.")
    var dataset: String?

    @Option(help: "Also write the inputs to this .npy file (float32, [inputs, ...input shape]), for another runtime.")
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
        let size = file.input.shape.reduce(1, *)
        let rows: [[Float]]
        do {
            if let input {
                rows = try InputTensors.read(input, size: size)
            } else {
                rows = try InputTensors.preprocessed(dataset ?? "", for: file)
            }
            if let saveInputs { try AtomicFile.write(InputTensors.npy(rows, shape: file.input.shape), to: URL(fileURLWithPath: saveInputs)) }
        } catch {
            throw failure(error)
        }
        let compiled = file.makeCompiledModel()
        let outputs = file.outputShape.dropFirst().reduce(1, *)
        var result = [Float](repeating: 0, count: outputs)
        for row in rows {
            row.withUnsafeBufferPointer { values in result.withUnsafeMutableBufferPointer { compiled.run(values, into: $0) } }
            if json {
                print(jsonText(["outputs": result.map(Double.init)]))
            } else {
                print(result.map { String(format: "%.9g", $0) }.joined(separator: " "))
            }
        }
    }
}

/// Input tensors for `run`: CSV rows or a `.npy` array.
enum InputTensors {
    static func read(_ path: String, size: Int) throws(DataError) -> [[Float]] {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw DataError(
                file: path, message: FileManager.default.fileExists(atPath: path) ? "cannot be read" : "no such file",
                kind: FileManager.default.fileExists(atPath: path) ? .unreadable : .missingFile)
        }
        if path.lowercased().hasSuffix(".npy") { return try npy(data, path: path, size: size) }
        var rows: [[Float]] = []
        for (index, line) in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let text = line.trimmingCharacters(in: .whitespacesAndNewlines)
            if text.isEmpty { continue }
            let fields = text.split(separator: ",", omittingEmptySubsequences: false)
            var values: [Float] = []
            values.reserveCapacity(size)
            for (column, field) in fields.enumerated() {
                guard let value = Float(field.trimmingCharacters(in: .whitespaces)), value.isFinite else {
                    throw DataError(
                        file: path, line: index + 1, column: (column + 1, "value"), message: "'\(field.prefix(40))' is not a finite number")
                }
                values.append(value)
            }
            guard values.count == size else {
                throw DataError(file: path, line: index + 1, message: "\(values.count) values, but the model's input has \(size)")
            }
            rows.append(values)
        }
        guard !rows.isEmpty else { throw DataError(file: path, message: "no inputs: the file has no rows") }
        return rows
    }

    /// The inputs the model's preprocessing makes of a dataset: each drawing of a shape dataset rasterized, or
    /// each window of each session of a motion dataset; a drawing or session that cannot be used is an error.
    static func preprocessed(_ path: String, for file: ModelFile) throws(DataError) -> [[Float]] {
        switch file.preprocessing["kind"] {
        case .string("raster")?:
            let rasterizer = try ShapeRasterizer(parameters: file.preprocessing)
            let items = try ShapeDataset.drawings(path, threads: 1) { { $0 } }
            var rows: [[Float]] = []
            for item in items {
                let drawing = try item.value.drawing.get()
                if let problem = rasterizer.problem(with: drawing) {
                    throw DataError(file: path, line: item.lines.lowerBound, message: "drawing '\(item.id)': \(problem)")
                }
                rows.append(rasterizer.rasterize(drawing).scalars)
            }
            return rows
        case .string("motion-autocorrelation")?:
            let windowing = try MotionWindowing(parameters: file.preprocessing)
            var rows: [[Float]] = []
            for session in try MotionDataset.sessions(path, rate: windowing.rate, window: windowing.window) {
                for segment in try session.recording.get().segments where segment.count >= windowing.window {
                    let windows = windowing.windows(segment)
                    let size = windowing.inputSize
                    for index in 0..<windows.shape[0] { rows.append(Array(windows.scalars[(index * size)..<((index + 1) * size)])) }
                }
            }
            guard !rows.isEmpty else { throw DataError(file: path, message: "no session holds a whole window of \(windowing.window) samples") }
            return rows
        default:
            throw DataError(
                file: path,
                message: "the model's preprocessing \(file.preprocessing["kind"].map { "\($0)" } ?? "(none)") makes no inputs from a dataset")
        }
    }

    /// `rows` as a `.npy` file: float32, little-endian, C order, shape `[rows] + shape`.
    static func npy(_ rows: [[Float]], shape: [Int]) -> [UInt8] {
        let dimensions = ([rows.count] + shape).map(String.init).joined(separator: ", ")
        var header = "{'descr': '<f4', 'fortran_order': False, 'shape': (\(dimensions)\(shape.isEmpty ? "," : "")), }"
        let unpadded = 10 + header.utf8.count + 1
        header += String(repeating: " ", count: (64 - unpadded % 64) % 64) + "\n"
        var bytes: [UInt8] = [0x93] + Array("NUMPY".utf8) + [1, 0, UInt8(header.utf8.count & 0xFF), UInt8(header.utf8.count >> 8)]
        bytes += Array(header.utf8)
        bytes.reserveCapacity(bytes.count + 4 * rows.count * (rows.first?.count ?? 0))
        for row in rows { for value in row { withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes += $0 } } }
        return bytes
    }

    /// A `.npy` file of little-endian float32 in C order: its rows of `size` values.
    static func npy(_ data: Data, path: String, size: Int) throws(DataError) -> [[Float]] {
        let bytes = [UInt8](data)
        func fail(_ message: String) -> DataError { DataError(file: path, message: message) }
        guard bytes.count >= 10, bytes.prefix(6) == [0x93] + Array("NUMPY".utf8) else { throw fail("not a .npy file (its magic is missing)") }
        let major = bytes[6]
        let headerStart = major == 1 ? 10 : 12
        guard major == 1 || major == 2, bytes.count >= headerStart else { throw fail(".npy version \(major) is not read") }
        let headerLength =
            major == 1 ? Int(bytes[8]) | Int(bytes[9]) << 8 : Int(bytes[8]) | Int(bytes[9]) << 8 | Int(bytes[10]) << 16 | Int(bytes[11]) << 24
        guard headerStart + headerLength <= bytes.count else { throw fail("its header runs past the end of the file") }
        let header = String(decoding: bytes[headerStart..<(headerStart + headerLength)], as: UTF8.self)
        guard header.contains("'descr': '<f4'") else { throw fail("holds other than little-endian float32 ('descr': '<f4'): \(header.prefix(80))") }
        guard header.contains("'fortran_order': False") else { throw fail("is in Fortran order; C order is read") }
        // The shape: `(N, d1, d2, …)`, the inputs first; the other axes must hold one input.
        guard let open = header.range(of: "'shape': ("), let close = header[open.upperBound...].firstIndex(of: ")") else {
            throw fail("its header has no shape: \(header.prefix(80))")
        }
        let dimensions = header[open.upperBound..<close].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let sizes = dimensions.compactMap { Int($0) }
        guard sizes.count == dimensions.count, !sizes.isEmpty, sizes.count <= 8, sizes.allSatisfy({ $0 >= 0 && $0 <= 1 << 31 }),
            sizes.reduce(
                1,
                { total, size in
                    let (product, overflow) = total.multipliedReportingOverflow(by: size)
                    return overflow ? Int.max : product
                }) < 1 << 40
        else {
            throw fail("its shape (\(header[open.upperBound..<close])) is not a list of sizes")
        }
        guard sizes.dropFirst().reduce(1, { $0 * $1 }) == size else {
            throw fail("its shape \(sizes) holds inputs of \(sizes.dropFirst().reduce(1, *)) values, but the model's input has \(size)")
        }
        guard sizes[0] >= 1 else { throw fail("no inputs: its shape is \(sizes)") }
        let payload = bytes.count - headerStart - headerLength
        guard payload == 4 * sizes[0] * size else {
            throw fail("its shape \(sizes) needs \(4 * sizes[0] * size) bytes of data, and it holds \(payload)")
        }
        let values = bytes[(headerStart + headerLength)...].withUnsafeBytes { raw in
            (0..<(payload / 4)).map { Float(bitPattern: raw.loadUnaligned(fromByteOffset: 4 * $0, as: UInt32.self).littleEndian) }
        }
        if let bad = values.firstIndex(where: { !$0.isFinite }) {
            throw fail("input \(bad / size + 1), value \(bad % size + 1) is \(values[bad]), not a finite number")
        }
        return stride(from: 0, to: values.count, by: size).map { Array(values[$0..<($0 + size)]) }
    }
}
