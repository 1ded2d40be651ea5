import DataFiles
import Foundation
import Tensor
import Testing
import WeightsFormat

@testable import Models

/// The package root: the shipped Weights/ are found relative to it.
private let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The shipped recognizer of one variant, without fallback.
private func shipped(_ variant: String) throws -> ShapeRecognizer {
    let file = try ModelFile(contentsOf: root.appendingPathComponent("Weights/shape-classifier.\(variant).weights"))
    return ShapeRecognizer(engine: .model(try ShapeClassifier(file: file)), model: "shape-classifier.\(variant)")
}

/// Real drawings of every class (the bundled test set's first 36), and drawings no recognizer can see or that
/// stretch it: no points, one point, one place, a NaN, a coordinate beyond the range, a tiny extent, a line, more
/// points than the stack scratch holds.
private func batchDrawings() throws -> [Drawing] {
    var drawings = try bundledDrawings(count: 36)
    let bad: [Drawing] = [
        Drawing(strokes: []),
        Drawing(strokes: [[DrawingPoint(x: 1, y: 2)]]),
        Drawing(strokes: [[DrawingPoint(x: 3, y: 3), DrawingPoint(x: 3, y: 3), DrawingPoint(x: 3, y: 3)]]),
        Drawing(strokes: [[DrawingPoint(x: 0, y: 0), DrawingPoint(x: .nan, y: 1), DrawingPoint(x: 5, y: 5)]]),
        Drawing(strokes: [[DrawingPoint(x: 0, y: 0), DrawingPoint(x: 2e15, y: 1)]]),
        Drawing(strokes: [[DrawingPoint(x: 1e12, y: 1e12), DrawingPoint(x: 1e12 + 1e-6, y: 1e12)]]),
        Drawing(strokes: [[], [DrawingPoint(x: 0, y: 0)], []]),
    ]
    let line = Drawing(strokes: [(0..<40).map { DrawingPoint(x: Double($0), y: 2 * Double($0)) }])
    let dense = Drawing(strokes: [(0..<3000).map { DrawingPoint(x: 50 * cos(Double($0) / 477), y: 50 * sin(Double($0) / 477)) }])
    // Bad drawings scattered among the good, so that every thread's share holds some.
    for (offset, drawing) in (bad + [line, dense]).enumerated() { drawings.insert(drawing, at: min(drawings.count, 1 + offset * 5)) }
    return drawings
}

/// Checks that a batch's answer for drawing `index` is exactly the one-drawing path's, field by field (the batch
/// keeps no image).
private func expectSame(
    _ batch: ShapeBatchAnswers, _ index: Int, _ single: Result<ShapeAnswer, DataError>, _ context: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    switch (batch.answer(at: index), single) {
    case let (.failure(a), .failure(b)):
        #expect(a == b, "\(context): drawing \(index): \(a) vs \(b)", sourceLocation: sourceLocation)
        #expect(batch.error(at: index) == b, sourceLocation: sourceLocation)
    case let (.success(a), .success(b)):
        #expect(
            a.label == b.label && a.best == b.best && a.confidence == b.confidence && a.uncertain == b.uncertain
                && a.reason == b.reason && a.model == b.model && a.attempts == b.attempts
                && a.probabilities.map(\.label) == b.probabilities.map(\.label)
                && a.probabilities.map(\.probability) == b.probabilities.map(\.probability),
            "\(context): drawing \(index): \(a.label) \(a.confidence) vs \(b.label) \(b.confidence)", sourceLocation: sourceLocation)
        #expect(a.view == nil, sourceLocation: sourceLocation)
        // The compact form says the same.
        let compact = batch.answers[index]
        #expect(
            batch.label(at: index) == b.label && batch.classes[compact.best] == b.best && compact.confidence == b.confidence
                && compact.uncertain == b.uncertain && compact.isUnknown == (b.label == DecisionRule.unknownLabel),
            "\(context): drawing \(index): compact \(compact) vs \(b.label) \(b.best)", sourceLocation: sourceLocation)
        #expect(Array(batch.probabilities(at: index)) == b.probabilities.map(\.probability), sourceLocation: sourceLocation)
        #expect(batch.error(at: index) == nil, sourceLocation: sourceLocation)
    default:
        Issue.record("\(context): drawing \(index): batch \(batch.answer(at: index)), single \(single)", sourceLocation: sourceLocation)
    }
}

@Suite("The batch API: exactly the one-drawing path's answers")
struct ShapeBatchTests {
    @Test(arguments: ["int8", "f32"])
    func batchAnswersAreTheSingleDrawingAnswers(variant: String) throws {
        let recognizer = try shipped(variant)
        let drawings = try batchDrawings()
        let single = drawings.map { drawing in Result { () throws(DataError) in try recognizer.recognize(drawing) } }
        #expect(single.contains { (try? $0.get()) == nil } && single.contains { (try? $0.get()) != nil })
        for threads in [1, 2, 3, 7] {
            let batch = recognizer.recognize(batch: drawings, threads: threads)
            #expect(batch.count == drawings.count && batch.classes == recognizer.classes && batch.model == recognizer.model)
            for index in drawings.indices { expectSame(batch, index, single[index], "\(variant), \(threads) threads") }
        }
    }

    @Test func theGeometricRecognizerAnswersTheSameInBatches() throws {
        let recognizer = ShapeRecognizer.ruleOnly
        let drawings = try batchDrawings()
        let single = drawings.map { drawing in Result { () throws(DataError) in try recognizer.recognize(drawing) } }
        for threads in [1, 2] {
            let batch = recognizer.recognize(batch: drawings, threads: threads)
            for index in drawings.indices { expectSame(batch, index, single[index], "geometric, \(threads) threads") }
        }
    }

    @Test func anEmptyBatchHasNoAnswers() throws {
        let batch = try shipped("int8").recognize(batch: [], threads: 2)
        #expect(batch.count == 0 && batch.probabilities.isEmpty)
    }

    /// A worker kept across many drawings answers each as the one-drawing path does (its buffers carry nothing over).
    @Test func aWorkerKeptAcrossDrawingsAnswersEachAlone() throws {
        let recognizer = try shipped("int8")
        let worker = ShapeRecognizer.Worker(recognizer)
        for drawing in try batchDrawings() {
            let compact = Result { () throws(DataError) in try worker.recognize(drawing) }
            let single = Result { () throws(DataError) in try recognizer.recognize(drawing) }
            switch (compact, single) {
            case let (.success(a), .success(b)):
                #expect(
                    a.label(recognizer.classes) == b.label && recognizer.classes[a.best] == b.best && a.confidence == b.confidence
                        && a.uncertain == b.uncertain)
            case let (.failure(a), .failure(b)):
                #expect(a == b)
            default:
                Issue.record("worker \(compact), single \(single)")
            }
        }
    }

    /// `Decision.decide` (no allocation) is `Decision.init` (the reference): the same calibrated bits and winner, with
    /// and without temperature and reject class, on ties, zeros and scores that are not finite.
    @Test func theCompactDecisionIsTheDecision() {
        let labels = ["circle", "other", "square", "star", "triangle"]
        let rules = [
            DecisionRule.legacy, DecisionRule(temperature: 1.7, rejectLabel: "other"), DecisionRule(temperature: 0.4),
            DecisionRule(temperature: 1, rejectLabel: "other", uncertainBelow: 0.9),
        ]
        var generator = SeededGenerator(seed: 5)
        var rows: [[Double]] = [
            [0.2, 0.2, 0.2, 0.2, 0.2], [0, 1, 0, 0, 0], [0.5, 0.5, 0, 0, 0], [0.1, 0.1, 0.4, 0.4, 0],
            [1, 0, 0, 0, 0], [0.3, .nan, 0.3, 0.2, 0.2], [.infinity, 0, 0, 0, 0], [0, 0, 0, 0, 0],
        ]
        for _ in 0..<200 {
            let raw = (0..<5).map { _ in Double(Float(generator.nextUnitDouble())) }
            let total = raw.reduce(0, +)
            rows.append(raw.map { Double(Float($0 / total)) })
        }
        for rule in rules {
            let reject = rule.rejectLabel.flatMap { labels.firstIndex(of: $0) }
            for raw in rows {
                let reference = Decision(labels: labels, probabilities: raw, rule: rule)
                var calibrated = [Double](repeating: -1, count: raw.count)
                let fast = raw.withUnsafeBufferPointer { raw in
                    calibrated.withUnsafeMutableBufferPointer { Decision.decide(raw: raw, rejectIndex: reject, rule: rule, calibrated: $0) }
                }
                #expect(calibrated.map(\.bitPattern) == reference.probabilities.map(\.probability.bitPattern), "\(rule) \(raw)")
                #expect(
                    labels[fast.best] == reference.best && (fast.unknown ? DecisionRule.unknownLabel : labels[fast.best]) == reference.label
                        && fast.confidence.bitPattern == reference.confidence.bitPattern && fast.uncertain == reference.uncertain,
                    "\(rule) \(raw): \(fast) vs \(reference.label) \(reference.confidence)")
            }
        }
    }
}
