import DataFiles
import Foundation
import Tensor
import WeightsFormat

/// The motion recognizer, for the CLI (single recordings, batches, `evaluate`, `--follow`), the benchmarks and
/// apps: the first link of the fallback chain that loads (quantized weights, float weights, then the cadence
/// recognizer). It labels every window of a recording with the weights file's decision rule and the checks of the
/// window classifiers (sample rate, gaps, `still`), and answers with the state most windows have.
public struct MotionRecognizer: Recognizer {
    /// What labels the windows: a trained motion classifier or the cadence recognizer.
    public typealias Engine = RecognizerEngine<MotionWindowing, CadenceRecognizer>

    /// What labels the windows.
    public let engine: Engine
    /// The link's name: a weights variant or `cadence`.
    public let model: String
    /// The failed attempts of loading before this link answered.
    public let attempts: [ChainAttempt]
    /// How many neighbouring windows on each side each window's probabilities are averaged with (within a
    /// segment); 0, the default, labels each window on its own. Below 0 counts as 0; more than a segment's windows
    /// averages the whole segment.
    public var smoothing = 0

    /// A recognizer from a loaded engine.
    public init(engine: Engine, model: String, attempts: [ChainAttempt] = []) {
        self.engine = engine
        self.model = model
        self.attempts = attempts
    }

    /// One recording.
    public typealias Input = MotionRecording
    /// A batch's answers: each recording's whole answer or its error (`recognize(batch:threads:)`).
    public typealias BatchAnswers = RecognitionResults<MotionAnswer>

    /// Recordings: `motion-state`.
    public static let task = RecognitionTask.motion
    /// `task.modelName`.
    public static var modelName: String { task.modelName }

    /// The cadence recognizer: the chain's last link.
    public static var rule: CadenceRecognizer { CadenceRecognizer() }

    /// The preprocessing of the answering engine: recordings are read at its rate and window.
    public var windowing: MotionWindowing { engine.windowing }

    /// The labels a window or a recording can take: the engine's classes (its reject class as `unknown`) and, for
    /// a model of the built-in moving states, `still`. A window whose scores are not finite is also `unknown`.
    public var answerLabels: [String] {
        let rule = engine.decision
        let classes = engine.labels.filter { $0 != rule.rejectLabel }
        return classes + (rule.rejectLabel.map { engine.labels.contains($0) } == true ? [DecisionRule.unknownLabel] : [])
            + (engine.appliesStillRule && !classes.contains(MotionStillness.label) ? [MotionStillness.label] : [])
    }

    /// Every window of `recording` labelled, and the majority label (see `MotionAnswer`). A recording that arrived
    /// below `MotionRecordingReader.minimumSampleRate`, or without one whole window, is an error naming
    /// `recording.source`, its rate or length and what is needed.
    public func recognize(_ recording: MotionRecording) throws(DataError) -> MotionAnswer {
        try engine.classify(recording, smoothing: smoothing, model: model)
    }

    /// `recognize(_:)` of a recording's signals (`MotionRecordingReader.readSignals`).
    package func recognize(_ signals: MotionSignals) throws(DataError) -> MotionAnswer {
        try engine.classify(signals, smoothing: smoothing, model: model)
    }
}

extension RecognizerEngine: MotionWindowClassifier where Preprocessing == MotionWindowing, Rule == CadenceRecognizer {
    /// The engine's preprocessing.
    package var windowing: MotionWindowing {
        switch self {
        case let .model(classifier): classifier.windowing
        case let .rule(cadence): cadence.windowing
        }
    }
}
