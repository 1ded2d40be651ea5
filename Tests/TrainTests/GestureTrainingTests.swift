import DataFiles
import Foundation
import Models
import Tensor
import Testing
import WeightsFormat

@testable import Train

/// Gesture templates (issue 53): a few drawings a class kept as templates, a network over their distances, and
/// every recognizer path reading the file.
@Suite struct GestureTrainingTests {
    /// A gesture through `corners` (unit box, y down) drawn by a hand that wobbles by `wobble` and is placed at a
    /// random offset and size; strokes split where `breaks` says.
    static func gesture(_ corners: [(Double, Double)], wobble: Double, generator: inout SeededGenerator, breaks: Set<Int> = []) -> Drawing {
        let scale = Double.random(in: 80...160, using: &generator), dx = Double.random(in: 0...300, using: &generator)
        var strokes: [[DrawingPoint]] = [[]]
        for (index, (a, b)) in zip(corners, corners.dropFirst()).enumerated() {
            if breaks.contains(index) { strokes.append([]) }
            for step in 0..<12 {
                let t = Double(step) / 12
                let x = a.0 + t * (b.0 - a.0) + Double.random(in: -wobble...wobble, using: &generator)
                let y = a.1 + t * (b.1 - a.1) + Double.random(in: -wobble...wobble, using: &generator)
                strokes[strokes.count - 1].append(DrawingPoint(x: dx + scale * x, y: 50 + scale * y))
            }
        }
        strokes[strokes.count - 1].append(DrawingPoint(x: dx + scale * corners[corners.count - 1].0, y: 50 + scale * corners[corners.count - 1].1))
        return Drawing(strokes: strokes)
    }

    /// Caret and v are the same points upside down; left and right brackets are mirror images; the H is drawn in
    /// three strokes.
    static let gestures: [String: [(Double, Double)]] = [
        "caret": [(0, 1), (0.5, 0), (1, 1)],
        "v": [(0, 0), (0.5, 1), (1, 0)],
        "left_bracket": [(0.6, 0), (0, 0), (0, 1), (0.6, 1)],
        "right_bracket": [(0, 0), (0.6, 0), (0.6, 1), (0, 1)],
        "zigzag": [(0, 0), (1, 0.2), (0, 0.5), (1, 0.7), (0, 1)],
    ]

    static func drawings(_ count: Int, seed: UInt64) -> [(id: String, label: String, drawing: Drawing)] {
        var generator = SeededGenerator(seed: seed)
        return gestures.keys.sorted().flatMap { label in
            (0..<count).map { index in
                (id: "\(label)-\(index)", label: label, drawing: gesture(gestures[label] ?? [], wobble: 0.03, generator: &generator))
            }
        }
    }

    static func recognizer(_ result: GestureTraining.Result) throws -> ShapeRecognizer {
        try ShapeRecognizer(model: try ModelFile(bytes: result.file.encoded(), path: "gestures"), named: "gestures")
    }

    @Test(arguments: [1, 3, 5])
    func aFewDrawingsAClassRecognizeTheNextOnesThroughTheFile(count: Int) throws {
        let result = try GestureTraining.train(Self.drawings(count, seed: 7), name: "gestures", dataset: nil, checksum: nil, file: "train.csv")
        #expect(result.file.labels == Self.gestures.keys.sorted() + ["other"])
        #expect(result.file.preprocessing["kind"] == .string("gesture-templates"))
        let recognizer = try Self.recognizer(result)
        var wrong: [String] = [], uncertain = 0
        let tests = Self.drawings(6, seed: 99)
        for item in tests {
            let answer = try recognizer.recognize(item.drawing)
            if answer.label != item.label { wrong.append("\(item.id): \(answer.label) \(answer.confidence)") }
            if answer.uncertain { uncertain += 1 }
        }
        #expect(wrong.isEmpty, "\(wrong)")
        // Drawings near the edge of what the user drew are said to be uncertain: a few, not many.
        #expect(uncertain * 10 <= tests.count, "\(uncertain) of \(tests.count) uncertain")
        // With one drawing a class nothing is left out: the default temperature and reject distance.
        #expect((count == 1) == (result.temperature == GestureTraining.defaultTemperature))
    }

    @Test func aDrawingThatIsNoneOfTheGesturesIsNotGivenOne() throws {
        let result = try GestureTraining.train(Self.drawings(5, seed: 7), name: "gestures", dataset: nil, checksum: nil, file: "train.csv")
        let recognizer = try Self.recognizer(result)
        var generator = SeededGenerator(seed: 3)
        // A spiral and a circle are far from every template.
        let spiral = Drawing(strokes: [
            (0..<80).map { i in
                let t = Double(i) / 10
                return DrawingPoint(x: 200 + 8 * t * cos(t), y: 200 + 8 * t * sin(t))
            }
        ])
        let circle = Drawing(strokes: [(0...40).map { i in DrawingPoint(x: 100 + 50 * cos(Double(i) / 6.4), y: 100 + 50 * sin(Double(i) / 6.4)) }])
        for drawing in [spiral, circle, Self.gesture([(0, 0), (1, 1), (0, 1), (1, 0)], wobble: 0.02, generator: &generator)] {
            let answer = try recognizer.recognize(drawing)
            #expect(answer.label == "unknown" || answer.uncertain, "\(answer.label) \(answer.confidence)")
        }
    }

    @Test func theSameDrawingsGiveTheSameFile() throws {
        let a = try GestureTraining.train(Self.drawings(3, seed: 7), name: "g", dataset: nil, checksum: nil, file: "t.csv")
        let b = try GestureTraining.train(Self.drawings(3, seed: 7), name: "g", dataset: nil, checksum: nil, file: "t.csv")
        #expect(a.file.encoded() == b.file.encoded())
    }

    @Test func theDefaultChoosesTemplatesForFewDrawingsOnly() {
        #expect(GestureTraining.applies(toCounts: ["a": 1, "b": 10]))
        #expect(GestureTraining.applies(toCounts: ["a": 5, "b": 5, "other": 400]))
        #expect(!GestureTraining.applies(toCounts: ["a": 5, "b": 11]))
        #expect(!GestureTraining.applies(toCounts: ["a": 5, "other": 5]))
    }

    @Test func aHeaderThatDescribesNoTemplatesIsRefusedWithTheReason() throws {
        let result = try GestureTraining.train(Self.drawings(2, seed: 7), name: "g", dataset: nil, checksum: nil, file: "t.csv")
        let good = result.file.preprocessing
        #expect(throws: Never.self) { try GestureTemplates(parameters: good) }
        func problem(_ change: (inout [String: JSONValue]) -> Void) -> String {
            var parameters = good
            change(&parameters)
            do {
                _ = try GestureTemplates(parameters: parameters)
                return "accepted"
            } catch {
                return error.message
            }
        }
        #expect(problem { $0["templates"] = .array([]) }.contains("needs 1 to 1000 templates"))
        #expect(problem { $0["classes"] = .number(9) }.contains("has no template"))
        #expect(problem { $0["cloudScale"] = .number(0) }.contains("scales must be finite and above 0"))
        #expect(problem { $0["sequencePoints"] = .number(8) }.contains("16 path points"))
        #expect(
            problem { $0["templates"] = .array([.object(["class": .number(0), "sequence": .array([.number(1)]), "cloud": .array([])])]) }.contains(
                "32 and 64 are needed"))
        // A file with a broken template is refused by the recognizer, naming the problem.
        var file = result.file
        file.preprocessing["classes"] = .number(1)
        #expect(throws: DataError.self) { try ShapeRecognizer(model: file, named: "g") }
    }

    @Test func aDrawingsNearnessAndClassDistancesAreWhatTheNetworkReads() throws {
        let result = try GestureTraining.train(Self.drawings(3, seed: 7), name: "g", dataset: nil, checksum: nil, file: "t.csv")
        guard case let .templates(templates) = try ShapePreprocessing(parameters: result.file.preprocessing) else {
            Issue.record("not templates")
            return
        }
        let item = Self.drawings(1, seed: 42)[0]
        var input = [Float](repeating: -1, count: templates.classCount + 1)
        input.withUnsafeMutableBufferPointer { templates.input(for: item.drawing, into: $0) }
        // The nearest class is at 0, the others beyond; the nearness is finite and at most the clamp.
        #expect(input.prefix(templates.classCount).min() == 0)
        #expect(input.allSatisfy { $0 >= 0 && $0 <= GestureTemplates.largestInput })
        let nearest = input.prefix(templates.classCount).firstIndex(of: 0)
        #expect(nearest.map { result.file.labels[$0] } == item.label)
    }
}
