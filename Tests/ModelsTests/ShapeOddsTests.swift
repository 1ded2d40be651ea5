import DataFiles
import Foundation
import Tensor
import Testing

@testable import Models
@testable import WeightsFormat

/// The package root: the shipped Weights/ are found relative to it.
private let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The shipped int8 recognizer with its decision rule's shape odds replaced by `odds` (`nil`: none).
private func shipped(odds: DecisionRule.ShapeOdds?) throws -> ShapeRecognizer {
    var file = try ModelFile(contentsOf: root.appendingPathComponent("Weights/shape-classifier.int8.weights"))
    var rule = try #require(file.decision)
    rule.shapeOdds = odds
    file.decision = rule
    return ShapeRecognizer(engine: .model(try ShapeClassifier(file: file)), model: "shape-classifier.int8")
}

private func drawing(_ points: [(Double, Double)]) -> Drawing { Drawing(strokes: [points.map { DrawingPoint(x: $0.0, y: $0.1) }]) }

@Suite("Shape odds: the decision's 'a shape at all', refitted beside the network")
struct ShapeOddsTests {
    /// The odds move the reject class's share and keep the real classes' proportions; below `from` they change
    /// nothing; the outline is asked for only when it weighs.
    @Test func weighingKeepsProportionsAndSumsToOne() {
        let odds = DecisionRule.ShapeOdds(network: 1, bias: 2)
        var p = [0.1, 0.3, 0.6]  // star, square, other
        var asked = false
        let changed = p.withUnsafeMutableBufferPointer {
            odds.weigh(calibrated: $0, rejectIndex: 2) { _ in
                asked = true; return nil
            }
        }
        #expect(changed && !asked)
        // log(0.4/0.6) + 2 → σ = 0.8164…
        let shape = 1 / (1 + exp(-(log(0.4 / 0.6) + 2)))
        #expect(abs(p[2] - (1 - shape)) < 1e-12 && abs(p[0] / p[1] - 1.0 / 3) < 1e-12 && abs(p.reduce(0, +) - 1) < 1e-12, "\(p)")

        let late = DecisionRule.ShapeOdds(network: 1, outline: 2, bias: 0, from: 0.5)
        var q = [0.7, 0.3]
        #expect(!q.withUnsafeMutableBufferPointer { late.weigh(calibrated: $0, rejectIndex: 1) { _ in 0.01 } } && q == [0.7, 0.3])
        var r = [0.4, 0.6]
        var nearest = -1
        r.withUnsafeMutableBufferPointer {
            _ = late.weigh(calibrated: $0, rejectIndex: 1) {
                nearest = $0; return 0.01
            }
        }
        // log(0.4/0.6) − 2·log(0.01) = 8.8: a shape.
        #expect(nearest == 0 && r[0] > 0.99, "\(r)")
        // All of the shape's share to the nearest class when the network gave the real classes nothing.
        var s = [0.0, 0.0, 1.0]
        s.withUnsafeMutableBufferPointer { _ = DecisionRule.ShapeOdds(network: 1, bias: 40).weigh(calibrated: $0, rejectIndex: 2) { _ in nil } }
        #expect(s[0] > 0.5 && s[1] == 0 && abs(s.reduce(0, +) - 1) < 1e-12, "\(s)")
    }

    /// The worker answers through the odds: a bias that makes everything a shape turns a zigzag (unknown without
    /// odds) into a shape, one that makes nothing a shape turns every bundled drawing into `unknown`; odds of bias 0
    /// and weight 1 leave every answer as it was.
    @Test func theRecognizerAnswersThroughTheOdds() throws {
        let zigzag = drawing([(0, 0), (10, 40), (20, 0), (30, 40), (40, 0), (50, 40), (60, 0)])
        let real = try bundledDrawings(count: 36)
        #expect(try shipped(odds: nil).recognize(zigzag).label == DecisionRule.unknownLabel)
        #expect(try shipped(odds: DecisionRule.ShapeOdds(network: 1, bias: 60)).recognize(zigzag).label != DecisionRule.unknownLabel)
        let none = try shipped(odds: DecisionRule.ShapeOdds(network: 1, bias: -60))
        let neutral = try shipped(odds: DecisionRule.ShapeOdds(network: 1, bias: 0))
        let plain = try shipped(odds: nil)
        for drawing in real + [zigzag] {
            #expect(try none.recognize(drawing).label == DecisionRule.unknownLabel)
            let (a, b) = (try neutral.recognize(drawing), try plain.recognize(drawing))
            #expect(a.label == b.label && abs(a.confidence - b.confidence) < 1e-9)
        }
    }

    /// A weights file carries the odds and reads them back; impossible weights and odds without a reject class
    /// are refused with the field named; a motion model refuses odds, which are for drawings.
    @Test func weightsFilesCarryAndCheckTheOdds() throws {
        var file = try ModelFile(contentsOf: root.appendingPathComponent("Weights/shape-classifier.int8.weights"))
        var rule = try #require(file.decision)
        rule.shapeOdds = DecisionRule.ShapeOdds(network: 1, outline: 1.25, bias: 0.5, from: 0.01)
        file.decision = rule
        #expect(try ModelFile(bytes: file.encoded(), path: "odds.weights").decision == rule)
        for (odds, message) in [
            (DecisionRule.ShapeOdds(network: 0, bias: 0), "network weight 0.0 is outside 0…100 (0 excluded)"),
            (DecisionRule.ShapeOdds(network: 1, outline: -1, bias: 0), "outline weight -1.0 is outside 0…100"),
            (DecisionRule.ShapeOdds(network: 1, bias: 5000), "bias 5000.0 is outside −1000…1000"),
            (DecisionRule.ShapeOdds(network: 1, bias: 0, from: 2), "'from' 2.0 is outside 0…1"),
        ] {
            var bad = file
            bad.decision?.shapeOdds = odds
            #expect(problem(decoding: bad.encoded()) == .corruptHeader("the decision's shapeOdds \(message)"))
        }
        var noReject = file
        noReject.decision?.rejectLabel = nil
        #expect(problem(decoding: noReject.encoded()) == .corruptHeader("the decision's shapeOdds need a reject class"))
        let header = try reassemble(file.encoded()) { header in
            var decision = header["decision"] as? [String: Any] ?? [:]
            decision["shapeOdds"] = ["network": 1, "outline": 0, "bias": "high", "from": 0]
            header["decision"] = decision
        }
        #expect(
            problem(decoding: header).map { "\($0)".contains("shapeOdds") && "\($0)".contains("bias") } == true,
            "\(String(describing: problem(decoding: header)))")

        var motion = try ModelFile(contentsOf: root.appendingPathComponent("Weights/motion-state.int8.weights"))
        // In memory (a file would need a reject class first, which the motion model has not got).
        motion.decision = DecisionRule(temperature: 1.2, shapeOdds: DecisionRule.ShapeOdds(network: 1, bias: 0))
        #expect(throws: DataError.self) { try MotionClassifier(file: motion) }
    }

    /// The outline's relative distance: a careful circle or square lies on its outline (under 0.01 of the root of
    /// its area), and the distance grows with the drawing's noise.
    @Test func relativeDistanceGrowsWithNoise() throws {
        var generator = SeededGenerator(seed: 4)
        for noise in [0.0, 0.03, 0.08] {
            let circle = drawing(
                (0...200).map { k in
                    let t = Double(k) / 100 * .pi
                    return (50 + 40 * cos(t) + noise * 40 * generator.nextNormal(), 50 + 25 * sin(t) + noise * 40 * generator.nextNormal())
                })
            let square = drawing(
                (0..<400).map { k in
                    let f = Double(k % 100) / 100
                    let (x, y) = [(f * 100, 0), (100, f * 100), (100 - f * 100, 100), (0, 100 - f * 100)][k / 100]
                    return (x + noise * 100 * generator.nextNormal(), y + noise * 100 * generator.nextNormal())
                })
            let c = try #require(FittedShape.fit(circle, as: "circle")).relativeDistance
            let q = try #require(FittedShape.fit(square, as: "square")).relativeDistance
            if noise == 0 {
                #expect(c < 0.01 && q < 0.01, "\(c) \(q)")
            } else {
                #expect(c > noise / 3 && q > noise / 3, "noise \(noise): \(c) \(q)")
            }
        }
    }

    /// A drawing at the edge of the number range (nearly flat: its fitted ellipse's ratio of radii would overflow)
    /// gets a finite distance or the worst one, never NaN, and an answer with a finite confidence through odds that
    /// read the outline.
    @Test func extremeOutlinesNeverGiveNaN() throws {
        let flat = drawing([(0, 0), (1, 0), (2, 1e-160), (1, 2e-160)])
        if let fit = FittedShape.fit(flat, as: "circle") { #expect(!fit.relativeDistance.isNaN, "\(fit.relativeDistance)") }
        #expect(DecisionRule.ShapeOdds.heldDistance(.nan) == 10 && DecisionRule.ShapeOdds.heldDistance(.infinity) == 10)
        #expect(DecisionRule.ShapeOdds.heldDistance(nil) == 10 && DecisionRule.ShapeOdds.heldDistance(1e-9) == 0.001)
        let reading = try shipped(odds: DecisionRule.ShapeOdds(network: 1, outline: 2, bias: 0, from: 0))
        for drawing in [flat, drawing([(0, 0), (1e14, 1), (2e14, 0), (1e14, -1)])] {
            let answer = try reading.recognize(drawing)
            #expect(answer.confidence.isFinite && answer.probabilities.allSatisfy { $0.probability.isFinite }, "\(answer.probabilities)")
        }
    }

    /// The distance to an ellipse (Eberly's root, by Newton's method) is the distance to the ellipse as a fine polygon (the
    /// reference: 4,096 sides) within 0.2% of the larger radius, inside, outside, near the centre and on thin ellipses.
    @Test func ellipseDistanceMatchesAFinePolygon() {
        var generator = SeededGenerator(seed: 9)
        for radii in [(50.0, 50.0), (80, 20), (100, 3), (5, 60), (1e6, 1e-3)] {
            let sides = 4096
            let polygon = (0..<sides).map { k in
                let t = Double(k) / Double(sides) * 2 * .pi
                return (x: radii.0 * cos(t), y: radii.1 * sin(t))
            }
            let segments = polygon.indices.map { (polygon[$0], polygon[($0 + 1) % sides]) }
            // Random points, and points on the axes or a rounding error off them (where a start at the left end of
            // Eberly's function divides by zero).
            let onAxes = [(0.3, 0.0), (1.2, 0.0), (0.0, 0.4), (0.0, 1.3), (-0.7, 1e-17), (0.9, -1e-12), (1e-300, 0.5), (0.0, 0.0)].map {
                ($0.0 * radii.0, $0.1 * radii.1)
            }
            for index in 0..<(200 + onAxes.count) {
                let (u, v) =
                    index < onAxes.count
                    ? onAxes[index] : (generator.nextUniform(in: -1.6..<1.6) * radii.0, generator.nextUniform(in: -1.6..<1.6) * radii.1)
                let fast = FittedShape.squaredDistance(u: u, v: v, radii: radii).squareRoot()
                let reference = FittedShape.squaredDistance(from: (u, v), to: segments).squareRoot()
                #expect(abs(fast - reference) <= 0.002 * max(radii.0, radii.1), "radii \(radii), point (\(u), \(v)): \(fast) vs \(reference)")
            }
        }
    }
}
