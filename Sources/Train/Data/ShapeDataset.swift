import Foundation
import Models
import Tensor

/// A drawing from a shape dataset, with its label and where it stands in the file.
public struct LabeledDrawing: Sendable {
    /// The `drawing` column's value.
    public let id: String
    /// The `label` column's value.
    public let label: String
    /// The strokes.
    public let drawing: Drawing
    /// The drawing's first and last lines in the file.
    public let lines: ClosedRange<Int>
}

/// Reads shape datasets: CSV with columns `drawing,label,stroke,x,y` and optional `t`, in any order; the rows
/// of one drawing contiguous.
public enum ShapeDataset {
    /// The four shapes, in the order their classes are numbered when a dataset has only these.
    public static let standardLabels = ["circle", "triangle", "square", "star"]

    /// Every drawing of the file, checked: numbers finite, one label per drawing, rows contiguous, and each
    /// drawing something `rasterizer` can draw (two or more points, not all in one place).
    public static func read(_ path: String, rasterizer: ShapeRasterizer = ShapeRasterizer()) throws(DataError) -> [LabeledDrawing] {
        let (pending, layout) = try pendingDrawings(path, threads: 1, checkLabels: true)
        var seen = Set<String>()
        var drawings: [LabeledDrawing] = []
        for open in pending {
            guard seen.insert(open.id).inserted else {
                throw DataError(file: path, line: open.first, column: (layout.columns[0] + 1, "drawing"),
                                message: "drawing '\(open.id)' appears again after other drawings; the rows of one drawing must be together")
            }
            let item = open.finished(path: path, rasterizer: rasterizer)
            drawings.append(LabeledDrawing(id: item.id, label: item.label, drawing: try item.drawing.get(), lines: item.lines))
        }
        return drawings
    }

    /// The class names for a set of drawings: the standard four in their order when the labels are among them,
    /// otherwise every label in order of first appearance.
    public static func classNames(for drawings: [LabeledDrawing]) -> [String] {
        Train.classNames(for: drawings.map(\.label), standard: standardLabels)
    }

    /// The drawings as examples: one rasterized image per drawing, labelled by `classNames`; a label outside
    /// them is an error naming its line.
    public static func examples(
        _ drawings: [LabeledDrawing], classNames: [String], rasterizer: ShapeRasterizer, file: String
    ) throws(DataError) -> Examples {
        var values: [Float] = []
        values.reserveCapacity(drawings.count * rasterizer.size * rasterizer.size)
        var labels: [Int] = []
        for drawing in drawings {
            guard let label = classNames.firstIndex(of: drawing.label) else {
                throw DataError(file: file, line: drawing.lines.lowerBound,
                                message: "drawing '\(drawing.id)' has label '\(drawing.label)', which the model does not know "
                                    + "(it knows \(classNames.joined(separator: ", ")))")
            }
            values += rasterizer.rasterize(drawing.drawing).scalars
            labels.append(label)
        }
        return Examples(
            inputs: Tensor(shape: [drawings.count, rasterizer.size, rasterizer.size, 1], scalars: values),
            labels: labels, groups: Array(drawings.indices), classNames: classNames)
    }
}
