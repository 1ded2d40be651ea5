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
