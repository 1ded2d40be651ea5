import Models
import Testing
import WeightsFormat

@testable import Train

@Suite("The decision rule's temperature, fitted on a validation split")
struct TemperatureFitTests {
    /// With too few errors to show over-confidence, the fitted temperature never sharpens.
    @Test func aPerfectValidationSetDoesNotSharpen() {
        let rows = (0..<100).map { _ in [0.6, 0.4] }
        #expect(DecisionRule.fitTemperature(probabilities: rows, truth: Array(repeating: 0, count: 100)) >= 1)
    }

    /// Temperature scaling: a fitted temperature above 1 for over-confident scores, and calibrated
    /// probabilities that keep the winner and sum to 1.
    @Test func temperatureScalingSoftensOverConfidentScores() {
        // Scores that say 99% but are right 3 times in 4.
        let rows = (0..<400).map { _ in [0.99, 0.01] }
        let truth = (0..<400).map { $0 % 4 == 0 ? 1 : 0 }
        let temperature = DecisionRule.fitTemperature(probabilities: rows, truth: truth)
        let calibrated = DecisionRule(temperature: temperature).calibrated([0.99, 0.01])
        #expect(temperature > 1)
        #expect(abs(calibrated[0] - 0.75) < 0.01, "calibrated \(calibrated) at T = \(temperature)")
        #expect(abs(calibrated.reduce(0, +) - 1) < 1e-12)
    }
}
