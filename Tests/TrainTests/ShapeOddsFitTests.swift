import Foundation
import Models
import Tensor
import Testing
import WeightsFormat

@testable import Train

@Suite("Shape odds fitted on drawings the network did not train on")
struct ShapeOddsFitTests {
    /// Drawings whose network answers are too ready to say "none of these" for real shapes: the fitted odds accept
    /// more shapes while flagging every non-shape the network alone flags (the operating point's rule), the curve
    /// moves the right way, and a source with few drawings weighs as much as one with many.
    @Test func theFitAcceptsMoreShapesAndFlagsNoFewerNonShapes() throws {
        let classNames = ["circle", "square", "other"]
        var drawings: [HeldOutDrawing] = [], probabilities: [[Double]] = [], truth: [Int] = []
        let tiny = Drawing(strokes: [[DrawingPoint(x: 0, y: 0), DrawingPoint(x: 1, y: 0), DrawingPoint(x: 0, y: 1)]])
        func add(_ p: [Double], _ label: Int, source: Int) {
            drawings.append(HeldOutDrawing(drawing: tiny, source: source))
            probabilities.append(p)
            truth.append(label)
        }
        // Source 0: 400 generated shapes the network is sure of, and 400 non-shapes it rejects outright.
        for k in 0..<400 {
            add(k % 2 == 0 ? [0.97, 0.02, 0.01] : [0.02, 0.97, 0.01], k % 2, source: 0)
            add([0.004, 0.006, 0.99], 2, source: 0)
        }
        // Source 1: 40 real shapes the network gives "other" 55–75%; source 2: 40 real non-shapes at 90–99%.
        for k in 0..<40 {
            let p = 0.55 + 0.2 * Double(k) / 39
            add([1 - p, 0, p], 0, source: 1)
            let q = 0.9 + 0.09 * Double(k) / 39
            add([0, 1 - q, q], 2, source: 2)
        }
        let data = ShapeOddsData(drawings: drawings, probabilities: probabilities, truth: truth, origin: "test")
        let rule = DecisionRule(rejectLabel: "other")
        let fit = try #require(ShapeOddsFit.fit(data, classNames: classNames, rejectIndex: 2, rule: rule))
        let chosen = try #require(fit.curve.first { $0.shift == 0 })
        #expect(chosen.nonShapesFlagged >= fit.networkAlone.nonShapesFlagged - 1e-12)
        #expect(chosen.shapesRight > fit.networkAlone.shapesRight + 0.2, "\(chosen) vs \(fit.networkAlone)")
        #expect(fit.odds.network > 0 && fit.odds.outline == 0)
        let rights = fit.curve.map(\.shapesRight), flags = fit.curve.map(\.nonShapesFlagged)
        #expect(zip(rights, rights.dropFirst()).allSatisfy { $0 <= $1 } && zip(flags, flags.dropFirst()).allSatisfy { $0 >= $1 }, "\(fit.curve)")
        #expect(fit.shapes == 440 && fit.nonShapes == 440 && fit.origin == "test")
    }

    /// No fit for classes that have no outline (a heart), or with too few shapes or non-shapes.
    @Test func noFitWithoutOutlinesOrData() {
        let tiny = Drawing(strokes: [[DrawingPoint(x: 0, y: 0), DrawingPoint(x: 1, y: 0), DrawingPoint(x: 0, y: 1)]])
        let drawings = (0..<100).map { _ in HeldOutDrawing(drawing: tiny, source: 0) }
        let probabilities = (0..<100).map { $0 % 2 == 0 ? [0.6, 0.4] : [0.3, 0.7] }
        let truth = (0..<100).map { $0 % 2 }
        let data = ShapeOddsData(drawings: drawings, probabilities: probabilities, truth: truth, origin: "test")
        let rule = DecisionRule(rejectLabel: "other")
        #expect(ShapeOddsFit.fit(data, classNames: ["heart", "other"], rejectIndex: 1, rule: rule) == nil)
        #expect(ShapeOddsFit.fit(data, classNames: ["circle", "other"], rejectIndex: 1, rule: rule) != nil)
        let few = ShapeOddsData(
            drawings: Array(drawings.prefix(30)), probabilities: Array(probabilities.prefix(30)), truth: Array(truth.prefix(30)), origin: "test")
        #expect(ShapeOddsFit.fit(few, classNames: ["circle", "other"], rejectIndex: 1, rule: rule) == nil)
    }

    /// The regression recovers known coefficients: labels drawn from σ(z + 1.5·x − 0.5), with z as the offset and
    /// as a feature.
    @Test func theRegressionRecoversKnownCoefficients() throws {
        var generator = SeededGenerator(seed: 3)
        var rows: [(offset: Double, features: [Double], y: Double, w: Double)] = []
        for _ in 0..<20_000 {
            let (z, x) = (generator.nextUniform(in: -3..<3), generator.nextUniform(in: -2..<2))
            let p = 1 / (1 + exp(-(z + 1.5 * x - 0.5)))
            rows.append((z, [x, 1], generator.nextUnitDouble() < p ? 1 : 0, 1))
        }
        let beta = try #require(ShapeOddsFit.logisticRegression(rows))
        #expect(abs(beta[0] - 1.5) < 0.1 && abs(beta[1] + 0.5) < 0.1, "\(beta)")
        let free = try #require(ShapeOddsFit.logisticRegression(rows.map { (0, [$0.offset] + $0.features, $0.y, $0.w) }))
        #expect(abs(free[0] - 1) < 0.1 && abs(free[1] - 1.5) < 0.1 && abs(free[2] + 0.5) < 0.1, "\(free)")
    }
}
