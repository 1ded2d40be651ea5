import ArgumentParser
import Foundation
import Models
import Tensor
import Train

extension Task: ExpressibleByArgument {}

extension StorageFormat: ExpressibleByArgument {}

/// The examples of a dataset file for a task, with the preprocessing it used.
struct PreparedData {
    let examples: Examples
    let groupsDescription: String
}

/// Reads a dataset file for `task` into examples labelled by `classNames` (or by the dataset's own labels).
func prepare(
    _ path: String, task: Task, classNames: [String]?, rasterizer: ShapeRasterizer, windowing: MotionWindowing,
    augment: Int = 0, seed: UInt64 = 1
) throws(DataError) -> PreparedData {
    switch task {
    case .shape:
        let drawings = try ShapeDataset.read(path, rasterizer: rasterizer)
        let examples = try ShapeDataset.examples(
            drawings, classNames: classNames ?? ShapeDataset.classNames(for: drawings), rasterizer: rasterizer, file: path,
            augment: augment, seed: seed)
        return PreparedData(examples: examples, groupsDescription: "\(drawings.count) drawings")
    case .motion:
        let sessions = try MotionDataset.read(path, windowing: windowing)
        let examples = try MotionDataset.examples(
            sessions, classNames: classNames ?? MotionDataset.classNames(for: sessions), windowing: windowing, file: path)
        return PreparedData(examples: examples, groupsDescription: "\(sessions.count) sessions, \(examples.count) windows")
    }
}

/// `classify train shape|motion --data TRAIN.csv --out PREFIX`
struct TrainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "train",
        abstract: "Train a model from a CSV dataset and write its weights files.",
        discussion: """
            Writes PREFIX.f32.weights and one PREFIX.<format>.weights per --quantize format (each read back and \
            evaluated on the validation data), and PREFIX.curves.svg. Files are written only when training \
            finishes, each atomically: an interrupted run leaves existing files as they were. Progress goes to \
            stderr; the report to stdout. The same data, seed and BLAS thread count give byte-identical files.

            Example: classify train shape --data Datasets/shapes/train.csv --quantize int8 --out Weights/shape-classifier
            """
    )

    @Argument(help: "What to train: shape or motion.")
    var task: Task

    @Option(help: "The training dataset (CSV; see README for its columns).")
    var data: String

    @Option(help: "A validation dataset (default: 20% of the training drawings or sessions, chosen by the seed).")
    var validation: String?

    @Option(help: "The most epochs to train.")
    var epochs = 30

    @Option(help: "Seed for initialization, shuffling, dropout and the validation split.")
    var seed: UInt64 = 1

    @Option(help: "Examples per step.")
    var batchSize = 64

    @Option(help: "Adam's base learning rate (cosine-decayed to a tenth over the run).")
    var learningRate: Float = 0.003

    @Option(help: "Stop after this many epochs without a better validation accuracy.")
    var patience = 6

    @Option(help: "Quantized formats to write besides f32, comma-separated: f16, int8, q4, lut2, lut4, lut6, lut8.")
    var quantize: String?

    @Option(help: "Output prefix, e.g. Weights/shape-classifier.")
    var out: String

    @Option(help: "shape: side of the square image drawings are rasterized to, in pixels.")
    var imageSize = 16

    @Flag(inversion: .prefixedNo, help: "shape: turn each drawing level (smallest enclosing rectangle, long side horizontal) and stretch its short side before rasterizing.")
    var canonical = true

    @Option(help: "shape: with --canonical, the most a drawing's short side is stretched to fill the image.")
    var maxStretch = 4.0

    @Option(help: "shape: extra copies of each training drawing, turned, stretched, sheared and mirrored at random; copies stay in the same split as their drawing.")
    var augment = 0

    @Option(help: "motion: samples per window (at 50 Hz).")
    var window = 256

    @Option(help: "motion: samples between window starts.")
    var hop = 64

    @Option(help: "motion: autocorrelation lags per signal (samples; 96 reaches a 1.9 s period at 50 Hz).")
    var lags = 96

    var formats: [StorageFormat] {
        (quantize ?? "").split(separator: ",").compactMap { StorageFormat(rawValue: $0.trimmingCharacters(in: .whitespaces)) }
    }

    func validate() throws {
        guard epochs >= 1 else { throw ValidationError("--epochs must be at least 1, got \(epochs)") }
        guard batchSize >= 1 else { throw ValidationError("--batch-size must be at least 1, got \(batchSize)") }
        guard learningRate > 0 && learningRate.isFinite else { throw ValidationError("--learning-rate must be positive") }
        guard patience >= 1 else { throw ValidationError("--patience must be at least 1, got \(patience)") }
        guard augment >= 0 && augment <= 64 else { throw ValidationError("--augment must be between 0 and 64 copies, got \(augment)") }
        guard maxStretch >= 1 && maxStretch <= 100 else { throw ValidationError("--max-stretch must be between 1 and 100, got \(maxStretch)") }
        guard imageSize >= 8 && imageSize <= 128 else { throw ValidationError("--image-size must be between 8 and 128, got \(imageSize)") }
        guard window >= 8 && window <= 4096 else { throw ValidationError("--window must be between 8 and 4096 samples, got \(window)") }
        guard hop >= 1 && hop <= window else { throw ValidationError("--hop must be between 1 and the window (\(window)), got \(hop)") }
        guard lags >= 1 && lags < window else { throw ValidationError("--lags must be between 1 and the window less one (\(window - 1)), got \(lags)") }
        for name in (quantize ?? "").split(separator: ",") where StorageFormat(rawValue: name.trimmingCharacters(in: .whitespaces)) == nil {
            throw ValidationError("--quantize: unknown format '\(name)'; choose from \(StorageFormat.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let folder = URL(fileURLWithPath: out).deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ValidationError("--out: the folder \(folder) does not exist")
        }
    }

    func run() throws {
        let rasterizer = ShapeRasterizer(size: imageSize, canonical: canonical, maxStretch: maxStretch), windowing = MotionWindowing(window: window, hop: hop, lags: lags)
        let trainingData: PreparedData, validationData: PreparedData?
        do {
            trainingData = try prepare(data, task: task, classNames: nil, rasterizer: rasterizer, windowing: windowing,
                                       augment: augment, seed: seed)
            validationData = try validation.map { path throws(DataError) in
                try prepare(path, task: task, classNames: trainingData.examples.classNames, rasterizer: rasterizer, windowing: windowing)
            }
        } catch {
            throw failure(error)
        }
        let all = trainingData.examples
        guard all.classNames.count >= 2, all.classNames.contains(where: { $0 != DecisionRule.otherLabel }) else {
            throw failure(DataError(file: data, message: "training needs at least 2 classes, and one that is not '\(DecisionRule.otherLabel)'; "
                + "the data has only \(all.classNames.map { "'\($0)'" }.joined(separator: ", ")) "
                + "(\(trainingData.groupsDescription))"))
        }
        let (training, heldOut) = validationData.map { (all, $0.examples) } ?? all.splitByGroup(validationFraction: 0.2, seed: seed)
        print("training \(task.modelName) on \(data): \(trainingData.groupsDescription), \(all.classNames.count) classes "
              + "(\(all.classNames.joined(separator: ", "))); \(training.count) training and \(heldOut.count) validation examples")

        let steps = epochs * ((training.count + batchSize - 1) / batchSize)
        let configuration = TrainingConfiguration(
            epochs: epochs, batchSize: batchSize, seed: seed, patience: patience,
            optimizer: Optimizer(.adamDefault, learningRate: learningRate,
                                 schedule: .cosine(totalSteps: steps, minimumFactor: 0.1)))
        let network = Network(converting: task.layers(
            classes: all.classNames.count, seed: seed, inputShape: task.inputShape(rasterizer: rasterizer, windowing: windowing)))
        let printer = ProgressPrinter()
        let result = train(network, on: training, validation: heldOut, configuration: configuration) { printer($0) }

        let best = result.history.first { $0.epoch == result.bestEpoch }
        let report = ClassificationReport(
            labels: all.classNames, truth: heldOut.labels, predicted: result.network.logits(heldOut.inputs).argmax(axis: 1))
        print("best epoch \(result.bestEpoch) of \(result.history.count): validation accuracy \(percent(best?.validationAccuracy ?? report.accuracy))")
        print(report.text)

        let checksum = CRC32.checksum(ofFile: data).map { String(format: "crc32:%08x", $0) }
        let metadata = TrainingMetadata(
            dataset: data, datasetChecksum: checksum, seed: seed, epochs: result.bestEpoch, validationAccuracy: report.accuracy)
        let preprocessing = task == .shape ? rasterizer.parameters : windowing.parameters
        let variants: [ExportedVariant]
        do {
            variants = try export(
                result.network, task: task, classNames: all.classNames,
                inputShape: task.inputShape(rasterizer: rasterizer, windowing: windowing), preprocessing: preprocessing,
                training: metadata, validation: heldOut, formats: formats, prefix: URL(fileURLWithPath: out))
            let curves = URL(fileURLWithPath: out + ".curves.svg")
            try AtomicFile.write(Array(TrainingCurves.svg(result.history, title: "\(task.modelName) — \(data)").utf8), to: curves)
            print("weights")
            let reference = variants.first?.accuracy ?? 0
            for variant in variants {
                let change = variant.format == .f32 ? "" : String(format: "  (%+.2f points)", 100 * (variant.accuracy - reference))
                print("  \(out).\(variant.format.rawValue).weights  \(variant.bytes) bytes  validation \(percent(variant.accuracy))\(change)")
                if reference - variant.accuracy > quantizationWarningThreshold {
                    reportWarning(String(format: "%@ loses %.2f points of validation accuracy against f32 (more than %.0f)",
                                         variant.format.rawValue, 100 * (reference - variant.accuracy), 100 * quantizationWarningThreshold))
                }
            }
            if let decision = variants.first?.decision {
                print("decision  \(decision.summary) (temperature fitted on the validation examples)")
            }
            print("curves  \(out).curves.svg")
        } catch {
            throw failure(error)
        }
    }
}

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
            reported unknown; the confusion matrix has an `unknown` column (and row, for `other` drawings). \
            The report adds how many answers were uncertain and a reliability table: answers grouped by \
            confidence, with the share of each group that was right.

            Prints the accuracy, the confusion matrix (rows: true, columns: predicted) and each class's precision \
            and recall; --json prints them as one object with the keys accuracy, count, labels, confusion, \
            perClass, model, uncertain and reliability. A label the model does not know is an error (exit 65) \
            naming its line.

            Example: classify evaluate shape --data Datasets/shapes/test.csv --weights Weights/shape-classifier.int8.weights
            """
    )

    @Argument(help: "What to evaluate: shape or motion.")
    var task: Task

    @Option(help: "The labelled dataset (CSV).")
    var data: String

    @OptionGroup var chain: ChainOptions

    @Flag(help: "Evaluate the non-ML recognizer instead of a weights file: geometric (shape) or cadence (motion).")
    var fallback = false

    var json: Bool { chain.json }

    func validate() throws {
        if fallback && chain.weights != nil { throw ValidationError("--fallback and --weights exclude each other: the fallback needs no weights") }
    }

    func run() throws {
        if task == .shape { return try evaluateShapes() }
        try evaluateMotion()
    }

    /// Shapes: every drawing through `ShapeRecognizer`, the path `classify shape` answers with.
    func evaluateShapes() throws {
        let recognizer = fallback ? ShapeRecognizer(engine: .geometric, model: "geometric") : try chain.loadShapeRecognizer()
        let labels = recognizer.answerLabels
        let drawings: [LabeledDrawing]
        var truth: [Int] = []
        do {
            drawings = try ShapeDataset.read(data)
            for drawing in drawings {
                let label = drawing.label == DecisionRule.otherLabel ? DecisionRule.unknownLabel : drawing.label
                guard let index = labels.firstIndex(of: label) else {
                    throw DataError(file: data, line: drawing.lines.lowerBound, message: "drawing '\(drawing.id)' has label "
                        + "'\(drawing.label)', which \(recognizer.model) does not know (it knows \(labels.dropLast().joined(separator: ", ")), and other for none of them)")
                }
                truth.append(index)
            }
        } catch {
            throw failure(error)
        }
        let results = recognizer.recognize(drawings.map(\.drawing), threads: chain.jobs ?? ProcessInfo.processInfo.activeProcessorCount)
        var predicted: [Int] = [], confidences: [Double] = [], uncertain = 0
        for (drawing, result) in zip(drawings, results) {
            switch result {
            case .success(let answer):
                predicted.append(labels.firstIndex(of: answer.label) ?? labels.count - 1)
                confidences.append(answer.confidence)
                if answer.uncertain { uncertain += 1 }
            case .failure(let error):
                throw failure(DataError(file: data, line: drawing.lines.lowerBound, message: "drawing '\(drawing.id)': \(error.message)"))
            }
        }
        showReport(labels: labels, truth: truth, predicted: predicted, confidences: confidences, uncertain: uncertain,
                   model: recognizer.model, heading: "\(drawings.count) drawings", unit: "answers")
    }

    /// Prints the report of `predicted` against `truth`, with the uncertain count and the reliability table: one
    /// JSON object, or text under a heading.
    func showReport(labels: [String], truth: [Int], predicted: [Int], confidences: [Double], uncertain: Int,
                    model: String, heading: String, unit: String) {
        let report = ClassificationReport(labels: labels, truth: truth, predicted: predicted)
        let reliability = ReliabilityTable(confidences: confidences, correct: zip(truth, predicted).map { $0 == $1 })
        if json {
            print(EvaluationJSON(report: report, model: model, uncertain: uncertain, reliability: reliability).text)
        } else {
            print("\(model) on \(data): \(heading)")
            print(report.text)
            print("uncertain \(uncertain) of \(truth.count) \(unit) (\(percent(Double(uncertain) / Double(max(1, truth.count)))))")
            print(reliability.text)
        }
    }
}

extension Evaluate {
    /// Motion: every window of every session through `MotionRecognizer`, the path `classify motion` answers with;
    /// a window may be `still` (its own column).
    func evaluateMotion() throws {
        let recognizer = fallback ? MotionRecognizer(classifier: CadenceRecognizer(), model: "cadence") : try chain.loadMotionRecognizer()
        let labels = recognizer.windowLabels
        var truth: [Int] = [], predicted: [Int] = [], confidences: [Double] = []
        var uncertain = 0, sessionCount = 0
        do {
            let sessions = try MotionDataset.sessions(data, rate: recognizer.windowing.rate, window: recognizer.windowing.window)
            sessionCount = sessions.count
            for session in sessions {
                guard let label = session.label, let index = labels.firstIndex(of: label) else {
                    throw DataError(file: data, line: session.lines.lowerBound, message: "session '\(session.id)' has label "
                        + "'\(session.label ?? "")', which \(recognizer.model) does not know (it knows \(labels.joined(separator: ", ")))")
                }
                let timeline = try recognizer.classify(try session.recording.get(), source: "\(data)#\(session.id)")
                for window in timeline.windows {
                    truth.append(index)
                    predicted.append(labels.firstIndex(of: window.label) ?? labels.count - 1)
                    confidences.append(window.confidence)
                    if window.uncertain { uncertain += 1 }
                }
            }
        } catch {
            throw failure(error)
        }
        showReport(labels: labels, truth: truth, predicted: predicted, confidences: confidences, uncertain: uncertain,
                   model: recognizer.model, heading: "\(sessionCount) sessions, \(truth.count) windows", unit: "windows")
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
    let uncertain: Int?
    let reliability: ReliabilityTable?

    init(report: ClassificationReport, model: String, uncertain: Int? = nil, reliability: ReliabilityTable? = nil) {
        self.uncertain = uncertain
        self.reliability = reliability
        accuracy = report.accuracy
        count = report.count
        labels = report.labels
        confusion = report.confusion
        perClass = report.perClass
        self.model = model
    }

    var text: String { jsonText(self) }
}
