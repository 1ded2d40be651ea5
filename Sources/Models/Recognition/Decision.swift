import Foundation
import WeightsFormat

// A rule applied to a classifier's outputs: calibration. The rule itself, a weights header field, is WeightsFormat's;
// fitting its temperature is training's (Sources/Train/TemperatureFit.swift).
extension DecisionRule {
    /// Calibrated probabilities from softmax outputs: `pᵢ ∝ exp(log pᵢ / T)`.
    package func calibrated(_ probabilities: [Double]) -> [Double] {
        guard temperature != 1 else { return probabilities }
        let logs = probabilities.map { log(max($0, 1e-38)) / temperature }
        let top = logs.max() ?? 0
        let exps = logs.map { exp($0 - top) }
        let total = exps.reduce(0, +)
        return exps.map { $0 / total }
    }
}

/// A classifier's answer after its decision rule: the label (or `unknown`), the nearest real class, the calibrated
/// confidence and probabilities, and whether and why it should not be trusted.
package struct Decision: Sendable, Equatable {
    /// The winning real class, or `unknown` when the reject class won.
    package let label: String
    /// The most likely real class (not the reject class); equals `label` unless it is `unknown`.
    package let best: String
    /// The calibrated probability of `label` (of the reject class when `unknown`).
    package let confidence: Double
    /// Every class's calibrated probability, in label order.
    package let probabilities: [(label: String, probability: Double)]
    /// Why the answer should not be trusted, or why it is `unknown`; `nil` for a trusted answer.
    package let reason: String?
    /// Whether the answer should not be trusted (the reason says why). `unknown` answers are not uncertain:
    /// the model is confident the input is none of its classes.
    package let uncertain: Bool

    /// Applies `rule` to softmax outputs in `labels` order: `decide(raw:rejectIndex:rule:calibrated:)` picks the
    /// answer, `words(labels:raw:calibrated:decided:rule:)` words it.
    ///
    /// Outputs that are not finite numbers (a model whose arithmetic overflowed) never become a confidence: the
    /// answer is `unknown`, uncertain, with confidence 0, every probability 0 and a reason naming the score (see
    /// `nonFiniteReason`). Loading refuses weights that could overflow (`WeightsFileError.Problem.mayOverflow`),
    /// so this is the last line of defence, not the way such files are caught.
    package init(labels: [String], probabilities raw: [Double], rule: DecisionRule) {
        precondition(labels.count == raw.count && !labels.isEmpty, "Decision: \(labels.count) labels, \(raw.count) probabilities")
        let rejectIndex = rule.rejectLabel.flatMap { labels.firstIndex(of: $0) }
        var p = [Double](repeating: 0, count: raw.count)
        self = raw.withUnsafeBufferPointer { raw in
            p.withUnsafeMutableBufferPointer { p in
                let decided = Self.decide(raw: raw, rejectIndex: rejectIndex, rule: rule, calibrated: p)
                return Decision(labels: labels, raw: raw, calibrated: UnsafeBufferPointer(p), decided: decided, rule: rule)
            }
        }
    }

    /// The answer `decide` gave for `raw` (softmax outputs in `labels` order), with its calibrated probabilities,
    /// in words.
    package init(
        labels: [String], raw: UnsafeBufferPointer<Double>, calibrated p: UnsafeBufferPointer<Double>,
        decided: (best: Int, unknown: Bool, confidence: Double, uncertain: Bool), rule: DecisionRule
    ) {
        precondition(
            labels.count == raw.count && raw.count == p.count, "Decision: \(labels.count) labels, \(raw.count) scores, \(p.count) probabilities")
        probabilities = zip(labels, p).map { ($0, $1) }
        (label, best, reason) = Self.words(labels: labels, raw: raw, calibrated: p, decided: decided, rule: rule)
        confidence = decided.confidence
        uncertain = decided.uncertain
    }

    /// What `decide` gave for `raw` in words: the answer's label (`unknown` when the reject class won), the nearest
    /// real class, and the reason (`nonFiniteReason`, else `reason(labels:calibrated:best:unknown:rule:)`).
    package static func words(
        labels: [String], raw: UnsafeBufferPointer<Double>, calibrated p: UnsafeBufferPointer<Double>,
        decided: (best: Int, unknown: Bool, confidence: Double, uncertain: Bool), rule: DecisionRule
    ) -> (label: String, best: String, reason: String?) {
        let best = labels[decided.best]
        let reason =
            nonFiniteReason(labels: labels, scores: raw)
            ?? reason(labels: labels, calibrated: p, best: decided.best, unknown: decided.unknown, rule: rule)
        return (decided.unknown ? DecisionRule.unknownLabel : best, best, reason)
    }

    /// Why an answer that `decide` gave should not be trusted, or why it is `unknown`; `nil` for a trusted answer of
    /// a real class. `calibrated` are the probabilities in `labels` order (finite), `best` the nearest real class's
    /// index and `unknown` whether the reject class won.
    package static func reason(
        labels: [String], calibrated p: UnsafeBufferPointer<Double>, best: Int, unknown: Bool,
        rule: DecisionRule
    ) -> String? {
        func percent(_ value: Double) -> Int { Int((100 * value).rounded()) }
        if unknown, let rejectIndex = rule.rejectLabel.flatMap({ labels.firstIndex(of: $0) }) {
            return p[rejectIndex] < rule.uncertainBelow
                ? "it looks like none of the classes (\(percent(p[rejectIndex]))%), but it might be \(labels[best]) (\(percent(p[best]))%)"
                : "it looks like none of the classes (\(percent(p[rejectIndex]))%); the nearest is \(labels[best])"
        }
        guard p[best] < rule.uncertainBelow else { return nil }
        let runnerUp = labels.indices.filter { $0 != best }.max { p[$0] < p[$1] }
        return "confidence \(percent(p[best]))% is below \(percent(rule.uncertainBelow))%"
            + (runnerUp.map { "; it might be \(labels[$0] == rule.rejectLabel ? "none of the classes" : labels[$0]) (\(percent(p[$0]))%)" } ?? "")
    }

    /// Why `scores` (one per label) cannot be an answer — the first that is NaN or infinite, by label — or `nil`
    /// when all are finite.
    package static func nonFiniteReason(labels: [String], scores: some Collection<Double>) -> String? {
        guard let index = scores.firstIndex(where: { !$0.isFinite }) else { return nil }
        let bad = scores.distance(from: scores.startIndex, to: index)
        let name = labels.indices.contains(bad) ? labels[bad] : "output \(bad)"
        return "the model gave a non-finite score (\(scores[index])) for \(name): its weights overflow; no answer from it can be trusted"
    }

    /// Equal labels, confidences, reasons and probabilities.
    package static func == (a: Decision, b: Decision) -> Bool {
        a.label == b.label && a.best == b.best && a.confidence == b.confidence && a.reason == b.reason
            && a.uncertain == b.uncertain && a.probabilities.map(\.label) == b.probabilities.map(\.label)
            && a.probabilities.map(\.probability) == b.probabilities.map(\.probability)
    }
}

extension Decision {
    /// What `Decision(labels:probabilities:rule:)` decides, without allocating: the calibrated probabilities are
    /// written to `calibrated` (as many as `raw`), and the winner returned — the nearest real class's index, whether
    /// the reject class won (`unknown`), the confidence and whether it is uncertain. `rejectIndex` is where
    /// `rule.rejectLabel` stands in the labels. The initializer, every shape answer and every motion window are
    /// decided by it; the reasons are left to `reason(labels:calibrated:best:unknown:rule:)`. `weigh` may change
    /// the calibrated probabilities before the winner is chosen (a shape model's `DecisionRule.ShapeOdds`); it is
    /// not called when a score is not finite.
    package static func decide(
        raw: UnsafeBufferPointer<Double>, rejectIndex: Int?, rule: DecisionRule,
        calibrated p: UnsafeMutableBufferPointer<Double>, weigh: (UnsafeMutableBufferPointer<Double>) -> Void = { _ in }
    ) -> (best: Int, unknown: Bool, confidence: Double, uncertain: Bool) {
        guard calibrate(raw: raw, rule: rule, into: p) else { return (0, true, 0, true) }
        weigh(p)
        return choose(calibrated: UnsafeBufferPointer(p), rejectIndex: rejectIndex, rule: rule)
    }

    /// `decide`'s first half: the calibrated probabilities of `raw` written to `calibrated`; `false` (and every
    /// probability 0) when a score is not finite.
    static func calibrate(
        raw: UnsafeBufferPointer<Double>, rule: DecisionRule, into p: UnsafeMutableBufferPointer<Double>
    ) -> Bool {
        precondition(raw.count == p.count && !raw.isEmpty, "Decision.decide: \(raw.count) scores, \(p.count) places")
        if raw.contains(where: { !$0.isFinite }) {
            p.update(repeating: 0)
            return false
        }
        if rule.temperature == 1 {
            for i in raw.indices { p[i] = raw[i] }
        } else {
            // `calibrated(_:)`: logs over the temperature, shifted by their largest, exponentiated, normalized.
            var top = -Double.infinity
            for i in raw.indices {
                p[i] = log(max(raw[i], 1e-38)) / rule.temperature
                if i == 0 || p[i] > top { top = p[i] }
            }
            var total = 0.0
            for i in raw.indices {
                p[i] = exp(p[i] - top)
                total += p[i]
            }
            for i in raw.indices { p[i] /= total }
        }
        return true
    }

    /// The nearest real class of calibrated probabilities `p`: its index (the first when there is none besides the
    /// reject class at `rejectIndex`).
    package static func nearest(calibrated p: UnsafeBufferPointer<Double>, rejectIndex: Int?) -> Int {
        var best = -1
        for i in p.indices where i != rejectIndex && (best < 0 || p[best] < p[i]) { best = i }
        return max(best, 0)
    }

    /// `decide`'s second half: the winner among calibrated probabilities `p`.
    package static func choose(
        calibrated p: UnsafeBufferPointer<Double>, rejectIndex: Int?, rule: DecisionRule
    ) -> (best: Int, unknown: Bool, confidence: Double, uncertain: Bool) {
        let best = nearest(calibrated: p, rejectIndex: rejectIndex)
        if let rejectIndex, p[rejectIndex] > p[best] {
            return (best, true, p[rejectIndex], p[rejectIndex] < rule.uncertainBelow)
        }
        return (best, false, p[best], p[best] < rule.uncertainBelow)
    }
}
