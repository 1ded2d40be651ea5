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

/// What a shape model makes of a drawing, as its weights file says: an image (`ShapeRasterizer`, the shipped
/// models and every network `classify train shape` trains), or its distances to a user's own drawings
/// (`GestureTemplates`, what `classify train shape` makes from one to ten drawings a class).
public enum ShapePreprocessing: ModelPreprocessing {
    /// The drawing rasterized into a grey image.
    case raster(ShapeRasterizer)
    /// The drawing compared with a user's templates.
    case templates(GestureTemplates)

    /// `raster`: the kind a shape model is named by in messages.
    public static var kind: String { ShapeRasterizer.kind }
    /// `raster` and `gesture-templates`.
    public static var kinds: [String] { [ShapeRasterizer.kind, GestureTemplates.kind] }
    /// `shape`.
    public static var taskName: String { ShapeRasterizer.taskName }
    /// Shape odds are the shape task's own.
    public static func problem(with rule: DecisionRule) -> String? { nil }

    /// The preprocessing a header's `preprocessing` object describes, by its `kind`.
    public init(parameters: [String: JSONValue]) throws(DataError) {
        if case .string(GestureTemplates.kind)? = parameters["kind"] {
            self = .templates(try GestureTemplates(parameters: parameters))
        } else {
            self = .raster(try ShapeRasterizer(parameters: parameters))
        }
    }

    /// The image's shape, or the templates' `classCount + 1` distances.
    public var inputShape: [Int] {
        switch self {
        case let .raster(rasterizer): rasterizer.inputShape
        case let .templates(templates): [templates.classCount + 1]
        }
    }

    /// The model input for `drawing` (one `ShapeRecognizer.problem(with:)` accepts) into `input`, `inputShape`'s
    /// count of values.
    public func input(for drawing: Drawing, into input: UnsafeMutableBufferPointer<Float>) {
        switch self {
        case let .raster(rasterizer): rasterizer.rasterize(drawing, into: input)
        case let .templates(templates): templates.input(for: drawing, into: input)
        }
    }

    /// The rasterizer, or `nil` for templates.
    public var rasterizer: ShapeRasterizer? {
        if case let .raster(rasterizer) = self { rasterizer } else { nil }
    }
}

extension TrainedClassifier where Preprocessing == ShapePreprocessing {
    /// The rasterizer the file describes, or `nil` for a model of gesture templates.
    public var rasterizer: ShapeRasterizer? { preprocessing.rasterizer }
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
