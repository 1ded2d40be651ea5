import DataFiles
import Foundation
import Models
import Tensor
import WeightsFormat

/// A drawing from a shape dataset, with its label and where it stands in the file.
package struct LabeledDrawing: Sendable {
    /// A drawing labelled `label`, found at `lines` of its file.
    package init(id: String, label: String, drawing: Drawing, lines: ClosedRange<Int>) {
        self.id = id
        self.label = label
        self.drawing = drawing
        self.lines = lines
    }

    /// The `drawing` column's value.
    package let id: String
    /// The `label` column's value.
    package let label: String
    /// The strokes.
    package let drawing: Drawing
    /// The drawing's first and last lines in the file.
    package let lines: ClosedRange<Int>
}

/// Reads shape datasets: CSV with columns `drawing,label,stroke,x,y` and optional `t`, in any order; the rows
/// of one drawing contiguous. `drawings(_:threads:checkLabels:makeWorker:)` is the one reader.
package enum ShapeDataset {
    /// The four shapes, in the order their classes are numbered when a dataset has only these.
    package static let standardLabels = ["circle", "triangle", "square", "star"]
    /// The label of drawings that are none of the classes (the reject class; see `DecisionRule`).
    package static let otherLabel = DecisionRule.otherLabel

    /// Every drawing of the file, checked, for training: numbers finite, one label per drawing, rows contiguous,
    /// and each drawing something a recognizer can see (two or more points, not all in one place). The first
    /// problem in file order is thrown.
    package static func read(_ path: String, threads: Int = 1) throws(DataError) -> [LabeledDrawing] {
        var drawings: [LabeledDrawing] = []
        for item in try ShapeDataset.drawings(path, threads: threads, checkLabels: true, makeWorker: { { $0 } }) {
            drawings.append(LabeledDrawing(id: item.id, label: item.label, drawing: try item.value.drawing.get(), lines: item.lines))
        }
        return drawings
    }
}
