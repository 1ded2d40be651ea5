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
        var reader = try CSVReader(path: path)
        let columns = try reader.columns(["drawing", "label", "stroke", "x", "y"])
        let tColumn = reader.optionalColumn("t")
        var drawings: [LabeledDrawing] = []
        var finished = Set<String>()
        var current: (id: String, label: String, first: Int, strokes: [Int: [DrawingPoint]], order: [Int])?

        func close(at lastLine: Int) throws(DataError) {
            guard let open = current else { return }
            let drawing = Drawing(strokes: open.order.sorted().compactMap { open.strokes[$0] })
            if let problem = rasterizer.problem(with: drawing) {
                throw DataError(file: path, line: open.first,
                                message: "drawing '\(open.id)' (lines \(open.first)–\(lastLine)): \(problem)")
            }
            drawings.append(LabeledDrawing(id: open.id, label: open.label, drawing: drawing, lines: open.first...lastLine))
            finished.insert(open.id)
            current = nil
        }

        var lastLine = 1
        while let fields = try reader.next() {
            let line = reader.lineNumber
            let id = fields[columns[0]], label = fields[columns[1]].trimmingCharacters(in: .whitespaces)
            let strokeValue = try reader.number(fields[columns[2]], column: columns[2])
            guard strokeValue >= 0, strokeValue == strokeValue.rounded(), strokeValue < 1_000_000 else {
                throw DataError(file: path, line: line, column: (columns[2] + 1, "stroke"),
                                message: "\(fields[columns[2]]) is not a stroke index (0, 1, 2, …)")
            }
            let point = DrawingPoint(
                x: try reader.number(fields[columns[3]], column: columns[3]),
                y: try reader.number(fields[columns[4]], column: columns[4]),
                t: try tColumn.map { column throws(DataError) in try reader.number(fields[column], column: column) })
            if current?.id != id {
                try close(at: lastLine)
                if finished.contains(id) {
                    throw DataError(file: path, line: line, column: (columns[0] + 1, "drawing"),
                                    message: "drawing '\(id)' appears again after other drawings; the rows of one drawing must be together")
                }
                guard !label.isEmpty else {
                    throw DataError(file: path, line: line, column: (columns[1] + 1, "label"), message: "empty label")
                }
                current = (id, label, line, [:], [])
            } else if current?.label != label {
                throw DataError(file: path, line: line, column: (columns[1] + 1, "label"),
                                message: "drawing '\(id)' is labelled '\(current?.label ?? "")' above and '\(label)' here")
            }
            let stroke = Int(strokeValue)
            if current?.strokes[stroke] == nil { current?.order.append(stroke) }
            current?.strokes[stroke, default: []].append(point)
            lastLine = line
        }
        try close(at: lastLine)
        if drawings.isEmpty {
            throw DataError(file: path, line: 2, message: "no drawings: the file has a header but no rows")
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
