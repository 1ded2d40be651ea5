import Foundation

/// The one way from a motion recording to a timeline, for the CLI (single recordings, batches, `evaluate`) and
/// apps: it runs the first window classifier of the fallback chain that loads (quantized weights, float weights,
/// then the cadence recognizer) and labels every window with the checks of `MotionWindowClassifier.classify`
/// (sample rate, gaps, `still`).
public struct MotionRecognizer: Sendable {
    /// What labels the windows.
    public let classifier: any MotionWindowClassifier
    /// The link's name: a weights variant or `cadence`.
    public let model: String
    /// The failed attempts of loading before this link answered.
    public let attempts: [ChainAttempt]

    /// A recognizer from a loaded window classifier.
    public init(classifier: any MotionWindowClassifier, model: String, attempts: [ChainAttempt] = []) {
        self.classifier = classifier
        self.model = model
        self.attempts = attempts
    }

    /// The chain's link names for the shipped model: `motion-state.int8`, `motion-state.f32`.
    public static let shippedVariants = ["motion-state.int8", "motion-state.f32"]

    /// Loads the first working link of `variants` from `source`, then (with `policy.fallback`) the cadence
    /// recognizer. `report` hears each failed attempt as it happens.
    public static func load(
        variants: [String] = shippedVariants, source: any WeightsSource, policy: RetryPolicy = RetryPolicy(),
        report: (ChainEvent) -> Void = { _ in }
    ) throws(ChainFailure) -> MotionRecognizer {
        var links = weightsLinks(variants, source: source) { file throws(DataError) -> any MotionWindowClassifier in
            try MotionClassifier(file: file)
        }
        links.append(ChainLink(name: "cadence") { CadenceRecognizer(windowing: MotionWindowing()) })
        let (classifier, model, attempts) = try runChain(links, policy: policy, report: report)
        return MotionRecognizer(classifier: classifier, model: model, attempts: attempts)
    }

    /// The preprocessing of the answering classifier: recordings are read at its rate and window.
    public var windowing: MotionWindowing { classifier.windowing }

    /// The labels a window can take: the classifier's classes and `still`.
    public var windowLabels: [String] { classifier.labels + [MotionStillness.label] }

    /// Every window of `recording` labelled, and the majority label (see `MotionWindowClassifier.classify`).
    public func classify(_ recording: MotionRecording, smoothing: Int = 0, source: String = "recording") throws(DataError) -> MotionTimeline {
        var timeline = try classifier.classify(recording, smoothing: smoothing, source: source)
        timeline.model = model
        return timeline
    }
}
