import Foundation
import Tensor

/// What a weights file holds: a model's architecture and tensors with everything needed to use it, in memory.
///
/// `write(to:)` saves it atomically; `ModelFile(contentsOf:)` reads and validates every byte;
/// `makeModel(compact:)` builds the layers. The byte layout is in `Weights/FORMAT.md`.
public struct ModelFile: Equatable, Sendable {
    /// The format version this build writes. Version 2 added the optional `decision` header and the shape
    /// rasterizer's `orientation` and `maxStretch` preprocessing keys: a version-1 reader would ignore them and
    /// answer wrongly, so it must refuse such files.
    package static let formatVersion: UInt32 = 2
    /// The format versions this build reads: version-1 files get `DecisionRule.legacy` and their plain rasterizer.
    package static let readableVersions: ClosedRange<UInt32> = 1...2
    /// The first 8 bytes of every weights file: `\x89ODML\r\n\x1A` (binary marker, name, line-ending and
    /// end-of-file guards, as PNG does).
    package static let magic: [UInt8] = [0x89, 0x4F, 0x44, 0x4D, 0x4C, 0x0D, 0x0A, 0x1A]
    /// Bytes before the header: magic, version, header length, file length.
    package static let preambleBytes = 24
    /// Tensor data starts at multiples of this many bytes.
    package static let alignment = 32
    /// Weight tensors with fewer elements than this stay `f32` whatever format is asked for; biases and
    /// normalization statistics always do.
    package static let smallTensorLimit = 256

    /// The model's name, e.g. `shape-classifier`.
    public var name: String
    /// The layers, first to last.
    public var architecture: [LayerSpec]
    /// The class names, in output order.
    public var labels: [String]
    /// The input one sample must have.
    public var input: InputSpec
    /// Parameters of the preprocessing that turns raw data into the input.
    public var preprocessing: [String: JSONValue]
    /// How it was trained.
    public var training: TrainingMetadata?
    /// The format version of the file it was read from (`formatVersion` for a model built in memory).
    public internal(set) var version: UInt32 = ModelFile.formatVersion
    /// How its outputs become an answer (calibration, reject class, uncertainty floor); `nil` in files written
    /// before it existed, which then get `DecisionRule.legacy`.
    public var decision: DecisionRule?
    /// How the input of each int8 layer is quantized for integer arithmetic (calibrated at export); `nil` or
    /// empty runs int8 weights dequantized in float.
    public var activationQuantization: [ActivationQuantization]?
    /// The tensors by name (`<layer index>.<role>`).
    public var tensors: [String: QuantizedTensor]

    /// Describes `model` for saving, its weights stored in `format` (small tensors stay `f32`). Nested
    /// `Sequential`s are flattened: the saved model computes the same function.
    public init(
        name: String, model: Sequential, labels: [String], input: InputSpec,
        preprocessing: [String: JSONValue] = [:], training: TrainingMetadata? = nil, decision: DecisionRule? = nil,
        format: StorageFormat = .f32
    ) throws(WeightsFileError) {
        self.name = name
        self.decision = decision
        self.labels = labels
        self.input = input
        self.preprocessing = preprocessing
        self.training = training
        architecture = []
        tensors = [:]
        for layer in Self.flatten(model.layers) {
            guard let (spec, layerTensors) = LayerSpec.describe(layer) else {
                throw WeightsFileError(path: name, problem: .unsupportedLayer(String(describing: type(of: layer))))
            }
            let index = architecture.count
            architecture.append(spec)
            for (role, stored) in layerTensors {
                let tensorName = "\(index).\(role)"
                if let bad = stored.firstNonFiniteElement() {
                    throw WeightsFileError(path: name, problem: .invalidValue(tensor: tensorName, element: bad, reason: "not finite"))
                }
                let quantize =
                    role == "weight" && format.isQuantized && !stored.format.isQuantized
                    && elementCount(stored.shape) >= Self.smallTensorLimit
                tensors[tensorName] = quantize ? QuantizedTensor(quantizing: stored.dequantized(), as: format) : stored
            }
        }
        try validate(path: name)
    }

    /// A model from its parts, unchecked: a converter (the ONNX import) builds one, then reads its encoding back
    /// with `init(bytes:path:)`, which checks every part as it checks a file.
    package init(
        name: String, architecture: [LayerSpec], labels: [String], input: InputSpec, preprocessing: [String: JSONValue],
        training: TrainingMetadata?, decision: DecisionRule?, activationQuantization: [ActivationQuantization]?,
        tensors: [String: QuantizedTensor]
    ) {
        (self.name, self.architecture, self.labels, self.input, self.preprocessing) = (name, architecture, labels, input, preprocessing)
        (self.training, self.decision, self.activationQuantization, self.tensors) = (training, decision, activationQuantization, tensors)
    }

    private static func flatten(_ layers: [any Layer]) -> [any Layer] {
        layers.flatMap { layer -> [any Layer] in
            if let nested = layer as? Sequential { return flatten(nested.layers) }
            return [layer]
        }
    }

    /// The layers, ready to run. `compact: false` dequantizes every weight once here (fastest: plain sgemm);
    /// `compact: true` keeps quantized weights quantized and dequantizes tiles per call (smallest memory).
    public func makeModel(compact: Bool = false) -> Sequential {
        Sequential(
            architecture.enumerated().map { index, spec in
                var layerTensors: [String: QuantizedTensor] = [:]
                for (role, _) in spec.tensorShapes { layerTensors[role] = tensors["\(index).\(role)"] }
                return spec.makeLayer(layerTensors, compact: compact)
            })
    }

    /// The model's output shape for a batch of one.
    package var outputShape: [Int] {
        architecture.reduce([1] + input.shape) { shape, spec in (try? spec.outputShape(for: shape).get()) ?? shape }
    }

    /// The bytes the tensors take in their formats.
    package var tensorBytes: Int { tensors.values.reduce(0) { $0 + $1.bytes.count } }
    /// The bytes the tensors would take in `f32`.
    package var float32Bytes: Int { tensors.values.reduce(0) { $0 + 4 * elementCount($1.shape) } }
}

extension ModelFile {
    /// Why this file cannot serve `task` because it is another task's model (its preprocessing says so), or `nil`:
    /// the error a user who named the wrong file needs, instead of the preprocessing check's.
    package func otherTaskProblem(_ task: RecognitionTask) -> String? {
        otherTaskProblem(task: task.rawValue, kinds: [task.kind.rawValue])
    }

    /// Why this file cannot serve the task named `task`, whose preprocessing kinds are `kinds` (any task's, built in
    /// or an app's own; the first names it in messages), because its preprocessing is another kind, or `nil`.
    package func otherTaskProblem(task: String, kinds: [String]) -> String? {
        let kind = kinds.first ?? ""
        // A raw model (imported without labels or a task) runs only as it is: `classify run`, `inspect`.
        if labels.isEmpty && preprocessing.isEmpty {
            // A built-in task is named in a sidecar by its name; an app's own by its preprocessing.
            let example = RecognitionTask(name: task) != nil ? "\"task\": \"\(task)\"" : "\"preprocessing\": {\"kind\": \"\(kind)\", ...}"
            return "is a raw model (no labels, no preprocessing): it runs with `classify run`; to recognize with it, give it "
                + "labels and a task (for an ONNX model, a sidecar MODEL.onnx.json such as {\"labels\": [...], \(example)}: docs/onnx.md)"
        }
        guard case .string(let other)? = preprocessing["kind"], !kinds.contains(other) else { return nil }
        let labels = labels.joined(separator: ", ")
        guard let known = PreprocessingKind(rawValue: other)?.task else {
            return "has preprocessing '\(other)' (labels \(labels)), not a \(task) model's ('\(kind)')"
        }
        return "is a \(known.rawValue) model (labels \(labels)), not a \(task) model"
    }
}
