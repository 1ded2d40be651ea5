import ArgumentParser
import DataFiles
import Datasets
import Foundation
import Models
import Synchronization
import Tensor
import Train
import WeightsFormat

extension RecognitionTask: ExpressibleByArgument {}

extension StorageFormat: ExpressibleByArgument {}

/// How `classify train shape` learns: `--method`.
enum ShapeMethod: String, ExpressibleByArgument, CaseIterable {
    /// Templates for few drawings a class, a network otherwise.
    case auto
    /// Gesture templates (`GestureTraining`).
    case templates
    /// A network (`TrainingRun`).
    case network
}

/// `classify train shape|motion --data TRAIN.csv --out PREFIX`
struct TrainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "train",
        abstract: "Train a model from a CSV dataset and write its weights files.",
        discussion: """
            Writes PREFIX.f32.weights and one PREFIX.<format>.weights per --quantize format (each decoded back and \
            evaluated on the validation data), and PREFIX.curves.svg: one set, each file recording the run \
            (training.run). Every target is checked before training (a directory, device or FIFO there is an \
            error); the files are written only when training finishes, all staged before any is renamed into \
            place, under a lock (.PREFIX.lock) that makes a second run with the same --out wait. A run killed \
            during the renames leaves files of two runs, which classify refuses to use together. Progress goes \
            to stderr; the report to stdout. The same data, seed and BLAS thread count give byte-identical files.

            The data must have at least 2 classes (one not 'other'); without --validation every class needs at \
            least 2 drawings or sessions, and the seeded split must leave each class some for training. \
            Otherwise: exit 65 before training.

            Example: classify train shape --data my-drawings.csv --quantize int8 --out my-models/shape-classifier
            """
    )

    @Argument(help: "What to train: shape or motion.")
    var task: RecognitionTask

    @Option(
        help: ArgumentHelp(
            "The training dataset (CSV; see README for its columns). Repeat it to pool several files, each with its own columns "
                + "(e.g. phone and watch recordings).",
            valueName: "data"))
    var data: [String]

    @Option(help: "A validation dataset (default: 20% of the training drawings or sessions, chosen by the seed).")
    var validation: String?

    @Option(help: "The most epochs to train (default: chosen for the data's size, 30 to 200: about 1,500 steps).")
    var epochs: Int?

    @Option(help: "Seed for initialization, shuffling, dropout and the validation split.")
    var seed: UInt64 = 1

    @Option(help: "Examples per step.")
    var batchSize = 64

    @Option(help: "Adam's base learning rate (cosine-decayed to a tenth over the run).")
    var learningRate: Float = 0.003

    @Option(
        help:
            "Stop after this many epochs without a better validation accuracy or a lower validation loss (default: a fifth of the epochs, at least 6)."
    )
    var patience: Int?

    @Option(help: "Quantized formats to write besides f32, comma-separated: f16, int8, q4, lut2, lut4, lut6, lut8.")
    var quantize: String?

    @Option(help: "The model's name in its files (inspect and messages show it); by default the last part of --out.")
    var name: String?

    @Option(help: "Output prefix, e.g. my-models/shape-classifier (a missing folder is created).")
    var out: String

    @Option(help: "shape: side of the square image drawings are rasterized to, in pixels.")
    var imageSize = 16

    @Flag(
        inversion: .prefixedNo,
        help: "shape: turn each drawing level (smallest enclosing rectangle, long side horizontal) and stretch its short side before rasterizing.")
    var canonical = true

    @Option(help: "shape: with --canonical, the most a drawing's short side is stretched to fill the image.")
    var maxStretch = 4.0

    @Option(
        help:
            "shape: extra copies of each training drawing, turned, stretched, sheared and mirrored at random; copies stay in the same split as their drawing."
    )
    var augment = 0

    @Option(
        help: ArgumentHelp(
            "shape: fit the decision's shape odds on every training drawing answered by a network trained without it, in this many "
                + "folds (each one more training run); 0, the default, fits none (the network's own odds decide).",
            discussion:
                "A shape model of circle, triangle, square and star with a reject class decides 'a shape at all' with odds fitted on drawings "
                + "the network did not train on, real shapes and real non-shapes weighing the same (and the fitted outline when it helps). "
                + "4 folds give every drawing of the data an honest answer. The refit softens confident answers: see docs/shapes.md."))
    var decisionFolds = 0

    @Flag(
        inversion: .prefixedNo,
        help: ArgumentHelp(
            "When the data has no 'other' label, learn one from built-in negatives (generated drawings or recordings that are none of "
                + "your classes; those close to your own examples are left out), so that the model answers unknown for what it never saw."))
    var reject = true

    @Option(
        help: ArgumentHelp(
            "shape: how to learn the drawings: auto, templates or network.",
            discussion:
                "auto (the default) keeps the drawings as templates when every class but 'other' has 1 to "
                + "\(GestureTraining.maximumDrawingsPerClass) of them (a person's own gestures: matched by path and by point cloud, "
                + "docs/gestures.md) and no network option (--epochs, --patience, --augment, --decision-folds) is given, and "
                + "trains a network otherwise; templates and network choose one whatever the counts."))
    var method: ShapeMethod = .auto

    @Option(help: "motion: samples per window (at 50 Hz).")
    var window = 256

    @Option(help: "motion: samples between window starts.")
    var hop = 64

    @Option(help: "motion: autocorrelation lags per signal (samples; 96 reaches a 1.9 s period at 50 Hz).")
    var lags = 96

    @Option(
        help:
            "motion: average each autocorrelation over this many neighbouring lags (odd; 0 or 1 for none), so that the network reads the gait's period rather than one sensor's curve (docs/motion.md, issue 48)."
    )
    var lagSmoothing = 0

    /// The epochs (and patience) a run may ask for: far beyond what the shipped models need (30), and small
    /// enough that step counts cannot overflow.
    static let epochRange = 1...100_000
    /// The batch sizes a run may ask for (a batch larger than the data is one batch of all of it).
    static let batchSizeRange = 1...65_536

    var formats: [StorageFormat] {
        (quantize ?? "").split(separator: ",").compactMap { StorageFormat(rawValue: $0.trimmingCharacters(in: .whitespaces)) }
    }

    func validate() throws {
        guard method == .auto || task == .shape else {
            throw ValidationError("--method is for shape models (gesture templates or a network); a motion model is always a network")
        }
        // The same file twice (however spelled) would put copies of its drawings or sessions on both sides of the
        // validation split.
        let resolved = data.map { URL(fileURLWithPath: $0).standardizedFileURL.resolvingSymlinksInPath().path }
        for (index, path) in resolved.enumerated() {
            if let first = resolved.firstIndex(of: path), first < index {
                throw ValidationError("--data: \(data[index]) is \(data[first]) again; give each file once")
            }
        }
        if let epochs, !Self.epochRange.contains(epochs) {
            throw ValidationError("--epochs must be between 1 and \(Self.epochRange.upperBound), got \(epochs)")
        }
        guard Self.batchSizeRange.contains(batchSize) else {
            throw ValidationError("--batch-size must be between 1 and \(Self.batchSizeRange.upperBound) examples, got \(batchSize)")
        }
        guard learningRate > 0 && learningRate.isFinite else { throw ValidationError("--learning-rate must be positive") }
        if let patience, !Self.epochRange.contains(patience) {
            throw ValidationError("--patience must be between 1 and \(Self.epochRange.upperBound), got \(patience)")
        }
        guard augment >= 0 && augment <= 64 else { throw ValidationError("--augment must be between 0 and 64 copies, got \(augment)") }
        guard decisionFolds == 0 || (2...10).contains(decisionFolds) else {
            throw ValidationError("--decision-folds must be 0 (no shape odds) or 2 to 10 folds, got \(decisionFolds)")
        }
        guard decisionFolds == 0 || task == .shape else {
            throw ValidationError("--decision-folds is for shape models (the odds of 'a shape at all'); a motion model has no shape odds")
        }
        guard maxStretch >= 1 && maxStretch <= 100 else { throw ValidationError("--max-stretch must be between 1 and 100, got \(maxStretch)") }
        guard imageSize >= 8 && imageSize <= 128 else { throw ValidationError("--image-size must be between 8 and 128, got \(imageSize)") }
        guard window >= 8 && window <= 4096 else { throw ValidationError("--window must be between 8 and 4096 samples, got \(window)") }
        guard hop >= 1 && hop <= window else { throw ValidationError("--hop must be between 1 and the window (\(window)), got \(hop)") }
        guard lags >= 1 && lags < window else {
            throw ValidationError("--lags must be between 1 and the window less one (\(window - 1)), got \(lags)")
        }
        guard MotionWindowing.allowsLagSmoothing(lagSmoothing, lags: lags) else {
            throw ValidationError("--lag-smoothing must be 0, 1 or an odd number of lags up to --lags (\(lags)), got \(lagSmoothing)")
        }
        for name in (quantize ?? "").split(separator: ",") where StorageFormat(rawValue: name.trimmingCharacters(in: .whitespaces)) == nil {
            throw ValidationError(
                "--quantize: unknown format '\(name)'; choose from \(StorageFormat.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let last = URL(fileURLWithPath: out).lastPathComponent
        guard !out.hasSuffix("/"), last != ".", last != ".." else {
            throw ValidationError(
                "--out: \(out) names a folder; give a prefix for the files in it, e.g. \(out.hasSuffix("/") ? out : out + "/")shape-classifier")
        }
        let modelName = name ?? last
        guard LabelText.isPrintableLine(modelName, maximumCharacters: 128)
        else {
            throw ValidationError(
                "--name: a model's name is one printable line of 1–128 characters, without spaces at its ends (by default the last part of --out)")
        }
        // Every existing part of the folder's path must be a folder (the missing rest is created after the data is read).
        var folder = URL(fileURLWithPath: outFolder)
        while folder.path != "/" {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory) {
                guard isDirectory.boolValue else {
                    throw ValidationError(
                        "--out: \(folder.path) is a file, not a folder; the prefix names files in a folder, e.g. my-models/shape-classifier")
                }
                break
            }
            folder.deleteLastPathComponent()
        }
    }

    /// The folder `--out`'s files go in.
    var outFolder: String { URL(fileURLWithPath: out).deletingLastPathComponent().path }

    /// Creates `--out`'s folder when it is missing (with the folders above it), saying so on standard error.
    func createOutFolder() throws {
        guard !FileManager.default.fileExists(atPath: outFolder) else { return }
        do {
            try FileManager.default.createDirectory(atPath: outFolder, withIntermediateDirectories: true)
        } catch {
            reportError("--out: cannot create the folder \(outFolder): \(error.localizedDescription)")
            throw ExitCode(ExitStatus.ioError)
        }
        reportNote("created the folder \(outFolder) for --out")
    }

    /// The run the options describe (the pipeline lives in Train: `TrainingRun`).
    var trainingRun: TrainingRun {
        var run = TrainingRun(
            task: task, data: data, validation: validation, epochs: epochs, batchSize: batchSize, seed: seed, patience: patience,
            learningRate: learningRate, rasterizer: ShapeRasterizer(size: imageSize, canonical: canonical, maxStretch: maxStretch),
            windowing: MotionWindowing(window: window, hop: hop, lags: lags, lagSmoothing: lagSmoothing), augment: augment, formats: formats,
            out: out,
            name: name, reject: reject)
        run.decisionFolds = decisionFolds
        return run
    }

    func run() throws {
        // A network's options (--epochs, --patience, --augment, --decision-folds) ask for a network.
        let asksForNetwork = epochs != nil || patience != nil || augment > 0 || decisionFolds > 0
        if task == .shape, method == .templates || (method == .auto && !asksForNetwork), try trainGestures() { return }
        let run = trainingRun
        let prepared = try prepare(run)
        print(prepared.summary)
        if let negatives = prepared.negatives { print(negatives.summary) }
        let schedule = run.schedule(for: prepared)
        if epochs == nil || patience == nil {
            let why = epochs == nil ? "chosen for \(prepared.training.count) training examples" : "--epochs"
            print(
                "schedule  up to \(schedule.epochs) epochs (\(why)), patience \(schedule.patience)"
                    + (patience == nil ? " (a fifth of them, at least 6)" : ""))
        }
        let printer = ProgressPrinter()
        let (result, report) = run.train(prepared) { printer($0) }
        let best = result.history.first { $0.epoch == result.bestEpoch }
        // How the run ended, in the report too (the progress lines on stderr may be gone): at the epoch limit, or
        // stopped early by the patience rule.
        let ending =
            result.history.count >= schedule.epochs
            ? "trained to the epoch limit, \(schedule.epochs)" : "stopped early: patience \(schedule.patience)"
        print(
            "best epoch \(result.bestEpoch) of \(result.history.count): validation accuracy \(percent(best?.validationAccuracy ?? report.accuracy)) (\(ending))"
        )
        print(report.text)
        let outOfFold = run.outOfFold(prepared) { fold, event in
            // One line per epoch: the folds are as many runs again as the model's own.
            if case .epoch(let record, let epochs) = event {
                reportNote(
                    "decision fold \(fold)/\(decisionFolds) (a network without its drawings): epoch \(record.epoch)/\(epochs), "
                        + "validation \(record.validationAccuracy.map(percent) ?? "-")")
            }
        }
        do {
            try export(run, result: result, report: report, prepared: prepared, outOfFold: outOfFold, epochs: schedule.epochs)
        } catch {
            throw failure(error)
        }
    }

    /// Keeps the drawings as gesture templates (`GestureTraining`) when `--method` asks for it, or by default when
    /// every class has few drawings; writes the files and prints the report. `false` when a network is to be trained.
    private func trainGestures() throws -> Bool {
        try refuseOutputs(
            trainingRun.targets.map(\.relativePath) + [outputLockPath(prefix: URL(fileURLWithPath: out))],
            thatAreAnyOf: data + [validation].compactMap { $0 })
        var drawings: [(id: String, label: String, drawing: Drawing)] = []
        var checksums: [String] = []
        do {
            for path in data {
                drawings += try ShapeDataset.read(path).map { ($0.id, $0.label, $0.drawing) }
                checksums.append(CRC32.checksum(ofFile: path).map { String(format: "crc32:%08x", $0) } ?? "")
            }
        } catch {
            throw failure(error)
        }
        let counts = Dictionary(grouping: drawings, by: \.label).mapValues(\.count)
        // Too many classes for any model: the network path's check says so.
        guard counts.count <= GestureTemplates.maximumTemplates, method == .templates || GestureTraining.applies(toCounts: counts) else {
            return false
        }
        if validation != nil { reportNote("--validation is not used by gesture templates: each drawing is left out of the others in turn") }
        let started = ContinuousClock.now
        let result: GestureTraining.Result
        do {
            result = try GestureTraining.train(
                drawings, name: name ?? URL(fileURLWithPath: out).lastPathComponent, dataset: data.joined(separator: " + "),
                checksum: checksums.count == 1 ? checksums[0] : nil, file: data.joined(separator: " + "))
        } catch {
            throw failure(error)
        }
        let classes = counts.filter { $0.key != DecisionRule.otherLabel }
        print(
            "training \(result.file.name) on \(data.joined(separator: " + ")): \(drawings.count) drawings, \(classes.count) classes ("
                + classes.keys.sorted().map { "\($0) \(classes[$0] ?? 0)" }.joined(separator: ", ") + ")")
        for line in result.report { print(line) }
        try createOutFolder()
        let plan: ExportPlan
        do {
            plan = try result.exportPlan(formats: formats, prefix: URL(fileURLWithPath: out))
            try plan.write(prefix: URL(fileURLWithPath: out)) {
                reportWarning("another training run is writing \(out).*; waiting for it to finish")
            }
        } catch {
            throw failure(error)
        }
        let elapsed = ContinuousClock.now - started
        print("weights (run \(plan.run)), made in \(elapsed.formatted(.units(allowed: [.seconds, .milliseconds], width: .abbreviated)))")
        for variant in plan.variants { print("  \(out).\(variant.format.rawValue).weights  \(variant.bytes) bytes") }
        if let decision = plan.variants.first?.decision { print("decision  \(decision.summary)") }
        return true
    }

    /// The data read and the examples made, after checking that no output is an input; then the out folder made
    /// and every target checked writable, before any training.
    private func prepare(_ run: TrainingRun) throws -> TrainingRun.Data {
        // Before the data is read and the model trained: every file the run writes, its lock included (removed
        // when the run ends).
        try refuseOutputs(
            run.targets.map(\.relativePath) + [outputLockPath(prefix: URL(fileURLWithPath: out))], thatAreAnyOf: data + [validation].compactMap { $0 }
        )
        let prepared: TrainingRun.Data
        do {
            // Reading a large dataset and making its examples can take a while: after 2 s without a word, a line on
            // standard error every 5 s says what is happening (a quick run prints none).
            prepared = try whileSaying("reading \(data.joined(separator: " + ")) and making the examples") { () throws(DataError) in
                try run.prepare()
            }
        } catch {
            throw failure(error)
        }
        // The folder is made once the data is known to be good, and every target checked before training.
        try createOutFolder()
        do {
            for target in run.targets { try AtomicFile.checkWritable(target) }
            try checkOutputLock(prefix: URL(fileURLWithPath: out))
        } catch {
            throw failure(error)
        }
        return prepared
    }

    /// Writes the weights (each variant with its size and validation accuracy), the decision and the curves, then
    /// the warnings about the run.
    private func export(
        _ run: TrainingRun, result: TrainingResult, report: ClassificationReport, prepared: TrainingRun.Data, outOfFold: ShapeOddsData?,
        epochs: Int
    ) throws {
        let plan = try run.export(result, report: report, data: prepared, outOfFold: outOfFold) {
            reportWarning("another training run is writing \(out).*; waiting for it to finish")
        }
        let variants = plan.variants
        print("weights (run \(plan.run))")
        let reference = variants.first?.accuracy ?? 0
        for variant in variants {
            let change = variant.format == .f32 ? "" : String(format: "  (%+.2f points)", 100 * (variant.accuracy - reference))
            print("  \(out).\(variant.format.rawValue).weights  \(variant.bytes) bytes  validation \(percent(variant.accuracy))\(change)")
            if reference - variant.accuracy > quantizationWarningThreshold {
                reportWarning(
                    String(
                        format: "%@ loses %.2f points of validation accuracy against f32 (more than %.0f)",
                        variant.format.rawValue, 100 * (reference - variant.accuracy), 100 * quantizationWarningThreshold))
            }
        }
        if let decision = variants.first?.decision {
            print("decision  \(decision.summary) (temperature fitted on the validation examples)")
        }
        if plan.shapeOddsFit == nil, decisionFolds > 0 {
            print(
                "shape odds  none fitted: they need the classes circle, triangle, square or star with 'other', at least 20 drawings "
                    + "of each side, and answers whose odds say something; the network's own odds decide")
        }
        if let fit = plan.shapeOddsFit {
            print(
                "shape odds  fitted on \(fit.origin): \(fit.shapes) shapes, \(fit.nonShapes) non-shapes, each file weighing the same; "
                    + (fit.odds.outline > 0
                        ? String(format: "the outline weighs %.3g", fit.odds.outline)
                        : String(format: "the outline left out (its weight came out %.3g)", fit.outlineWeight)))
            print("  shapes right / non-shapes unknown or uncertain, as the bias moves from the chosen point:")
            print("    network alone  \(percent(fit.networkAlone.shapesRight)) / \(percent(fit.networkAlone.nonShapesFlagged))")
            for point in fit.curve {
                let label = point.shift == 0 ? "chosen point" : String(format: "bias %+g", point.shift)
                print("    \(label)  \(percent(point.shapesRight)) / \(percent(point.nonShapesFlagged))")
            }
        }
        print("curves  \(out).curves.svg")
        let floor = variants.first?.decision?.uncertainBelow ?? DecisionRule.legacy.uncertainBelow
        for warning in trainingWarnings(result, epochs: epochs, report: report, uncertainShare: plan.validationUncertain, floor: floor) {
            reportWarning(warning)
        }
    }
}
