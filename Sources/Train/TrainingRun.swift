import DataFiles
import Datasets
import Foundation
import Models
import Tensor
import WeightsFormat

/// The examples of one or more dataset files for a task, with how many drawings or sessions they came from.
public struct PreparedData: Sendable {
    /// The examples, labelled; the groups (drawings, sessions) of different files never share a number.
    public let examples: Examples
    /// `2400 drawings`, `24 sessions, 1800 windows`.
    public let groupsDescription: String
    /// A shape dataset's drawings in the order of the examples' groups (drawing `g` is group `g`), each with the
    /// index of its file, when asked for (`keepDrawings`); empty otherwise and for motion.
    public let drawings: [(drawing: Drawing, source: Int)]

    /// Reads a dataset file for `task` into examples labelled by `classNames` (or by the dataset's own labels).
    public init(
        _ path: String, task: RecognitionTask, classNames: [String]?, rasterizer: ShapeRasterizer, windowing: MotionWindowing,
        augment: Int = 0, seed: UInt64 = 1
    ) throws(DataError) {
        try self.init([path], task: task, classNames: classNames, rasterizer: rasterizer, windowing: windowing, augment: augment, seed: seed)
    }

    /// Reads dataset files for `task` (each with its own header and format: generated phone recordings beside a
    /// watch's raw accelerometer, say) into one set of examples labelled by `classNames`, or by the labels of all
    /// the files together. The second file's augmented copies use `seed + 1`, and so on.
    public init(
        _ paths: [String], task: RecognitionTask, classNames: [String]?, rasterizer: ShapeRasterizer, windowing: MotionWindowing,
        augment: Int = 0, seed: UInt64 = 1, keepDrawings: Bool = false
    ) throws(DataError) {
        precondition(!paths.isEmpty, "PreparedData needs at least one dataset file, got 0")
        var parts: [Examples] = []
        switch task {
        case .shape:
            var files: [[LabeledDrawing]] = []
            for path in paths {
                let drawings = try ShapeDataset.read(path)
                try Self.checkLabels(drawings.map { ($0.label, $0.lines.lowerBound) }, file: path)
                files.append(drawings)
            }
            let names = classNames ?? ShapeDataset.classNames(for: files.flatMap { $0 })
            try Self.checkClassCount(names.count, files: paths)
            for (index, (path, drawings)) in zip(paths, files).enumerated() {
                parts.append(
                    try ShapeDataset.examples(
                        drawings, classNames: names, rasterizer: rasterizer, file: path, augment: augment, seed: seed &+ UInt64(index)))
            }
            groupsDescription = "\(files.map(\.count).reduce(0, +)) drawings"
            drawings = keepDrawings ? files.enumerated().flatMap { source, file in file.map { ($0.drawing, source) } } : []
        case .motion:
            var files: [[LabeledSession]] = []
            for path in paths {
                let sessions = try MotionDataset.read(path, windowing: windowing)
                try Self.checkLabels(sessions.map { ($0.label, $0.lines.lowerBound) }, file: path)
                files.append(sessions)
            }
            let names = classNames ?? MotionDataset.classNames(for: files.flatMap { $0 })
            try Self.checkClassCount(names.count, files: paths)
            let windows = files.joined().reduce(0) { total, session in
                total + session.segments.reduce(0) { $0 + windowing.starts(count: $1.count).count }
            }
            try Self.checkMotionWork(windows: windows, windowing: windowing, files: paths)
            for (path, sessions) in zip(paths, files) {
                parts.append(try MotionDataset.examples(sessions, classNames: names, windowing: windowing, file: path))
            }
            groupsDescription = "\(files.map(\.count).reduce(0, +)) sessions, \(parts.map(\.count).reduce(0, +)) windows"
            drawings = []
        }
        examples = Examples(concatenating: parts)
    }

    /// The most classes a model is trained for: its weights file (at most `WeightsLimits.maximumFileBytes`) and its
    /// report stay small; checked before any training, in the labels the user wrote.
    public static let maximumClasses = 1000
    /// Each label is one printable line (`LabelText`); the first bad one is an error naming its line.
    static func checkLabels(_ labels: [(label: String, line: Int)], file: String) throws(DataError) {
        var seen: Set<String> = []
        for (label, line) in labels where seen.insert(label).inserted {
            if let problem = LabelText.problem(label) { throw DataError(file: file, line: line, message: problem) }
        }
    }

    /// The most bytes of motion examples a run builds (window features in memory).
    public static let maximumExampleBytes = 1 << 30
    /// The most multiply-adds the window features of a run take (about 20 s on one core).
    public static let maximumFeatureOperations = 100_000_000_000.0

    /// The window features `windowing` makes of `windows` windows fit `maximumExampleBytes` and
    /// `maximumFeatureOperations`, checked before they are made; the error gives the figures in the options' terms.
    static func checkMotionWork(windows: Int, windowing: MotionWindowing, files: [String]) throws(DataError) {
        let bytes = Double(windows) * Double(windowing.inputSize) * 4
        let operations = Double(windows) * Double(windowing.window) * Double(windowing.lags) * 2
        guard bytes > Double(maximumExampleBytes) || operations > maximumFeatureOperations else { return }
        throw DataError(
            file: files.joined(separator: " + "),
            message: String(
                format: "--window %d --hop %d --lags %d make %d windows of %d features: %.1f GB of examples and %.2g multiply-adds "
                    + "to compute them (at most %.1f GB and %.2g); raise --hop or lower --window or --lags",
                windowing.window, windowing.hop, windowing.lags, windows, windowing.inputSize, bytes / 1e9, operations,
                Double(maximumExampleBytes) / 1e9, maximumFeatureOperations))
    }

    /// At most `maximumClasses` classes, before any training.
    static func checkClassCount(_ count: Int, files: [String]) throws(DataError) {
        guard count <= maximumClasses else {
            throw DataError(
                file: files.joined(separator: " + "),
                message: "\(count) labels; a model is trained for at most \(maximumClasses) classes (its weights file must stay under "
                    + "\(WeightsLimits.maximumFileBytes) bytes)")
        }
    }
}

/// One training run from dataset files to weights files: what `classify train` does, for any caller. Read the
/// data (`prepare`), train with early stopping (`train`), then write the weights files and curves as one set
/// (`export`); each step reports what the command prints.
public struct TrainingRun: Sendable {
    /// What to train.
    public var task: RecognitionTask
    /// The training dataset files (one or more; their examples are pooled).
    public var data: [String]
    /// A validation dataset file; without one, a seeded 20% of the training drawings or sessions.
    public var validation: String?
    /// Batch size, seed and optimizer; its epochs and patience are replaced, when training, by `requested` or the
    /// defaults for the data's size (`schedule(for:)`).
    public var configuration: TrainingConfiguration
    /// The shape model's preprocessing.
    public var rasterizer: ShapeRasterizer
    /// The motion model's preprocessing.
    public var windowing: MotionWindowing
    /// Extra augmented copies of each training drawing (shape).
    public var augment: Int
    /// Whether data without an `other` label gets the built-in negatives as its reject class (`BuiltInNegatives`).
    public var reject = true
    /// Shape: the folds of `outOfFold` (0: no shape odds; the training drawings are kept for them only when 2 or
    /// more).
    public var decisionFolds = 0
    /// Quantized formats to write besides f32.
    public var formats: [StorageFormat]
    /// The output prefix (`my-models/shape-classifier`).
    public var out: String
    /// The model's name in its files (what `inspect` and error messages call it): by default the last part of `out`.
    public var name: String
    /// The epochs and patience asked for; `nil` ones are chosen for the data's size (`defaultSchedule`) once it is
    /// read.
    public var requested: (epochs: Int?, patience: Int?)

    /// Epochs and patience that suit `trainingExamples` when the caller chose none: enough epochs for about 1,500
    /// optimizer steps (at least 30, at most 200), and a patience of a fifth of them (at least 6). 80 drawings get
    /// 200 epochs and a patience of 40; the shipped models' thousands of examples get 30 and 6.
    public static func defaultSchedule(trainingExamples: Int, batchSize: Int) -> (epochs: Int, patience: Int) {
        let steps = max(1, (trainingExamples + batchSize - 1) / max(1, batchSize))
        let epochs = min(200, max(30, (1500 + steps - 1) / steps))
        return (epochs, max(6, epochs / 5))
    }

    /// The epochs and patience this run trains with on `data`.
    /// A patience not asked for is a fifth of the epochs trained (at least 6), whoever chose them.
    public func schedule(for data: Data) -> (epochs: Int, patience: Int) {
        let epochs = requested.epochs ?? Self.defaultSchedule(trainingExamples: data.training.count, batchSize: configuration.batchSize).epochs
        return (epochs, requested.patience ?? max(6, epochs / 5))
    }

    /// A run with Adam at `learningRate`, cosine-decayed to a tenth over the run's steps once the data is read;
    /// `nil` epochs or patience are chosen for the data's size.
    public init(
        task: RecognitionTask, data: [String], validation: String?, epochs: Int?, batchSize: Int, seed: UInt64, patience: Int?,
        learningRate: Float, rasterizer: ShapeRasterizer, windowing: MotionWindowing, augment: Int, formats: [StorageFormat],
        out: String, name: String? = nil, reject: Bool = true
    ) {
        self.task = task
        self.data = data
        self.validation = validation
        requested = (epochs, patience)
        let chosen = Self.defaultSchedule(trainingExamples: 0, batchSize: batchSize)
        configuration = TrainingConfiguration(
            epochs: epochs ?? chosen.epochs, batchSize: batchSize, seed: seed, patience: patience ?? chosen.patience,
            optimizer: Optimizer(.adamDefault, learningRate: learningRate))
        self.rasterizer = rasterizer
        self.windowing = windowing
        self.augment = augment
        self.formats = formats
        self.out = out
        self.name = name ?? URL(fileURLWithPath: out).lastPathComponent
        self.reject = reject
    }

    /// The training files as reports and the weights header name them: `a.csv`, or `a.csv + b.csv`.
    public var dataDescription: String { data.joined(separator: " + ") }

    /// Every file the run writes: the weights variants and the curves.
    public var targets: [URL] {
        ([StorageFormat.f32] + formats.filter { $0 != .f32 }).map { URL(fileURLWithPath: "\(out).\($0).weights") }
            + [URL(fileURLWithPath: out + ".curves.svg")]
    }

    /// The input shape of the task's network.
    public var inputShape: [Int] { task.inputShape(rasterizer: rasterizer, windowing: windowing) }

    /// The data read and split: everything, the part trained on, the part held out, and the sentence that says so.
    public struct Data: Sendable {
        /// Every example.
        public let all: Examples
        /// The examples trained on.
        public let training: Examples
        /// The examples held out for choosing the epoch and fitting the calibration.
        public let heldOut: Examples
        /// `training shape-classifier on FILE: 2400 drawings, 5 classes (…); 1920 training and 480 validation examples`.
        public let summary: String
        /// Each training file's CRC-32 (`crc32:1a2b3c4d`), taken as it was read, or `nil` where it could not be.
        public let checksums: [String?]
        /// The built-in negatives made for the reject class `other` when the data had none and `reject` is set; trained
        /// only when `isUsed` (enough of them far from the user's examples).
        public let negatives: BuiltInNegatives?
        /// The training files' drawings (shape, with `decisionFolds` of 2 or more): drawing `g` is group `g` of `all`;
        /// empty otherwise.
        public let drawings: [(drawing: Drawing, source: Int)]
    }

    /// Reads the training (and validation) data and splits it. Two training files with the same bytes are an
    /// error: their copies of each drawing or session would fall on both sides of the validation split.
    public func prepare() throws(DataError) -> Data {
        let checksums = data.map { CRC32.checksum(ofFile: $0).map { String(format: "crc32:%08x", $0) } }
        for (index, checksum) in checksums.enumerated() {
            guard let checksum, let first = checksums.firstIndex(of: checksum), first < index else { continue }
            throw DataError(
                file: data[index],
                message: "the same bytes as \(data[first]) (\(checksum)): the same data twice would put copies of its "
                    + "\(task.dataUnit) on both sides of the validation split; give each file once")
        }
        let trainingData = try PreparedData(
            data, task: task, classNames: nil, rasterizer: rasterizer, windowing: windowing,
            augment: augment, seed: configuration.seed, keepDrawings: decisionFolds >= 2)
        let validationData = try validation.map { path throws(DataError) in
            try PreparedData(path, task: task, classNames: trainingData.examples.classNames, rasterizer: rasterizer, windowing: windowing)
        }
        let user = trainingData.examples
        // The user's own data is split (or checked beside the validation file) as it would be without a reject class.
        var (training, heldOut) = try trainingSplit(
            user, validation: validationData?.examples, seed: configuration.seed,
            unit: task.dataUnit, file: dataDescription)
        var all = user
        var negatives: BuiltInNegatives?
        // Data with classes to learn and no reject class of its own gets the built-in negatives as `other`, a fifth
        // of them (by drawing or session) held out for validation beside the user's.
        if reject, !user.classNames.contains(DecisionRule.otherLabel) {
            negatives = try BuiltInNegatives.make(
                for: user, task: task, rasterizer: rasterizer, windowing: windowing, augment: augment, seed: configuration.seed)
        }
        if let made = negatives, made.isUsed {
            let names = made.examples.classNames
            func widened(_ examples: Examples) -> Examples {
                Examples(inputs: examples.inputs, labels: examples.labels, groups: examples.groups, classNames: names)
            }
            let (kept, held) = made.examples.splitByGroup(validationFraction: 0.2, seed: configuration.seed)
            all = Examples(concatenating: [widened(user), made.examples])
            training = Examples(concatenating: [widened(training), kept])
            heldOut = Examples(concatenating: [widened(heldOut), held])
        }
        let summary =
            "training \(name) on \(dataDescription): \(trainingData.groupsDescription), \(all.classNames.count) classes "
            + "(\(all.classNames.joined(separator: ", "))); \(training.count) training and \(heldOut.count) validation examples"
        return Data(
            all: all, training: training, heldOut: heldOut, summary: summary, checksums: checksums, negatives: negatives,
            drawings: trainingData.drawings)
    }

    /// Trains the task's network on `data` (the learning rate cosine-decayed to a tenth over the run's steps),
    /// keeping the best epoch on the held-out part; `report` hears every epoch. Returns the result and the
    /// held-out report of the best epoch's network.
    public func train(_ data: Data, report: (TrainingEvent) -> Void = { _ in }) -> (result: TrainingResult, report: ClassificationReport) {
        let result = train(
            on: data.training, validation: data.heldOut, classes: data.all.classNames.count, schedule: schedule(for: data), seed: configuration.seed,
            report: report)
        let classification = ClassificationReport(
            labels: data.all.classNames, truth: data.heldOut.labels, predicted: result.network.logits(data.heldOut.inputs).argmax(axis: 1))
        return (result, classification)
    }

    /// A network trained on `training` with early stopping on `validation`: the run's schedule (`epochs`, `patience`),
    /// its learning rate cosine-decayed to a tenth over the steps, initialized and shuffled by `seed`.
    private func train(
        on training: Examples, validation: Examples, classes: Int, schedule: (epochs: Int, patience: Int), seed: UInt64,
        report: (TrainingEvent) -> Void
    ) -> TrainingResult {
        var configuration = configuration
        (configuration.epochs, configuration.patience, configuration.seed) = (schedule.epochs, schedule.patience, seed)
        let steps = configuration.epochs * ((training.count + configuration.batchSize - 1) / configuration.batchSize)
        configuration.optimizer.schedule = .cosine(totalSteps: steps, minimumFactor: 0.1)
        let network = Network(converting: task.layers(classes: classes, seed: seed, inputShape: inputShape))
        return Train.train(network, on: training, validation: validation, configuration: configuration, report: report)
    }

    /// Every training drawing answered by a network that did not train on it, for fitting the decision rule's
    /// shape odds on real shapes and real non-shapes alike (a validation split holds few of the hard ones):
    /// the drawings (by group) fall into `decisionFolds` seeded folds, and each fold's drawings, as drawn, are answered by a
    /// network trained on the other folds as the run trains (its own fifth held out for early stopping and the
    /// temperature that calibrates its answers). `nil` for motion, fewer than 2 folds, or no drawings. `report`
    /// hears each fold's number (from 1) and its training events.
    public func outOfFold(_ data: Data, report: (Int, TrainingEvent) -> Void = { _, _ in }) -> ShapeOddsData? {
        let folds = decisionFolds
        guard task == .shape, folds >= 2, !data.drawings.isEmpty else { return nil }
        var distinct: [Int] = []
        var seen = Set<Int>()
        for group in data.all.groups where seen.insert(group).inserted { distinct.append(group) }
        var generator = SeededGenerator(seed: configuration.seed ^ 0x464F_4C44_5345_4544)
        shuffle(&distinct, generator: &generator)
        let foldOf = Dictionary(uniqueKeysWithValues: distinct.enumerated().map { ($1, $0 % folds) })
        let schedule = schedule(for: data)
        var drawings: [HeldOutDrawing] = [], probabilities: [[Double]] = [], truth: [Int] = []
        for fold in 0..<folds where foldOf.values.contains(fold) {
            let rest = data.all.subset(data.all.groups.indices.filter { foldOf[data.all.groups[$0]] != fold })
            let (training, held) = rest.splitByGroup(validationFraction: 0.2, seed: configuration.seed &+ UInt64(fold + 1))
            // A fold of data too small to split again is left unanswered (its drawings give the fit nothing).
            guard training.count > 0, held.count > 0 else { continue }
            let result = train(
                on: training, validation: held, classes: data.all.classNames.count, schedule: schedule,
                seed: configuration.seed &+ UInt64(fold + 1)
            ) { report(fold + 1, $0) }
            let model = result.network.exportedModel()
            let temperature = DecisionRule.fitTemperature(probabilities: Train.probabilities(of: model, on: held.inputs), truth: held.labels)
            let rule = DecisionRule(temperature: temperature)
            // The first row of each of the fold's groups is its drawing as drawn.
            var firsts: [Int] = []
            var taken = Set<Int>()
            for (row, group) in data.all.groups.enumerated()
            where foldOf[group] == fold && data.drawings.indices.contains(group) && taken.insert(group).inserted {
                firsts.append(row)
            }
            let answers = Train.probabilities(of: model, on: data.all.subset(firsts).inputs)
            for (row, answer) in zip(firsts, answers) {
                let group = data.all.groups[row]
                drawings.append(HeldOutDrawing(drawing: data.drawings[group].drawing, source: data.drawings[group].source))
                probabilities.append(rule.calibrated(answer))
                truth.append(data.all.labels[row])
            }
        }
        return ShapeOddsData(drawings: drawings, probabilities: probabilities, truth: truth, origin: "\(folds)-fold answers")
    }

    /// Writes the weights files (f32 and each of `formats`, each decoded back and evaluated on the held-out part)
    /// and the curves as one set under the output lock; `waiting` is called when another run holds the lock.
    /// Returns the plan written (its run identity and variants).
    public func export(
        _ result: TrainingResult, report: ClassificationReport, data: Data, outOfFold: ShapeOddsData? = nil, waiting: () -> Void = {}
    ) throws -> ExportPlan {
        // The checksums taken when the files were read (a file changed or removed since does not change them); one
        // that could not be taken is `unavailable` in its place.
        let checksum =
            data.checksums.allSatisfy { $0 == nil } ? nil : data.checksums.map { $0 ?? "unavailable" }.joined(separator: " + ")
        let metadata = TrainingMetadata(
            dataset: dataDescription + (data.negatives?.isUsed == true ? " + built-in negatives" : ""), datasetChecksum: checksum,
            seed: configuration.seed, epochs: result.bestEpoch,
            validationAccuracy: report.accuracy, epochsTrained: result.history.count)
        let preprocessing = task.preprocessing(rasterizer: rasterizer, windowing: windowing)
        let plan = try prepareExport(
            result.network, name: name, classNames: data.all.classNames,
            input: InputSpec(shape: inputShape, description: task.inputDescription), preprocessing: preprocessing, training: metadata,
            validation: data.heldOut, outOfFold: outOfFold,
            formats: formats, prefix: URL(fileURLWithPath: out))
        let curves = TrainingCurves.svg(result.history, title: "\(name) — \(dataDescription)", run: plan.run)
        try plan.write(adding: [(URL(fileURLWithPath: out + ".curves.svg"), Array(curves.utf8))], prefix: URL(fileURLWithPath: out), waiting: waiting)
        return plan
    }
}

/// What a training report must warn about, each as one line saying what to change: validation loss still falling
/// when the run ran out of epochs (or, failing that, the kept epoch one of its last two), a class with no validation
/// examples, and most validation answers under the decision floor (`uncertainShare`, with the floor `floor`).
public func trainingWarnings(
    _ result: TrainingResult, epochs: Int, report: ClassificationReport, uncertainShare: Double, floor: Double
) -> [String] {
    var warnings: [String] = []
    let losses = result.history.compactMap(\.validationLoss)
    if result.history.count == epochs, losses.count >= 5, let last = losses.last, let lowest = losses.indices.min(by: { losses[$0] < losses[$1] }),
        lowest >= losses.count - 2, losses[losses.count - 5] - last > 0.01 * losses[losses.count - 5]
    {
        warnings.append(
            String(
                format: "validation loss was still falling when training stopped at epoch %d (%.3f at epoch %d, %.3f at the last): "
                    + "train longer, e.g. --epochs %d", epochs, losses[losses.count - 5], epochs - 4, last, 2 * epochs))
    } else if result.history.count == epochs, epochs >= 2, result.bestEpoch >= epochs - 1 {
        // The kept epoch is one of the last two of a run that used every epoch: it was still getting better.
        warnings.append(
            "the best epoch was \(result.bestEpoch) of \(epochs), at the epoch limit: the model was still improving when "
                + "training stopped; train longer, e.g. --epochs \(2 * epochs)")
    }
    for label in report.labels where (report.perClass[label]?.support ?? 0) == 0 {
        warnings.append("class '\(label)' has no validation examples, so nothing measured it: give --validation FILE or more of its examples")
    }
    if uncertainShare > 0.5 {
        warnings.append(
            String(
                format: "%.0f%% of the validation answers fall under the %.0f%% decision floor (uncertain): the model is unsure of most "
                    + "inputs; train longer (--epochs), add examples or, for shapes, --augment", 100 * uncertainShare, 100 * floor))
    }
    return warnings
}
