import DataFiles
import Tensor
import WeightsFormat

/// A task's preprocessing as a weights file's `preprocessing` header describes it: what turns the task's data into
/// the model's inputs, one input of `inputShape` at a time. `ShapeRasterizer` (drawings → images) and
/// `MotionWindowing` (recordings → windows of features) are the two; a `TrainedClassifier` is one of them in front of
/// a weights file's network.
public protocol ModelPreprocessing: Sendable, Equatable {
    /// The task whose inputs it makes.
    static var task: RecognitionTask { get }
    /// What a classifier over it is called when a weights file does not fit it ("a shape classifier").
    static var classifierName: String { get }
    /// The preprocessing a weights file's `preprocessing` header describes, or why it cannot be built.
    init(parameters: [String: JSONValue]) throws(DataError)
    /// The shape of one model input it makes.
    var inputShape: [Int] { get }
    /// Why `rule` cannot decide this task's answers (a field meant for another task), or `nil`.
    static func problem(with rule: DecisionRule) -> String?
}

extension ModelPreprocessing {
    /// Any decision rule decides a task's answers unless the task says otherwise.
    public static func problem(with rule: DecisionRule) -> String? { nil }
}

extension RecognitionTask {
    /// The preprocessing that makes this task's inputs: the one place a task's kind meets its Swift type.
    package var preprocessing: any ModelPreprocessing.Type {
        switch self {
        case .shape: ShapeRasterizer.self
        case .motion: MotionWindowing.self
        }
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

    /// Builds the classifier from a validated weights file, which must be of `Preprocessing.task`, describe its
    /// preprocessing, take its input shape and have labels; otherwise a `DataError` names the file and says which.
    public init(file: ModelFile) throws(DataError) {
        self.file = file
        if let problem = file.otherTaskProblem(Preprocessing.task) ?? file.decision.flatMap(Preprocessing.problem(with:)) {
            throw DataError(file: file.name, message: problem)
        }
        preprocessing = try Preprocessing(parameters: file.preprocessing)
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
    package func probabilities(_ inputs: UnsafeBufferPointer<Float>, rows: Int, into output: UnsafeMutableBufferPointer<Float>) {
        compiled.run(rows: rows, inputs, into: output)
    }
}

/// The trained shape classifier: a weights file's model behind its rasterizer.
public typealias ShapeClassifier = TrainedClassifier<ShapeRasterizer>

/// The trained motion-state classifier: a weights file's model behind its windowing.
public typealias MotionClassifier = TrainedClassifier<MotionWindowing>

/// A recognizer that needs no weights: the last link of a task's fallback chain (`GeometricRecognizer` for
/// drawings, `CadenceRecognizer` for recordings).
public protocol RuleRecognizer: Sendable {
    /// Its name in an answer's `model`: `geometric`, `cadence`.
    var name: String { get }
    /// The classes it scores, in output order.
    var labels: [String] { get }
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

    /// How its scores become answers: the weights file's rule, or `DecisionRule.legacy` for a rule's (no
    /// calibration, no reject class, uncertain below 70%).
    public var decision: DecisionRule {
        switch self {
        case let .model(classifier): classifier.decision
        case .rule: .legacy
        }
    }

    /// Where the decision rule's reject class stands among `labels`, or `nil` (always for a rule).
    package var rejectIndex: Int? { classifier?.rejectIndex }

    /// The trained classifier, or `nil` for the rule.
    public var classifier: TrainedClassifier<Preprocessing>? {
        if case let .model(classifier) = self { classifier } else { nil }
    }
}
