import Foundation
import Tensor

/// The input a model takes, as its weights file records it.
public struct InputSpec: Codable, Equatable, Sendable {
    /// One sample's shape, without the batch axis (e.g. `[28, 28, 1]`).
    public var shape: [Int]
    /// What the input is, for people (e.g. "28x28 grayscale rendering of the strokes").
    public var description: String

    /// Creates the spec.
    public init(shape: [Int], description: String) {
        self.shape = shape
        self.description = description
    }
}

/// How a model was trained, as its weights file records it. Every field is optional.
public struct TrainingMetadata: Codable, Equatable, Sendable {
    /// The training data's path as given to `classify train`.
    public var dataset: String?
    /// A checksum of the training data (e.g. `crc32:1a2b3c4d`).
    public var datasetChecksum: String?
    /// The seed of the run.
    public var seed: UInt64?
    /// The epoch whose weights the file holds: the best on the validation data (the key is `epochs` for files
    /// written before `epochsTrained`, which meant the same).
    public var epochs: Int?
    /// How many epochs the run trained before it stopped (at its last epoch or early); `nil` in files written
    /// before it was recorded.
    public var epochsTrained: Int?
    /// Accuracy on the validation data, 0…1.
    public var validationAccuracy: Double?
    /// The training run that wrote the file (`crc32:` and 8 hex digits): the same in every file of one run (each
    /// weights variant and the curves), different between runs that trained different models. It is the CRC-32
    /// of the run's f32 file as encoded without this field, so the same training gives the same value and the
    /// files stay reproducible byte for byte. Files of one model in one folder whose runs differ are a mixed set,
    /// which the CLI's weights lookup refuses (`WeightsLocator`, in classify).
    public var run: String?

    /// Creates the metadata.
    public init(
        dataset: String? = nil, datasetChecksum: String? = nil, seed: UInt64? = nil, epochs: Int? = nil,
        validationAccuracy: Double? = nil, run: String? = nil, epochsTrained: Int? = nil
    ) {
        self.dataset = dataset
        self.datasetChecksum = datasetChecksum
        self.seed = seed
        self.epochs = epochs
        self.validationAccuracy = validationAccuracy
        self.run = run
        self.epochsTrained = epochsTrained
    }
}

/// One row of a weights file's tensor table.
package struct TensorEntry: Codable, Equatable, Sendable {
    /// `<layer index>.<role>`, e.g. `0.weight`.
    package var name: String
    /// The tensor's shape.
    package var shape: [Int]
    /// How its bytes are laid out.
    package var format: StorageFormat
    /// Where its bytes start, from the start of the data section (a multiple of 32).
    package var offset: Int
    /// How many bytes it takes (`format.byteCount(for: shape)`).
    package var length: Int
}

/// The JSON header of a weights file.
struct WeightsHeader: Codable, Equatable {
    var name: String
    var architecture: [LayerSpec]
    var labels: [String]
    var input: InputSpec
    var preprocessing: [String: JSONValue]
    var training: TrainingMetadata?
    var decision: DecisionRule?
    var activationQuantization: [ActivationQuantization]?
    var tensors: [TensorEntry]
}
