import DataFiles
import WeightsFormat

/// A recognizer's figures on a labelled set, counted one answer at a time: what `classify evaluate` prints, for any
/// task (an app's own too). The rows are the labels the model can answer, and `unknown` once an item is labelled
/// `other` (none of the classes) or an answer is `unknown`.
///
/// ```swift
/// var evaluation = Evaluation(answerLabels: recognizer.answerLabels)
/// for (label, input) in labelled {
///     if let refusal = evaluation.refusal(of: label, item: "signal 3", line: 4, file: "test.csv", model: recognizer.model) { throw refusal }
///     let answer = try recognizer.recognize(input)
///     evaluation.count(truth: label, answer: answer.label, confidence: answer.confidence, uncertain: answer.uncertain)
/// }
/// print(evaluation.text(unit: "signals"))
/// ```
public struct Evaluation: Sendable {
    /// The report's rows: the labels the model can answer, then any label an answer or `other` added.
    public private(set) var labels: [String]
    /// The labels a dataset may use besides `other`.
    public let known: [String]
    /// Each counted answer's true row, answered row, confidence and whether it was uncertain, in order.
    public private(set) var truth: [Int] = [], predicted: [Int] = [], confidences: [Double] = [], uncertain: [Bool] = []

    /// No answers yet, of a recognizer that answers `answerLabels` (its classes, and `unknown` when it can).
    public init(answerLabels: [String]) {
        labels = answerLabels
        known = answerLabels.filter { $0 != DecisionRule.unknownLabel }
    }

    /// The row of an answer's label, added when it is not there yet.
    mutating func index(of label: String) -> Int {
        if let index = labels.firstIndex(of: label) { return index }
        labels.append(label)
        return labels.count - 1
    }

    /// Why a dataset's `label` (of `item`, at `line` of `file`) cannot be scored: one `model` does not know, and is
    /// not `other`; `nil` when it can.
    public func refusal(of label: String, item: String, line: Int, file: String, model: String) -> DataError? {
        guard label != DecisionRule.otherLabel && !known.contains(label) else { return nil }
        return DataError(
            file: file, line: line,
            message:
                "\(item) has label '\(label)', which \(model) does not know (it knows \(known.joined(separator: ", ")), and other for none of them)")
    }

    /// Counts one answer (`answer`, its confidence and uncertainty) of an item labelled `truth` (`other` is the
    /// `unknown` row). `truth` must be a label `refusal(of:…)` accepts (a precondition: ask it first).
    public mutating func count(truth label: String, answer: String, confidence: Double, uncertain: Bool) {
        precondition(
            label == DecisionRule.otherLabel || known.contains(label), "Evaluation.count: truth '\(label)' is not one of \(known) or other")
        truth.append(index(of: label == DecisionRule.otherLabel ? DecisionRule.unknownLabel : label))
        predicted.append(index(of: answer))
        confidences.append(confidence)
        self.uncertain.append(uncertain)
    }

    /// Accuracy, the confusion matrix and each class's precision and recall.
    public var report: ClassificationReport { ClassificationReport(labels: labels, truth: truth, predicted: predicted) }

    /// The answers grouped by confidence, with the share of each group that was right.
    public var reliability: ReliabilityTable { ReliabilityTable(confidences: confidences, correct: zip(truth, predicted).map { $0 == $1 }) }

    /// How the reject class decided; `nil` when no row is `unknown`.
    public var rejects: RejectRates? { RejectRates(labels: labels, truth: truth, predicted: predicted, uncertain: uncertain) }

    /// How many answers were uncertain.
    public var uncertainCount: Int { uncertain.count(where: { $0 }) }

    /// The figures as `classify evaluate` prints them under its heading: the report, the uncertain count, the reject
    /// rates and the reliability table; `unit` names what was answered ("answers", "windows").
    public func text(unit: String) -> String {
        var lines = [report.text]
        lines.append("uncertain \(uncertainCount) of \(truth.count) \(unit) (\(percent(Double(uncertainCount) / Double(max(1, truth.count)))))")
        if let rejects { lines.append(rejects.text(unit: unit)) }
        lines.append(reliability.text)
        return lines.joined(separator: "\n")
    }
}

/// The two sides of "one of the classes, or none" on a labelled file, for answers that can be `unknown`: of the
/// items labelled with a class, how many were answered right and how many `unknown` (a real shape turned away); of
/// the items labelled `other`, how many were flagged (`unknown`, or uncertain); and of all, how many were
/// confidently wrong (a wrong label, or `unknown` for an item of the classes, and not uncertain). `classify evaluate
/// --json` gives the counts under `reject`.
public struct RejectRates: Sendable, Encodable, Equatable {
    /// Items labelled with one of the classes; of them, answered with their label, and answered `unknown`.
    public let classes: Int, right: Int, unknown: Int
    /// Items labelled `other`; of them, answered `unknown` or uncertain.
    public let other: Int, flagged: Int
    /// Items answered with a wrong label (`unknown` for an item of the classes) and not uncertain, of `count`.
    public let confidentlyWrong: Int, count: Int

    /// The counts as they are.
    public init(classes: Int, right: Int, unknown: Int, other: Int, flagged: Int, confidentlyWrong: Int, count: Int) {
        (self.classes, self.right, self.unknown, self.other, self.flagged) = (classes, right, unknown, other, flagged)
        (self.confidentlyWrong, self.count) = (confidentlyWrong, count)
    }

    /// The rates of `predicted` against `truth` (rows of `labels`), with each answer's uncertain flag; `nil`
    /// when no row is `unknown` (a model that cannot answer it, on a file without `other`).
    public init?(labels: [String], truth: [Int], predicted: [Int], uncertain: [Bool]) {
        precondition(
            truth.count == predicted.count && truth.count == uncertain.count,
            "RejectRates: \(truth.count) truths, \(predicted.count) answers, \(uncertain.count) flags")
        guard let unknownRow = labels.firstIndex(of: DecisionRule.unknownLabel) else { return nil }
        var (classes, right, unknown, other, flagged, wrong) = (0, 0, 0, 0, 0, 0)
        for ((said, answered), unsure) in zip(zip(truth, predicted), uncertain) {
            if said == unknownRow {
                other += 1
                if answered == unknownRow || unsure { flagged += 1 }
            } else {
                classes += 1
                if answered == said { right += 1 }
                if answered == unknownRow { unknown += 1 }
            }
            if answered != said && !unsure { wrong += 1 }
        }
        (self.classes, self.right, self.unknown, self.other, self.flagged) = (classes, right, unknown, other, flagged)
        (confidentlyWrong, count) = (wrong, truth.count)
    }

    /// Up to three lines: the classes' side, the other side (each when the file has such items), confidently wrong.
    public func text(unit: String) -> String {
        func share(_ part: Int, _ whole: Int) -> String { "\(percent(Double(part) / Double(max(1, whole)))) (\(part) of \(whole) \(unit))" }
        var lines: [String] = []
        if classes > 0 { lines.append("of the classes  right \(share(right, classes)); unknown \(share(unknown, classes))") }
        if other > 0 { lines.append("of other        flagged \(share(flagged, other)): unknown or uncertain") }
        lines.append("confidently wrong  \(share(confidentlyWrong, count)): a wrong label or unknown, not uncertain")
        return lines.joined(separator: "\n")
    }
}
