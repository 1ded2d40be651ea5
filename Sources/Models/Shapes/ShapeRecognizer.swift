import DataFiles
import Foundation
import Tensor
import WeightsFormat

/// What the shape recognizer answers for one drawing.
public struct ShapeAnswer: RecognitionAnswer {
    /// One of the model's classes, or `unknown` when the drawing is none of them.
    public let label: String
    /// The nearest real class (equals `label` unless it is `unknown`).
    public let best: String
    /// The calibrated probability of `label`.
    public let confidence: Double
    /// Every class's calibrated probability, in the model's label order.
    public let probabilities: [(label: String, probability: Double)]
    /// Whether the answer should not be trusted.
    public let uncertain: Bool
    /// Why it is uncertain or unknown; `nil` for a trusted answer of a real class.
    public let reason: String?
    /// Which link answered: a weights variant (`shape-classifier.int8`) or `geometric`.
    public let model: String
    /// The failed attempts before it.
    public let attempts: [ChainAttempt]
    /// The image the model saw (`nil` for the geometric recognizer).
    public let view: Tensor?

    /// An answer as `decision` gives it, with a different `label`, `confidence`, `uncertain` or `reason` where
    /// one is given.
    init(
        _ decision: Decision, label: String? = nil, confidence: Double? = nil, uncertain: Bool? = nil, reason: String? = nil,
        model: String, attempts: [ChainAttempt], view: Tensor?
    ) {
        self.label = label ?? decision.label
        best = decision.best
        self.confidence = confidence ?? decision.confidence
        probabilities = decision.probabilities
        self.uncertain = uncertain ?? decision.uncertain
        self.reason = reason ?? decision.reason
        self.model = model
        self.attempts = attempts
        self.view = view
    }

    /// The clean outline of this answer's label fitted to `drawing` (the drawing it answered), with how neatly it was
    /// drawn; `nil` for `unknown`, for labels that are none of circle, triangle, square and star, and when the
    /// outline does not explain the drawing (`FittedShape.explainsDrawing`: 0% neat, such as a six-pointed star's
    /// five-pointed outline). Computed on each call (it sorts the drawing's points: a few microseconds), so that
    /// answering stays as fast without it.
    public func fitted(to drawing: Drawing) -> FittedShape? {
        guard label != DecisionRule.unknownLabel, let fit = FittedShape.fit(drawing, as: label), fit.explainsDrawing else { return nil }
        return fit
    }
}

/// The shape recognizer, for the CLI (single drawings, batches, `evaluate`), the benchmarks and apps: the first
/// link of the fallback chain that loads (quantized weights, float weights, then the geometric recognizer). Its
/// `Worker` is the one way from a drawing to an answer: it validates the drawing, runs the model and turns the
/// probabilities into an answer with the weights file's decision rule (calibration, the `other` class as
/// `unknown`, the uncertainty floor).
public struct ShapeRecognizer: Recognizer {
    /// What answers: a trained shape classifier or the geometric recognizer.
    public typealias Engine = RecognizerEngine<ShapePreprocessing, GeometricRecognizer>

    /// What answers.
    public let engine: Engine
    /// The link's name: a weights variant or `geometric`.
    public let model: String
    /// The failed attempts of loading before this link answered.
    public let attempts: [ChainAttempt]
    /// Buffers for `recognize(_:)`, one per concurrent caller, kept for the next call.
    let scratch = ReusePool<Scratch>()

    /// A recognizer from a loaded engine.
    public init(engine: Engine, model: String, attempts: [ChainAttempt] = []) {
        self.engine = engine
        self.model = model
        self.attempts = attempts
    }

    /// Drawings: `shape-classifier`.
    public static let task = RecognitionTask.shape
    /// `task.modelName`.
    public static var modelName: String { task.modelName }

    /// The geometric recognizer: the chain's last link.
    public static var rule: GeometricRecognizer { GeometricRecognizer() }

    /// Why no recognizer can see `drawing` (fewer than 2 points, a NaN, all points in one place), or `nil`.
    public static func problem(with drawing: Drawing) -> String? {
        ShapeRasterizer().problem(with: drawing)
    }

    /// The answer for one drawing, with the image the model saw; a drawing no recognizer can see is a `DataError`
    /// (bad input). Its buffers (image, plan workspace, outputs) come from the recognizer's pool, so a call allocates
    /// only the answer's own storage; to answer many drawings, keep a `Worker` per thread, or use
    /// `recognize(batch:threads:)`.
    public func recognize(_ drawing: Drawing) throws(DataError) -> ShapeAnswer {
        try scratch.with(make: Scratch(self)) { (scratch) throws(DataError) in try scratch.answer(drawing, recognizer: self, view: true) }
    }

    /// The labels an answer's `label` can take: the real classes and `unknown` (when the model has a reject class
    /// or is the geometric recognizer). A model whose scores are not finite also answers `unknown`, whatever its
    /// classes.
    public var answerLabels: [String] {
        switch engine {
        case let .model(classifier):
            let rule = classifier.decision
            return classifier.labels.filter { $0 != rule.rejectLabel } + (classifier.rejectIndex != nil ? [DecisionRule.unknownLabel] : [])
        case let .rule(geometric):
            return geometric.labels + [DecisionRule.unknownLabel]
        }
    }
}
