import DataFiles
import Testing
import Train

@Suite("evaluate: both sides of the reject decision")
struct RejectRatesTests {
    /// Counted by hand: three items of the classes (one right, one turned away as `unknown`, one right though
    /// uncertain) and three `other` (one `unknown`, one uncertain, one confidently a class).
    @Test func theCountsAreEachSidesOwn() throws {
        let rates = try #require(
            RejectRates(
                labels: ["circle", "square", "unknown"], truth: [0, 0, 1, 2, 2, 2], predicted: [0, 2, 1, 2, 0, 1],
                uncertain: [false, false, true, false, true, false]))
        #expect(rates == RejectRates(classes: 3, right: 2, unknown: 1, other: 3, flagged: 2, confidentlyWrong: 2, count: 6))
        #expect(
            rates.text(unit: "answers") == """
                of the classes  right 66.67% (2 of 3 answers); unknown 33.33% (1 of 3 answers)
                of other        flagged 66.67% (2 of 3 answers): unknown or uncertain
                confidently wrong  33.33% (2 of 6 answers): a wrong label or unknown, not uncertain
                """)
        // A model that cannot answer `unknown`, on a file without `other`: no such section.
        #expect(RejectRates(labels: ["circle", "square"], truth: [0, 1], predicted: [1, 1], uncertain: [false, false]) == nil)
    }
}

@Suite("Evaluation: the tallies every task's report is made of")
struct EvaluationTests {
    /// `other` counts in the `unknown` row, an answer's new label adds a row, and the text holds each part once.
    @Test func otherIsTheUnknownRowAndNewLabelsAddRows() {
        var evaluation = Evaluation(answerLabels: ["circle", "square", "unknown"])
        #expect(evaluation.known == ["circle", "square"])
        evaluation.count(truth: "circle", answer: "circle", confidence: 0.9, uncertain: false)
        evaluation.count(truth: "other", answer: "unknown", confidence: 0.6, uncertain: false)
        evaluation.count(truth: "square", answer: "blob", confidence: 0.4, uncertain: true)
        #expect(evaluation.labels == ["circle", "square", "unknown", "blob"])
        #expect(evaluation.truth == [0, 2, 1] && evaluation.predicted == [0, 2, 3] && evaluation.uncertainCount == 1)
        #expect(evaluation.report.accuracy == 2.0 / 3)
        #expect(evaluation.rejects == RejectRates(classes: 2, right: 1, unknown: 0, other: 1, flagged: 1, confidentlyWrong: 0, count: 3))
        let text = evaluation.text(unit: "answers")
        #expect(text.hasPrefix(evaluation.report.text + "\nuncertain 1 of 3 answers (33.33%)\n"), "\(text)")
        #expect(text.hasSuffix(evaluation.reliability.text), "\(text)")
        #expect(evaluation.refusal(of: "other", item: "x", line: 2, file: "f", model: "m") == nil)
        #expect(
            evaluation.refusal(of: "star", item: "drawing 'a'", line: 2, file: "f.csv", model: "m")?.description
                == "f.csv:2: drawing 'a' has label 'star', which m does not know (it knows circle, square, and other for none of them)")
    }
}
