import DataFiles
import Foundation
import Models
import Tensor
import Train
import WeightsFormat

// A third task, written only here: a one-dimensional signal (one sensor axis, a pressure trace) → sine, square or
// noise, window by window, with the recording's answer the state most windows have. It is what an app with a task of
// its own writes: a preprocessing (`SignalWindows`), a rule that needs no weights (`SignalRule`), an answer and a
// recognizer that says how windows become it. Loading, the chain, batches, the decision rule and ONNX come from the
// engine; nothing outside these files names it.

/// Windows of `window` samples every `hop` samples, each centred on its mean and scaled to unit spread: the model
/// sees the wave's form, not its level or loudness.
public struct SignalWindows: ModelPreprocessing {
    /// The `kind` its weights files' `preprocessing` header names.
    public static let kind = "signal-windows"
    /// The task's name in messages ("not a signal model").
    public static let taskName = "signal"

    /// Samples per window.
    public var window: Int
    /// Samples between window starts.
    public var hop: Int

    /// Windows of `window` samples (at least 4) every `hop` samples (1…`window`).
    public init(window: Int = 32, hop: Int = 16) {
        precondition(window >= 4 && hop >= 1 && hop <= window, "SignalWindows: window \(window), hop \(hop)")
        (self.window, self.hop) = (window, hop)
    }

    /// The windowing a weights file's `preprocessing` header describes; a `DataError` when it describes none.
    public init(parameters: [String: JSONValue]) throws(DataError) {
        guard case .string(Self.kind)? = parameters["kind"], case .number(let window)? = parameters["window"],
            case .number(let hop)? = parameters["hop"], window >= 4, window <= 1024, window == window.rounded(), hop >= 1, hop <= window,
            hop == hop.rounded()
        else {
            throw DataError(
                file: "weights", message: "the preprocessing header does not describe signal windows: expected window 4–1024, hop 1…window")
        }
        self.init(window: Int(window), hop: Int(hop))
    }

    /// The parameters as a weights file's `preprocessing` header stores them.
    public var parameters: [String: JSONValue] {
        ["kind": .string(Self.kind), "window": .number(Double(window)), "hop": .number(Double(hop))]
    }

    /// One window: `window` scaled samples.
    public var inputShape: [Int] { [window] }

    /// A window scaled to unit spread has no value beyond √window (all of its spread in one sample).
    public var inputMagnitude: Double? { Double(window).squareRoot() }

    /// How many whole windows `samples` samples hold.
    public func windowCount(_ samples: Int) -> Int { samples < window ? 0 : (samples - window) / hop + 1 }

    /// Every window's input, one after another.
    public func inputs(_ signal: [Float]) -> [Float] {
        var inputs: [Float] = []
        inputs.reserveCapacity(windowCount(signal.count) * window)
        for index in 0..<windowCount(signal.count) {
            let part = signal[(index * hop)..<(index * hop + window)].map(Double.init)
            let mean = part.reduce(0, +) / Double(window)
            let spread = (part.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(window)).squareRoot()
            inputs += part.map { Float(spread > 1e-9 ? ($0 - mean) / spread : 0) }
        }
        return inputs
    }
}

/// The rule that needs no weights: a window whose neighbouring samples hardly agree is noise (lag-1 autocorrelation
/// under 0.3); one that sits at its extremes (70% of its samples beyond 0.8 of the spread from the mean, after
/// scaling) is square; the rest is sine.
public struct SignalRule: InputScoringRule {
    /// Its name in an answer's `model`.
    public var name: String { "waveform-rule" }
    /// The classes it scores, in output order (the same array every time: read once per window).
    public var labels: [String] { SignalExamples.labels }

    /// Each window's three scores (sine, square, noise), summing to 1, from its autocorrelation and extremes.
    public func probabilities(_ inputs: UnsafeBufferPointer<Float>, rows: Int, into output: UnsafeMutableBufferPointer<Float>) {
        let size = rows > 0 ? inputs.count / rows : 0
        for row in 0..<rows {
            let x = inputs[(row * size)..<((row + 1) * size)]
            var lag = 0.0, energy = 0.0, extreme = 0.0
            for i in x.indices {
                energy += Double(x[i] * x[i])
                if i > x.startIndex { lag += Double(x[i] * x[i - 1]) }
                if abs(x[i]) > 0.8 { extreme += 1 }
            }
            let correlation = energy > 0 ? lag / energy : 0
            let noise = 1 / (1 + exp(-(0.3 - correlation) / 0.05))
            let square = (1 - noise) / (1 + exp(-(extreme / Double(size) - 0.7) / 0.05))
            (output[3 * row], output[3 * row + 1], output[3 * row + 2]) = (Float(1 - noise - square), Float(square), Float(noise))
        }
    }
}

/// What the signal recognizer answers: each window's label, and the label most trusted windows have.
public struct SignalAnswer: RecognitionAnswer, Equatable, Encodable {
    /// The label most trusted windows have, or `unknown` when none is trusted.
    public var label: String
    /// The mean confidence of the windows that voted for `label`.
    public var confidence: Double
    /// Whether no window was trusted.
    public var uncertain: Bool
    /// Why the answer is uncertain, or `nil`.
    public var reason: String?
    /// The link of the chain that answered: a weights file's name or the rule's.
    public var model: String
    /// Each window's label, confidence and whether it is uncertain, in time order.
    public var windows: [Window]

    /// One window's answer under the decision rule.
    public struct Window: Equatable, Sendable, Encodable {
        /// The window's label, or `unknown`.
        public var label: String
        /// Its calibrated confidence.
        public var confidence: Double
        /// Whether it should not be trusted (it does not vote).
        public var uncertain: Bool
    }

    /// Each label's share of the trusted windows.
    public var probabilities: [(label: String, probability: Double)] {
        let voters = windows.filter { !$0.uncertain }
        return Set(voters.map(\.label)).sorted().map { label in
            (label, Double(voters.count { $0.label == label }) / Double(voters.count))
        }
    }
}

/// The signal recognizer: a `Recognizer` whose task supplies its preprocessing, its rule and how windows become an
/// answer; the rest is the engine's.
public struct SignalRecognizer: Recognizer {
    /// The engine's batch of answers, each signal's answer or error in its place.
    public typealias BatchAnswers = RecognitionResults<SignalAnswer>
    /// Its weights files' name before `.int8` and `.f32`.
    public static let modelName = "signal-waves"
    /// The last link of its chain.
    public static var rule: SignalRule { SignalRule() }

    /// The link that answers: a trained classifier or the rule.
    public let engine: RecognizerEngine<SignalWindows, SignalRule>
    /// The link's name, as answers give it.
    public let model: String
    /// The links the chain tried before this one, and why each failed.
    public let attempts: [ChainAttempt]

    /// A recognizer answering with `engine`, named `model`, after `attempts`.
    public init(engine: RecognizerEngine<SignalWindows, SignalRule>, model: String, attempts: [ChainAttempt] = []) {
        (self.engine, self.model, self.attempts) = (engine, model, attempts)
    }

    /// The labels an answer can have: the classes without the reject class, and `unknown`.
    public var answerLabels: [String] {
        engine.labels.filter { $0 != engine.decision.rejectLabel } + [DecisionRule.unknownLabel]
    }

    /// The windowing: the weights file's, or the default one for the rule.
    public var windows: SignalWindows { engine.classifier?.preprocessing ?? SignalWindows() }

    /// The signal's answer: every whole window decided, the trusted ones voting. A sample that is not finite, or a
    /// signal shorter than one window, is a `DataError`.
    public func recognize(_ signal: [Float]) throws(DataError) -> SignalAnswer {
        if let bad = signal.firstIndex(where: { !$0.isFinite }) {
            throw DataError(file: "signal", message: "sample \(bad + 1) is \(signal[bad]); every sample must be a finite number")
        }
        let windows = windows, rows = windows.windowCount(signal.count), labels = engine.labels
        guard rows > 0 else {
            throw DataError(file: "signal", message: "the signal has \(signal.count) samples; one window needs \(windows.window)")
        }
        var scores = [Float](repeating: 0, count: rows * labels.count)
        let inputs = windows.inputs(signal)
        inputs.withUnsafeBufferPointer { inputs in
            scores.withUnsafeMutableBufferPointer { engine.probabilities(inputs, rows: rows, into: $0) }
        }
        let decided: [SignalAnswer.Window] = scores.withUnsafeBufferPointer { scores in
            (0..<rows).map { row in
                let decision = engine.decide(UnsafeBufferPointer(rebasing: scores[(row * labels.count)..<((row + 1) * labels.count)]))
                return SignalAnswer.Window(label: decision.label, confidence: decision.confidence, uncertain: decision.uncertain)
            }
        }
        // Votes of the trusted windows by label (the labels, then `unknown`); a tie goes to the label first in
        // alphabetical order.
        let names = labels + [DecisionRule.unknownLabel]
        var votes = [(count: Int, confidence: Double)](repeating: (0, 0), count: names.count)
        for window in decided where !window.uncertain {
            let index = labels.firstIndex(of: window.label) ?? labels.count
            votes[index].count += 1
            votes[index].confidence += window.confidence
        }
        guard let winner = votes.indices.filter({ votes[$0].count > 0 }).max(by: { (votes[$0].count, names[$1]) < (votes[$1].count, names[$0]) })
        else {
            return SignalAnswer(
                label: DecisionRule.unknownLabel, confidence: 0, uncertain: true, reason: "every window is uncertain", model: model,
                windows: decided)
        }
        return SignalAnswer(
            label: names[winner], confidence: votes[winner].confidence / Double(votes[winner].count), uncertain: false, reason: nil,
            model: model, windows: decided)
    }
}

/// Signals of a known form, for training and testing: a sine or a square wave of 1.5–5 cycles per 32 samples at any
/// level, loudness and phase with a little noise, or noise alone.
public enum SignalExamples {
    /// The three forms, in the model's label order.
    public static let labels = ["sine", "square", "noise"]

    /// One signal of `label` with `count` samples.
    public static func signal(_ label: String, count: Int, generator: inout SeededGenerator) -> [Float] {
        let amplitude = generator.nextUniform(in: 0.5..<3), offset = generator.nextUniform(in: -2..<2)
        let cycles = generator.nextUniform(in: 1.5..<5) / 32, phase = generator.nextUniform(in: 0..<(2 * Double.pi))
        return (0..<count).map { index in
            let wave = sin(2 * Double.pi * cycles * Double(index) + phase)
            let value: Double
            switch label {
            case "sine": value = amplitude * wave + 0.05 * amplitude * generator.nextNormal()
            case "square": value = amplitude * (wave >= 0 ? 1 : -1) + 0.05 * amplitude * generator.nextNormal()
            default: value = amplitude * generator.nextNormal()
            }
            return Float(offset + value)
        }
    }

    /// `perClass` one-window examples of each label, as the model's inputs.
    public static func examples(perClass: Int, seed: UInt64, windows: SignalWindows = SignalWindows()) -> Examples {
        var generator = SeededGenerator(seed: seed)
        var inputs: [Float] = [], labels: [Int] = []
        for _ in 0..<perClass {
            for (index, label) in Self.labels.enumerated() {
                inputs += windows.inputs(signal(label, count: windows.window, generator: &generator))
                labels.append(index)
            }
        }
        return Examples(inputs: Tensor(shape: [labels.count, windows.window], scalars: inputs), labels: labels, classNames: Self.labels)
    }
}
