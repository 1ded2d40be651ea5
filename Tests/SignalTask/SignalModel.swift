import DataFiles
import Foundation
import Models
import Tensor
import Train
import WeightsFormat

/// The signal task's weights, trained once for the suite: f32 and int8 files of a small dense network, made and
/// checked by the engine's own training, export and loading.
public enum SignalModel {
    /// The windowing the model is trained on: 32 samples every 16.
    public static let windows = SignalWindows()

    /// The trained network's weights files (f32, int8), and its accuracy on the validation split; trained once.
    public static let trained: Result<(f32: ModelFile, int8: ModelFile, validation: Double), any Error> = Result {
        () throws -> (f32: ModelFile, int8: ModelFile, validation: Double) in
        var generator = SeededGenerator(seed: 7)
        let network = Network(converting: [
            Dense(inFeatures: windows.window, outFeatures: 24, generator: &generator), Activation(.relu),
            Dense(inFeatures: 24, outFeatures: SignalExamples.labels.count, generator: &generator),
        ])
        let training = SignalExamples.examples(perClass: 400, seed: 1), validation = SignalExamples.examples(perClass: 100, seed: 2)
        let result = train(network, on: training, validation: validation, configuration: TrainingConfiguration(epochs: 40, batchSize: 32, seed: 3))
        // The engine's export, as `classify train` uses it: a temperature fitted on the validation split, int8
        // activations calibrated on it, each file encoded and read back.
        let plan = try prepareExport(
            result.network, name: SignalRecognizer.modelName, classNames: SignalExamples.labels,
            input: InputSpec(shape: windows.inputShape, description: "a signal window"), preprocessing: windows.parameters,
            training: TrainingMetadata(seed: 3), validation: validation, formats: [.int8],
            prefix: URL(fileURLWithPath: SignalRecognizer.modelName))
        let files = try zip(plan.variants, plan.contents).map { try ModelFile(bytes: $1, path: $0.url.lastPathComponent) }
        return (files[0], files[1], result.history[result.bestEpoch - 1].validationAccuracy ?? 0)
    }

    /// `trained`, or the error that stopped it.
    public static func files() throws -> (f32: ModelFile, int8: ModelFile, validation: Double) { try trained.get() }

    /// A weights source of the test's own: variants from a dictionary, a missing one not found.
    public struct Source: WeightsSource {
        /// The files by variant name (`signal-waves.int8`, …).
        public let files: [String: ModelFile]
        /// A source of `files`.
        public init(files: [String: ModelFile]) { self.files = files }
        /// The variant's file; `WeightsNotFound` when there is none.
        public func load(_ variant: String) throws -> ModelFile {
            guard let file = files[variant] else { throw WeightsNotFound(variant: variant, places: ["the test's files"]) }
            return file
        }
    }

    /// Signals for testing, of people and seeds the model never saw: `count` of each label, 200 samples each
    /// (11 windows).
    public static func testSignals(count: Int, seed: UInt64) -> [(label: String, signal: [Float])] {
        var generator = SeededGenerator(seed: seed)
        return (0..<count).flatMap { _ in
            SignalExamples.labels.map { ($0, SignalExamples.signal($0, count: 200, generator: &generator)) }
        }
    }
}
