import ArgumentParser
import DataFiles
import Foundation
import Models
import Tensor
import WeightsFormat

/// `classify inspect WEIGHTS`: what a weights file holds, after validating every byte of it.
struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show what a weights file (or an .onnx file, as imported) holds: architecture, labels, input, training, tensors, sizes.",
        discussion: """
            The file is validated first (magic, version, checksum, every tensor); a missing file exits 66 and \
            a corrupt one 65, with one line on stderr saying what is wrong.

            Example: classify inspect Weights/model.int8.weights --json
            """
    )

    @Argument(help: "The weights file to inspect.")
    var weights: String

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    func run() throws {
        let file: ModelFile, bytes: [UInt8]
        do {
            (file, bytes) = try ModelFile.load(URL(fileURLWithPath: weights))
        } catch {
            reportError(error.description)
            throw ExitCode(ExitStatus.code(for: error))
        }
        let report = InspectionReport(path: weights, file: file, bytes: bytes)
        print(json ? report.json : report.text)
    }
}

/// What `inspect` shows, computed once for the text and JSON forms.
struct InspectionReport: Encodable {
    struct Checksum: Encodable {
        let algorithm = "crc32"
        let value: String
        let valid = true
    }
    struct LayerRow: Encodable {
        let index: Int
        let layer: LayerSpec
        let summary: String
        let outputShape: [Int]
    }
    struct TensorRow: Encodable {
        let name: String
        let shape: [Int]
        let format: StorageFormat
        let bytes: Int
    }

    let path: String
    /// `ONNX` for a file the import converted (the other figures are those of our weights file of it).
    let importedFrom: String?
    let formatVersion: UInt32
    let name: String
    let checksum: Checksum
    let labels: [String]
    let input: InputSpec
    let preprocessing: [String: JSONValue]
    let training: TrainingMetadata?
    let decision: DecisionRule?
    let activationQuantization: [ActivationQuantization]?
    let parameters: Int
    let architecture: [LayerRow]
    let tensors: [TensorRow]
    let fileBytes: Int
    let float32FileBytes: Int
    let compression: Double

    init(path: String, file: ModelFile, bytes: [UInt8]) {
        self.path = path
        importedFrom = URL(fileURLWithPath: path).pathExtension.lowercased() == "onnx" ? "ONNX" : nil
        formatVersion = file.version
        name = file.name
        checksum = Checksum(value: String(format: "0x%08x", ModelFile.storedChecksum(of: bytes) ?? 0))
        labels = file.labels
        input = file.input
        preprocessing = file.preprocessing
        training = file.training
        decision = file.decision
        activationQuantization = file.activationQuantization
        parameters = file.tensors.values.reduce(0) { $0 + elementCount($1.shape) }
        var shape = [1] + file.input.shape
        architecture = file.architecture.enumerated().map { index, spec in
            shape = (try? spec.outputShape(for: shape).get()) ?? shape
            return LayerRow(index: index, layer: spec, summary: spec.summary, outputShape: Array(shape.dropFirst()))
        }
        tensors = file.tensors.keys.sorted(by: ModelFile.tensorOrder).compactMap { name in
            file.tensors[name].map { TensorRow(name: name, shape: $0.shape, format: $0.format, bytes: $0.bytes.count) }
        }
        fileBytes = bytes.count
        float32FileBytes = file.float32Equivalent.encoded().count
        compression = Double(fileBytes) / Double(max(float32FileBytes, 1))
    }

    var json: String { jsonText(self, pretty: true) }

    var text: String {
        func shape(_ s: [Int]) -> String { "[" + s.map(String.init).joined(separator: ", ") + "]" }
        func grouped(_ n: Int) -> String {
            let digits = String(n)
            return digits.enumerated().map { ($0.offset > 0 && (digits.count - $0.offset) % 3 == 0 ? "," : "") + String($0.element) }.joined()
        }
        func column(_ text: String, _ width: Int) -> String {
            text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
        }
        var lines = [
            importedFrom.map {
                "\(path): \(name), imported from \($0) (as a weights file: format version \(formatVersion), CRC-32 \(checksum.value))"
            }
                ?? "\(path): \(name), weights format version \(formatVersion), checksum ok (CRC-32 \(checksum.value))"
        ]
        lines.append(column("labels", 16) + (labels.isEmpty ? "(none)" : labels.joined(separator: ", ")))
        lines.append(column("input", 16) + shape(input.shape) + (input.description.isEmpty ? "" : "  \(input.description)"))
        if !preprocessing.isEmpty {
            lines.append(
                column("preprocessing", 16)
                    + preprocessing.keys.sorted().map { key in
                        // A long array (a gesture model's templates) is counted, not printed.
                        if case .array(let items)? = preprocessing[key], items.count > 8 { return "\(key)=[\(items.count) items]" }
                        return "\(key)=\(preprocessing[key]?.description ?? "")"
                    }.joined(separator: " "))
        }
        if let training {
            var parts: [String] = []
            if let dataset = training.dataset { parts.append("dataset \(dataset)" + (training.datasetChecksum.map { " (\($0))" } ?? "")) }
            if let seed = training.seed { parts.append("seed \(seed)") }
            if let best = training.epochs { parts.append("best epoch \(best)" + (training.epochsTrained.map { " of \($0)" } ?? "")) }
            if let accuracy = training.validationAccuracy { parts.append(String(format: "validation accuracy %.2f%%", 100 * accuracy)) }
            if let run = training.run { parts.append("run \(run)") }
            lines.append(column("training", 16) + parts.joined(separator: ", "))
        }
        if let decision {
            lines.append(column("decision", 16) + decision.summary)
        }
        if let activationQuantization, !activationQuantization.isEmpty {
            lines.append(
                column("integer", 16) + "layers " + activationQuantization.map { String($0.layer) }.joined(separator: ", ")
                    + " run in int8 arithmetic (input scales "
                    + activationQuantization.map { String(format: "%.4g", $0.scale) + ($0.zeroPoint == 0 ? "" : " zp \($0.zeroPoint)") }
                    .joined(separator: ", ") + ")")
        }
        lines.append(column("architecture", 16) + "\(architecture.count) layers, \(grouped(parameters)) parameters")
        for row in architecture {
            lines.append("  " + column(String(row.index), 4) + column(row.summary, 40) + "→ " + shape(row.outputShape))
        }
        lines.append("tensors")
        lines.append("  " + column("name", 14) + column("shape", 18) + column("format", 8) + "bytes")
        for row in tensors {
            lines.append(
                "  " + column(row.name, 14) + column(shape(row.shape), 18) + column(row.format.rawValue, 8)
                    + String(repeating: " ", count: max(0, 9 - grouped(row.bytes).count)) + grouped(row.bytes))
        }
        lines.append(
            column("size", 16) + "\(grouped(fileBytes)) bytes; as f32 \(grouped(float32FileBytes)) bytes"
                + String(format: " (%.1f%%)", 100 * compression))
        // Every text from the file (name, description, labels, preprocessing, dataset, tensor names) as the
        // terminal gets it: a control character shown as `?`, so the file never drives the terminal or forges a line.
        return lines.map(DataError.terminalSafe).joined(separator: "\n")
    }
}
