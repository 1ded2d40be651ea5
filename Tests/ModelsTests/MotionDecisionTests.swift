import Foundation
import Tensor
import Testing
import WeightsFormat

@testable import Models

/// A window classifier that gives every window the same probabilities, under a given decision rule.
private struct FixedClassifier: MotionWindowClassifier {
    let windowing = MotionWindowing()
    let labels: [String]
    let scores: [Float]
    let decision: DecisionRule
    let name = "fixed"

    func probabilities(_ inputs: UnsafeBufferPointer<Float>, rows: Int, into output: UnsafeMutableBufferPointer<Float>) {
        for row in 0..<rows { for (k, score) in scores.enumerated() { output[row * scores.count + k] = score } }
    }
}

/// Motion windows are decided by the weights file's rule, as drawings are: the same `Decision` for both tasks.
@Suite("Motion windows follow the decision rule")
struct MotionDecisionTests {
    /// One window of a phone that moves (not still): 300 samples at 50 Hz, 0.5 g vertical.
    let moving = MotionRecording(
        segments: [
            (0..<300).map { t in
                MotionSample(gravity: (0, 0, -1), rotationRate: (0, 0, 0), userAcceleration: (0, 0, 0.5 * sin(Double(t) / 4)))
            }
        ], segmentStarts: [0], rate: 50, notes: [])
    /// One window of a phone lying on a table.
    let lying = MotionRecording(
        segments: [
            (0..<300).map { t in
                MotionSample(gravity: (0, 0, -1), rotationRate: (0, 0, 0), userAcceleration: (0, 0, 0.001 * Double(t % 3)))
            }
        ], segmentStarts: [0], rate: 50, notes: [])

    /// `classify` computes a segment's window inputs a block of `MotionScratch.windowBlock` windows at a time; a
    /// window's answer depends on its own samples alone, so the windows of a recording cut out around the block
    /// boundary get the same bits as in the whole (labels, confidences, calibrated probabilities).
    @Test func windowsAcrossABlockBoundaryAreThoseOfTheirOwnSamples() throws {
        let recognizer = try MotionRecognizer.shipped()
        let (hop, window) = (recognizer.windowing.hop, recognizer.windowing.window)
        let windows = MotionScratch.windowBlock + 40
        let samples = (0..<((windows - 1) * hop + window)).map { t in
            let step = Double(t) / 50 * (1.6 + 0.6 * sin(Double(t) / 9000))  // a cadence that drifts, walking to running
            return MotionSample(
                gravity: (0, 0, -1), rotationRate: (0.1 * sin(step), 0, 0),
                userAcceleration: (0.2 * cos(step * 3), 0.1 * sin(step * 5), (0.3 + 0.4 * sin(Double(t) / 5000)) * sin(step * 2 * .pi)))
        }
        let whole = try recognizer.recognize(MotionRecording(segments: [samples], segmentStarts: [0], rate: 50, notes: []))
        #expect(whole.windows.count == windows)
        #expect(Set(whole.windows.map(\.label)).count > 1, "the drifting cadence should give more than one state: \(Set(whole.windows.map(\.label)))")
        let classes = whole.classes.count
        for first in [0, MotionScratch.windowBlock - 10] {
            let part = Array(samples[(first * hop)..<((first + 20 - 1) * hop + window)])
            let cut = try recognizer.recognize(MotionRecording(segments: [part], segmentStarts: [Double(first * hop) / 50], rate: 50, notes: []))
            #expect(cut.windows.count == 20)
            for (index, answer) in cut.windows.enumerated() {
                let same = whole.windows[first + index]
                #expect(
                    answer.label == same.label && answer.confidence == same.confidence && abs(answer.start - same.start) < 1e-9,
                    "window \(first + index): \(answer) in the cut, \(same) in the whole")
                #expect(
                    Array(cut.windowProbabilities[(index * classes)..<((index + 1) * classes)])
                        == Array(whole.windowProbabilities[((first + index) * classes)..<((first + index + 1) * classes)]),
                    "window \(first + index)")
            }
        }
    }

    @Test func aWindowUnderTheFloorIsUncertainAndSaysWhy() throws {
        let classifier = FixedClassifier(labels: ["walking", "running"], scores: [0.62, 0.38], decision: .legacy)
        let window = try #require(try classifier.classify(moving).windows.first)
        #expect(window.label == "walking")
        #expect(abs(window.confidence - 0.62) < 1e-6)
        #expect(window.uncertain)
        #expect(window.reason == "confidence 62% is below 70%; it might be running (38%)")
        // The uncertain window does not vote: the recording has no label.
        #expect(try classifier.classify(moving).label == DecisionRule.unknownLabel)
    }

    @Test func aWindowOverTheFloorIsTrusted() throws {
        let classifier = FixedClassifier(labels: ["walking", "running"], scores: [0.2, 0.8], decision: .legacy)
        let window = try #require(try classifier.classify(moving).windows.first)
        #expect(window.label == "running" && !window.uncertain && window.reason == nil)
    }

    @Test func theFloorAndTemperatureComeFromTheRule() throws {
        // A floor of 50% trusts 62%; a temperature of 2 flattens 0.8/0.2 to 2/3 against 1/3.
        let lenient = FixedClassifier(labels: ["walking", "running"], scores: [0.62, 0.38], decision: DecisionRule(uncertainBelow: 0.5))
        #expect(try #require(try lenient.classify(moving).windows.first).uncertain == false)
        let warm = FixedClassifier(labels: ["walking", "running"], scores: [0.8, 0.2], decision: DecisionRule(temperature: 2))
        let window = try #require(try warm.classify(moving).windows.first)
        #expect(abs(window.confidence - 2.0 / 3) < 1e-6, "\(window.confidence)")
        #expect(window.uncertain)
    }

    @Test func aRejectClassAnswersUnknown() throws {
        let classifier = FixedClassifier(
            labels: ["walking", "running", "other"], scores: [0.1, 0.1, 0.8],
            decision: .default(labels: ["walking", "running", "other"]))
        let window = try #require(try classifier.classify(moving).windows.first)
        #expect(window.label == DecisionRule.unknownLabel && !window.uncertain)
        #expect(window.reason == "it looks like none of the classes (80%); the nearest is walking")
    }

    @Test func stillKeepsItsOwnConfidence() throws {
        // The model is unsure, but the phone barely moves: still, by the stillness rule, and trusted.
        let classifier = FixedClassifier(labels: ["walking", "running"], scores: [0.55, 0.45], decision: .legacy)
        let window = try #require(try classifier.classify(lying).windows.first)
        #expect(window.label == MotionStillness.label && !window.uncertain && window.reason == nil && window.confidence > 0.9)
    }

    @Test func theStillnessRuleAnswersOnlyForTheBuiltInMovingStates() throws {
        // A model of the user's own labels answers a phone lying still with its own class, not `still`.
        let own = FixedClassifier(labels: ["walking", "sitting"], scores: [0.1, 0.9], decision: .legacy)
        let window = try #require(try own.classify(lying).windows.first)
        #expect(window.label == "sitting" && abs(window.confidence - 0.9) < 1e-6 && !window.uncertain)
        #expect(!own.appliesStillRule)
        // walking/running, with or without a reject class: the rule applies.
        let moving = FixedClassifier(
            labels: ["walking", "running", "other"], scores: [0.5, 0.3, 0.2], decision: .default(labels: ["walking", "running", "other"]))
        let movingLabel = try moving.classify(lying).windows.first?.label
        #expect(moving.appliesStillRule && movingLabel == MotionStillness.label)
        // A model with a `still` class of its own answers it itself.
        #expect(!FixedClassifier(labels: ["walking", "still"], scores: [0.2, 0.8], decision: .legacy).appliesStillRule)
    }

    @Test func aBarelyStillWindowIsHeldToTheFloor() throws {
        // A vertical standard deviation of 0.04 g, just under the still level of 0.05 g: still at about 61%, which
        // is under the rule's 70% floor, so the window is uncertain (and does not vote), as a model's answer would be.
        let amplitude = 0.04 * 2.0.squareRoot()
        let barely = MotionRecording(
            segments: [
                (0..<300).map { t in
                    MotionSample(gravity: (0, 0, -1), rotationRate: (0, 0, 0), userAcceleration: (0, 0, amplitude * sin(Double(t) / 4)))
                }
            ], segmentStarts: [0], rate: 50, notes: [])
        let classifier = FixedClassifier(labels: ["walking", "running"], scores: [0.9, 0.1], decision: .legacy)
        let answer = try classifier.classify(barely)
        let window = try #require(answer.windows.first)
        #expect(window.label == MotionStillness.label)
        #expect(window.confidence > 0.5 && window.confidence < 0.7, "\(window.confidence)")
        #expect(window.uncertain)
        #expect(
            window.reason?.hasPrefix("confidence 6") == true
                && window.reason?.hasSuffix("is below 70%: the phone barely moves, but about as much as when it is carried; the model says walking")
                    == true,
            "\(window.reason ?? "")")
        #expect(answer.label == DecisionRule.unknownLabel && answer.uncertain)
        // Under a floor of 50% the same window is trusted.
        let lenient = FixedClassifier(labels: ["walking", "running"], scores: [0.9, 0.1], decision: DecisionRule(uncertainBelow: 0.5))
        #expect(try lenient.classify(barely).windows.first?.uncertain == false)
    }

    @Test func theStreamDecidesAsTheRecording() throws {
        // The shipped model at a temperature of 100: every window's answer is flattened to about 50%, under the
        // 70% floor, so every moving window is uncertain, live and whole alike.
        let bytes = try reassemble(try #require(ShippedWeights.bytes(of: "motion-state.f32"))) { header in
            header["decision"] = ["temperature": 100.0, "uncertainBelow": 0.7]
        }
        let recognizer = try MotionRecognizer(weights: bytes, model: "strict")
        var stream = MotionStream(recognizer: recognizer)
        var windows: [MotionWindowPrediction] = []
        for (index, sample) in moving.segments[0].enumerated() {
            let streamSample = MotionStreamSample(time: Double(index) / 50, gravity: sample.gravity, userAcceleration: sample.userAcceleration)
            for case let .window(window) in try stream.append(streamSample) { windows.append(window) }
        }
        let streamed = try #require(windows.first)
        let whole = try #require(try recognizer.recognize(moving).windows.first)
        #expect(streamed.label == whole.label && streamed.uncertain && streamed.reason == whole.reason)
        #expect(whole.reason?.contains("is below 70%") == true, "\(whole.reason ?? "")")
    }

    /// The timeline as segments: consecutive windows of one label are one segment, a run of uncertain windows is an
    /// `uncertain` segment, and each segment ends where the next begins (the last at its window's end), whatever the
    /// windows' overlap (issue 33, item 7).
    @Test func segmentsFollowOneAnotherWithoutOverlap() {
        func window(_ start: Double, _ label: String, _ confidence: Double, uncertain: Bool = false) -> MotionWindowPrediction {
            MotionWindowPrediction(start: start, end: start + 5.12, label: label, confidence: confidence, uncertain: uncertain)
        }
        let answer = MotionAnswer(
            windows: [
                window(0, "walking", 0.9), window(1.28, "walking", 0.7), window(2.56, "running", 0.6, uncertain: true),
                window(3.84, "still", 0.8), window(5.12, "still", 1.0), window(6.4, "still", 0.9),
            ], model: "m")
        #expect(
            answer.segments == [
                MotionSegment(label: "walking", start: 0, end: 2.56, windows: 2, confidence: 0.8),
                MotionSegment(label: "uncertain", start: 2.56, end: 3.84, windows: 1, confidence: 0.6),
                MotionSegment(label: "still", start: 3.84, end: 6.4 + 5.12, windows: 3, confidence: 0.9),
            ])
        #expect(MotionAnswer(windows: [], model: "m").segments.isEmpty)
    }
}
