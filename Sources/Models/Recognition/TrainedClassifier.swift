import DataFiles
import Tensor
import WeightsFormat

/// A task's preprocessing as a weights file's `preprocessing` header describes it: what turns the task's data into
/// the model's inputs, one input of `inputShape` at a time. `ShapeRasterizer` (drawings → images) and
/// `MotionWindowing` (recordings → windows of features) are the two; a `TrainedClassifier` is one of them in front of
/// a weights file's network.
///
/// The recognizer machine needs nothing else of a task: a type of an app's own (another kind of input, its own
/// parameters) conforms the same way and gets the file's checks, the compiled plan and the decision rule from
/// `TrainedClassifier`, loading and batches from `Recognizer`, and ONNX import (given to it) with no registration.
public protocol ModelPreprocessing: Sendable, Equatable {
    /// The `kind` a weights file's `preprocessing` header names it by (`raster`, `motion-autocorrelation`).
    static var kind: String { get }
    /// Every kind it reads (`kind` unless it says otherwise: a shape model's `raster` or `gesture-templates`).
    static var kinds: [String] { get }
    /// The task's name in messages (`shape`, `motion`): "is a shape model, not a motion model".
    static var taskName: String { get }
    /// What a classifier over it is called when a weights file does not fit it ("a shape classifier").
    static var classifierName: String { get }
    /// The largest magnitude an input value it makes can have, from which a weights file's layers are checked for
    /// outputs that could overflow (the file is refused when they could); `nil` leaves a file unchecked. The
    /// built-in tasks' bounds are the weights format's (`PreprocessingKind`), checked when any file is read.
    var inputMagnitude: Double? { get }
    /// The preprocessing a weights file's `preprocessing` header describes, or why it cannot be built.
    init(parameters: [String: JSONValue]) throws(DataError)
    /// The shape of one model input it makes.
    var inputShape: [Int] { get }
    /// Why `rule` cannot decide this task's answers (a field meant for another task), or `nil`.
    static func problem(with rule: DecisionRule) -> String?
}

extension ModelPreprocessing {
    /// A rule's shape odds, which weigh a drawing's outline, are refused unless the task says otherwise (shapes do).
    public static func problem(with rule: DecisionRule) -> String? {
        rule.shapeOdds != nil ? "the decision rule holds shape odds, which are for shape models, not \(taskName)" : nil
    }

    /// `[kind]`.
    public static var kinds: [String] { [kind] }

    /// "a TASK classifier".
    public static var classifierName: String { "a \(taskName) classifier" }

    /// Unchecked (`nil`) unless the task gives a bound.
    public var inputMagnitude: Double? { nil }
}

extension RecognitionTask {
    /// The preprocessing that makes this task's inputs: the one place a built-in task's kind meets its Swift type.
    package var preprocessing: any ModelPreprocessing.Type {
        switch self {
        case .shape: ShapePreprocessing.self
        case .motion: MotionWindowing.self
        }
    }

    /// The built-in tasks' preprocessing types, then `others` (an app's own), in the order a kind is looked up.
    package static func preprocessings(among others: [any ModelPreprocessing.Type] = []) -> [any ModelPreprocessing.Type] {
        allCases.map(\.preprocessing) + others
    }

    /// The preprocessing type a header's `kind` names among `preprocessings(among: others)`, or `nil`.
    package static func preprocessing(kind: String, among others: [any ModelPreprocessing.Type] = []) -> (any ModelPreprocessing.Type)? {
        preprocessings(among: others).first { $0.kinds.contains(kind) }
    }

    /// The input shape a header's `preprocessing` makes, read by its type among the built-in tasks' and `others`, or
    /// why its parameters make none; `nil` when no such type reads its kind.
    package static func inputShape(
        of preprocessing: [String: JSONValue], among others: [any ModelPreprocessing.Type] = []
    ) -> Result<[Int], DataError>? {
        guard case .string(let kind)? = preprocessing["kind"], let type = Self.preprocessing(kind: kind, among: others) else { return nil }
        func make<P: ModelPreprocessing>(_: P.Type) -> Result<[Int], DataError> {
            do throws(DataError) { return .success(try P(parameters: preprocessing).inputShape) } catch { return .failure(error) }
        }
        return make(type)
    }
}

/// A weights file's network behind its task's preprocessing, for every task: the file checked against the task
/// (its preprocessing, input shape, labels and decision rule), its layers compiled once (int8 layers in integers),
/// its decision rule and the place of its reject class read once. `ShapeClassifier` and `MotionClassifier` are this
/// type with their task's preprocessing.
public struct TrainedClassifier<Preprocessing: ModelPreprocessing>: Sendable {
    /// The weights file it was built from.
    public let file: ModelFile
    /// The layers compiled for one input at a time, int8 layers in integers (what recognizing runs).
    public let compiled: CompiledModel
    /// The preprocessing the file describes.
    public let preprocessing: Preprocessing
    /// The weights file's decision rule (`DecisionRule.legacy` for a file written without one).
    public let decision: DecisionRule
    /// Where the decision rule's reject class stands among `labels`, or `nil` when the model has none.
    package let rejectIndex: Int?

    /// Builds the classifier from a validated weights file, which must name `Preprocessing.kind`, describe its
    /// preprocessing, take its input shape and have labels; otherwise a `DataError` names the file and says which.
    public init(file: ModelFile) throws(DataError) {
        self.file = file
        let otherTask = file.otherTaskProblem(task: Preprocessing.taskName, kinds: Preprocessing.kinds)
        if let problem = otherTask ?? file.decision.flatMap(Preprocessing.problem(with:)) {
            throw DataError(file: file.name, message: problem)
        }
        preprocessing = try Preprocessing(parameters: file.preprocessing)
        // A built-in kind's file was checked when it was read; an app's kind is checked here, from its own bound.
        if file.preprocessingKind == nil, let magnitude = preprocessing.inputMagnitude {
            do throws(WeightsFileError) {
                try file.checkMagnitudes(inputMagnitude: magnitude, path: file.name)
            } catch {
                throw DataError(file: file.name, message: error.problemSentence)
            }
        }
        let shape = preprocessing.inputShape
        guard file.input.shape == shape, !file.labels.isEmpty else {
            throw DataError(
                file: file.name,
                message: "the model takes input \(file.input.shape) with labels \(file.labels); "
                    + "\(Preprocessing.classifierName) takes \(shape) with labels")
        }
        compiled = file.makeCompiledModel()
        decision = file.decision ?? .legacy
        rejectIndex = decision.rejectLabel.flatMap { file.labels.firstIndex(of: $0) }
    }

    /// The layers as a `Sequential`, dequantized (built on each use: recognizing runs `compiled`).
    public var network: Sequential { file.makeModel() }

    /// The classes, in output order.
    public var labels: [String] { file.labels }

    /// The weights file's model name.
    public var name: String { file.name }

    /// The model's outputs for each input of a batch.
    public func probabilities(_ inputs: Tensor) -> Tensor { compiled(inputs) }

    /// The model's outputs for `rows` inputs (`CompiledModel.run(rows:_:into:)`).
    public func probabilities(_ inputs: UnsafeBufferPointer<Float>, rows: Int, into output: UnsafeMutableBufferPointer<Float>) {
        compiled.run(rows: rows, inputs, into: output)
    }
}

/// The trained shape classifier: a weights file's model behind its rasterizer.
public typealias ShapeClassifier = TrainedClassifier<ShapePreprocessing>

/// The trained motion-state classifier: a weights file's model behind its windowing.
public typealias MotionClassifier = TrainedClassifier<MotionWindowing>

/// A recognizer that needs no weights: the last link of a task's fallback chain (`GeometricRecognizer` for
/// drawings, `CadenceRecognizer` for recordings).
public protocol RuleRecognizer: Sendable {
    /// Its name in an answer's `model`: `geometric`, `cadence`.
    var name: String { get }
    /// The classes it scores, in output order.
    var labels: [String] { get }
    /// How its scores become answers (`DecisionRule.legacy` unless it says otherwise: no calibration, no reject
    /// class, uncertain below 70%).
    var decision: DecisionRule { get }
}

extension RuleRecognizer {
    /// `DecisionRule.legacy`.
    public var decision: DecisionRule { .legacy }
}

/// A rule that scores the same inputs the task's trained classifier does (`CadenceRecognizer`: motion windows), so
/// that either link of the chain answers through one call (`RecognizerEngine.probabilities(_:rows:into:)`).
public protocol InputScoringRule: RuleRecognizer {
    /// The rule's class probabilities for `rows` inputs in `inputs` (one model input each), `labels.count` per
    /// row into `output`.
    func probabilities(_ inputs: UnsafeBufferPointer<Float>, rows: Int, into output: UnsafeMutableBufferPointer<Float>)
}

/// What answers for a recognizer, every task alike: the link of the chain that loaded — its task's trained
/// classifier, or the rule that needs no weights.
public enum RecognizerEngine<Preprocessing: ModelPreprocessing, Rule: RuleRecognizer>: Sendable {
    /// A trained model.
    case model(TrainedClassifier<Preprocessing>)
    /// The rule that needs no weights.
    case rule(Rule)

    /// The classes it scores, in the order of an answer's probabilities (the model's labels, its reject class
    /// included, or the rule's).
    public var labels: [String] {
        switch self {
        case let .model(classifier): classifier.labels
        case let .rule(rule): rule.labels
        }
    }

    /// The model's name or the rule's.
    public var name: String {
        switch self {
        case let .model(classifier): classifier.name
        case let .rule(rule): rule.name
        }
    }

    /// How its scores become answers: the weights file's rule, or the rule's own (`RuleRecognizer.decision`).
    public var decision: DecisionRule {
        switch self {
        case let .model(classifier): classifier.decision
        case let .rule(rule): rule.decision
        }
    }

    /// Where the decision rule's reject class stands among `labels`, or `nil`.
    package var rejectIndex: Int? {
        switch self {
        case let .model(classifier): classifier.rejectIndex
        case let .rule(rule): rule.decision.rejectLabel.flatMap { rule.labels.firstIndex(of: $0) }
        }
    }

    /// One model input's answer from its class probabilities (`labels.count` of them, in `labels` order) under
    /// `decision`: calibrated, the reject class won as `unknown`, uncertain under the rule's floor, with the reason;
    /// a score that is not finite is `unknown` and uncertain, with confidence 0. What a task adds after it is the
    /// task's own (a drawing's shape odds, which weigh its outline, are `ShapeRecognizer`'s and are not applied here;
    /// a window's stillness and gaps are `MotionRecognizer`'s).
    public func decide(_ probabilities: UnsafeBufferPointer<Float>) -> (label: String, confidence: Double, uncertain: Bool, reason: String?) {
        // The link's facts read once (each property of this generic enum copies its payload when not specialized).
        let (labels, rule, rejectIndex): ([String], DecisionRule, Int?) =
            switch self {
            case let .model(classifier): (classifier.labels, classifier.decision, classifier.rejectIndex)
            case let .rule(rule): (rule.labels, rule.decision, self.rejectIndex)
            }
        let count = probabilities.count
        precondition(count == labels.count, "decide: \(count) probabilities for \(labels.count) labels")
        // `Decision(labels:probabilities:rule:)`'s steps on the stack: a trusted answer allocates nothing here (a
        // rule whose `labels` are made per call makes them).
        return withUnsafeTemporaryAllocation(of: Double.self, capacity: 2 * count) { buffer in
            let raw = UnsafeMutableBufferPointer(rebasing: buffer[0..<count])
            let calibrated = UnsafeMutableBufferPointer(rebasing: buffer[count..<(2 * count)])
            for index in 0..<count { raw.initializeElement(at: index, to: Double(probabilities[index])) }
            calibrated.initialize(repeating: 0)
            let decided = Decision.decide(raw: UnsafeBufferPointer(raw), rejectIndex: rejectIndex, rule: rule, calibrated: calibrated)
            let words = Decision.words(
                labels: labels, raw: UnsafeBufferPointer(raw), calibrated: UnsafeBufferPointer(calibrated), decided: decided, rule: rule)
            return (words.label, decided.confidence, decided.uncertain, words.reason)
        }
    }

    /// The trained classifier, or `nil` for the rule.
    public var classifier: TrainedClassifier<Preprocessing>? {
        if case let .model(classifier) = self { classifier } else { nil }
    }
}

extension RecognizerEngine where Rule: InputScoringRule {
    /// The class probabilities of `rows` model inputs into `output` (`labels.count` per row), from whichever link
    /// answers: the trained classifier's plan or the rule.
    public func probabilities(_ inputs: UnsafeBufferPointer<Float>, rows: Int, into output: UnsafeMutableBufferPointer<Float>) {
        switch self {
        case let .model(classifier): classifier.probabilities(inputs, rows: rows, into: output)
        case let .rule(rule): rule.probabilities(inputs, rows: rows, into: output)
        }
    }

    /// The class probabilities of each row of `inputs` (`[rows, input…]`), as a `[rows, labels]` tensor.
    public func probabilities(_ inputs: Tensor) -> Tensor {
        let rows = inputs.shape.first ?? 0
        return Tensor(uninitializedShape: [rows, labels.count]) { output in
            inputs.withUnsafeBufferPointer { probabilities($0, rows: rows, into: output) }
        }
    }
}
