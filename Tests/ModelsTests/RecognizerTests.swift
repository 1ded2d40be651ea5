import DataFiles
import Foundation
import Testing
import WeightsFormat

@testable import Models

/// The examples folder (`Datasets/examples`).
private let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Datasets/examples")

/// What every recognizer promises, checked the same way for shapes and motion: `inputs` are good inputs (their
/// expected labels in `labels`), `bad` is one no model can see.
private func checkRecognizer<R: Recognizer>(_ recognizer: R, inputs: [R.Input], labels: [String], bad: R.Input, variant: String) throws {
    #expect(recognizer.model == variant && recognizer.attempts.isEmpty)
    #expect(R.shippedVariants.first == variant)
    let singles = try inputs.map { input throws(DataError) in try recognizer.recognize(input) }
    #expect(singles.map(\.label) == labels)
    for answer in singles {
        #expect(recognizer.answerLabels.contains(answer.label), "\(answer.label) is not among \(recognizer.answerLabels)")
        #expect(answer.confidence > 0.7 && answer.confidence <= 1 && !answer.uncertain && answer.reason == nil)
        #expect(answer.model == variant)
        let total = answer.probabilities.reduce(0) { $0 + $1.probability }
        #expect(abs(total - 1) < 1e-9, "probabilities sum to \(total)")
        #expect(answer.probabilities.allSatisfy { recognizer.answerLabels.contains($0.label) || $0.label == "other" })
    }
    #expect(throws: DataError.self) { try recognizer.recognize(bad) }
    // A batch answers each input as `recognize(_:)` does, the bad one with its error in its place.
    for threads in [0, 1, 2] {
        let batch = recognizer.recognize(batch: inputs + [bad] + inputs, threads: threads)
        #expect(batch.count == 2 * inputs.count + 1)
        for (index, expected) in (singles + [nil] + singles).enumerated() {
            switch (batch.answer(at: index), expected) {
            case let (.success(answer), expected?):
                #expect(answer.label == expected.label && answer.confidence == expected.confidence && answer.uncertain == expected.uncertain)
                #expect(answer.reason == expected.reason && answer.model == expected.model)
                #expect(answer.probabilities.map(\.label) == expected.probabilities.map(\.label))
                #expect(answer.probabilities.map(\.probability) == expected.probabilities.map(\.probability))
            case (.failure, nil): break
            case let (result, expected): Issue.record("input \(index): \(result) where \(String(describing: expected?.label)) was expected")
            }
        }
    }
}

@Suite("One recognizer design for shapes and motion")
struct RecognizerTests {
    @Test func theShapeRecognizerKeepsTheRecognizerPromises() throws {
        let names = ["circle", "triangle", "square", "star"]
        let drawings = try names.map { name throws(DataError) in try DrawingReader.read(examples.appendingPathComponent("\(name).csv").path) }
        let dot = Drawing(strokes: [[DrawingPoint(x: 1, y: 1)]])
        try checkRecognizer(try ShapeRecognizer.shipped(), inputs: drawings, labels: names, bad: dot, variant: "shape-classifier.int8")
    }

    @Test func theMotionRecognizerKeepsTheRecognizerPromises() throws {
        let names = ["walking", "running"]
        let recordings = try names.map { name throws(DataError) in
            try MotionRecordingReader.read(examples.appendingPathComponent("\(name).csv").path)
        }
        // Four seconds of a phone at rest: shorter than one window.
        var short = try #require(recordings.first)
        short.segments = [Array(short.segments[0].prefix(200))]
        short.segmentStarts = [0]
        short.source = "short"
        try checkRecognizer(try MotionRecognizer.shipped(), inputs: recordings, labels: names, bad: short, variant: "motion-state.int8")
    }

    @Test func aMotionAnswerSaysHowSureTheRecordingIs() throws {
        let windows = [
            MotionWindowPrediction(start: 0, end: 1, label: "walking", confidence: 0.8),
            MotionWindowPrediction(start: 1, end: 2, label: "walking", confidence: 0.9),
            MotionWindowPrediction(start: 2, end: 3, label: "running", confidence: 0.95),
            MotionWindowPrediction(start: 3, end: 4, label: "running", confidence: 0.6, uncertain: true, reason: "low"),
        ]
        let answer = MotionAnswer(windows: windows, model: "test")
        #expect(answer.label == "walking" && abs(answer.confidence - 0.85) < 1e-12)
        #expect(answer.probabilities.map(\.label) == ["walking", "running"])
        let shares: [Double] = [2.0 / 3, 1.0 / 3]
        #expect(answer.probabilities.map(\.probability) == shares)
        let none = MotionAnswer(windows: [windows[3]], model: "test")
        #expect(none.label == DecisionRule.unknownLabel && none.uncertain)
        #expect(none.confidence == 0 && none.probabilities.isEmpty)
    }

    @Test func aRecordingsErrorsNameWhereItCameFrom() throws {
        let path = examples.appendingPathComponent("walking.csv").path
        var recording = try MotionRecordingReader.read(path)
        #expect(recording.source == path)
        recording.segments = [Array(recording.segments[0].prefix(100))]
        recording.segmentStarts = [0]
        #expect(throws: DataError.self) { try MotionRecognizer.shipped().recognize(recording) }
        do {
            _ = try MotionRecognizer.shipped().recognize(recording)
        } catch let error as DataError {
            #expect(error.file == path)
        }
    }
}
