import Foundation
import Models
import WeightsFormat

// Training's part of the decision rule: the temperature fitted on a validation split (Export.swift writes it into
// the header). Applying it (`calibrated`) is the recognizers', in Models.
extension DecisionRule {
    /// Fits the temperature that minimizes the negative log-likelihood of `truth` under calibrated
    /// `probabilities` (rows of softmax outputs): a golden-section search over log T in [0.05, 20]. With fewer
    /// than `minimumErrors` wrong answers the data cannot show over-confidence (the likelihood only grows as T
    /// shrinks, and a fit would sharpen 60/40 into certainty), so the temperature never goes below 1 then.
    package static let minimumErrors = 10

    /// See `minimumErrors`.
    package static func fitTemperature(probabilities: [[Double]], truth: [Int]) -> Double {
        precondition(probabilities.count == truth.count, "fitTemperature: \(probabilities.count) rows, \(truth.count) labels")
        guard !truth.isEmpty else { return 1 }
        let logs = probabilities.map { $0.map { log(max($0, 1e-38)) } }
        func loss(_ logT: Double) -> Double {
            let t = exp(logT)
            var total = 0.0
            for (row, label) in zip(logs, truth) {
                let scaled = row.map { $0 / t }
                let top = scaled.max() ?? 0
                total -= scaled[label] - top - log(scaled.reduce(0) { $0 + exp($1 - top) })
            }
            return total
        }
        var (low, high) = (log(0.05), log(20.0))
        let ratio = (5.0.squareRoot() - 1) / 2
        for _ in 0..<60 {
            let a = high - ratio * (high - low), b = low + ratio * (high - low)
            if loss(a) < loss(b) { high = b } else { low = a }
        }
        let fitted = exp((low + high) / 2)
        let errors = zip(probabilities, truth).filter { row, label in row.indices.contains { row[$0] > row[label] } }.count
        return errors < minimumErrors ? max(1, fitted) : fitted
    }
}
