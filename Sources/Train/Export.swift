import Foundation
import Models
import Tensor

/// One weights file written by `export`, with its accuracy on the validation data.
public struct ExportedVariant: Sendable {
    /// Its storage format.
    public let format: StorageFormat
    /// Where it was written.
    public let url: URL
    /// Its size in bytes.
    public let bytes: Int
    /// Validation accuracy of the file as written (read back and run).
    public let accuracy: Double
    /// The decision rule the file carries (the temperature fitted on the validation data).
    public let decision: DecisionRule?
}

/// The largest validation-accuracy loss (against f32) a quantized variant may show without a warning.
public let quantizationWarningThreshold = 0.01

/// Writes the trained network as `<prefix>.f32.weights` and one `<prefix>.<format>.weights` per quantized
/// format, each atomically; reads each file back and measures its accuracy on `validation`, so the figures are
/// those of the files as shipped. Every file carries the same decision rule: the reject class `other` when the
/// labels have it, and a temperature fitted on `validation` (never on test data), so that the files' confidences
/// are calibrated.
public func export(
    _ network: Network, task: Task, classNames: [String], inputShape: [Int], preprocessing: [String: JSONValue],
    training metadata: TrainingMetadata, validation: Examples, formats: [StorageFormat], prefix: URL
) throws(WeightsFileError) -> [ExportedVariant] {
    let model = network.exportedModel()
    let temperature = DecisionRule.fitTemperature(probabilities: probabilities(of: model, on: validation.inputs), truth: validation.labels)
    let decision = DecisionRule.default(labels: classNames, temperature: (temperature * 1000).rounded() / 1000)
    var variants: [ExportedVariant] = []
    for format in [StorageFormat.f32] + formats.filter({ $0 != .f32 }) {
        var file = try ModelFile(
            name: task.modelName, model: model, labels: classNames,
            input: InputSpec(shape: inputShape, description: task == .shape ? "rasterized drawing" : "windows of motion features"),
            preprocessing: preprocessing, training: metadata, decision: decision, format: format)
        if format == .int8 {
            let integerLayers = file.architecture.indices.filter { file.tensors["\($0).weight"]?.format == .int8 }
            file.activationQuantization = calibrateActivations(of: model, layers: integerLayers, on: validation.inputs)
        }
        let url = URL(fileURLWithPath: prefix.path + ".\(format).weights")
        try file.write(to: url)
        let loaded = try ModelFile(contentsOf: url)
        variants.append(ExportedVariant(
            format: format, url: url, bytes: loaded.encoded().count,
            accuracy: accuracy(of: loaded.makeCompiledModel(), on: validation), decision: loaded.decision))
    }
    return variants
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
