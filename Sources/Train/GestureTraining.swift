import DataFiles
import Datasets
import Foundation
import Models
import Tensor
import WeightsFormat

/// A shape model from a few drawings a class (one to `maximumDrawingsPerClass`), the commonest retraining a user
/// does: their own gestures. A network trained on so few learns them badly (74.8% with 5 drawings of 16 gestures, a
/// nearest-template matcher 99.2%), so each drawing is kept as a template (`GestureTemplates`) and a one-layer
/// network over the template distances turns them into probabilities:
///
/// - a class's logit is its distance beyond the nearest class's over a temperature, fitted by leaving each drawing
///   out of the templates in turn (the likeliest of a fixed set), or 0.25 when no class has two drawings;
/// - the reject class's logit grows with the drawing's distance from its nearest template against the spread of
///   the user's own drawings: it wins past 1.5 times the 90th percentile of the left-out drawings' distances (or,
///   with one drawing a class, past 3, two measures each at their typical spread).
///
/// Nothing is shuffled or initialized at random: the same drawings give the same file.
public enum GestureTraining {
    /// The most drawings of a class `classify train shape` matches as templates by default; more train a network.
    public static let maximumDrawingsPerClass = 10
    /// The temperature when no class has two drawings to fit it on.
    public static let defaultTemperature = 0.25
    /// The temperatures the fit chooses among.
    static let temperatures = [0.05, 0.08, 0.12, 0.18, 0.25, 0.35, 0.5, 0.7, 1.0]
    /// The reject class wins past `rejectMargin` times the left-out drawings' 90th percentile distance.
    public static let rejectMargin = 1.5
    /// With one drawing a class: the reject distance, in units of the two spreads (each measure at its typical).
    public static let singleDrawingRejectDistance = 3.0
    /// How sharply the reject class takes over around its distance (logit per reject distance).
    public static let rejectSharpness = 8.0

    /// Whether `classify train shape` matches these classes' drawings as templates by default: every class but
    /// `other` has 1 to `maximumDrawingsPerClass` drawings, there are at least 2 such classes, and no more drawings
    /// than a file may hold templates (`GestureTemplates.maximumTemplates`).
    public static func applies(toCounts counts: [String: Int]) -> Bool {
        let classes = counts.filter { $0.key != DecisionRule.otherLabel }
        return classes.count >= 2 && classes.values.allSatisfy { (1...maximumDrawingsPerClass).contains($0) }
            && classes.values.reduce(0, +) <= GestureTemplates.maximumTemplates
    }

    /// What training made: the weights file and the report's lines.
    public struct Result: Sendable {
        /// The model: templates in its preprocessing header, a dense layer and a softmax.
        public let file: ModelFile
        /// How it was trained, for the report: classes, templates, the fitted temperature and reject distance, and
        /// how the left-out drawings and the built-in negatives fared.
        public let report: [String]
        /// The temperature fitted (or the default).
        public let temperature: Double
        /// The reject distance, in units of the user's spread.
        public let rejectDistance: Double
        /// Inputs the network sees (the left-out drawings', or the templates' own), to calibrate int8 activations.
        let calibration: Tensor

        /// The files to write: `<prefix>.f32.weights` and one per quantized format, each read back, with one run
        /// identity (the checksum of the f32 file written without it); written as one set by `ExportPlan.write`.
        public func exportPlan(formats: [StorageFormat], prefix: URL) throws(WeightsFileError) -> ExportPlan {
            let model = file.makeModel()
            let (run, variants, contents) = try exportVariants(
                of: model, formats: formats, prefix: prefix, training: file.training ?? TrainingMetadata(), calibration: calibration,
                file: { (format, training) throws(WeightsFileError) in
                    try ModelFile(
                        name: file.name, model: model, labels: file.labels, input: file.input, preprocessing: file.preprocessing,
                        training: training, decision: file.decision, format: format)
                },
                accuracy: { $0.training?.validationAccuracy ?? 1 })
            return ExportPlan(run: run, variants: variants, contents: contents, validationUncertain: 0, shapeOddsFit: nil)
        }
    }

    /// Templates of `drawings` (labelled; `other` drawings are not templates but are counted in the report as
    /// negatives), a network over them, and the weights file named `name`; `dataset` and `checksum` are recorded
    /// in it. A drawing no recognizer can see is a `DataError` naming it.
    public static func train(
        _ drawings: [(id: String, label: String, drawing: Drawing)], name: String, dataset: String?, checksum: String?,
        file: String
    ) throws(DataError) -> Result {
        let classes = Set(drawings.map(\.label)).subtracting([DecisionRule.otherLabel]).sorted()
        guard classes.count >= 2 else {
            throw DataError(
                file: file, message: "gesture templates need at least 2 classes besides '\(DecisionRule.otherLabel)', found \(classes.count)")
        }
        var templates: [GestureTemplates.Template] = []
        var negatives: [Drawing] = []
        for item in drawings {
            if let problem = ShapeRecognizer.problem(with: item.drawing) {
                throw DataError(file: file, message: "drawing '\(item.id)': \(problem)")
            }
            guard let index = classes.firstIndex(of: item.label) else {
                negatives.append(item.drawing)
                continue
            }
            if let template = GestureTemplates.template(of: item.drawing, classIndex: index) { templates.append(template) }
        }
        // Refused before the pairs are measured (2,400 drawings would take 45 s to be refused).
        guard templates.count <= GestureTemplates.maximumTemplates else {
            throw DataError(
                file: file,
                message: "gesture templates: at most \(GestureTemplates.maximumTemplates) drawings, got \(templates.count); "
                    + "train a network (--method network)")
        }
        // Every pair's distances, once: the spreads, the left-out inputs and the calibration inputs read them.
        let table = distanceTable(templates)
        let scales = spreads(templates, table: table)
        let model = try GestureTemplates(
            classCount: classes.count, templates: templates, sequenceScale: scales.sequence, cloudScale: scales.cloud)
        func input(of index: Int, leftOut: Bool) -> [Float] {
            [Float](unsafeUninitializedCapacity: classes.count + 1) { buffer, count in
                model.input(
                    sequenceDistances: table.sequence[index], cloudDistances: table.cloud[index], skipping: leftOut ? index : nil, into: buffer)
                count = classes.count + 1
            }
        }
        // Left out in turn: the inputs each drawing gets from the others, for the temperature and the reject distance.
        let counts = Dictionary(grouping: templates, by: \.classIndex).mapValues(\.count)
        let leftOut: [(input: [Float], classIndex: Int)] = templates.indices.compactMap { index in
            let classIndex = templates[index].classIndex
            return counts[classIndex, default: 0] >= 2 ? (input(of: index, leftOut: true), classIndex) : nil
        }
        let temperature = leftOut.isEmpty ? defaultTemperature : fitTemperature(leftOut)
        let nearness = leftOut.map { Double($0.input[classes.count]) }.sorted()
        let rejectDistance =
            nearness.isEmpty ? singleDrawingRejectDistance : rejectMargin * nearness[min(nearness.count - 1, Int(0.9 * Double(nearness.count)))]
        let network = makeNetwork(classes: classes.count, temperature: temperature, rejectDistance: rejectDistance)
        let labels = classes + [DecisionRule.otherLabel]
        let rule = DecisionRule(temperature: 1, rejectLabel: DecisionRule.otherLabel)
        let leftOutRight = leftOut.filter { argmax(network, $0.input) == $0.classIndex }.count
        let built: ModelFile
        do throws(WeightsFileError) {
            built = try ModelFile(
                name: name, model: network, labels: labels,
                input: InputSpec(
                    shape: [classes.count + 1],
                    description: "each class's distance from the drawing beyond the nearest class's, then the nearest template's (gesture templates)"),
                preprocessing: model.parameters,
                training: TrainingMetadata(
                    dataset: dataset, datasetChecksum: checksum,
                    validationAccuracy: leftOut.isEmpty ? nil : Double(leftOutRight) / Double(leftOut.count)),
                decision: rule)
        } catch {
            throw DataError(file: file, message: error.problemSentence)
        }
        var report = [
            "gesture templates  \(templates.count) drawings of \(classes.count) classes kept as templates "
                + "(1 to \(maximumDrawingsPerClass) drawings a class: matched by path and by point cloud, not trained as a network)",
            leftOut.isEmpty
                ? "temperature  \(temperature) (the default: no class has two drawings to fit it on)"
                : "temperature  \(temperature), fitted leaving each drawing out in turn: \(leftOutRight) of \(leftOut.count) left-out drawings "
                    + "recognized by the others",
            String(
                format: "reject       'other' past %.2f times the spread of your drawings (%@)", rejectDistance,
                nearness.isEmpty ? "the default with one drawing a class" : "1.5 times the 90th percentile of the left-out drawings' distances"),
        ]
        let classifier: ShapeClassifier
        do {
            classifier = try ShapeClassifier(file: ModelFile(bytes: built.encoded(), path: name))
        } catch let error as DataError {
            throw error
        } catch {
            throw DataError(file: file, message: "the model made cannot be read back: \(error)")
        }
        let recognizer = ShapeRecognizer(engine: .model(classifier), model: name)
        var generator = ShapeGenerator(seed: 0x4745_5354_5552_4553)
        let generated = (0..<200).map { _ in generator.draw(ShapeDataset.otherLabel, by: generator.person()) }
        func refused(_ drawings: [Drawing]) -> Int {
            drawings.filter { drawing in
                guard let answer = try? recognizer.recognize(drawing) else { return true }
                return answer.label == DecisionRule.unknownLabel || answer.uncertain
            }.count
        }
        report.append(
            "negatives    \(refused(generated)) of \(generated.count) generated non-shapes (objects, letters, scribbles) answered unknown or uncertain"
                + (negatives.isEmpty ? "" : "; \(refused(negatives)) of your \(negatives.count) '\(DecisionRule.otherLabel)' drawings"))
        let calibrationRows = leftOut.isEmpty ? templates.indices.map { input(of: $0, leftOut: false) } : leftOut.map(\.input)
        return Result(
            file: built, report: report, temperature: temperature, rejectDistance: rejectDistance,
            calibration: Tensor(shape: [calibrationRows.count, classes.count + 1], scalars: calibrationRows.flatMap { $0 }))
    }

    /// The path and cloud distances between every two templates (both measures are symmetric: each pair is
    /// measured once).
    static func distanceTable(_ templates: [GestureTemplates.Template]) -> (sequence: [[Double]], cloud: [[Double]]) {
        let count = templates.count
        var table = (
            sequence: [[Double]](repeating: [Double](repeating: 0, count: count), count: count),
            cloud: [[Double]](repeating: [Double](repeating: 0, count: count), count: count)
        )
        withUnsafeTemporaryAllocation(of: Bool.self, capacity: GestureTemplates.cloudPoints) { matched in
            for i in 0..<count {
                for j in (i + 1)..<count {
                    let (a, b) = (templates[i], templates[j])
                    let path = a.sequence.withUnsafeBufferPointer { x in
                        b.sequence.withUnsafeBufferPointer { GestureTemplates.sequenceDistance(x, $0) }
                    }
                    let cloud = a.cloud.withUnsafeBufferPointer { x in
                        b.cloud.withUnsafeBufferPointer { GestureTemplates.cloudDistance(x, $0, matched: matched) }
                    }
                    (table.sequence[i][j], table.sequence[j][i], table.cloud[i][j], table.cloud[j][i]) = (path, path, cloud, cloud)
                }
            }
        }
        return table
    }

    /// The typical distance (path, cloud) from a template to the nearest other of its class: the median over the
    /// templates that have one; with none (one drawing a class), half the median distance to the nearest template
    /// of another class. `table` is `distanceTable(templates)`.
    static func spreads(_ templates: [GestureTemplates.Template], table: (sequence: [[Double]], cloud: [[Double]])) -> (
        sequence: Double, cloud: Double
    ) {
        var same: (sequence: [Double], cloud: [Double]) = ([], []), other: (sequence: [Double], cloud: [Double]) = ([], [])
        for (i, a) in templates.enumerated() {
            var nearest: (same: (Double, Double), other: (Double, Double)) = ((.infinity, .infinity), (.infinity, .infinity))
            for (j, b) in templates.enumerated() where i != j {
                let (path, cloud) = (table.sequence[i][j], table.cloud[i][j])
                if a.classIndex == b.classIndex {
                    nearest.same = (min(nearest.same.0, path), min(nearest.same.1, cloud))
                } else {
                    nearest.other = (min(nearest.other.0, path), min(nearest.other.1, cloud))
                }
            }
            if nearest.same.0.isFinite {
                same.sequence.append(nearest.same.0)
                same.cloud.append(nearest.same.1)
            }
            if nearest.other.0.isFinite {
                other.sequence.append(nearest.other.0)
                other.cloud.append(nearest.other.1)
            }
        }
        if !same.sequence.isEmpty { return (GestureTemplates.median(same.sequence), GestureTemplates.median(same.cloud)) }
        return (GestureTemplates.median(other.sequence) / 2, GestureTemplates.median(other.cloud) / 2)
    }

    /// The temperature among `temperatures` under which the left-out drawings' own classes are likeliest.
    static func fitTemperature(_ leftOut: [(input: [Float], classIndex: Int)]) -> Double {
        let classes = (leftOut.first?.input.count ?? 1) - 1
        func logLikelihood(_ temperature: Double) -> Double {
            leftOut.reduce(0.0) { sum, item in
                let logits = (0..<classes).map { -Double(item.input[$0]) / temperature }
                let top = logits.max() ?? 0
                let total = logits.reduce(0.0) { $0 + exp($1 - top) }
                return sum + logits[item.classIndex] - top - log(total)
            }
        }
        return temperatures.max { logLikelihood($0) < logLikelihood($1) } ?? defaultTemperature
    }

    /// Dense (classes + 1 → classes + 1) and a softmax: class `c`'s logit `−distance_c / temperature`, the reject
    /// class's `sharpness · (nearness − rejectDistance) / rejectDistance`.
    static func makeNetwork(classes: Int, temperature: Double, rejectDistance: Double) -> Sequential {
        let width = classes + 1
        var weight = [Float](repeating: 0, count: width * width)
        for c in 0..<classes { weight[c * width + c] = Float(-1 / temperature) }
        weight[classes * width + classes] = Float(rejectSharpness / rejectDistance)
        var bias = [Float](repeating: 0, count: width)
        bias[classes] = Float(-rejectSharpness)
        return Sequential([
            Dense(weight: Tensor(shape: [width, width], scalars: weight), bias: Tensor(shape: [width], scalars: bias)),
            Activation(.softmax),
        ])
    }

    /// The class the network's outputs favour for one input (the reject class not counted).
    static func argmax(_ network: Sequential, _ input: [Float]) -> Int {
        let output = network(Tensor(shape: [1, input.count], scalars: input)).scalars
        return (0..<(input.count - 1)).max { output[$0] < output[$1] } ?? 0
    }
}
