import DataFiles
import Synchronization
import Tensor
import WeightsFormat

extension ShapeRecognizer {
    /// The answers for many drawings at once, in compact form, on up to `threads` threads (`Parallel`; fewer than 1
    /// counts as 1): each thread keeps one `Scratch` and takes the next 4 drawings as it finishes, results are
    /// written into arrays allocated once. `answers.answer(at:)` is exactly what `recognize(drawings[i])` gives,
    /// without the image it saw.
    public func recognize(batch drawings: [Drawing], threads: Int) -> ShapeBatchAnswers {
        let count = drawings.count, classCount = classes.count
        let scoreCount = engine.classifier?.compiled.plan.outputCount ?? 0
        var answers = [CompactShapeAnswer](repeating: CompactShapeAnswer(best: 0, isUnknown: false, confidence: 0, uncertain: false), count: count)
        var probabilities = [Double](repeating: 0, count: count * classCount)
        var scores = [Float](repeating: 0, count: count * scoreCount)
        let errors = Mutex<[Int: DataError]>([:]), geometric = Mutex<[Int: ShapeAnswer]>([:])
        answers.withUnsafeMutableBufferPointer { answers in
            probabilities.withUnsafeMutableBufferPointer { probabilities in
                scores.withUnsafeMutableBufferPointer { scores in
                    let out = BatchOutput(answers: answers, probabilities: probabilities, scores: scores)
                    // A few drawings at a time, so that the threads end together (takes of 16 left one thread
                    // answering for up to 160 µs while the other waited: 141-144k drawings/s on 2 threads against
                    // 159-162k with 4).
                    Parallel.forEach(count: count, threads: threads, chunk: 4, state: { Scratch(self) }) { scratch, range in
                        var failed: [Int: DataError] = [:], whole: [Int: ShapeAnswer] = [:]
                        for index in range {
                            do throws(DataError) {
                                let answer = try scratch.decide(drawings[index], recognizer: self)
                                scratch.copyOut(
                                    scores: scoreCount > 0
                                        ? UnsafeMutableBufferPointer(rebasing: out.scores[(index * scoreCount)..<((index + 1) * scoreCount)]) : nil,
                                    probabilities: UnsafeMutableBufferPointer(
                                        rebasing: out.probabilities[(index * classCount)..<((index + 1) * classCount)]))
                                out.answers[index] = answer.compact
                                if let answer = answer.whole { whole[index] = answer }
                            } catch {
                                failed[index] = error
                            }
                        }
                        if !failed.isEmpty { errors.withLock { $0.merge(failed) { first, _ in first } } }
                        if !whole.isEmpty { geometric.withLock { $0.merge(whole) { first, _ in first } } }
                    }
                }
            }
        }
        return ShapeBatchAnswers(
            classes: classes, model: model, attempts: attempts, answers: answers, probabilities: probabilities,
            scores: scores, scoreCount: scoreCount, errors: errors.withLock { $0 }, geometric: geometric.withLock { $0 },
            rule: engine.decision)
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
public struct ShapeBatchAnswers: RecognitionBatch {
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
        // The decision the worker made (its shape odds weighed the drawing), in words.
        let raw = scores[(index * scoreCount)..<((index + 1) * scoreCount)].map(Double.init)
        let calibrated = Array(probabilities(at: index)), compact = answers[index]
        let decision = raw.withUnsafeBufferPointer { raw in
            calibrated.withUnsafeBufferPointer { calibrated in
                Decision(
                    labels: classes, raw: raw, calibrated: calibrated,
                    decided: (compact.best, compact.isUnknown, compact.confidence, compact.uncertain), rule: rule)
            }
        }
        return .success(ShapeAnswer(decision, model: model, attempts: attempts, view: nil))
    }
}
