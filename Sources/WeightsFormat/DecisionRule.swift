import Foundation

/// How a classifier's probabilities become an answer: calibration, the "none of these" class and when to say
/// "not sure". A weights file carries one in its header (`decision`); files written before it existed get
/// `DecisionRule.legacy`.
///
/// - **Temperature.** A network trained with cross-entropy is over-confident. Dividing its logits by a
///   temperature `T` fitted on held-out validation data (temperature scaling, Guo et al. 2017) makes "90%" mean
///   right about 9 times in 10 without changing which class wins. On softmax outputs it is
///   `pᵢ ∝ exp(log pᵢ / T)`.
/// - **The reject class.** When the model was trained with a class named `other` (drawings or recordings that
///   are none of the real classes), an answer of that class is reported as `unknown`, with the nearest real
///   class as `best`. The class works for any label set: it is learned from data, not a hand rule.
/// - **Uncertain.** Below `uncertainBelow` calibrated confidence in the winning real class (after the reject
///   class has taken its share), an answer is uncertain.
public struct DecisionRule: Codable, Equatable, Sendable {
    /// The label of the reject class in training data and weights files.
    public static let otherLabel = "other"
    /// The answer's label when the reject class wins.
    public static let unknownLabel = "unknown"
    /// The default floor of a trusted answer's calibrated confidence.
    public static let defaultUncertainBelow = 0.7

    /// Logits are divided by this before the softmax; 1 leaves probabilities as the network gives them.
    public var temperature: Double
    /// The class that means "none of the others", when the model has one.
    public var rejectLabel: String?
    /// Below this calibrated confidence an answer is uncertain.
    public var uncertainBelow: Double

    /// Creates a rule.
    public init(temperature: Double = 1, rejectLabel: String? = nil, uncertainBelow: Double = defaultUncertainBelow) {
        self.temperature = temperature
        self.rejectLabel = rejectLabel
        self.uncertainBelow = uncertainBelow
    }

    /// The rule of a file written without one: no calibration, no reject class, the default floor.
    public static let legacy = DecisionRule()

    /// The rule for a model with `labels`: the reject class is `other` when the labels have it.
    package static func `default`(labels: [String], temperature: Double = 1) -> DecisionRule {
        DecisionRule(temperature: temperature, rejectLabel: labels.contains(otherLabel) ? otherLabel : nil)
    }

    /// Why the rule cannot be used with `labels`, or `nil`.
    package func problem(labels: [String]) -> String? {
        guard temperature.isFinite, temperature >= 0.05, temperature <= 100 else {
            return "the decision's temperature \(temperature) is outside 0.05…100"
        }
        guard uncertainBelow.isFinite, (0...1).contains(uncertainBelow) else {
            return "the decision's uncertainBelow \(uncertainBelow) is outside 0…1"
        }
        if let rejectLabel, !labels.contains(rejectLabel) {
            return "the decision's reject class '\(rejectLabel)' is not one of the labels \(labels)"
        }
        if let rejectLabel, labels.filter({ $0 != rejectLabel }).count < 1 {
            return "a model needs a class besides its reject class '\(rejectLabel)'"
        }
        return nil
    }

    /// One line for people: `temperature 1.2, 'other' answers unknown, uncertain below 70%`.
    public var summary: String {
        String(format: "temperature %g, ", temperature)
            + (rejectLabel.map { "'\($0)' answers unknown, " } ?? "no reject class, ")
            + String(format: "uncertain below %g%%", 100 * uncertainBelow)
    }
}
