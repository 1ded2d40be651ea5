import ArgumentParser
import DataFiles
import Datasets
import Foundation
import Models
import Tensor
import WeightsFormat

/// `classify shape DRAWING.csv|- ...`
struct Shape: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shape",
        abstract: "Recognize drawings: circle, triangle, square or star.",
        discussion: """
            A drawing is a CSV file with columns x,y and optional t (ms) and stroke (0-based); - reads standard \
            input. Several files, a folder (its .csv files) or --dataset (a dataset CSV with drawing,label,stroke,x,y \
            columns: one result per drawing) make a batch: one line per drawing, in input order, on every core; \
            a bad drawing reports its error in its place and the batch goes on; the exit code is the first \
            failure's (65 bad data, 66 missing file) or 0.

            Models are tried in turn: shape-classifier.int8, shape-classifier.f32 (or only --weights), then the \
            built-in geometric recognizer, which needs no weights. A transient failure is retried (--retries); \
            a missing, corrupt or incompatible weights file moves on at once; each failed attempt is one warning \
            line. Any rotation, size, direction and stretch is the same shape. A drawing the model takes for none \
            of its classes (a line, zigzag, spiral, heart, cloud, letter, ...) is reported as unknown, with the \
            nearest class as best; an answer whose calibrated confidence is under 70% is reported as uncertain, \
            with the reason.

            Examples: classify shape Datasets/examples/star.csv --render star.svg
                      classify shape --dataset Datasets/shapes/test.csv --json
            """
    )

    @Argument(help: "Drawings (CSV files or folders), or - for standard input.")
    var drawings: [String] = []

    @Option(help: "A dataset CSV (drawing,label,stroke,x,y[,t]): classify each of its drawings.")
    var dataset: String?

    @OptionGroup var chain: ChainOptions

    @Option(help: "Also write an SVG (one drawing only): the strokes, the model's view of them and the probabilities.")
    var render: String?

    func validate() throws {
        if dataset != nil && !drawings.isEmpty { throw ValidationError("give drawings or --dataset FILE, not both") }
        guard !drawings.isEmpty || dataset != nil else { throw ValidationError("give a drawing (a CSV file, a folder or -) or --dataset FILE") }
        if render != nil && (drawings.count != 1 || dataset != nil) {
            throw ValidationError("--render draws one drawing: give exactly one drawing file")
        }
    }

    func run() throws {
        try refuseOutputs([render], thatAreAnyOf: drawings + [dataset].compactMap { $0 } + (chain.weights.map(filesRead(byModel:)) ?? []))
        let (files, problems) = expandInputs(drawings)
        /// An input's drawing, or why it has none (a folder without drawings included).
        @Sendable func read(_ path: String) throws(DataError) -> Drawing {
            if let problem = problems[path] { throw problem }
            return try readDrawing(path)
        }
        // One drawing: bad input fails before any model is tried (no model can fix it).
        var input: Drawing?
        if dataset == nil && files.count == 1 && files == drawings {
            do {
                input = try read(files[0])
            } catch {
                throw inputFailure(error, input: files[0], json: chain.json)
            }
        }
        let recognizer = try chain.load(ShapeRecognizer.self, for: dataset.map { [$0] } ?? files)
        let source = chain.describe(recognizer.model, among: chain.variants(of: .shape))
        let format = ShapeLineFormat(recognizer: recognizer, json: chain.json, source: source)
        if let input { return try recognizeOne(input, file: files[0], recognizer: recognizer, format: format, weights: source.weights) }
        // A batch: one line per drawing, in input order.
        let threads = chain.jobs ?? Parallel.defaultThreads
        let status: Int32
        if let dataset {
            status = try recognizeDataset(dataset, recognizer: recognizer, format: format, threads: threads)
        } else {
            status = recognizeFiles(files, read: read, recognizer: recognizer, format: format, threads: threads)
        }
        if status != 0 { throw ExitCode(status) }
    }

    /// One drawing: its answer, the probabilities and the reason when uncertain (or its JSON), and `--render`.
    private func recognizeOne(_ input: Drawing, file: String, recognizer: ShapeRecognizer, format: ShapeLineFormat, weights: String?) throws {
        let answer: ShapeAnswer
        do {
            answer = try recognizer.recognize(input)
        } catch {
            throw inputFailure(error, input: file, json: chain.json)
        }
        // Fitted once, for the text or JSON and the picture.
        let fitted = answer.fitted(to: input)
        if chain.json {
            print(ShapeJSON(answer, fitted: fitted, weights: weights).text)
        } else {
            // The batch's line without the input's name.
            var headline: [UInt8] = []
            format.headline(
                label: Array(answer.label.utf8), confidence: answer.confidence,
                nearest: answer.label == DecisionRule.unknownLabel ? Array(answer.best.utf8) : nil, uncertain: answer.uncertain,
                to: &headline)
            print(String(decoding: headline, as: UTF8.self))
            // The headline first: whether to trust it comes before the details (`| head -2` shows both).
            if answer.uncertain, let reason = answer.reason { print("uncertain: \(reason)") }
            if let fitted { print("fitted \(fitted)") }
            for (label, probability) in answer.probabilities {
                print("  " + label.padding(toLength: 10, withPad: " ", startingAt: 0) + percentText(probability))
            }
        }
        if let render {
            do {
                try AtomicFile.write(Array(ShapeRendering.svg(input, answer: answer, fitted: fitted).utf8), to: URL(fileURLWithPath: render))
            } catch {
                throw failure(error)
            }
        }
    }

    /// Files (or the drawings of folders), 512 at a time: read on every core, answered by the library's batch API
    /// (`ShapeRecognizer.recognize(batch:threads:)`), then their lines made on every core and printed. Returns the
    /// first failure's status, or 0.
    private func recognizeFiles(
        _ files: [String], read: @escaping @Sendable (String) throws(DataError) -> Drawing, recognizer: ShapeRecognizer,
        format: ShapeLineFormat, threads: Int
    ) -> Int32 {
        let current = FileChunk()
        let prepare: (Range<Int>) -> Void = { range in
            current.read(files[range], offset: range.lowerBound, threads: threads, with: read)
            current.answers = recognizer.recognize(batch: current.readable, threads: threads)
        }
        return runBatch(count: files.count, threads: threads, chunk: 512, block: 16, prepare: prepare) { index, bytes in
            guard let answers = current.answers else { preconditionFailure("Shape.recognizeFiles: a line made before its chunk was answered") }
            let (drawing, position) = (current.drawings[index - current.offset], current.positions[index - current.offset])
            let answer: Result<CompactShapeAnswer, DataError> =
                switch drawing {
                case let .failure(error): .failure(error)
                case .success: answers.error(at: position).map { .failure($0) } ?? .success(answers.answers[position])
                }
            guard format.isJSON else { return format.text(answer, input: Array(files[index].utf8), to: &bytes) }
            let outcome = format.json(
                answer.flatMap { _ in drawing.flatMap { drawing in answers.answer(at: position).map { ($0, drawing) } } }, input: files[index])
            bytes += outcome.line.utf8
            return outcome.status
        }
    }

    /// `--dataset`: each drawing answered as the dataset is parsed (a `Worker` per thread, on the same executor as
    /// the batch API), then their lines made in blocks on every core. Returns the first failure's status, or 0.
    private func recognizeDataset(_ dataset: String, recognizer: ShapeRecognizer, format: ShapeLineFormat, threads: Int) throws -> Int32 {
        if chain.json {
            let outcomes: [DatasetItem<ItemOutcome>]
            do {
                outcomes = try datasetDrawings(dataset, threads: threads) {
                    let worker = ShapeRecognizer.Worker(recognizer)
                    return { record in
                        format.json(
                            record.drawing.flatMap { drawing in Result { () throws(DataError) in (try worker.answer(drawing), drawing) } },
                            input: "\(dataset)#\(record.id)")
                    }
                }
            } catch {
                throw inputFailure(error, input: dataset, json: true)
            }
            return runBatch(count: outcomes.count, threads: threads, chunk: 1 << 16, block: 4096) { index, bytes in
                bytes += outcomes[index].value.line.utf8
                return outcomes[index].value.status
            }
        }
        let answers: [DatasetItem<Result<CompactShapeAnswer, DataError>>]
        do {
            answers = try datasetDrawings(dataset, threads: threads) {
                let worker = ShapeRecognizer.Worker(recognizer)
                return { record in record.drawing.flatMap { drawing in Result { () throws(DataError) in try worker.recognize(drawing) } } }
            }
        } catch {
            throw failure(error)
        }
        let prefix = Array("\(dataset)#".utf8)
        return runBatch(count: answers.count, threads: threads, chunk: 1 << 16, block: 4096) { index, bytes in
            // An id is the data's: shown with its control characters as `?` (JSON escapes them itself).
            format.text(answers[index].value, input: prefix, suffix: DataError.terminalSafe(answers[index].id), to: &bytes)
        }
    }
}

/// The one formatter of a batch's lines per output format (files, `--dataset` from a file or standard input): text
/// `INPUT  LABEL  (confidence P%, model M)[  nearest B][  uncertain]` from the compact answer, or one `ShapeJSON`
/// object from the whole one; a drawing that cannot be read or seen is `errorOutcome`'s line.
struct ShapeLineFormat: Sendable {
    let isJSON: Bool
    /// The model as answers name it, with where its weights came from (`ChainOptions.describe`).
    let model: [UInt8]
    /// The weights' path or `built-in`, for JSON; `nil` for the rule.
    let weights: String?
    let labels: [[UInt8]]
    let unknown = Array(DecisionRule.unknownLabel.utf8)

    init(recognizer: ShapeRecognizer, json: Bool, source: (text: String, weights: String?)) {
        isJSON = json
        model = Array(source.text.utf8)
        weights = source.weights
        labels = recognizer.classes.map { Array($0.utf8) }
    }

    /// `LABEL  (confidence P%, model M)[  nearest B][  uncertain]`: one answer's line, the same for one drawing and
    /// for each of a batch (which puts the input's name and two spaces before it).
    func headline(label: [UInt8], confidence: Double, nearest: [UInt8]?, uncertain: Bool, to bytes: inout [UInt8]) {
        bytes += label
        bytes += "  (confidence ".utf8
        PercentText.append(confidence, to: &bytes)
        bytes += ", model ".utf8
        bytes += model
        bytes.append(UInt8(ascii: ")"))
        if let nearest {
            bytes += "  nearest ".utf8
            bytes += nearest
        }
        if uncertain { bytes += "  uncertain".utf8 }
    }

    /// Appends the text line for `answer` (or its error), named `input` then `suffix` (a dataset's drawing id), to
    /// `bytes`; returns its status.
    func text(_ answer: Result<CompactShapeAnswer, DataError>, input: [UInt8], suffix: String = "", to bytes: inout [UInt8]) -> Int32 {
        switch answer {
        case let .success(answer):
            bytes += input
            bytes += suffix.utf8
            bytes += "  ".utf8
            headline(
                label: answer.isUnknown ? unknown : labels[answer.best], confidence: answer.confidence,
                nearest: answer.isUnknown ? labels[answer.best] : nil, uncertain: answer.uncertain, to: &bytes)
            return 0
        case let .failure(error):
            let outcome = errorOutcome(error, input: String(decoding: input, as: UTF8.self) + suffix, json: false)
            bytes += outcome.line.utf8
            return outcome.status
        }
    }

    /// The JSON line for `answer` (or why there is none), named `input`.
    func json(_ answer: Result<(ShapeAnswer, Drawing), DataError>, input: String) -> ItemOutcome {
        switch answer {
        case let .success((answer, drawing)):
            ItemOutcome(line: ShapeJSON(answer, fitted: answer.fitted(to: drawing), input: input, weights: weights).text, status: 0)
        case let .failure(error): errorOutcome(error, input: input, json: true)
        }
    }
}

/// One drawing file, checked for what no recognizer can see (too few points, no extent).
func readDrawing(_ path: String) throws(DataError) -> Drawing {
    let drawing = try DrawingReader.read(path)
    if let problem = ShapeRecognizer.problem(with: drawing) { throw DataError(file: path, message: problem) }
    return drawing
}

/// A share as the CLI prints it: `String(format: "%.1f%%", 100 * value)`, by `PercentText`.
func percentText(_ value: Double) -> String {
    var bytes: [UInt8] = []
    PercentText.append(value, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
}

/// The stable JSON of `classify shape`.
struct ShapeJSON: Encodable {
    let label: String
    let best: String?
    let confidence: Double
    let probabilities: [String: Double]
    let uncertain: Bool
    let reason: String?
    let model: String
    /// The weights file's path, or `built-in`; absent for the rule that needs none.
    let weights: String?
    let attempts: [ChainAttempt]
    let input: String?
    /// The outline the drawing aimed at and how neatly it was drawn; absent for `unknown`.
    let fitted: FittedJSON?

    /// `fitted` is `answer.fitted(to:)` of the drawing it answered.
    init(_ answer: ShapeAnswer, fitted: FittedShape?, input: String? = nil, weights: String?) {
        self.input = input
        self.fitted = fitted.map(FittedJSON.init)
        self.weights = weights
        label = answer.label
        best = answer.label == DecisionRule.unknownLabel ? answer.best : nil
        confidence = answer.confidence
        probabilities = Dictionary(uniqueKeysWithValues: answer.probabilities.map { ($0.label, $0.probability) })
        uncertain = answer.uncertain
        reason = answer.uncertain || answer.label == DecisionRule.unknownLabel ? answer.reason : nil
        model = modelName(answer.model)
        attempts = answer.attempts
    }

    /// The text `jsonText(self)` makes, written by `JSONWriter` (the conformance to `Encodable` is the reference
    /// the tests hold it to).
    var text: String {
        var writer = JSONWriter()
        write(to: &writer)
        return writer.text
    }

    /// The object, keys sorted.
    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("attempts")
        writer.beginArray()
        for attempt in attempts {
            writer.beginObject()
            writer.member("error", attempt.error)
            writer.member("kind", attempt.kind.rawValue)
            writer.member("model", attempt.model)
            writer.endObject()
        }
        writer.endArray()
        writer.member("best", best)
        writer.member("confidence", confidence)
        if let fitted { fitted.write(to: &writer) }
        writer.member("input", input)
        writer.member("label", label)
        writer.member("model", model)
        writer.key("probabilities")
        writer.beginObject()
        for (label, probability) in probabilities.sorted(by: { $0.key < $1.key }) {
            writer.key(label)
            writer.number(probability)
        }
        writer.endObject()
        writer.member("reason", reason)
        writer.key("uncertain")
        writer.bool(uncertain)
        writer.member("weights", weights)
        writer.endObject()
    }
}

/// `--render`: the strokes as drawn, the model's view of them, and the probabilities as bars.
enum ShapeRendering {
    /// The drawing as drawn, the image the model saw, and the answer: the verdict written out on top (uncertain or
    /// unknown said in words, with the reason), then a bar per class with its probability, all inside the picture.
    static func svg(_ drawing: Drawing, answer: ShapeAnswer, fitted: FittedShape?) -> String {
        let view = answer.view, model = answer.model
        let panel = 240.0, gap = 20.0, header = 52.0
        let width = 3 * panel + 4 * gap, top = header
        var parts = [
            #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(Int(width))" height="\#(Int(top + panel + gap + 40))" font-family="sans-serif" font-size="12">"#,
            #"<rect width="100%" height="100%" fill="white"/>"#,
        ]
        // The verdict, in words, across the top.
        let verdict: String
        if answer.label == DecisionRule.unknownLabel {
            verdict = "unknown: none of the classes (nearest \(answer.best))"
        } else {
            verdict = "\(answer.label), " + percentText(answer.confidence)
        }
        let verdictColor = answer.uncertain || answer.label == DecisionRule.unknownLabel ? "#b35900" : "black"
        parts.append(#"<text x="\#(gap)" y="24" font-size="16" font-weight="bold" fill="\#(verdictColor)">\#(escapeXML(verdict))</text>"#)
        let detail = (answer.uncertain ? "uncertain: \(answer.reason ?? "the model is not sure") · " : "") + "model \(model)"
        parts.append(
            #"<text x="\#(gap)" y="42" fill="\#(answer.uncertain ? "#b35900" : "dimgray")">\#(escapeXML(String(detail.prefix(120))))</text>"#)
        // The strokes, scaled into the first panel (y down, as drawn), keeping their proportions.
        if let b = drawing.bounds {
            let extent = max(b.maxX - b.minX, b.maxY - b.minY, 1e-9)
            let scale = (panel - 20) / extent
            /// A point of the drawing in the picture.
            func place(_ x: Double, _ y: Double) -> (Double, Double) { (gap + 10 + (x - b.minX) * scale, top + 10 + (y - b.minY) * scale) }
            for stroke in drawing.strokes {
                let points = stroke.map { point in
                    let (x, y) = place(point.x, point.y)
                    return String(format: "%.1f,%.1f", x, y)
                }
                parts.append(#"<polyline fill="none" stroke="black" stroke-width="2" points="\#(points.joined(separator: " "))"/>"#)
            }
            // The fitted outline over the strokes, dashed.
            if let fitted {
                parts.append(
                    fitted.svg(
                        place: place, scale: scale,
                        style: ##"fill="none" stroke="#d6336c" stroke-width="2" stroke-dasharray="6 4""##))
            }
        }
        parts.append(#"<rect x="\#(gap)" y="\#(top)" width="\#(panel)" height="\#(panel)" fill="none" stroke="gainsboro"/>"#)
        parts.append(#"<text x="\#(gap)" y="\#(top + panel + 16)">input: \#(drawing.strokes.count) stroke(s), \#(drawing.pointCount) points</text>"#)
        if let fitted {
            parts.append(
                ##"<text x="\##(gap)" y="\##(top + panel + 32)" fill="#d6336c">dashed: fitted \##(fitted.kind), \##(percentText(fitted.neatness)) neat</text>"##
            )
        }
        // The model's view: one grey square per pixel.
        let left = panel + 2 * gap
        if let view {
            let size = view.shape[0], cell = panel / Double(size)
            for y in 0..<size {
                for x in 0..<size where view[y, x, 0] > 0 {
                    let grey = Int(255 * (1 - Double(view[y, x, 0])))
                    parts.append(
                        #"<rect x="\#(left + Double(x) * cell)" y="\#(top + Double(y) * cell)" width="\#(cell)" height="\#(cell)" fill="rgb(\#(grey),\#(grey),\#(grey))"/>"#
                    )
                }
            }
            parts.append(#"<rect x="\#(left)" y="\#(top)" width="\#(panel)" height="\#(panel)" fill="none" stroke="gray"/>"#)
            parts.append(#"<text x="\#(left)" y="\#(top + panel + 16)">model's view: \#(size)×\#(size)</text>"#)
        } else {
            parts.append(#"<text x="\#(left)" y="\#(top + 16)">(geometric recognizer: no image)</text>"#)
        }
        // The probabilities: a bar each, the percentage after it, never past the picture's edge.
        let barsLeft = 2 * panel + 3 * gap, labelWidth = 62.0, textWidth = 50.0
        let longest = panel - labelWidth - textWidth
        for (row, entry) in answer.probabilities.enumerated() {
            let y = top + 8 + Double(row) * 40
            let barWidth = longest * min(max(entry.probability, 0), 1)
            let chosen = entry.label == answer.label || (answer.label == DecisionRule.unknownLabel && entry.label == DecisionRule.otherLabel)
            parts.append(#"<text x="\#(barsLeft)" y="\#(y + 14)">\#(escapeXML(String(entry.label.prefix(9))))</text>"#)
            parts.append(
                #"<rect x="\#(barsLeft + labelWidth)" y="\#(y)" width="\#(String(format: "%.1f", barWidth))" height="20" fill="\#(chosen ? "steelblue" : "lightgray")"/>"#
            )
            parts.append(
                #"<text x="\#(String(format: "%.1f", barsLeft + labelWidth + barWidth + 4))" y="\#(y + 14)">\#(percentText(entry.probability))</text>"#
            )
        }
        parts.append(#"<text x="\#(barsLeft)" y="\#(top + panel + 16)">probabilities</text>"#)
        parts.append("</svg>")
        return parts.joined(separator: "\n") + "\n"
    }

    /// `text` safe inside an SVG element.
    static func escapeXML(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}

/// One chunk of a batch of drawing files, as `Shape.recognizeFiles` prepares it before its lines are made: written on
/// one thread between chunks, read by the line makers while a chunk's lines are made (never both at once).
private final class FileChunk: @unchecked Sendable {
    /// The index of the chunk's first file in the batch.
    var offset = 0
    /// Each file's drawing, or why it has none.
    var drawings: [Result<Drawing, DataError>] = []
    /// Each file's place among `readable`, or −1.
    var positions: [Int] = []
    /// The drawings that were read, in order.
    var readable: [Drawing] = []
    /// Their answers.
    var answers: ShapeBatchAnswers?

    /// Reads `files` (the batch's from `offset`) on up to `threads` threads.
    func read(_ files: ArraySlice<String>, offset: Int, threads: Int, with read: @escaping @Sendable (String) throws(DataError) -> Drawing) {
        let names = Array(files)
        self.offset = offset
        drawings = Parallel.map(count: names.count, threads: threads) { index in Result { () throws(DataError) in try read(names[index]) } }
        positions = []
        readable = []
        for drawing in drawings {
            if case let .success(drawing) = drawing {
                positions.append(readable.count)
                readable.append(drawing)
            } else {
                positions.append(-1)
            }
        }
    }
}
