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
/// - **Shape odds** (shape models only, optional). Whether a drawing is a shape at all, refitted on drawings that
///   did not train the network, with how well the nearest class's outline explains it when that helps (`ShapeOdds`).
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
    /// Whether a drawing is a shape at all, refitted on drawings that did not train the network, for a shape model
    /// with a reject class; `nil` leaves it to the network.
    public var shapeOdds: ShapeOdds?

    /// Creates a rule.
    public init(
        temperature: Double = 1, rejectLabel: String? = nil, uncertainBelow: Double = defaultUncertainBelow, shapeOdds: ShapeOdds? = nil
    ) {
        self.temperature = temperature
        self.rejectLabel = rejectLabel
        self.uncertainBelow = uncertainBelow
        self.shapeOdds = shapeOdds
    }

    /// The odds that a drawing is a shape at all, for a shape model with a reject class, fitted on drawings that
    /// did not train the network — real shapes and real non-shapes weighing the same — instead of taking the
    /// network's word for it. When the network's calibrated probability of the reject class, `p`, is at least
    /// `from`, the probability that the drawing is one of the real classes becomes
    ///
    ///     σ(network · log((1 − p) / p) + outline · (−log d) + bias)
    ///
    /// and the real classes share it in the network's proportions. `d` is how badly the fitted outline of the
    /// nearest class (circle, triangle, square or star) explains the drawing — `FittedShape.relativeDistance`, held
    /// within 0.001…10, 10 when no outline fits: evidence the network lacks, weighed only when `outline` is above 0
    /// (then the outline is fitted only for drawings at or over `from`).
    public struct ShapeOdds: Codable, Equatable, Sendable {
        /// The weight of the network's log-odds that the drawing is a shape.
        public var network: Double
        /// The weight of −log of the outline's relative distance; 0 leaves the outline out.
        public var outline: Double
        /// The constant term: where the decision stands.
        public var bias: Double
        /// The reject class's probability from which the odds are refitted (below it the network decides alone).
        public var from: Double

        /// Creates the odds' weights.
        public init(network: Double, outline: Double = 0, bias: Double, from: Double = 0) {
            (self.network, self.outline, self.bias, self.from) = (network, outline, bias, from)
        }

        /// The network's log-odds that a drawing is one of the real classes, log((1 − p) / p), for the reject
        /// class's calibrated probability `p` held within 1e-12…1 − 1e-12 (so that a certain answer stays finite).
        public static func logOdds(rejectProbability p: Double) -> Double {
            let clamped = min(max(p, 1e-12), 1 - 1e-12)
            return log((1 - clamped) / clamped)
        }

        /// The range `relativeDistance` is held within.
        public static let distanceRange = 0.001...10.0

        /// `distance` held within `distanceRange`; no distance, or one that is not a finite number (an outline
        /// fitted to a drawing at the edge of the number range), is the worst.
        public static func heldDistance(_ distance: Double?) -> Double {
            guard let distance, distance.isFinite else { return distanceRange.upperBound }
            return min(max(distance, distanceRange.lowerBound), distanceRange.upperBound)
        }

        /// The probability that a drawing is one of the real classes, given the reject class's calibrated
        /// probability `p` and the outline's relative distance (`nil`: no outline fits; not read when `outline` is 0;
        /// held by `heldDistance`).
        public func shapeProbability(rejectProbability p: Double, relativeDistance: Double?) -> Double {
            var z = network * Self.logOdds(rejectProbability: p) + bias
            if outline > 0 { z -= outline * log(Self.heldDistance(relativeDistance)) }
            return 1 / (1 + exp(-z))
        }

        /// Why the weights cannot be used, or `nil`.
        func problem() -> String? {
            guard [network, outline, bias, from].allSatisfy(\.isFinite) else { return "the decision's shapeOdds hold a non-finite weight" }
            guard network > 0, network <= 100 else { return "the decision's shapeOdds network weight \(network) is outside 0…100 (0 excluded)" }
            guard outline >= 0, outline <= 100 else { return "the decision's shapeOdds outline weight \(outline) is outside 0…100" }
            guard abs(bias) <= 1000 else { return "the decision's shapeOdds bias \(bias) is outside −1000…1000" }
            guard (0...1).contains(from) else { return "the decision's shapeOdds 'from' \(from) is outside 0…1" }
            return nil
        }
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
        if let shapeOdds {
            if let problem = shapeOdds.problem() { return problem }
            guard rejectLabel != nil else { return "the decision's shapeOdds need a reject class" }
        }
        return nil
    }

    /// One line for people: `temperature 1.2, 'other' answers unknown, uncertain below 70%`.
    public var summary: String {
        String(format: "temperature %g, ", temperature)
            + (rejectLabel.map { "'\($0)' answers unknown, " } ?? "no reject class, ")
            + String(format: "uncertain below %g%%", 100 * uncertainBelow)
            + (shapeOdds.map {
                String(
                    format: ", shape odds refitted (network %.3g, outline %.3g, bias %.3g, from %g%%)", $0.network, $0.outline, $0.bias, 100 * $0.from
                )
            } ?? "")
    }
}
