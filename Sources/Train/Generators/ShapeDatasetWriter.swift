import Datasets
import Foundation
import Models

/// Writes drawings as a shape dataset (`drawing,label,stroke,x,y,t`), coordinates to 0.1 px, times in ms.
public enum ShapeDatasetWriter {
    /// The dataset's header line, without its newline.
    public static let header = "drawing,label,stroke,x,y,t"

    /// The CSV text of `samples`, drawings named `<prefix><index>`.
    public static func csv(_ samples: [ShapeGenerator.Sample], prefix: String) -> String {
        header + "\n" + rows(samples, prefix: prefix)
    }

    /// The rows of `samples` (each line ending in a newline), drawings named `<prefix><firstIndex + i>`: a piece
    /// of `csv`'s text after its header, for writing a dataset a part at a time.
    public static func rows(_ samples: [ShapeGenerator.Sample], prefix: String, firstIndex: Int = 0) -> String {
        var text = ""
        for (offset, sample) in samples.enumerated() {
            for (stroke, points) in sample.drawing.strokes.enumerated() {
                for point in points {
                    text += "\(prefix)\(firstIndex + offset),\(sample.label),\(stroke),\(format(point.x)),\(format(point.y)),\(Int(point.t ?? 0))\n"
                }
            }
        }
        return text
    }

    /// A single drawing as `classify shape` reads it: `stroke,x,y,t`.
    public static func drawingCSV(_ drawing: Drawing) -> String {
        var lines = ["stroke,x,y,t"]
        for (stroke, points) in drawing.strokes.enumerated() {
            for point in points { lines.append("\(stroke),\(format(point.x)),\(format(point.y)),\(Int(point.t ?? 0))") }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func format(_ value: Double) -> String { String(Int(value.rounded())) }
}
