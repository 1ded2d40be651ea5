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
        var evaluation = Evaluation(answerLabels: recognizer.answerLabels)
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
            if let refusal = evaluation.refusal(
                of: item.label, item: "drawing '\(item.id)'", line: item.lines.lowerBound, file: data, model: recognizer.model)
            {
                throw failure(refusal)
            }
            evaluation.count(truth: item.label, answer: answer.label(classes), confidence: answer.confidence, uncertain: answer.uncertain)
        }
        showReport(
            evaluation, model: recognizer.model,
            source: rule ? (recognizer.model, nil) : chain.describe(recognizer.model, among: chain.variants(of: .shape)),
            heading: "\(evaluation.truth.count) drawings", unit: "answers", failures: failures, items: "drawings")
        try failures.exit()
    }

    /// Prints the evaluation: one JSON object, or text under a heading.
    func showReport(
        _ evaluation: Evaluation, model: String, source: (text: String, weights: String?), heading: String, unit: String,
        failures: EvaluationFailures, items: String
    ) {
        if json {
            print(
                EvaluationJSON(
                    report: evaluation.report, model: model, weights: source.weights, uncertain: evaluation.uncertainCount,
                    reject: evaluation.rejects, reliability: evaluation.reliability, failed: failures.count
                )
                .text)
        } else {
            print("\(source.text) on \(data): \(heading)")
            print(evaluation.text(unit: unit))
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
        var evaluation = Evaluation(answerLabels: recognizer.answerLabels)
        var sessionCount = 0
        var failures = EvaluationFailures()
        do {
            let sessions = try MotionDataset.sessions(data, rate: recognizer.windowing.rate, window: recognizer.windowing.window)
            sessionCount = sessions.count
            for session in sessions {
                let label = session.label ?? ""
                if let refusal = evaluation.refusal(
                    of: label, item: "session '\(session.id)'", line: session.lines.lowerBound, file: data, model: recognizer.model)
                {
                    throw refusal
                }
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
                    evaluation.count(truth: label, answer: window.label, confidence: window.confidence, uncertain: window.uncertain)
                }
            }
        } catch {
            throw failure(error)
        }
        showReport(
            evaluation, model: recognizer.model,
            source: rule ? (recognizer.model, nil) : chain.describe(recognizer.model, among: chain.variants(of: .motion)),
            heading: "\(sessionCount - failures.count) sessions, \(evaluation.truth.count) windows", unit: "windows",
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
