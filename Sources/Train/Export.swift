import DataFiles
import Foundation
import Models
import Tensor
import WeightsFormat

/// One weights file of an export, with its accuracy on the validation data.
public struct ExportedVariant: Sendable {
    /// Its storage format.
    public let format: StorageFormat
    /// Where it is written.
    public let url: URL
    /// Its size in bytes.
    public let bytes: Int
    /// Validation accuracy of the file as written (decoded from its bytes and run).
    public let accuracy: Double
    /// The decision rule the file carries (the temperature fitted on the validation data).
    public let decision: DecisionRule?
}

/// The largest validation-accuracy loss (against f32) a quantized variant may show without a warning.
public let quantizationWarningThreshold = 0.01

/// A training run's weights files, encoded, decoded back and measured, waiting to be written as one set.
public struct ExportPlan: Sendable {
    /// The run's identity, recorded in every file (`TrainingMetadata.run`).
    public let run: String
    /// Each weights file: f32 first, then the quantized formats.
    public let variants: [ExportedVariant]
    /// Each file's bytes, in the order of `variants`: what `ModelFile(bytes:path:)` reads back (`classify train`
    /// writes them as one set; an app may write each with `ModelFile.write(to:)`).
    public let contents: [[UInt8]]
    /// The share of the validation examples the f32 model answers `uncertain` under the files' decision rule.
    public let validationUncertain: Double
    /// The shape odds fitted for the decision, with their curve (`nil` when none were fitted).
    public let shapeOddsFit: ShapeOddsFit?

    /// Writes the weights files and `extra` files (the curves) as one set, under the run's lock
    /// (`withOutputLock`): every file is staged (written and flushed beside its target) before any is renamed
    /// into place, so a bad target (a directory, a FIFO, an unwritable folder) fails before anything changes, and
    /// a run killed during the renames leaves files whose `run` fields differ, which the weights lookup refuses.
    /// `waiting` is called when another run holds the lock. Temporary files a killed run left beside the targets
    /// (`.NAME.partial-XXXXXXXX`) are removed first: under the lock no other run of this prefix is writing.
    package func write(adding extra: [(url: URL, bytes: [UInt8])] = [], prefix: URL, waiting: () -> Void = {}) throws(AtomicFile.WriteError) {
        let files = zip(variants, contents).map { (url: $0.url, bytes: $1) } + extra
        try withOutputLock(prefix: prefix, waiting: waiting) { () throws(AtomicFile.WriteError) in
            for file in files { removeLeftovers(of: file.url) }
            var staged: [AtomicFile.Staged] = []
            do throws(AtomicFile.WriteError) {
                for file in files { staged.append(try AtomicFile.stage(file.bytes, to: file.url)) }
            } catch {
                for file in staged { file.discard() }
                throw error
            }
            for (index, file) in staged.enumerated() {
                do throws(AtomicFile.WriteError) {
                    try file.commit()
                } catch {
                    for later in staged.dropFirst(index + 1) { later.discard() }
                    throw error
                }
            }
        }
    }
}

/// Removes the temporary files of earlier, killed writes of `url` (`.NAME.partial-…` beside it).
private func removeLeftovers(of url: URL) {
    let folder = url.deletingLastPathComponent()
    let prefix = ".\(url.lastPathComponent).partial-"
    for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] where name.hasPrefix(prefix) {
        unlink(folder.appendingPathComponent(name).path)
    }
}

/// Encodes the trained network as `<prefix>.f32.weights` and one `<prefix>.<format>.weights` per quantized
/// format, decodes each file's bytes back and measures its accuracy on `validation`, so the figures are those of
/// the files as shipped; nothing is written (see `ExportPlan.write`). Every file carries the same decision rule:
/// the reject class `other` when the labels have it, and a temperature fitted on `validation` (never on test
/// data), so that the files' confidences are calibrated; for a shape model of circle, triangle, square and star
/// with a reject class, shape odds fitted on `outOfFold` answers when given (`ShapeOddsFit`: a shape model's only); and the same run
/// identity:
/// the checksum of the f32 file encoded without it.
///
/// Any task's network exports here, an app's own too: `input` and `preprocessing` are what its weights header says
/// (its `ModelPreprocessing`'s input shape and parameters, which its recognizer checks when it loads the file).
public func prepareExport(
    _ network: Network, name: String, classNames: [String], input: InputSpec, preprocessing: [String: JSONValue],
    training metadata: TrainingMetadata, validation: Examples, outOfFold: ShapeOddsData? = nil, formats: [StorageFormat], prefix: URL
) throws(WeightsFileError) -> ExportPlan {
    let model = network.exportedModel()
    let validationProbabilities = probabilities(of: model, on: validation.inputs)
    let temperature = DecisionRule.fitTemperature(probabilities: validationProbabilities, truth: validation.labels)
    var decision = DecisionRule.default(labels: classNames, temperature: (temperature * 1000).rounded() / 1000)
    var shapeOddsFit: ShapeOddsFit?
    if let rejectIndex = decision.rejectLabel.flatMap(classNames.firstIndex(of:)), let outOfFold {
        shapeOddsFit = ShapeOddsFit.fit(outOfFold, classNames: classNames, rejectIndex: rejectIndex, rule: decision)
        decision.shapeOdds = shapeOddsFit?.odds
    }
    let uncertain = validationProbabilities.count { Decision(labels: classNames, probabilities: $0, rule: decision).uncertain }
    let (run, variants, contents) = try exportVariants(
        of: model, formats: formats, prefix: prefix, training: metadata, calibration: validation.inputs,
        file: { (format, training) throws(WeightsFileError) in
            try ModelFile(
                name: name, model: model, labels: classNames,
                input: input, preprocessing: preprocessing, training: training, decision: decision, format: format)
        },
        accuracy: { accuracy(of: $0.makeCompiledModel(), on: validation) })
    return ExportPlan(
        run: run, variants: variants, contents: contents,
        validationUncertain: Double(uncertain) / Double(max(1, validationProbabilities.count)), shapeOddsFit: shapeOddsFit)
}

/// The files of an export, encoded: f32 first, then each of `formats` that is not f32, all made by `make` with
/// `metadata` and one run identity (the checksum of the f32 file encoded without it); an int8 file's activation
/// ranges calibrated on `calibration` (inputs `model` sees); each file decoded back and measured by `accuracy`.
/// `prepareExport` (networks) and `GestureTraining` (gesture templates) export through it.
func exportVariants(
    of model: Sequential, formats: [StorageFormat], prefix: URL, training metadata: TrainingMetadata, calibration: Tensor,
    file make: (StorageFormat, TrainingMetadata) throws(WeightsFileError) -> ModelFile, accuracy: (ModelFile) -> Double
) throws(WeightsFileError) -> (run: String, variants: [ExportedVariant], contents: [[UInt8]]) {
    func file(_ format: StorageFormat, run: String?) throws(WeightsFileError) -> ModelFile {
        var training = metadata
        training.run = run
        var file = try make(format, training)
        if format == .int8 {
            let integerLayers = file.architecture.indices.filter { file.tensors["\($0).weight"]?.format == .int8 }
            file.activationQuantization = calibrateActivations(of: model, layers: integerLayers, on: calibration)
        }
        return file
    }
    let run = trainingRun(of: try file(.f32, run: nil).encoded())
    var variants: [ExportedVariant] = [], contents: [[UInt8]] = []
    for format in [StorageFormat.f32] + formats.filter({ $0 != .f32 }) {
        let url = URL(fileURLWithPath: prefix.path + ".\(format).weights")
        let bytes = try file(format, run: run).encoded()
        let loaded = try ModelFile(bytes: bytes, path: url.path)
        variants.append(ExportedVariant(format: format, url: url, bytes: bytes.count, accuracy: accuracy(loaded), decision: loaded.decision))
        contents.append(bytes)
    }
    return (run, variants, contents)
}

/// The run identity of an f32 file's bytes (encoded without a run): `crc32:` and the 8 hex digits of the
/// checksum the file stores (that of every byte before it; the CRC of a message followed by its own CRC is the
/// same for every message, so it would not tell runs apart).
func trainingRun(of bytes: [UInt8]) -> String {
    String(format: "crc32:%08x", ModelFile.storedChecksum(of: bytes) ?? 0)
}

/// The quantization of each of `layers`' inputs (indices into `model.layers`) that covers the range the input
/// takes when `model` runs on `inputs` (training-file data: the validation split carved from it).
public func calibrateActivations(of model: Sequential, layers: [Int], on inputs: Tensor, batchSize: Int = 256) -> [ActivationQuantization] {
    guard let last = layers.max() else { return [] }
    var ranges = [Int: (minimum: Float, maximum: Float)]()
    for start in stride(from: 0, to: inputs.shape[0], by: batchSize) {
        var x = inputs.rows(start..<min(start + batchSize, inputs.shape[0]))
        for (index, layer) in model.layers.enumerated().prefix(last + 1) {
            if layers.contains(index) {
                let range = ranges[index] ?? (.infinity, -.infinity)
                ranges[index] = (min(range.minimum, x.scalars.min() ?? 0), max(range.maximum, x.scalars.max() ?? 0))
            }
            x = layer(x)
        }
    }
    return layers.sorted().map { index in
        let range = ranges[index] ?? (0, 0)
        return ActivationQuantization(layer: index, minimum: range.minimum, maximum: range.maximum)
    }
}

/// The share of `examples` a compiled model classifies correctly.
public func accuracy(of compiled: CompiledModel, on examples: Examples) -> Double {
    guard examples.count > 0 else { return 0 }
    let predicted = compiled(examples.inputs).argmax(axis: 1)
    return Double(zip(predicted, examples.labels).filter { $0 == $1 }.count) / Double(examples.count)
}

/// The share of `examples` an inference model classifies correctly.
public func accuracy(of model: Sequential, on examples: Examples, batchSize: Int = 256) -> Double {
    guard examples.count > 0 else { return 0 }
    return Double(zip(predictions(of: model, on: examples.inputs, batchSize: batchSize), examples.labels).filter { $0 == $1 }.count)
        / Double(examples.count)
}

/// The class an inference model picks for each row of `inputs`.
public func predictions(of model: Sequential, on inputs: Tensor, batchSize: Int = 256) -> [Int] {
    outputs(of: model, on: inputs, batchSize: batchSize).flatMap { $0.argmax(axis: 1) }
}

/// An inference model's output (softmax probabilities) for each row of `inputs`.
public func probabilities(of model: Sequential, on inputs: Tensor, batchSize: Int = 256) -> [[Double]] {
    outputs(of: model, on: inputs, batchSize: batchSize).flatMap { output in
        let (rows, width, scalars) = (output.shape[0], output.shape[1], output.scalars)
        return (0..<rows).map { row in scalars[(row * width)..<((row + 1) * width)].map(Double.init) }
    }
}

/// The model's outputs for `inputs`, `batchSize` rows at a time.
func outputs(of model: Sequential, on inputs: Tensor, batchSize: Int) -> [Tensor] {
    stride(from: 0, to: inputs.shape[0], by: batchSize).map { start in
        model(inputs.rows(start..<min(start + batchSize, inputs.shape[0])))
    }
}
