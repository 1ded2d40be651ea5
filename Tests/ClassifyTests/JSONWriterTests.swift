import Foundation
import Testing
import WeightsFormat

@testable import Models
@testable import classify

/// `JSONWriter` against its twin, `jsonText` (`JSONEncoder` with sorted keys, then DEL and C1 escaped), byte for
/// byte: numbers of every magnitude, strings with every escape, and whole answers — `ShapeJSON` of real
/// recognitions (every fitted outline, unknown, uncertain, with input names and failed attempts) and `FollowJSON`
/// of every event.
@Suite("JSON writer equals JSONEncoder")
struct JSONWriterTests {
    /// A value in an array and in an object, both ways.
    func expectSameNumber(_ value: Double, sourceLocation: SourceLocation = #_sourceLocation) {
        var writer = JSONWriter()
        writer.beginArray()
        writer.number(value)
        writer.number(1.5)
        writer.endArray()
        #expect(writer.text == jsonText([value, 1.5]), "\(value) (bits \(value.bitPattern))", sourceLocation: sourceLocation)
    }

    @Test func numbers() {
        var generator = SystemRandomNumberGenerator()
        for exponent in -330...310 {
            let scale = pow(10, Double(exponent))
            for _ in 0..<8 { expectSameNumber(Double.random(in: 1..<10, using: &generator) * scale) }
            expectSameNumber(scale)
            expectSameNumber(-scale)
            expectSameNumber(scale.nextUp)
        }
        for whole in [0.0, 1, 2, 9, 10, 99, 100, 123_456_789, 1e14, 1e15 - 1, 1e15, 1e15 + 1, 1e16, 2e16, 9_007_199_254_740_992] {
            for value in [whole, -whole, whole + 0.5, (whole + 0.001).nextUp] { expectSameNumber(value) }
        }
        for value in [-0.0, 0.1, 0.2, 1 / 3, 5e-324, .greatestFiniteMagnitude, 1e-5, 0.0001, 0.00001, 2.5e-7, 718.8] { expectSameNumber(value) }
        for _ in 0..<20000 { expectSameNumber(Double(bitPattern: UInt64.random(in: 0..<0x7FF0_0000_0000_0000, using: &generator))) }
        for _ in 0..<5000 { expectSameNumber((Double.random(in: -2000...2000, using: &generator) * 1000).rounded() / 1000) }
    }

    @Test func notFiniteGivesWhatJSONTextGives() {
        for value in [Double.nan, .infinity, -.infinity] {
            var writer = JSONWriter()
            writer.beginArray()
            writer.number(value)
            writer.endArray()
            #expect(writer.text == jsonText([value]))
            #expect(writer.text == "{}")
        }
    }

    @Test func strings() {
        var every = ""
        for scalar in (0..<0x250).compactMap(Unicode.Scalar.init) { every.unicodeScalars.append(scalar) }
        let samples = [
            "", "plain", every, "quote \" backslash \\ slash /", "\u{1b}[31mred\u{1b}[0m", "é ü ß 中文 😀 \u{2028}\u{2029}",
            "\u{7f}\u{80}\u{85}\u{9f}\u{a0}\u{c2}", "ends with C1 \u{9f}", "\u{c2}\u{c3}", "tab\tnew\nline\r\u{8}\u{c}",
        ]
        for sample in samples {
            var writer = JSONWriter()
            writer.beginObject()
            writer.member("a", sample)
            writer.key(sample)
            writer.bool(true)
            writer.endObject()
            let expected = sample == "a" ? nil : jsonText(["a": sample, sample: "true"]).replacingOccurrences(of: ":\"true\"", with: ":true")
            if sample < "a" {
                // jsonText sorts the keys: put `sample`'s member first to compare.
                var first = JSONWriter()
                first.beginObject()
                first.key(sample)
                first.bool(true)
                first.member("a", sample)
                first.endObject()
                #expect(first.text == expected, "\(sample.unicodeScalars.map { $0.value })")
            } else {
                #expect(writer.text == expected, "\(sample.unicodeScalars.map { $0.value })")
            }
        }
    }

    /// Real answers: the generator's drawings (every class, so every fitted outline), scribbles (unknown), and
    /// the same answers with an input name and failed attempts.
    @Test func shapeAnswers() throws {
        let recognizer = try ShapeRecognizer.shipped()
        let csv = TestDatasets.shapes(count: 60, seed: 11)
        var drawings: [String: [[DrawingPoint]]] = [:]
        var order: [String] = []
        for line in csv.split(separator: "\n").dropFirst() {
            let f = line.split(separator: ",")
            let (name, stroke) = (String(f[0]), Int(f[2]) ?? 0)
            if drawings[name] == nil {
                order.append(name)
                drawings[name] = []
            }
            while drawings[name, default: []].count <= stroke { drawings[name, default: []].append([]) }
            drawings[name, default: []][stroke].append(DrawingPoint(x: Double(f[3]) ?? 0, y: Double(f[4]) ?? 0, t: Double(f[5])))
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20 {
            let scribble = (0..<30).map { _ in
                DrawingPoint(x: Double.random(in: 0...300, using: &generator), y: Double.random(in: 0...300, using: &generator))
            }
            let name = "scribble\(order.count)"
            order.append(name)
            drawings[name] = [scribble]
        }
        var fittedKinds = Set<String>(), labels = Set<String>()
        let attempts = [ChainAttempt(model: "shape-classifier.\u{1b}int8", error: "the file \"x\" is\ncorrupt", kind: .permanent)]
        for name in order {
            let drawing = Drawing(strokes: drawings[name] ?? [])
            let answer = try recognizer.recognize(drawing)
            let fitted = answer.fitted(to: drawing)
            for (input, weights) in [(nil, "built-in"), ("file.csv#\(name)", nil), ("dir/ü \"q\".csv", "/tmp/a b.weights")] as [(String?, String?)] {
                let value = ShapeJSON(answer, fitted: fitted, input: input, weights: weights)
                #expect(value.text == jsonText(value), "\(name)")
            }
            let decision = Decision(
                labels: answer.probabilities.map(\.label), probabilities: answer.probabilities.map(\.probability),
                rule: DecisionRule(rejectLabel: "other"))
            let failedFirst = ShapeAnswer(
                decision, label: answer.label, confidence: answer.confidence, uncertain: !answer.uncertain, reason: answer.reason,
                model: answer.model, attempts: attempts, view: answer.view)
            let value = ShapeJSON(failedFirst, fitted: fitted, weights: "w")
            #expect(value.text == jsonText(value), "\(name) with attempts")
            labels.insert(answer.label)
            if let fitted = value.fitted { fittedKinds.insert(fitted.shape) }
        }
        #expect(fittedKinds == ["ellipse", "rectangle", "triangle", "star"], "\(fittedKinds)")
        #expect(labels.contains("unknown") && labels.count >= 4, "\(labels)")
    }

    @Test func followEvents() {
        var generator = SystemRandomNumberGenerator()
        func time() -> Double { Double.random(in: 0...100_000, using: &generator) }
        for _ in 0..<2000 {
            let (from, to) = (["walking", nil, "still", "r\u{85}n"].randomElement(using: &generator) ?? nil, "running")
            let confidence = Double.random(in: 0...1, using: &generator)
            for weights in [nil, "built-in", "/a/b.weights"] {
                let values = [
                    FollowJSON(
                        change: MotionStateChange(from: from, to: to, time: time(), since: time(), confidence: confidence), model: "motion-state",
                        weights: weights),
                    FollowJSON(pause: MotionPause(time: time(), state: from), model: "motion-state.int8", weights: weights),
                    FollowJSON(
                        resumption: MotionResumption(time: time(), since: time(), pausedAt: time(), from: from, to: to, confidence: confidence),
                        model: "rule", weights: weights),
                ]
                for value in values { #expect(value.text == jsonText(value)) }
            }
        }
    }
}
