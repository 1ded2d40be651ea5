import Foundation

extension FittedShape: CustomStringConvertible {
    /// `circle`, `ellipse`, `rectangle`, `quadrilateral`, `triangle` or `star`: a circle is an ellipse whose radii are
    /// within 5%.
    public var kind: String {
        switch outline {
        case let .ellipse(_, radii, _): abs(radii.0 - radii.1) <= 0.05 * max(radii.0, radii.1) ? "circle" : "ellipse"
        case .rectangle: "rectangle"
        case .quadrilateral: "quadrilateral"
        case .triangle: "triangle"
        case .star: "star"
        }
    }

    /// The outline and its neatness in a line, numbers to a tenth and angles in degrees, as `classify shape` prints
    /// it after `fitted `: `circle: centre (78.7, 694.7), radius 70.3; 74% neat`.
    public var description: String {
        // Rounded first, so that a value just below zero prints as 0.0, not -0.0.
        func number(_ value: Double) -> String {
            let tenths = (value * 10).rounded() / 10
            return String(format: "%.1f", tenths == 0 ? 0 : tenths)
        }
        func point(_ p: DrawingPoint) -> String { "(\(number(p.x)), \(number(p.y)))" }
        func degrees(_ radians: Double) -> String { String(format: "%.0f°", radians * 180 / .pi) }
        let shape: String
        switch outline {
        case let .ellipse(centre, radii, angle):
            if kind == "circle" {
                shape = "circle: centre \(point(centre)), radius \(number((radii.0 + radii.1) / 2))"
            } else {
                shape = "ellipse: centre \(point(centre)), radii \(number(radii.0)) × \(number(radii.1)) at \(degrees(angle))"
            }
        case let .rectangle(corners, angle):
            shape = "rectangle: corners \(corners.map(point).joined(separator: " ")), at \(degrees(angle))"
        case let .quadrilateral(corners):
            shape = "quadrilateral: corners \(corners.map(point).joined(separator: " "))"
        case let .triangle(corners):
            shape = "triangle: corners \(corners.map(point).joined(separator: " "))"
        case let .star(points, centre, angle):
            let tips = stride(from: 0, to: points.count, by: 2).map { point(points[$0]) }
            shape = "star: centre \(point(centre)), first tip at \(degrees(angle)), tips \(tips.joined(separator: " "))"
        }
        return "\(shape); \(String(format: "%.1f%%", 100 * neatness).replacingOccurrences(of: ".0%", with: "%")) neat"
    }
}
