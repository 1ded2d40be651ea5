import ArgumentParser
import Foundation
import Models
import Tensor

/// `classify shape DRAWING.csv|-`
struct Shape: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Recognize a drawing: circle, triangle, square or star.",
        discussion: """
            The drawing is a CSV file with columns x,y and optional t (ms) and stroke (0-based); - reads standard \
            input. Models are tried in turn: Weights/shape-classifier.int8.weights, then \
            Weights/shape-classifier.f32.weights (or only --weights when given), then the built-in geometric \
            recognizer, which needs no weights. Each failed attempt is reported on stderr. An answer with a \
            confidence under 90%, or for a drawing whose ends are more than 60% of its size apart, is reported as \
            uncertain: the drawing may be none of the four shapes.

            Example: classify shape Datasets/examples/star.csv --render star.svg
            """
    )

    @Argument(help: "The drawing (CSV), or - for standard input.")
    var drawing: String

    @Option(help: "A weights file to use instead of the shipped ones.")
    var weights: String?

    @Flag(help: "Print one JSON object: label, confidence, probabilities, model, attempts, uncertain.")
    var json = false

    @Option(help: "Also write an SVG: the strokes, the model's view of them and the probabilities.")
    var render: String?

    func run() throws {
        let input: Drawing
        do {
            input = try DrawingReader.read(drawing)
            if let problem = ShapeRasterizer().problem(with: input) {
                throw DataError(file: drawing, message: problem)
            }
        } catch {
            throw failure(error)
        }
        let candidates = weights.map { [$0] } ?? ["Weights/shape-classifier.int8.weights", "Weights/shape-classifier.f32.weights"]
        var links = candidates.map { path in
            Link<(prediction: ShapePrediction, view: Tensor?)>(name: modelName(ofWeights: path)) {
                let classifier = try ShapeClassifier(file: try ModelFile(contentsOf: URL(fileURLWithPath: path)))
                let view = classifier.rasterizer.rasterize(input)
                return (classifier.classify(image: view), view)
            }
        }
        links.append(Link(name: "geometric") { (try GeometricRecognizer().classify(input), nil) })
        let ((prediction, view), model, attempts) = try firstAnswer(links)
        let uncertainty = ShapeUncertainty.reason(prediction, for: input)
        if json {
            print(ShapeJSON(prediction: prediction, model: model, attempts: attempts, uncertain: uncertainty != nil).text)
        } else {
            print("\(prediction.label)  (confidence \(percentText(prediction.confidence)), model \(model))")
            for (label, probability) in prediction.probabilities {
                print("  " + label.padding(toLength: 10, withPad: " ", startingAt: 0) + percentText(probability))
            }
            if let uncertainty { print("uncertain: \(uncertainty)") }
        }
        if let render {
            do {
                try AtomicFile.write(Array(ShapeRendering.svg(input, view: view, prediction: prediction, model: model).utf8),
                                     to: URL(fileURLWithPath: render))
            } catch {
                throw failure(error)
            }
        }
    }
}

func percentText(_ value: Double) -> String { String(format: "%.1f%%", 100 * value) }

/// The stable JSON of `classify shape`.
struct ShapeJSON: Encodable {
    let label: String
    let confidence: Double
    let probabilities: [String: Double]
    let model: String
    let attempts: [Attempt]
    let uncertain: Bool

    init(prediction: ShapePrediction, model: String, attempts: [Attempt], uncertain: Bool) {
        label = prediction.label
        confidence = prediction.confidence
        probabilities = Dictionary(uniqueKeysWithValues: prediction.probabilities.map { ($0.label, $0.probability) })
        self.model = model
        self.attempts = attempts
        self.uncertain = uncertain
    }

    var text: String { jsonText(self) }
}

/// `--render`: the strokes as drawn, the model's view of them, and the probabilities as bars.
enum ShapeRendering {
    static func svg(_ drawing: Drawing, view: Tensor?, prediction: ShapePrediction, model: String) -> String {
        let panel = 240.0, gap = 20.0
        var parts = [#"<svg xmlns="http://www.w3.org/2000/svg" width="\#(Int(3 * panel + 4 * gap))" height="\#(Int(panel + 2 * gap + 24))" font-family="sans-serif" font-size="12">"#,
                     #"<rect width="100%" height="100%" fill="white"/>"#]
        // The strokes, scaled into the first panel (y down, as drawn).
        if let b = drawing.bounds {
            let extent = max(b.maxX - b.minX, b.maxY - b.minY, 1e-9)
            let scale = (panel - 20) / extent
            for stroke in drawing.strokes {
                let points = stroke.map { String(format: "%.1f,%.1f", gap + 10 + ($0.x - b.minX) * scale, gap + 10 + ($0.y - b.minY) * scale) }
                parts.append(#"<polyline fill="none" stroke="black" stroke-width="2" points="\#(points.joined(separator: " "))"/>"#)
            }
        }
        parts.append(#"<text x="\#(gap)" y="\#(panel + gap + 16)">input: \#(drawing.strokes.count) stroke(s), \#(drawing.pointCount) points</text>"#)
        // The model's view: one grey square per pixel.
        let left = panel + 2 * gap
        if let view {
            let size = view.shape[0], cell = panel / Double(size)
            for y in 0..<size {
                for x in 0..<size where view[y, x, 0] > 0 {
                    let grey = Int(255 * (1 - Double(view[y, x, 0])))
                    parts.append(#"<rect x="\#(left + Double(x) * cell)" y="\#(gap + Double(y) * cell)" width="\#(cell)" height="\#(cell)" fill="rgb(\#(grey),\#(grey),\#(grey))"/>"#)
                }
            }
            parts.append(#"<rect x="\#(left)" y="\#(gap)" width="\#(panel)" height="\#(panel)" fill="none" stroke="gray"/>"#)
            parts.append(#"<text x="\#(left)" y="\#(panel + gap + 16)">model's view: \#(size)×\#(size)</text>"#)
        } else {
            parts.append(#"<text x="\#(left)" y="\#(gap + 16)">(geometric recognizer: no image)</text>"#)
        }
        // The probabilities.
        let barsLeft = 2 * panel + 3 * gap
        for (row, entry) in prediction.probabilities.enumerated() {
            let y = gap + 20 + Double(row) * 44
            let width = (panel - 70) * entry.probability
            parts.append(#"<text x="\#(barsLeft)" y="\#(y + 14)">\#(entry.label)</text>"#)
            parts.append(#"<rect x="\#(barsLeft + 62)" y="\#(y)" width="\#(String(format: "%.1f", width))" height="20" fill="\#(entry.label == prediction.label ? "steelblue" : "lightgray")"/>"#)
            parts.append(#"<text x="\#(barsLeft + 66 + width)" y="\#(y + 14)">\#(percentText(entry.probability))</text>"#)
        }
        parts.append(#"<text x="\#(barsLeft)" y="\#(panel + gap + 16)">\#(prediction.label) (\#(model))</text>"#)
        parts.append("</svg>")
        return parts.joined(separator: "\n") + "\n"
    }
}
