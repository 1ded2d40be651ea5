import Dispatch
import Synchronization
import Tensor

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
    public var classes: [String] {
        switch engine {
        case let .model(classifier): classifier.labels
        case .geometric: GeometricRecognizer.labels
        }
    }

    /// What one thread keeps to recognize drawing after drawing without allocating: an image buffer, the plan's
    /// workspace and its output. Use one worker per thread; make it once and keep it.
    public final class Worker {
        /// The recognizer it works for.
        public let recognizer: ShapeRecognizer
        private let classifier: ShapeClassifier?
        private let workspace: InferenceWorkspace?
        private let image: UnsafeMutableBufferPointer<Float>
        private let scores: UnsafeMutableBufferPointer<Float>
        private let raw: UnsafeMutableBufferPointer<Double>
        private let calibrated: UnsafeMutableBufferPointer<Double>
        private let rule: DecisionRule
        private let rejectIndex: Int?
        private let classIndex: [String: Int]

        /// A worker for `recognizer`.
        public init(_ recognizer: ShapeRecognizer) {
            self.recognizer = recognizer
            let classes = recognizer.classes
            classIndex = Dictionary(classes.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
            if case let .model(classifier) = recognizer.engine {
                self.classifier = classifier
                let plan = classifier.compiled.plan
                workspace = plan.makeWorkspace()
                image = .allocate(capacity: plan.inputCount)
                scores = .allocate(capacity: plan.outputCount)
                rule = classifier.file.decision ?? .legacy
            } else {
                classifier = nil
                workspace = nil
                image = .allocate(capacity: 1)
                scores = .allocate(capacity: 1)
                rule = .legacy
            }
            image.initialize(repeating: 0)
            scores.initialize(repeating: 0)
            rejectIndex = rule.rejectLabel.flatMap { classes.firstIndex(of: $0) }
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

        /// The answer `recognizer.recognize(drawing)` gives, in compact form; the model's raw outputs go to
        /// `scores` and the calibrated probabilities to `probabilities` (`classes.count` each) when given. A drawing
        /// no recognizer can see is the same `DataError`. With a model and a drawing of up to 2,048 points nothing
        /// is allocated; the geometric recognizer takes the one-drawing path.
        public func recognize(_ drawing: Drawing, scores scoresOut: UnsafeMutableBufferPointer<Float>? = nil,
                              probabilities: UnsafeMutableBufferPointer<Double>? = nil) throws(DataError) -> CompactShapeAnswer {
            try answer(drawing, scores: scoresOut, probabilities: probabilities).compact
        }

        /// `recognize(_:scores:probabilities:)`, with the whole answer when the geometric recognizer gave it.
        func answer(_ drawing: Drawing, scores scoresOut: UnsafeMutableBufferPointer<Float>?,
                    probabilities: UnsafeMutableBufferPointer<Double>?) throws(DataError) -> (compact: CompactShapeAnswer, whole: ShapeAnswer?) {
            guard let classifier, let workspace else {
                let answer = try recognizer.recognize(drawing)
                if let probabilities {
                    for (i, entry) in answer.probabilities.enumerated() where i < probabilities.count { probabilities[i] = entry.probability }
                }
                return (CompactShapeAnswer(best: classIndex[answer.best] ?? 0, isUnknown: answer.label == DecisionRule.unknownLabel,
                                           confidence: answer.confidence, uncertain: answer.uncertain), answer)
            }
            if let problem = ShapeRecognizer.problem(with: drawing) { throw DataError(file: "drawing", message: problem) }
            classifier.rasterizer.rasterize(drawing, into: image)
            classifier.compiled.plan.run(UnsafeBufferPointer(image), into: scores, workspace: workspace)
            for i in raw.indices { raw[i] = Double(scores[i]) }
            if let scoresOut {
                shapePrecondition(scoresOut.count == scores.count,
                                  "ShapeRecognizer.Worker.recognize: scores has \(scoresOut.count) places, the model gives \(scores.count)")
                _ = scoresOut.update(fromContentsOf: scores)
            }
            let decided = Decision.decide(raw: UnsafeBufferPointer(raw), rejectIndex: rejectIndex, rule: rule,
                                          calibrated: probabilities ?? calibrated)
            return (CompactShapeAnswer(best: decided.best, isUnknown: decided.unknown, confidence: decided.confidence, uncertain: decided.uncertain), nil)
        }
    }

    /// The answers for many drawings at once, in compact form, on up to `threads` threads: each thread keeps one
    /// `Worker` and takes the next 4 drawings as it finishes, results are written into arrays allocated once.
    /// `answers.answer(at:)` is exactly what `recognize(drawings[i])` gives, without the image it saw.
    ///
    /// The calling thread works too, and returns as soon as every drawing is answered: a helper thread that the
    /// system has not started by then finds nothing left and is not waited for (on a busy device, waiting for every
    /// helper to be scheduled made two threads slower than one).
    public func recognize(batch drawings: [Drawing], threads: Int) -> ShapeBatchAnswers {
        precondition(threads >= 1, "ShapeRecognizer.recognize(batch:threads:): threads \(threads) < 1")
        let count = drawings.count, classCount = classes.count
        let scoreCount: Int
        if case let .model(classifier) = engine { scoreCount = classifier.compiled.plan.outputCount } else { scoreCount = 0 }
        var answers = [CompactShapeAnswer](repeating: CompactShapeAnswer(best: 0, isUnknown: false, confidence: 0, uncertain: false), count: count)
        var probabilities = [Double](repeating: 0, count: count * classCount)
        var scores = [Float](repeating: 0, count: count * scoreCount)
        let job = answers.withUnsafeMutableBufferPointer { answers in
            probabilities.withUnsafeMutableBufferPointer { probabilities in
                scores.withUnsafeMutableBufferPointer { scores in
                    let job = BatchJob(recognizer: self, drawings: drawings, scoreCount: scoreCount, classCount: classCount,
                                       out: BatchOutput(answers: answers, probabilities: probabilities, scores: scores))
                    for _ in 1..<max(1, min(threads, (count + BatchJob.step - 1) / BatchJob.step)) {
                        DispatchQueue.global().async { job.work() }
                    }
                    job.work()
                    // Every drawing was taken; wait for the helpers still answering theirs (they write into `out`).
                    if count > 0 { job.finished.wait() }
                    return job
                }
            }
        }
        return ShapeBatchAnswers(classes: classes, model: model, attempts: attempts, answers: answers, probabilities: probabilities,
                                 scores: scores, scoreCount: scoreCount, errors: job.errors.withLock { $0 }, geometric: job.geometric.withLock { $0 },
                                 rule: { if case let .model(classifier) = engine { return classifier.file.decision ?? .legacy } else { return .legacy } }())
    }
}

/// One call of `recognize(batch:threads:)`, shared by the calling thread and its helpers: the drawings, where the
/// answers go, the next drawing to take and how many are answered.
private final class BatchJob: Sendable {
    /// Drawings taken at a time: few, so that the threads end together (the last take of 16 left one thread
    /// answering for up to 160 µs while the other waited: 141-144k drawings/s on 2 threads against 159-162k with 4).
    static let step = 4
    let recognizer: ShapeRecognizer
    let drawings: [Drawing]
    let scoreCount: Int
    let classCount: Int
    let out: BatchOutput
    let next = Atomic<Int>(0)
    let answered = Atomic<Int>(0)
    /// Signalled once, when the last drawing is answered.
    let finished = DispatchSemaphore(value: 0)
    let errors = Mutex<[Int: DataError]>([:])
    let geometric = Mutex<[Int: ShapeAnswer]>([:])

    init(recognizer: ShapeRecognizer, drawings: [Drawing], scoreCount: Int, classCount: Int, out: BatchOutput) {
        self.recognizer = recognizer
        self.drawings = drawings
        self.scoreCount = scoreCount
        self.classCount = classCount
        self.out = out
    }

    /// Answers the next 4 drawings until none is left, with a worker made on the first taken. A thread that comes
    /// after the last was taken touches nothing of `out`: it only finds `next` past the end.
    func work() {
        var worker: ShapeRecognizer.Worker?
        let count = drawings.count
        while case let start = next.wrappingAdd(Self.step, ordering: .relaxed).oldValue, start < count {
            let end = min(count, start + Self.step)
            let current = worker ?? ShapeRecognizer.Worker(recognizer)
            worker = current
            var failed: [Int: DataError] = [:]
            var whole: [Int: ShapeAnswer] = [:]
            for index in start..<end {
                do throws(DataError) {
                    let answer = try current.answer(
                        drawings[index],
                        scores: scoreCount > 0 ? UnsafeMutableBufferPointer(rebasing: out.scores[(index * scoreCount)..<((index + 1) * scoreCount)]) : nil,
                        probabilities: UnsafeMutableBufferPointer(rebasing: out.probabilities[(index * classCount)..<((index + 1) * classCount)]))
                    out.answers[index] = answer.compact
                    if let answer = answer.whole { whole[index] = answer }
                } catch {
                    failed[index] = error
                }
            }
            if !failed.isEmpty { errors.withLock { $0.merge(failed) { first, _ in first } } }
            if !whole.isEmpty { geometric.withLock { $0.merge(whole) { first, _ in first } } }
            // Everything this thread wrote is visible to whoever sees the count it reaches.
            if answered.add(end - start, ordering: .acquiringAndReleasing).newValue == count { finished.signal() }
        }
    }
}

/// Where the threads of `recognize(batch:threads:)` write: each index by exactly one thread, every write done before
/// the last drawing is counted as answered.
private struct BatchOutput: @unchecked Sendable {
    let answers: UnsafeMutableBufferPointer<CompactShapeAnswer>
    let probabilities: UnsafeMutableBufferPointer<Double>
    let scores: UnsafeMutableBufferPointer<Float>
}

/// The answers for a batch of drawings (`ShapeRecognizer.recognize(batch:threads:)`), in flat arrays: one
/// `CompactShapeAnswer` per drawing and its calibrated probabilities side by side, or why it could not be seen.
public struct ShapeBatchAnswers: Sendable {
    /// The classes the probabilities are given for, in order.
    public let classes: [String]
    /// Which link answered (a weights variant or `geometric`).
    public let model: String
    /// The failed attempts of loading before it.
    public let attempts: [ChainAttempt]
    /// One answer per drawing, in order (a drawing that failed has a placeholder; see `error(at:)`).
    public let answers: [CompactShapeAnswer]
    /// `classes.count` calibrated probabilities per drawing: drawing `i`'s start at `i * classes.count`.
    public let probabilities: [Double]
    /// The model's raw outputs, `scoreCount` per drawing (none for the geometric recognizer).
    let scores: [Float]
    let scoreCount: Int
    /// Why drawings could not be seen, by index.
    let errors: [Int: DataError]
    /// The geometric recognizer's whole answers, by index (its reasons are not made from scores).
    let geometric: [Int: ShapeAnswer]
    let rule: DecisionRule

    /// How many drawings.
    public var count: Int { answers.count }

    /// Why drawing `index` could not be seen, or `nil` when it has an answer.
    public func error(at index: Int) -> DataError? { errors[index] }

    /// Drawing `index`'s label: one of `classes` or `unknown`.
    public func label(at index: Int) -> String { answers[index].label(classes) }

    /// Drawing `index`'s calibrated probabilities, in `classes` order.
    public func probabilities(at index: Int) -> ArraySlice<Double> {
        probabilities[(index * classes.count)..<((index + 1) * classes.count)]
    }

    /// Drawing `index`'s whole answer — what `ShapeRecognizer.recognize(_:)` gives for it, without the image (`view`
    /// is `nil`) — or its error. Builds the answer's strings and arrays on each call.
    public func answer(at index: Int) -> Result<ShapeAnswer, DataError> {
        if let error = errors[index] { return .failure(error) }
        if let answer = geometric[index] { return .success(answer) }
        let raw = scores[(index * scoreCount)..<((index + 1) * scoreCount)].map(Double.init)
        return .success(ShapeAnswer(Decision(labels: classes, probabilities: raw, rule: rule), model: model, attempts: attempts, view: nil))
    }
}
