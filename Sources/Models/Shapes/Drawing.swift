/// A point of a drawing: screen coordinates (y grows downward), any unit and offset; `t` in milliseconds.
public struct DrawingPoint: Sendable, Equatable {
    /// Horizontal position.
    public var x: Double
    /// Vertical position, growing downward.
    public var y: Double
    /// Milliseconds since the drawing started, when recorded.
    public var t: Double?

    /// Creates a point.
    public init(x: Double, y: Double, t: Double? = nil) {
        self.x = x
        self.y = y
        self.t = t
    }
}

/// One hand-drawn drawing: one or more strokes of touch points.
public struct Drawing: Sendable, Equatable {
    /// The strokes in drawing order, each a list of points in order.
    public var strokes: [[DrawingPoint]]

    /// Creates a drawing.
    public init(strokes: [[DrawingPoint]]) { self.strokes = strokes }

    /// Every point of every stroke.
    public var pointCount: Int { strokes.reduce(0) { $0 + $1.count } }

    /// The smallest rectangle holding every point: (minX, minY, maxX, maxY), or `nil` without points.
    public var bounds: (minX: Double, minY: Double, maxX: Double, maxY: Double)? {
        var minX = Double.infinity, minY = Double.infinity, maxX = -Double.infinity, maxY = -Double.infinity
        var any = false
        for stroke in strokes {
            for point in stroke {
                minX = min(minX, point.x); maxX = max(maxX, point.x)
                minY = min(minY, point.y); maxY = max(maxY, point.y)
                any = true
            }
        }
        return any ? (minX, minY, maxX, maxY) : nil
    }
}

extension Drawing {
    /// The largest magnitude a coordinate may have: 10¹⁵.
    ///
    /// Coordinates are screen positions in any unit and with any offset, so the range is wide — a canvas of
    /// 10⁵ pixels measured in nanometres is still 10¹⁰ times inside it — yet it keeps every product of two
    /// coordinates (≤ 10³⁰) and every sum of a drawing's products far from `Double`'s overflow, so no recognizer's
    /// arithmetic can turn a finite drawing into an infinity or a NaN. Just above it (2⁵³ ≈ 9·10¹⁵) a `Double` no
    /// longer holds every whole number: a value that large is not a position a pen or touch screen reported but a
    /// mistake in the file (an id or a timestamp in the x column, a corrupt number). There is no smallest
    /// magnitude: how small a drawing may be is a rule about its extent (`ShapeRasterizer.smallestExtent`).
    public static let largestCoordinate = 1e15

    /// Why `value` (a finite number) cannot be a coordinate, or `nil`: its magnitude is above `largestCoordinate`.
    public static func coordinateProblem(_ value: Double) -> String? {
        guard abs(value) > largestCoordinate else { return nil }
        return "\(value) is outside the coordinate range ±1e15; coordinates are screen positions (any unit and offset)"
    }
}
