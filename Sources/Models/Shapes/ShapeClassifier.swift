import DataFiles
import Foundation
import Tensor
import WeightsFormat

/// What a shape recognizer says about a drawing.
package struct ShapePrediction: Sendable, Equatable {
    /// The most likely class.
    package let label: String
    /// Its probability, 0…1.
    package let confidence: Double
    /// Every class's probability, in label order.
    package let probabilities: [(label: String, probability: Double)]

    /// Creates a prediction from per-class probabilities.
    package init(labels: [String], probabilities: [Double]) {
        let best = probabilities.indices.max { probabilities[$0] < probabilities[$1] } ?? 0
        label = labels.indices.contains(best) ? labels[best] : ""
        confidence = probabilities.indices.contains(best) ? probabilities[best] : 0
        self.probabilities = zip(labels, probabilities).map { ($0, $1) }
    }

    package static func == (a: ShapePrediction, b: ShapePrediction) -> Bool {
        a.label == b.label && a.confidence == b.confidence
            && a.probabilities.map(\.label) == b.probabilities.map(\.label)
            && a.probabilities.map(\.probability) == b.probabilities.map(\.probability)
    }
}

extension ShapeRasterizer: ModelPreprocessing {
    /// `raster`.
    public static var kind: String { RecognitionTask.shape.kind.rawValue }
    /// `shape`.
    public static var taskName: String { RecognitionTask.shape.rawValue }
    /// Shape odds are the shape task's own.
    public static func problem(with rule: DecisionRule) -> String? { nil }
    /// `[size, size, 1]`: one grey image.
    public var inputShape: [Int] { [size, size, 1] }
}

extension TrainedClassifier where Preprocessing == ShapeRasterizer {
    /// The rasterizer the file describes.
    public var rasterizer: ShapeRasterizer { preprocessing }
}

/// The geometric recognizer's check for drawings that are none of its four closed shapes: the closing gap — the
/// distance between the first and last point over the drawing's size. The four shapes are closed outlines, so
/// their ends meet (the largest gap among 600 real drawings of 5 people is 0.51); above 0.6 a drawing is open.
/// Trained models learn "none of these" from an `other` class instead (see `DecisionRule`).
package enum ShapeUncertainty {
    /// Above this closing gap (a share of the drawing's size) the drawing is not a closed outline.
    package static let closingGapThreshold = 0.6

    /// The distance from the first point of the first stroke to the last point of the last, over the larger
    /// side of the bounding box.
    package static func closingGap(_ drawing: Drawing) -> Double {
        guard let bounds = drawing.bounds, let first = drawing.strokes.first?.first, let last = drawing.strokes.last?.last else { return 0 }
        let size = max(bounds.maxX - bounds.minX, bounds.maxY - bounds.minY)
        return size > 0 ? ((first.x - last.x) * (first.x - last.x) + (first.y - last.y) * (first.y - last.y)).squareRoot() / size : 0
    }
}
