import ArgumentParser
import DataFiles
import Datasets
import Foundation
import Models
import Synchronization
import Tensor
import Train
import WeightsFormat

/// `classify evaluate shape|motion --data TEST.csv [--weights W] [--json]`
struct Evaluate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evaluate",
        abstract: "Measure a recognizer's accuracy on a labelled CSV dataset.",
        discussion: """
            Shapes and recordings go through the same recognizer as `classify shape` and `classify motion`: \
            the same weights lookup and fallback chain, the same checks and rules, so the figures are what \
            classify answers. For shapes: \
            calibration and the unknown and uncertain rules apply; a drawing labelled `other` (none of the classes) is right when it is \
            reported unknown; the confusion matrix has an `unknown` column when the model can answer it (and a row, for `other` drawings or sessions). \
            The report adds how many answers were uncertain and a reliability table: answers grouped by \
            confidence, with the share of each group that was right.

            Prints the accuracy, the confusion matrix (rows: true, columns: predicted) and each class's precision \
            and recall; --json prints them as one object with the keys accuracy, count, labels, confusion, \
            perClass, model, uncertain, reliability and failed. A label the model does not know is an error (exit 65) \
            naming its line. A drawing or session that cannot be used (a bad row, too few points) is a warning \
            naming its file, line and id; it is left out of the figures, the run goes on, and the exit is 65.

            Example: classify evaluate shape --data my-held-out.csv --weights my-models/shape-classifier.int8.weights
            """
    )

    @Argument(help: "What to evaluate: shape or motion.")
    var task: RecognitionTask

    @Option(help: "The labelled dataset (CSV).")
    var data: String

    @OptionGroup var chain: ChainOptions

    @Flag(help: "Evaluate the non-ML recognizer instead of a weights file: geometric (shape) or cadence (motion).")
    var rule = false

    var json: Bool { chain.json }

    func validate() throws {
        if rule && chain.weights != nil { throw ValidationError("--rule and --weights exclude each other: the rule needs no weights") }
        if rule && (chain.fallback || chain.noFallback) { throw ValidationError("--rule needs no chain: leave out --fallback and --no-fallback") }
        if chain.fallback && chain.explicitSource == nil {
            // The flag's old meaning here: evaluating the non-ML recognizer, now --rule.
            throw ValidationError(
                "--fallback only matters with --weights or $CLASSIFY_WEIGHTS (it lets a named model fall back); to evaluate the non-ML recognizer, use --rule"
            )
        }
    }

    func run() throws {
        switch task {
        case .shape: try evaluateShapes()
        case .motion: try evaluateMotion()
        }
    }

    /// Shapes: every drawing through the recognizer's `Worker`, the path `classify shape` answers with, read by the
    /// one dataset reader. A drawing that cannot be used (a bad row, too few points, an id that appears again) is
    /// one `warning:` line naming the file, line and drawing, and is left out of the figures; the run goes on and
    /// exits 65 after the report.
    func evaluateShapes() throws {
        let recognizer =
            rule ? ShapeRecognizer.ruleOnly : try chain.load(ShapeRecognizer.self, for: [data])
        var rows = ReportRows(recognizer.answerLabels)
        let classes = recognizer.classes
        let items: [DatasetItem<Result<CompactShapeAnswer, DataError>>]
        do {
            // The reader reports an id whose rows are scattered as a failed item of each run.
            items = try datasetDrawings(data, threads: chain.jobs ?? Parallel.defaultThreads, checkLabels: true) {
                let worker = ShapeRecognizer.Worker(recognizer)
                return { record in
                    record.drawing.flatMap { drawing in
                        Result { () throws(DataError) in try worker.recognize(drawing) }.mapError { error in
                            DataError(
                                file: data, line: record.lines.lowerBound,
                                message: "drawing '\(record.id)' (lines \(record.lines.lowerBound)–\(record.lines.upperBound)): \(error.message)")
                        }
                    }
                }
            }
        } catch {
            throw failure(error)
        }
        var failures = EvaluationFailures()
        for item in items {
            let answer: CompactShapeAnswer
            switch item.value {
            case .success(let value): answer = value
            case .failure(let error):
                failures.add(error)
                continue
            }
            if let refusal = rows.refusal(
                of: item.label, item: "drawing '\(item.id)'", line: item.lines.lowerBound, data: data, model: recognizer.model)
            {
                throw failure(refusal)
            }
            rows.count(
                truth: rows.index(ofTruth: item.label), label: answer.label(classes), confidence: answer.confidence, uncertain: answer.uncertain)
        }
        showReport(
            rows, model: recognizer.model,
            source: rule ? (recognizer.model, nil) : chain.describe(recognizer.model, among: chain.variants(of: .shape)),
            heading: "\(rows.truth.count) drawings", unit: "answers", failures: failures, items: "drawings")
        try failures.exit()
    }

    /// Prints the report of `predicted` against `truth`, with the uncertain count (`uncertain`: each answer's
    /// flag), the reject decision's rates (`RejectRates`) and the reliability table: one JSON object, or text
    /// under a heading.
    func showReport(
        _ rows: ReportRows, model: String, source: (text: String, weights: String?), heading: String, unit: String,
        failures: EvaluationFailures, items: String
    ) {
        let (labels, truth, predicted, confidences, uncertain) = (rows.labels, rows.truth, rows.predicted, rows.confidences, rows.uncertain)
        let report = ClassificationReport(labels: labels, truth: truth, predicted: predicted)
        let reliability = ReliabilityTable(confidences: confidences, correct: zip(truth, predicted).map { $0 == $1 })
        let rejects = RejectRates(labels: labels, truth: truth, predicted: predicted, uncertain: uncertain)
        let uncertainCount = uncertain.count(where: { $0 })
        if json {
            print(
                EvaluationJSON(
                    report: report, model: model, weights: source.weights, uncertain: uncertainCount, reject: rejects,
                    reliability: reliability, failed: failures.count
                )
                .text)
        } else {
            print("\(source.text) on \(data): \(heading)")
            print(report.text)
            print("uncertain \(uncertainCount) of \(truth.count) \(unit) (\(percent(Double(uncertainCount) / Double(max(1, truth.count)))))")
            if let rejects { print(rejects.text(unit: unit)) }
            print(reliability.text)
            if failures.count > 0 { print("failed \(failures.count) \(items), not in the figures above (each named on stderr)") }
        }
    }
}

extension Evaluate {
    /// Motion: every window of every session through `MotionRecognizer`, the path `classify motion` answers with;
    /// a window may be `still` (its own column). A session that cannot be used is reported and left out, as a
    /// drawing is for shapes.
    func evaluateMotion() throws {
        let recognizer =
            rule ? MotionRecognizer.ruleOnly : try chain.load(MotionRecognizer.self, for: [data])
        var rows = ReportRows(recognizer.answerLabels)
        var sessionCount = 0
        var failures = EvaluationFailures()
        do {
            let sessions = try MotionDataset.sessions(data, rate: recognizer.windowing.rate, window: recognizer.windowing.window)
            sessionCount = sessions.count
            for session in sessions {
                let label = session.label ?? ""
                if let refusal = rows.refusal(
                    of: label, item: "session '\(session.id)'", line: session.lines.lowerBound, data: data, model: recognizer.model)
                {
                    throw refusal
                }
                let truthIndex = rows.index(ofTruth: label)
                let timeline: MotionAnswer
                do throws(DataError) {
                    timeline = try recognizer.recognize(try session.recording.get())
                } catch {
                    failures.add(
                        error.line == nil
                            ? DataError(
                                file: data, line: session.lines.lowerBound,
                                message: "session '\(session.id)' "
                                    + "(lines \(session.lines.lowerBound)–\(session.lines.upperBound)): \(error.message)")
                            : error)
                    continue
                }
                for window in timeline.windows {
                    rows.count(truth: truthIndex, label: window.label, confidence: window.confidence, uncertain: window.uncertain)
                }
            }
        } catch {
            throw failure(error)
        }
        showReport(
            rows, model: recognizer.model,
            source: rule ? (recognizer.model, nil) : chain.describe(recognizer.model, among: chain.variants(of: .motion)),
            heading: "\(sessionCount - failures.count) sessions, \(rows.truth.count) windows", unit: "windows",
            failures: failures, items: "sessions")
        try failures.exit()
    }
}

/// The items of an evaluation that could not be used: each one `warning:` line as it is found, and exit 65 (or
/// the first failure's code) after the report.
struct EvaluationFailures {
    private(set) var count = 0
    private var status: Int32 = 0

    mutating func add(_ error: DataError) {
        reportWarning("\(error.description); not counted")
        count += 1
        if status == 0 { status = ExitStatus.code(for: error) }
    }

    /// One `error:` line and the exit, when any item failed.
    func exit() throws {
        guard count > 0 else { return }
        reportError("\(count) item\(count == 1 ? "" : "s") could not be used; each is named above, the figures are of the rest")
        throw ExitCode(status)
    }
}

/// The stable JSON of `classify evaluate`.
struct EvaluationJSON: Encodable {
    let accuracy: Double
    let count: Int
    let labels: [String]
    let confusion: [[Int]]
    let perClass: [String: ClassificationReport.ClassScores]
    let model: String
    /// The weights file's path, or `built-in`; absent for the rule that needs none.
    let weights: String?
    let uncertain: Int?
    /// How the reject class decided (`RejectRates`), when the answers can be `unknown`.
    let reject: RejectRates?
    let reliability: ReliabilityTable?
    let failed: Int?

    init(
        report: ClassificationReport, model: String, weights: String? = nil, uncertain: Int? = nil, reject: RejectRates? = nil,
        reliability: ReliabilityTable? = nil, failed: Int? = nil
    ) {
        self.weights = weights
        self.failed = failed
        self.uncertain = uncertain
        self.reject = reject
        self.reliability = reliability
        accuracy = report.accuracy
        count = report.count
        labels = report.labels
        confusion = report.confusion
        perClass = report.perClass
        self.model = modelName(model)
    }

    var text: String { jsonText(self) }
}

/// The two sides of "one of the classes, or none" on a labelled file, for answers that can be `unknown`: of the
/// items labelled with a class, how many were answered right and how many `unknown` (a real shape turned away); of
/// the items labelled `other`, how many were flagged (`unknown`, or uncertain); and of all, how many were
/// confidently wrong (a wrong label, or `unknown` for an item of the classes, and not uncertain). `--json` gives
/// the counts under `reject`.
struct RejectRates: Encodable, Equatable {
    /// Items labelled with one of the classes; of them, answered with their label, and answered `unknown`.
    let classes: Int, right: Int, unknown: Int
    /// Items labelled `other`; of them, answered `unknown` or uncertain.
    let other: Int, flagged: Int
    /// Items answered with a wrong label (`unknown` for an item of the classes) and not uncertain, of `count`.
    let confidentlyWrong: Int, count: Int

    /// The counts as they are.
    init(classes: Int, right: Int, unknown: Int, other: Int, flagged: Int, confidentlyWrong: Int, count: Int) {
        (self.classes, self.right, self.unknown, self.other, self.flagged) = (classes, right, unknown, other, flagged)
        (self.confidentlyWrong, self.count) = (confidentlyWrong, count)
    }

    /// The rates of `predicted` against `truth` (rows of `labels`), with each answer's uncertain flag; `nil`
    /// when no row is `unknown` (a model that cannot answer it, on a file without `other`).
    init?(labels: [String], truth: [Int], predicted: [Int], uncertain: [Bool]) {
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
    func text(unit: String) -> String {
        func share(_ part: Int, _ whole: Int) -> String { "\(percent(Double(part) / Double(max(1, whole)))) (\(part) of \(whole) \(unit))" }
        var lines: [String] = []
        if classes > 0 { lines.append("of the classes  right \(share(right, classes)); unknown \(share(unknown, classes))") }
        if other > 0 { lines.append("of other        flagged \(share(flagged, other)): unknown or uncertain") }
        lines.append("confidently wrong  \(share(confidentlyWrong, count)): a wrong label or unknown, not uncertain")
        return lines.joined(separator: "\n")
    }
}

/// The rows of an evaluation report: the labels the model can answer, and `unknown` once a drawing or session is
/// labelled `other` (none of the classes) or an answer is `unknown` (a model without a reject class whose scores
/// were not finite, a recording with no window sure enough to vote).
struct ReportRows {
    private(set) var labels: [String]
    /// The labels a dataset may use besides `other`.
    let known: [String]
    /// Each counted answer's true row, answered row, confidence and whether it was uncertain, in order.
    private(set) var truth: [Int] = [], predicted: [Int] = [], confidences: [Double] = [], uncertain: [Bool] = []

    init(_ answerLabels: [String]) {
        labels = answerLabels
        known = answerLabels.filter { $0 != DecisionRule.unknownLabel }
    }

    /// The row of an answer's label, added when it is not there yet.
    mutating func index(of label: String) -> Int {
        if let index = labels.firstIndex(of: label) { return index }
        labels.append(label)
        return labels.count - 1
    }

    /// The row of a dataset's label: `other` is the `unknown` row.
    mutating func index(ofTruth label: String) -> Int {
        index(of: label == DecisionRule.otherLabel ? DecisionRule.unknownLabel : label)
    }

    /// Why a dataset's `label` (of `item`, at `line` of `data`) cannot be scored: one `model` does not know, and is
    /// not `other`; `nil` when it can.
    func refusal(of label: String, item: String, line: Int, data: String, model: String) -> DataError? {
        guard label != DecisionRule.otherLabel && !known.contains(label) else { return nil }
        return DataError(
            file: data, line: line,
            message:
                "\(item) has label '\(label)', which \(model) does not know (it knows \(known.joined(separator: ", ")), and other for none of them)")
    }

    /// Counts one answer (`label`, its confidence and uncertainty) against the true row `truth`.
    mutating func count(truth: Int, label: String, confidence: Double, uncertain: Bool) {
        self.truth.append(truth)
        predicted.append(index(of: label))
        confidences.append(confidence)
        self.uncertain.append(uncertain)
    }
}
