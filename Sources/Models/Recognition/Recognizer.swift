import DataFiles
import Foundation
import Tensor
import WeightsFormat

/// What a recognizer answers for one input, shapes and motion alike: the label, how sure, whether to trust it and
/// why not, how the answer spreads over the labels, and which model gave it.
public protocol RecognitionAnswer: Sendable {
    /// The answer: one of the recognizer's `answerLabels`, or `unknown` when nothing could be decided (a model
    /// whose scores were not finite, a recording whose every window is uncertain).
    var label: String { get }
    /// How likely `label` is, 0…1.
    var confidence: Double { get }
    /// Whether the answer should not be trusted.
    var uncertain: Bool { get }
    /// Why it is uncertain or `unknown`; `nil` for a trusted answer.
    var reason: String? { get }
    /// How the answer spreads over the labels, each 0…1: a drawing's calibrated class probabilities; a
    /// recording's share of the windows that voted for each state.
    var probabilities: [(label: String, probability: Double)] { get }
    /// Which link of the fallback chain answered: a weights variant (`shape-classifier.int8`, `motion-state.f32`)
    /// or the rule that needs no weights (`geometric`, `cadence`).
    var model: String { get }
}

/// What an answer means for the code that acts on it: read this rather than `label` alone, which keeps the likeliest
/// class even when the answer is not to be trusted.
public enum Verdict: Sendable, Equatable {
    /// One of the classes, trusted.
    case recognized(String)
    /// None of the classes; the nearest one, when there is one.
    case unknown(nearest: String?)
    /// Not sure: the likeliest label and the runner-up (`unknown` when the runner-up is "none of them").
    case notSure(String, or: String)
}

extension RecognitionAnswer {
    /// The answer as a `Verdict`: `unknown` (with the nearest class), not sure between the two likeliest, or a
    /// class. The JSON output says the same with `label`, `best` and `uncertain`.
    public var verdict: Verdict {
        // The classes by probability; the reject class is "none of them".
        let ranked = probabilities.sorted { $0.probability > $1.probability }.map {
            $0.label == DecisionRule.otherLabel ? DecisionRule.unknownLabel : $0.label
        }
        if label == DecisionRule.unknownLabel { return .unknown(nearest: ranked.first { $0 != DecisionRule.unknownLabel }) }
        if uncertain { return .notSure(label, or: ranked.first { $0 != label } ?? DecisionRule.unknownLabel) }
        return .recognized(label)
    }

    /// The probability of `label` (a class, or `other` for "none of them"), or `nil` when the answer has no such
    /// label.
    public func probability(of label: String) -> Double? {
        probabilities.first { $0.label == label }?.probability
    }
}

/// The answers for a batch of inputs, in input order: each an answer or why that input could not be seen.
public protocol RecognitionBatch: Sendable {
    /// What each input's answer is.
    associatedtype Answer: RecognitionAnswer
    /// How many inputs.
    var count: Int { get }
    /// Input `index`'s answer (what `Recognizer.recognize(_:)` gives for it), or its error.
    func answer(at index: Int) -> Result<Answer, DataError>
}

/// The answers for a batch of inputs, in input order, each a whole answer or its error: the batch of every
/// recognizer that has no compact form of its own (`MotionRecognizer`'s; `ShapeRecognizer` keeps drawings' answers
/// in flat arrays, `ShapeBatchAnswers`).
public struct RecognitionResults<Answer: RecognitionAnswer>: RecognitionBatch {
    /// Which link answered (a weights variant or the rule's name).
    public let model: String
    /// The failed attempts of loading before it.
    public let attempts: [ChainAttempt]
    /// Each input's answer or error, in input order.
    public let results: [Result<Answer, DataError>]

    /// How many inputs.
    public var count: Int { results.count }

    /// Input `index`'s answer — what `Recognizer.recognize(_:)` gives for it — or its error.
    public func answer(at index: Int) -> Result<Answer, DataError> { results[index] }
}

/// A recognizer: the first link of a fallback chain that loaded (quantized weights, float weights, then a rule that
/// needs no weights), turning one input or many into answers with the weights file's decision rule. The shape
/// recognizer (`ShapeRecognizer`: drawings) and the motion recognizer (`MotionRecognizer`: recordings) are the
/// built-in two.
///
/// The machine is the same for every task: a task supplies its preprocessing (`Preprocessing`, which makes the
/// trained classifier `TrainedClassifier<Preprocessing>`), its rule, its answer and `recognize(_:)`; loading (one
/// file, bytes, a chain, the shipped weights) and a batch on every core come from this protocol's extensions.
public protocol Recognizer: Sendable {
    /// What it recognizes.
    associatedtype Input: Sendable
    /// What it answers for one input.
    associatedtype Answer: RecognitionAnswer
    /// What it answers for a batch.
    associatedtype BatchAnswers: RecognitionBatch where BatchAnswers.Answer == Answer
    /// The preprocessing its trained classifier runs.
    associatedtype Preprocessing: ModelPreprocessing
    /// The rule that needs no weights: its chain's last link.
    associatedtype Rule: RuleRecognizer

    /// The model name its weights files carry and its shipped files' stem (`shape-classifier`, `motion-state`): the
    /// default name of a model loaded from bytes, and the chain's `shippedVariants`.
    static var modelName: String { get }

    /// The rule its chain falls back to after the weights (`GeometricRecognizer()`, `CadenceRecognizer()`).
    static var rule: Rule { get }

    /// A recognizer of a loaded engine, answering as `model` (its link's name), after the failed `attempts`.
    init(engine: RecognizerEngine<Preprocessing, Rule>, model: String, attempts: [ChainAttempt])

    /// The recognizer of one loaded weights file (no fallback), answering as `model`; a file of another task, or one
    /// this build cannot run, is a `DataError` saying why. The extension's is the one every task needs.
    init(model file: ModelFile, named model: String) throws(DataError)

    /// Loads the first working link of `variants` from `source`, then (with `policy.fallback`) the rule that needs no
    /// weights. `report` hears each failed attempt as it happens; when no link loads, the failure lists them all.
    /// The extension's is the one every task needs.
    static func load(variants: [String], source: any WeightsSource, policy: RetryPolicy, report: (ChainEvent) -> Void) throws(ChainFailure) -> Self

    /// What answers: the trained classifier or the rule.
    var engine: RecognizerEngine<Preprocessing, Rule> { get }
    /// Which link answered: a weights variant or the rule's name.
    var model: String { get }
    /// The failed attempts of loading before that link.
    var attempts: [ChainAttempt] { get }
    /// Every label an answer can have.
    var answerLabels: [String] { get }

    /// The answer for one input; an input no model can see is a `DataError` saying why (bad input, never a crash).
    func recognize(_ input: Input) throws(DataError) -> Answer
    /// The answers for many inputs on up to `threads` threads (fewer than 1 counts as 1), in input order; one bad
    /// input does not stop the others.
    func recognize(batch inputs: [Input], threads: Int) -> BatchAnswers
}

extension Recognizer where BatchAnswers == RecognitionResults<Answer> {
    /// The answers for many inputs on up to `threads` threads (fewer than 1 counts as 1; `Parallel`), in order:
    /// `recognize(_:)` of each, an input that cannot be recognized with its error in its place.
    public func recognize(batch inputs: [Input], threads: Int) -> RecognitionResults<Answer> {
        let results = Parallel.map(count: inputs.count, threads: threads) { index in
            Result { () throws(DataError) in try recognize(inputs[index]) }
        }
        return RecognitionResults(model: model, attempts: attempts, results: results)
    }
}

extension Recognizer {
    /// The recognizer of one loaded weights file (no fallback), answering as `model`; a file of another task, or one
    /// this build cannot run, is a `DataError` saying why (`TrainedClassifier.init(file:)`).
    public init(model file: ModelFile, named model: String) throws(DataError) {
        self.init(engine: .model(try TrainedClassifier(file: file)), model: model, attempts: [])
    }

    /// Loads the first working link of `variants` from `source`, then (with `policy.fallback` and
    /// `policy.ruleFallback`) `rule`. `report` hears each failed attempt as it happens; when no link loads, the
    /// failure lists them all.
    public static func load(
        variants: [String] = shippedVariants, source: any WeightsSource, policy: RetryPolicy = RetryPolicy(),
        report: (ChainEvent) -> Void = { _ in }
    ) throws(ChainFailure) -> Self {
        typealias Engine = RecognizerEngine<Preprocessing, Rule>
        var links = weightsLinks(variants, source: source) { file throws(DataError) in Engine.model(try TrainedClassifier(file: file)) }
        if policy.ruleFallback {
            let rule = rule
            links.append(ChainLink(name: rule.name) { Engine.rule(rule) })
        }
        let (engine, model, attempts) = try runChain(links, policy: policy, report: report)
        return Self(engine: engine, model: model, attempts: attempts)
    }

    /// The recognizer of its rule alone (no weights), answering as the rule's name: the chain's last link, for
    /// `classify evaluate --rule` and for measuring the rule apart.
    public static var ruleOnly: Self {
        let rule = rule
        return Self(engine: .rule(rule), model: rule.name, attempts: [])
    }

    /// The chain's link names for the shipped model, most compact first: `MODEL.int8`, `MODEL.f32`.
    public static var shippedVariants: [String] { RecognitionTask.variants(ofModel: modelName) }

    /// The shipped recognizer in one call: the built-in 8-bit weights, then the float ones, then the rule that needs
    /// no weights (`geometric`, `cadence`); `model` says which answered. It fails only when no link works (with
    /// `policy.fallback` off, when the 8-bit weights do not load). The built-in weights are the built-in tasks':
    /// an app's own task has none among them, so its `shipped()` is its rule (its `attempts` say each was not
    /// found); it loads its weights with `load(variants:source:policy:report:)` from a source of its own.
    public static func shipped(policy: RetryPolicy = RetryPolicy()) throws(ChainFailure) -> Self {
        try load(variants: shippedVariants, source: ShippedWeights(), policy: policy, report: { _ in })
    }

    /// A recognizer from one weights file (no fallback): `file.weights` names the model `file`. Throws a
    /// `WeightsFileError` for a file that cannot be read or is corrupt, a `DataError` for another task's model. An
    /// `.onnx` file (with the ONNX library's `ONNXFormat.register()`) is read with the built-in tasks'
    /// preprocessings; an app's own task imports its ONNX file with `ONNXImport.modelFile(contentsOf:preprocessings:)`
    /// and loads the result with `init(model:named:)`.
    public init(contentsOf url: URL) throws {
        try self.init(model: try ModelFile(contentsOf: url), named: url.deletingPathExtension().lastPathComponent)
    }

    /// A recognizer from the bytes of a weights file (no fallback), named `model` (the task's model name by
    /// default); throws as `init(contentsOf:)`.
    public init(weights bytes: [UInt8], model: String = Self.modelName) throws {
        try self.init(model: try ModelFile(bytes: bytes, path: model), named: model)
    }
}
