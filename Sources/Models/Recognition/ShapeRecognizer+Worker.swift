import DataFiles
import Tensor
import WeightsFormat

/// One drawing's answer in a few words, for batches: the class, the confidence, whether to trust it — what a result
/// line needs, with no strings or arrays of its own. `ShapeRecognizer.Worker` makes it without allocating.
public struct CompactShapeAnswer: Sendable, Equatable {
    /// The nearest real class: an index into the recognizer's `classes` (a `ShapeAnswer`'s `best`).
    public var best: Int
    /// Whether the drawing is none of the classes (the answer's label is `unknown`).
    public var isUnknown: Bool
    /// The calibrated probability of the answer's label.
    public var confidence: Double
    /// Whether the answer should not be trusted.
    public var uncertain: Bool

    /// Creates an answer.
    public init(best: Int, isUnknown: Bool, confidence: Double, uncertain: Bool) {
        self.best = best
        self.isUnknown = isUnknown
        self.confidence = confidence
        self.uncertain = uncertain
    }

    /// The answer's label among `classes` (the recognizer's): the best class, or `unknown`.
    public func label(_ classes: [String]) -> String { isUnknown ? DecisionRule.unknownLabel : classes[best] }
}

extension ShapeRecognizer {
    /// The classes the engine scores, in the order of an answer's probabilities (the model's labels, its reject
    /// class included, or the geometric recognizer's four).
    public var classes: [String] { engine.labels }

    /// The one way from a drawing to an answer: validation, the rasterizer, the compiled plan and the decision
    /// rule with its shape odds (or the geometric recognizer). `ShapeRecognizer.recognize(_:)`, `recognize(batch:threads:)`,
    /// `classify shape` (one drawing, files, `--dataset`), `classify evaluate` and the benchmarks all answer
    /// through a worker's `Scratch` (`recognize(_:)` borrows one from the recognizer's pool).
    ///
    /// It keeps what one thread needs to recognize drawing after drawing without allocating: an image buffer, the
    /// plan's workspace and its outputs. Use one worker per thread; make it once and keep it.
    public final class Worker {
        /// The recognizer it works for.
        public let recognizer: ShapeRecognizer
        /// Its buffers, its own for the worker's life.
        private let scratch: Scratch

        /// A worker for `recognizer`.
        public init(_ recognizer: ShapeRecognizer) {
            self.recognizer = recognizer
            scratch = Scratch(recognizer)
        }

        /// Recognizes `drawing` into a compact answer, without allocating (after the first call on a model):
        /// `scores` (when given) receives the model's raw outputs, `probabilities` the calibrated probability of
        /// each of `classes`. Throws `DataError` for a drawing `ShapeRecognizer.problem(with:)` refuses.
        public func recognize(
            _ drawing: Drawing, scores scoresOut: UnsafeMutableBufferPointer<Float>? = nil,
            probabilities: UnsafeMutableBufferPointer<Double>? = nil
        ) throws(DataError) -> CompactShapeAnswer {
            let answer = try scratch.decide(drawing, recognizer: recognizer)
            scratch.copyOut(scores: scoresOut, probabilities: probabilities)
            return answer.compact
        }

        /// The whole answer for `drawing`, with the image the model saw when `view` is set.
        public func answer(_ drawing: Drawing, view: Bool = false) throws(DataError) -> ShapeAnswer {
            try scratch.answer(drawing, recognizer: recognizer, view: view)
        }
    }

    /// What one recognition at a time needs, kept for the next: the image, the plan's workspace and outputs, the
    /// probabilities, and the decision rule read once. A worker keeps one; `ShapeRecognizer.recognize(_:)`
    /// borrows one from the recognizer's pool.
    final class Scratch {
        private let compiled: CompiledModel?
        private let preprocessing: ShapePreprocessing
        private let workspace: InferenceWorkspace?
        private let image: UnsafeMutableBufferPointer<Float>
        private let scores: UnsafeMutableBufferPointer<Float>
        private let raw: UnsafeMutableBufferPointer<Double>
        private let calibrated: UnsafeMutableBufferPointer<Double>
        private let rule: DecisionRule
        private let rejectIndex: Int?
        private let classes: [String]

        init(_ recognizer: ShapeRecognizer) {
            let classes = recognizer.classes
            self.classes = classes
            if case let .model(classifier) = recognizer.engine {
                compiled = classifier.compiled
                preprocessing = classifier.preprocessing
                let plan = classifier.compiled.plan
                workspace = plan.makeWorkspace()
                image = .allocate(capacity: plan.inputCount)
                scores = .allocate(capacity: plan.outputCount)
                rule = classifier.decision
                rejectIndex = classifier.rejectIndex
            } else {
                compiled = nil
                preprocessing = .raster(.shipped)
                workspace = nil
                image = .allocate(capacity: 1)
                scores = .allocate(capacity: classes.count)
                rule = .legacy
                rejectIndex = nil
            }
            image.initialize(repeating: 0)
            scores.initialize(repeating: 0)
            raw = .allocate(capacity: classes.count)
            raw.initialize(repeating: 0)
            calibrated = .allocate(capacity: classes.count)
            calibrated.initialize(repeating: 0)
        }

        deinit {
            image.deallocate()
            scores.deallocate()
            raw.deallocate()
            calibrated.deallocate()
        }

        /// Copies the last decision's raw outputs and probabilities to the caller's buffers (those given).
        func copyOut(scores scoresOut: UnsafeMutableBufferPointer<Float>?, probabilities: UnsafeMutableBufferPointer<Double>?) {
            if let scoresOut, compiled != nil {
                shapePrecondition(
                    scoresOut.count == scores.count,
                    "ShapeRecognizer.Worker.recognize: scores has \(scoresOut.count) places, the model gives \(scores.count)")
                _ = scoresOut.update(fromContentsOf: scores)
            }
            if let probabilities {
                shapePrecondition(
                    probabilities.count == calibrated.count,
                    "ShapeRecognizer.Worker.recognize: probabilities has \(probabilities.count) places, there are \(calibrated.count) classes")
                _ = probabilities.update(fromContentsOf: calibrated)
            }
        }

        /// The whole answer: the decision's labels and probabilities (its own storage), and the image when `view`.
        func answer(_ drawing: Drawing, recognizer: ShapeRecognizer, view: Bool) throws(DataError) -> ShapeAnswer {
            let answer = try decide(drawing, recognizer: recognizer)
            if let whole = answer.whole { return whole }
            let decision = Decision(
                labels: classes, raw: UnsafeBufferPointer(raw), calibrated: UnsafeBufferPointer(calibrated),
                decided: (answer.compact.best, answer.compact.isUnknown, answer.compact.confidence, answer.compact.uncertain),
                rule: rule)
            // The image the model saw; a gesture model sees distances, not an image.
            let seen = view && preprocessing.rasterizer != nil ? compiled.map { Tensor(shape: $0.plan.inputShape, scalars: Array(image)) } : nil
            return ShapeAnswer(decision, model: recognizer.model, attempts: recognizer.attempts, view: seen)
        }

        /// Validation, then the rasterizer, the plan and the decision rule (or the geometric recognizer, whose
        /// whole answer comes back too).
        func decide(_ drawing: Drawing, recognizer: ShapeRecognizer) throws(DataError) -> (compact: CompactShapeAnswer, whole: ShapeAnswer?) {
            if let problem = ShapeRecognizer.problem(with: drawing) { throw DataError(file: "drawing", message: problem) }
            guard let compiled, let workspace else {
                let answer = ShapeRecognizer.geometricAnswer(drawing, model: recognizer.model, attempts: recognizer.attempts)
                for (i, entry) in answer.probabilities.enumerated() where i < calibrated.count {
                    calibrated[i] = entry.probability
                    raw[i] = entry.probability
                }
                let compact = CompactShapeAnswer(
                    best: classes.firstIndex(of: answer.best) ?? 0, isUnknown: answer.label == DecisionRule.unknownLabel,
                    confidence: answer.confidence, uncertain: answer.uncertain)
                return (compact, answer)
            }
            preprocessing.input(for: drawing, into: image)
            compiled.plan.run(UnsafeBufferPointer(image), into: scores, workspace: workspace)
            for i in raw.indices { raw[i] = Double(scores[i]) }
            let decided = Decision.decide(raw: UnsafeBufferPointer(raw), rejectIndex: rejectIndex, rule: rule, calibrated: calibrated) { p in
                if let odds = rule.shapeOdds, let rejectIndex { odds.weigh(drawing, labels: classes, rejectIndex: rejectIndex, calibrated: p) }
            }
            return (
                CompactShapeAnswer(best: decided.best, isUnknown: decided.unknown, confidence: decided.confidence, uncertain: decided.uncertain), nil
            )
        }
    }

    static func geometricAnswer(_ drawing: Drawing, model: String, attempts: [ChainAttempt]) -> ShapeAnswer {
        let labels = GeometricRecognizer.labels
        let prediction: ShapePrediction
        do {
            prediction = try GeometricRecognizer().classify(drawing)
        } catch {
            // Points on a line or a spot have no outline: none of the four shapes.
            let even = Decision(labels: labels, probabilities: labels.map { _ in 1 / Double(labels.count) }, rule: .legacy)
            return ShapeAnswer(
                even, label: DecisionRule.unknownLabel, confidence: 1, uncertain: true,
                reason: "\(error.message); the geometric recognizer knows only closed outlines",
                model: model, attempts: attempts, view: nil)
        }
        let decision = Decision(labels: labels, probabilities: prediction.probabilities.map(\.probability), rule: .legacy)
        // The geometric recognizer knows only closed outlines: an open drawing is none of them.
        let gap = ShapeUncertainty.closingGap(drawing)
        guard gap <= ShapeUncertainty.closingGapThreshold else {
            return ShapeAnswer(
                decision, label: DecisionRule.unknownLabel, uncertain: true,
                reason:
                    "the drawing is open (its ends are \(gap.isFinite ? "\(Int((min(gap, 1e9) * 100).rounded()))" : "\(gap)")% of its size apart); "
                    + "the geometric recognizer knows only closed outlines",
                model: model, attempts: attempts, view: nil)
        }
        return ShapeAnswer(decision, model: model, attempts: attempts, view: nil)
    }
}
