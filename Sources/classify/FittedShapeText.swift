import Foundation
import Models

/// A fitted shape as the CLI and `classify serve` give it (the `fitted` object of `--json`): the outline's kind and
/// numbers in the drawing's own coordinates (y down), angles in degrees, and the neatness 0…1.
struct FittedJSON: Encodable, Sendable {
    /// `ellipse`, `rectangle`, `quadrilateral`, `triangle` or `star`.
    let shape: String
    /// An ellipse's or a star's centre.
    let centre: [Double]?
    /// An ellipse's two radii, the first along `angle`.
    let radii: [Double]?
    /// A rectangle's or a quadrilateral's four corners in order round it, or a triangle's three.
    let corners: [[Double]]?
    /// A star's ten points, alternating tip and inner point.
    let points: [[Double]]?
    /// An ellipse's first axis or a rectangle's first side (0…180), or a star's first tip from its centre (−180…180).
    let angle: Double?
    /// 1 − RMS distance of the drawn points from the outline / 10% of the outline's larger side, within 0…1.
    let neatness: Double
    /// The RMS distance itself, in the drawing's units.
    let rms: Double

    init(_ fit: FittedShape) {
        func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
        func pair(_ point: DrawingPoint) -> [Double] { [rounded(point.x), rounded(point.y)] }
        func degrees(_ radians: Double) -> Double { rounded(radians * 180 / .pi) }
        var centre: [Double]?, radii: [Double]?, corners: [[Double]]?, points: [[Double]]?, angle: Double?
        switch fit.outline {
        case let .ellipse(middle, axes, turn):
            shape = "ellipse"
            (centre, radii, angle) = (pair(middle), [rounded(axes.0), rounded(axes.1)], degrees(turn))
        case let .rectangle(four, turn):
            shape = "rectangle"
            (corners, angle) = (four.map(pair), degrees(turn))
        case let .quadrilateral(four):
            shape = "quadrilateral"
            corners = four.map(pair)
        case let .triangle(three):
            shape = "triangle"
            corners = three.map(pair)
        case let .star(ten, middle, turn):
            shape = "star"
            (points, centre, angle) = (ten.map(pair), pair(middle), degrees(turn))
        }
        (self.centre, self.radii, self.corners, self.points, self.angle) = (centre, radii, corners, points, angle)
        neatness = (fit.neatness * 10000).rounded() / 10000
        rms = rounded(fit.rmsDistance)
    }

    /// The member `"fitted": {…}`, keys sorted, as `ShapeJSON.write(to:)` needs it.
    func write(to writer: inout JSONWriter) {
        writer.key("fitted")
        writer.beginObject()
        writer.member("angle", angle)
        if let centre {
            writer.key("centre")
            writer.pair(centre)
        }
        if let corners {
            writer.key("corners")
            writer.beginArray()
            for corner in corners { writer.pair(corner) }
            writer.endArray()
        }
        writer.member("neatness", neatness)
        if let points {
            writer.key("points")
            writer.beginArray()
            for point in points { writer.pair(point) }
            writer.endArray()
        }
        if let radii {
            writer.key("radii")
            writer.pair(radii)
        }
        writer.member("rms", rms)
        writer.member("shape", shape)
        writer.endObject()
    }
}

extension FittedShape {
    /// The outline as an SVG element, through `place` (drawing coordinates to the picture's).
    func svg(place: (Double, Double) -> (Double, Double), scale: Double, style: String) -> String {
        func polygon(_ points: [DrawingPoint]) -> String {
            let text = points.map { point in
                let (x, y) = place(point.x, point.y)
                return String(format: "%.1f,%.1f", x, y)
            }
            return #"<polygon points="\#(text.joined(separator: " "))" \#(style)/>"#
        }
        switch outline {
        case let .ellipse(centre, radii, angle):
            let (x, y) = place(centre.x, centre.y)
            let shape = String(
                format: #"<ellipse cx="%.1f" cy="%.1f" rx="%.1f" ry="%.1f" transform="rotate(%.2f %.1f %.1f)""#, x, y,
                radii.0 * scale, radii.1 * scale, angle * 180 / .pi, x, y)
            return shape + " \(style)/>"
        case let .rectangle(corners, _): return polygon(corners)
        case let .quadrilateral(corners), let .triangle(corners): return polygon(corners)
        case let .star(points, _, _): return polygon(points)
        }
    }
}
