import ArgumentParser
import Foundation
import Models
import Train
import Tensor

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
        if render != nil && (drawings.count != 1 || dataset != nil) { throw ValidationError("--render draws one drawing: give exactly one drawing file") }
    }

    func run() throws {
        let files: [String]
        do {
            files = try expandInputs(drawings)
        } catch {
            throw failure(error)
        }
        let single = dataset == nil && files.count == 1 && files == drawings
        // Bad input fails before any model is tried: no model can fix it.
        var input: Drawing?
        if single {
            do {
                input = try readDrawing(files[0])
            } catch {
                throw failure(error)
            }
        }
        let recognizer = try chain.loadShapeRecognizer()
        if let input {
            let answer: ShapeAnswer
            do {
                answer = try recognizer.recognize(input)
            } catch {
                throw failure(error)
            }
            if chain.json {
                print(ShapeJSON(answer).text)
            } else {
                print(answer.label == DecisionRule.unknownLabel
                      ? "unknown  (none of the classes, \(percentText(answer.confidence)); nearest \(answer.best); model \(answer.model))"
                      : "\(answer.label)  (confidence \(percentText(answer.confidence)), model \(answer.model))")
                for (label, probability) in answer.probabilities {
                    print("  " + label.padding(toLength: 10, withPad: " ", startingAt: 0) + percentText(probability))
                }
                if answer.uncertain, let reason = answer.reason { print("uncertain: \(reason)") }
            }
            if let render {
                do {
                    try AtomicFile.write(Array(ShapeRendering.svg(input, answer: answer).utf8), to: URL(fileURLWithPath: render))
                } catch {
                    throw failure(error)
                }
            }
            return
        }
        // A batch.
        let threads = chain.jobs ?? ProcessInfo.processInfo.activeProcessorCount
        if let dataset, dataset != "-" {
            let status: Int32?
            do {
                status = try runShapeDataset(dataset, recognizer: recognizer, threads: threads, json: chain.json)
            } catch {
                throw failure(error)
            }
            if let status {
                if status != 0 { throw ExitCode(status) }
                return
            }
        }
        let items: [(name: String, drawing: @Sendable () throws(DataError) -> Drawing)]
        if let dataset {
            do {
                items = try ShapeDataset.items(dataset, threads: threads).map { item in
                    ("\(dataset)#\(item.id)", { () throws(DataError) in try item.drawing.get() })
                }
            } catch {
                throw failure(error)
            }
        } else {
            items = files.map { path in (path, { () throws(DataError) in try readDrawing(path) }) }
        }
        let json = chain.json
        let status = runBatch(count: items.count, threads: threads) { index in
            let (name, read) = items[index]
            do {
                let answer = try recognizer.recognize(try read())
                if json { return ItemOutcome(line: ShapeJSON(answer, input: name).text, status: 0) }
                return ItemOutcome(line: "\(name)  \(answer.label)  (confidence \(percentText(answer.confidence)), model \(answer.model))"
                                   + (answer.label == DecisionRule.unknownLabel ? "  nearest \(answer.best)" : "")
                                   + (answer.uncertain ? "  uncertain" : ""), status: 0)
            } catch {
                return errorOutcome(error, input: name, json: json)
            }
        }
        if status != 0 { throw ExitCode(status) }
    }
}

/// `classify shape --dataset FILE`: the file parsed and its drawings recognized on `threads` threads at once (each
/// with a `ShapeRecognizer.Worker` of its own), the lines formatted in parallel and written in large blocks — the
/// output, errors and exit status of `runBatch` over `ShapeDataset.items`, in file order. `nil` when the file
/// must be read row by row (`DrawingReader.readDataset`), before anything is printed.
func runShapeDataset(_ dataset: String, recognizer: ShapeRecognizer, threads: Int, json: Bool) throws(DataError) -> Int32? {
    BLAS.maxThreads = 1
    guard json else {
        guard let items = try DrawingReader.readDataset(dataset, threads: threads, makeWorker: {
            let worker = ShapeRecognizer.Worker(recognizer)
            return { record in record.drawing.flatMap { drawing in Result { () throws(DataError) in try worker.recognize(drawing) } } }
        }) else { return nil }
        return writeShapeLines(items, dataset: dataset, recognizer: recognizer, threads: threads)
    }
    // JSON: each line made by the worker from the whole answer; printed as every batch prints its lines.
    guard let items = try DrawingReader.readDataset(dataset, threads: threads, makeWorker: {
        { record in
            let name = "\(dataset)#\(record.id)"
            do {
                return ItemOutcome(line: ShapeJSON(try recognizer.recognize(try record.drawing.get()), input: name).text, status: 0)
            } catch {
                return errorOutcome(error, input: name, json: true)
            }
        }
    }) else { return nil }
    let outcomes = items.map(\.value)
    return runBatch(count: outcomes.count, threads: threads, chunk: 1 << 14) { outcomes[$0] }
}

/// Writes one text line per dataset drawing — `NAME  LABEL  (confidence P%, model M)[  nearest B][  uncertain]`
/// or `NAME  error: MESSAGE` — formatted in blocks on `threads` threads; returns the first failure's status or 0
/// (74 when standard output cannot be written), having reported how many failed.
func writeShapeLines(_ items: [DatasetItem<Result<CompactShapeAnswer, DataError>>], dataset: String, recognizer: ShapeRecognizer,
                     threads: Int) -> Int32 {
    let classes = recognizer.classes
    let modelBytes = Array(recognizer.model.utf8), datasetBytes = Array(dataset.utf8)
    let labelBytes = classes.map { Array($0.utf8) }, unknownBytes = Array(DecisionRule.unknownLabel.utf8)
    let block = 4096
    let blocks = parallelMap(count: (items.count + block - 1) / block, threads: threads) { index in
        var bytes: [UInt8] = []
        bytes.reserveCapacity(block * 100)
        var status: Int32 = 0, failures = 0
        for item in items[(index * block)..<min(items.count, (index + 1) * block)] {
            switch item.value {
            case let .success(answer):
                bytes += datasetBytes
                bytes.append(UInt8(ascii: "#"))
                bytes += item.id.utf8
                bytes += "  ".utf8
                bytes += answer.isUnknown ? unknownBytes : labelBytes[answer.best]
                bytes += "  (confidence ".utf8
                PercentText.append(answer.confidence, to: &bytes)
                bytes += ", model ".utf8
                bytes += modelBytes
                bytes.append(UInt8(ascii: ")"))
                if answer.isUnknown {
                    bytes += "  nearest ".utf8
                    bytes += labelBytes[answer.best]
                }
                if answer.uncertain { bytes += "  uncertain".utf8 }
            case let .failure(error):
                let outcome = errorOutcome(error, input: "\(dataset)#\(item.id)", json: false)
                bytes += outcome.line.utf8
                failures += 1
                if status == 0 { status = outcome.status }
            }
            bytes.append(UInt8(ascii: "\n"))
        }
        return (text: String(decoding: bytes, as: UTF8.self), status: status, failures: failures)
    }
    for block in blocks {
        guard StandardStreams.write(block.text) else { return ExitStatus.ioError }
    }
    let failures = blocks.reduce(0) { $0 + $1.failures }
    if failures > 0 { reportError("\(failures) of \(items.count) inputs failed; each is reported in its place above") }
    return blocks.first { $0.status != 0 }?.status ?? 0
}

/// One drawing file, checked for what no recognizer can see (too few points, no extent).
func readDrawing(_ path: String) throws(DataError) -> Drawing {
    let drawing = try DrawingReader.read(path)
    if let problem = ShapeRecognizer.problem(with: drawing) { throw DataError(file: path, message: problem) }
    return drawing
}

func percentText(_ value: Double) -> String { String(format: "%.1f%%", 100 * value) }

/// The stable JSON of `classify shape`.
struct ShapeJSON: Encodable {
    let label: String
    let best: String?
    let confidence: Double
    let probabilities: [String: Double]
    let uncertain: Bool
    let reason: String?
    let model: String
    let attempts: [ChainAttempt]
    let input: String?

    init(_ answer: ShapeAnswer, input: String? = nil) {
        self.input = input
        label = answer.label
        best = answer.label == DecisionRule.unknownLabel ? answer.best : nil
        confidence = answer.confidence
        probabilities = Dictionary(uniqueKeysWithValues: answer.probabilities.map { ($0.label, $0.probability) })
        uncertain = answer.uncertain
        reason = answer.uncertain || answer.label == DecisionRule.unknownLabel ? answer.reason : nil
        model = answer.model
        attempts = answer.attempts
    }

    var text: String { jsonText(self) }
}

/// `--render`: the strokes as drawn, the model's view of them, and the probabilities as bars.
enum ShapeRendering {
    /// The drawing as drawn, the image the model saw, and the answer: the verdict written out on top (uncertain or
    /// unknown said in words, with the reason), then a bar per class with its probability, all inside the picture.
    static func svg(_ drawing: Drawing, answer: ShapeAnswer) -> String {
        let view = answer.view, model = answer.model
        let panel = 240.0, gap = 20.0, header = 52.0
        let width = 3 * panel + 4 * gap, top = header
        var parts = [#"<svg xmlns="http://www.w3.org/2000/svg" width="\#(Int(width))" height="\#(Int(top + panel + gap + 24))" font-family="sans-serif" font-size="12">"#,
                     #"<rect width="100%" height="100%" fill="white"/>"#]
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
        parts.append(#"<text x="\#(gap)" y="42" fill="\#(answer.uncertain ? "#b35900" : "dimgray")">\#(escapeXML(String(detail.prefix(120))))</text>"#)
        // The strokes, scaled into the first panel (y down, as drawn), keeping their proportions.
        if let b = drawing.bounds {
            let extent = max(b.maxX - b.minX, b.maxY - b.minY, 1e-9)
            let scale = (panel - 20) / extent
            for stroke in drawing.strokes {
                let points = stroke.map { String(format: "%.1f,%.1f", gap + 10 + ($0.x - b.minX) * scale, top + 10 + ($0.y - b.minY) * scale) }
                parts.append(#"<polyline fill="none" stroke="black" stroke-width="2" points="\#(points.joined(separator: " "))"/>"#)
            }
        }
        parts.append(#"<rect x="\#(gap)" y="\#(top)" width="\#(panel)" height="\#(panel)" fill="none" stroke="gainsboro"/>"#)
        parts.append(#"<text x="\#(gap)" y="\#(top + panel + 16)">input: \#(drawing.strokes.count) stroke(s), \#(drawing.pointCount) points</text>"#)
        // The model's view: one grey square per pixel.
        let left = panel + 2 * gap
        if let view {
            let size = view.shape[0], cell = panel / Double(size)
            for y in 0..<size {
                for x in 0..<size where view[y, x, 0] > 0 {
                    let grey = Int(255 * (1 - Double(view[y, x, 0])))
                    parts.append(#"<rect x="\#(left + Double(x) * cell)" y="\#(top + Double(y) * cell)" width="\#(cell)" height="\#(cell)" fill="rgb(\#(grey),\#(grey),\#(grey))"/>"#)
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
            parts.append(#"<rect x="\#(barsLeft + labelWidth)" y="\#(y)" width="\#(String(format: "%.1f", barWidth))" height="20" fill="\#(chosen ? "steelblue" : "lightgray")"/>"#)
            parts.append(#"<text x="\#(String(format: "%.1f", barsLeft + labelWidth + barWidth + 4))" y="\#(y + 14)">\#(percentText(entry.probability))</text>"#)
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
