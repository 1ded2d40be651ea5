import Foundation

/// The clean shape a drawing of a circle, triangle, square or star was aiming at, in the drawing's own coordinates
/// (y grows downward), and how neatly it was drawn: what a drawing app snaps a sloppy stroke to.
///
/// - An **ellipse** (a circle has equal radii): the axis is the principal axis of the convex hull's area (its second
///   moments); the hull's extents along that axis and across it give the radii and the centre.
/// - A **square** is fitted as four straight sides: each side is the line through the drawn points nearest to it (a
///   total least squares fit), and the corners are where neighbouring sides cross. It starts from the convex hull cut
///   down to four vertices and refits ten times at most; points far from every side (a stray tick) and ink that runs
///   past a corner along its own side (overshoot) do not pull the sides. It is a **rectangle** (its four corners
///   in order round it, and the angle of its first side) when every corner is within 10° of square, and otherwise a
///   **quadrilateral** (a rhombus, say): its four corners.
/// - A **triangle**: three sides fitted the same way, from three corners of the convex hull — the vertex farthest
///   from the hull's middle, the vertex farthest from that one, and the vertex that makes the largest triangle with
///   both.
/// - A **star**: its five tips are the convex hull cut down to five vertices (dropping, one at a time, the vertex whose
///   triangle with its neighbours is smallest); the centre is their mean; the inner point between two neighbouring
///   tips is where the lines joining every second tip cross (a five-pointed star's classic proportions, exact for a
///   star drawn as five lines at any turn and stretch). The ten points alternate tip, inner, tip, … by angle round the
///   centre; the angle is that of the first tip from the centre.
///
/// `neatness` is 1 − (RMS distance of the drawn points from the fitted outline) / (10% of the fitted shape's larger
/// side), held within 0…1: a drawing exactly on its outline is 100%, one whose points stray by a tenth of its size on
/// average (root mean square) or more is 0%. A point's distance from a polygon is from its nearest side extended by
/// a tenth of the side's length at both ends (`overshootAllowance`), so a stroke that runs a little past a corner is
/// not untidy. A star's outline here is its five lines joining every second tip, which hold its edges: a star drawn
/// in one stroke crosses its own middle along them.
///
/// `explainsDrawing` is false when the outline is 0% neat: an answer does not show it (`ShapeAnswer.fitted(to:)`).
public struct FittedShape: Sendable, Equatable {
    /// The fitted outline.
    public enum Outline: Sendable, Equatable {
        /// Centre, the two radii (the first along `angle`), and the angle in radians (0…π), measured from the x axis
        /// towards y.
        case ellipse(centre: DrawingPoint, radii: (Double, Double), angle: Double)
        /// Four corners in order round the rectangle, and the angle of its first side (0…π).
        case rectangle(corners: [DrawingPoint], angle: Double)
        /// Four corners in order round a four-sided outline that is not a rectangle (a rhombus, a kite).
        case quadrilateral(corners: [DrawingPoint])
        /// Three corners.
        case triangle(corners: [DrawingPoint])
        /// Ten points alternating tip and inner point, the centre, and the first tip's angle from it (−π…π).
        case star(points: [DrawingPoint], centre: DrawingPoint, angle: Double)

        /// Equal kinds with equal numbers.
        public static func == (a: Outline, b: Outline) -> Bool {
            switch (a, b) {
            case let (.ellipse(c1, r1, a1), .ellipse(c2, r2, a2)): c1 == c2 && r1 == r2 && a1 == a2
            case let (.rectangle(c1, a1), .rectangle(c2, a2)): c1 == c2 && a1 == a2
            case let (.triangle(c1), .triangle(c2)), let (.quadrilateral(c1), .quadrilateral(c2)): c1 == c2
            case let (.star(p1, c1, a1), .star(p2, c2, a2)): p1 == p2 && c1 == c2 && a1 == a2
            default: false
            }
        }
    }

    /// The fitted outline.
    public let outline: Outline
    /// How close the drawn points lie to the outline, 0…1 (see the type's description).
    public let neatness: Double
    /// The root mean square distance of the drawn points from the outline, in the drawing's units.
    public let rmsDistance: Double
    /// `rmsDistance` over the square root of the outline's area: how far the drawing strays from its outline for
    /// the outline's size in both directions, so that a thin outline (a line taken for a flat triangle) explains
    /// it badly however close its points lie. A careful drawing is about 0.02, a sloppy real shape 0.03–0.08, a
    /// letter or a doodle taken for a shape 0.1–0.3. A decision rule's shape odds may weigh it
    /// (`DecisionRule.ShapeOdds`).
    public let relativeDistance: Double

    /// Whether the outline explains the drawing at all: it is more than 0% neat. A six-pointed star taken for a
    /// star, or a letter taken for a square, has an outline of the class's shape that the drawing does not follow.
    public var explainsDrawing: Bool { neatness > 0 }

    /// How far past a corner a side is extended before a point's distance from it counts: a tenth of the side.
    public static let overshootAllowance = 0.1

    /// The outline of `label` (`circle`, `triangle`, `square` or `star`) fitted to `drawing`; `nil` for another
    /// label, or a drawing with fewer than 3 distinct points or without a finite area.
    public static func fit(_ drawing: Drawing, as label: String) -> FittedShape? {
        var points: [(x: Double, y: Double)] = []
        points.reserveCapacity(drawing.strokes.reduce(0) { $0 + $1.count })
        for stroke in drawing.strokes {
            for point in stroke {
                guard point.x.isFinite && point.y.isFinite else { return nil }
                points.append((point.x, point.y))
            }
        }
        let hull = convexHull(points)
        guard hull.count >= 3, case let hullArea = area(hull), hullArea > 0, hullArea.isFinite else { return nil }
        let outline: Outline
        switch label {
        case "circle": outline = ellipse(hull)
        case "square": outline = quadrilateral(points, hull: hull)
        case "triangle":
            guard case let .triangle(start) = triangle(hull) else { return nil }
            outline = .triangle(corners: fittedSides(points, from: start))
        case "star":
            guard let star = star(hull) else { return nil }
            outline = star
        default: return nil
        }
        // An ellipse's larger side and area from its radii; a polygon's from its corners.
        var size = 0.0, outlineArea = 0.0
        if case let .ellipse(_, radii, _) = outline {
            (size, outlineArea) = (2 * max(radii.0, radii.1), Double.pi * radii.0 * radii.1)
        } else {
            let polygon = polygon(outline)
            (size, outlineArea) = (largerSide(of: polygon), area(polygon))
        }
        guard size > 0, size.isFinite, outlineArea > 0, outlineArea.isFinite else { return nil }
        var sum = 0.0
        if case let .ellipse(centre, radii, angle) = outline {
            let (c, s) = (cos(angle), sin(angle))
            for point in points {
                let (dx, dy) = (point.x - centre.x, point.y - centre.y)
                sum += squaredDistance(u: dx * c + dy * s, v: -dx * s + dy * c, radii: radii)
            }
        } else {
            let lines = segments(outline)
            for point in points { sum += nearestSquaredDistance(from: point, to: lines, allowance: overshootAllowance) }
        }
        let rms = (sum / Double(points.count)).squareRoot()
        return FittedShape(
            outline: outline, neatness: min(1, max(0, 1 - rms / (0.1 * size))), rmsDistance: rms,
            relativeDistance: rms / outlineArea.squareRoot())
    }

    /// The smallest rectangle around `hull`: its centre, the unit vector of its first side, and the half sides.
    static func enclosingRectangle(_ hull: [(x: Double, y: Double)]) -> (
        centre: (x: Double, y: Double), axis: (Double, Double), half: (Double, Double)
    ) {
        box(hull, axis: minimumRectangle(hull).direction)
    }

    /// The rectangle around `hull` with its first side along the unit vector `axis`: its centre, the axis, and the
    /// half sides (the hull's half extents along the axis and across it).
    static func box(_ hull: [(x: Double, y: Double)], axis: (Double, Double)) -> (
        centre: (x: Double, y: Double), axis: (Double, Double), half: (Double, Double)
    ) {
        let (ux, uy) = axis
        let along = hull.map { $0.x * ux + $0.y * uy }, across = hull.map { -$0.x * uy + $0.y * ux }
        let (lowU, highU) = (along.min() ?? 0, along.max() ?? 0), (lowV, highV) = (across.min() ?? 0, across.max() ?? 0)
        let (u, v) = ((lowU + highU) / 2, (lowV + highV) / 2)
        return ((u * ux - v * uy, u * uy + v * ux), (ux, uy), ((highU - lowU) / 2, (highV - lowV) / 2))
    }

    /// An angle folded into 0…π (a line's direction).
    static func lineAngle(_ x: Double, _ y: Double) -> Double {
        let angle = atan2(y, x)
        return angle < 0 ? angle + .pi : (angle >= .pi ? angle - .pi : angle)
    }

    static func ellipse(_ hull: [(x: Double, y: Double)]) -> Outline {
        // The axis is the hull's principal axis (second moments of its area, which a sampled ellipse's hull has
        // within the sampling of its outline); the radii and centre come from the hull's extents along it and across.
        let origin = hull[0]
        var (area2, sx, sy, sxx, syy, sxy) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        for i in hull.indices {
            let (p, q) = (hull[i], hull[(i + 1) % hull.count])
            let (x0, y0, x1, y1) = (p.x - origin.x, p.y - origin.y, q.x - origin.x, q.y - origin.y)
            let a = x0 * y1 - x1 * y0
            area2 += a
            sx += (x0 + x1) * a
            sy += (y0 + y1) * a
            sxx += (x0 * x0 + x0 * x1 + x1 * x1) * a
            syy += (y0 * y0 + y0 * y1 + y1 * y1) * a
            sxy += (x0 * y1 + 2 * x0 * y0 + 2 * x1 * y1 + x1 * y0) * a
        }
        let area = area2 / 2, (cx, cy) = (sx / (6 * area), sy / (6 * area))
        let (ixx, iyy, ixy) = (sxx / 12 - area * cx * cx, syy / 12 - area * cy * cy, sxy / 24 - area * cx * cy)
        let theta = 0.5 * atan2(2 * ixy, ixx - iyy)
        let extents = box(hull, axis: (cos(theta), sin(theta)))
        return .ellipse(
            centre: DrawingPoint(x: extents.centre.x, y: extents.centre.y), radii: extents.half,
            angle: lineAngle(extents.axis.0, extents.axis.1))
    }

    static func rectangle(_ hull: [(x: Double, y: Double)]) -> Outline {
        let box = enclosingRectangle(hull)
        let (ux, uy) = box.axis, (a, b) = box.half
        let corners = [(-a, -b), (a, -b), (a, b), (-a, b)].map { (u, v) in
            DrawingPoint(x: box.centre.x + u * ux - v * uy, y: box.centre.y + u * uy + v * ux)
        }
        return .rectangle(corners: corners, angle: lineAngle(ux, uy))
    }

    /// A square's outline: four sides fitted to `points` from the hull cut down to four vertices; a rectangle when
    /// every corner is within 10° of square, else a quadrilateral. The hull's smallest rectangle when it cannot be cut.
    static func quadrilateral(_ points: [Point2], hull: [Point2]) -> Outline {
        let start = reduced(hull, to: 4)
        guard start.count == 4 else { return rectangle(hull) }
        let corners = fittedSides(points, from: start.map { DrawingPoint(x: $0.x, y: $0.y) })
        let square = corners.indices.allSatisfy { i in
            let (a, b, c) = (corners[(i + 3) % 4], corners[i], corners[(i + 1) % 4])
            let (ux, uy, vx, vy) = (a.x - b.x, a.y - b.y, c.x - b.x, c.y - b.y)
            let cosine = (ux * vx + uy * vy) / (hypot(ux, uy) * hypot(vx, vy))
            return abs(cosine) <= sin(10 * Double.pi / 180)
        }
        guard square else { return .quadrilateral(corners: corners) }
        return .rectangle(corners: corners, angle: lineAngle(corners[1].x - corners[0].x, corners[1].y - corners[0].y))
    }

    /// `polygon` cut down to `count` vertices, the least significant (smallest triangle with its neighbours) first,
    /// the earliest of equal ones first. A heap of the vertices' weights, each updated as its neighbour goes, makes
    /// it O(n log n): a hull of a million points (a densely drawn bulging square) is cut in well under a second.
    static func reduced(_ polygon: [Point2], to count: Int) -> [Point2] {
        let n = polygon.count
        guard n > count, count >= 1 else { return polygon }
        var previous = (0..<n).map { ($0 + n - 1) % n }, next = (0..<n).map { ($0 + 1) % n }
        var version = [Int](repeating: 0, count: n), removed = [Bool](repeating: false, count: n)
        func weight(_ i: Int) -> Double {
            let (a, b, c) = (polygon[previous[i]], polygon[i], polygon[next[i]])
            return abs((b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x))
        }
        var heap = VertexHeap()
        for i in 0..<n { heap.push((weight(i), i, 0)) }
        var left = n
        while left > count, let (_, i, seen) = heap.pop() {
            guard !removed[i], seen == version[i] else { continue }
            removed[i] = true
            left -= 1
            let (p, q) = (previous[i], next[i])
            (next[p], previous[q]) = (q, p)
            for j in [p, q] {
                version[j] += 1
                heap.push((weight(j), j, version[j]))
            }
        }
        return polygon.indices.filter { !removed[$0] }.map { polygon[$0] }
    }

    /// A binary min-heap of (weight, vertex, version), ordered by weight and then vertex.
    struct VertexHeap {
        typealias Entry = (weight: Double, vertex: Int, version: Int)
        private var entries: [Entry] = []

        private static func before(_ a: Entry, _ b: Entry) -> Bool {
            a.weight < b.weight || (a.weight == b.weight && a.vertex < b.vertex)
        }

        mutating func push(_ entry: Entry) {
            entries.append(entry)
            var child = entries.count - 1
            while child > 0, case let parent = (child - 1) / 2, Self.before(entries[child], entries[parent]) {
                entries.swapAt(child, parent)
                child = parent
            }
        }

        mutating func pop() -> Entry? {
            guard let first = entries.first else { return nil }
            let last = entries.removeLast()
            guard !entries.isEmpty else { return first }
            entries[0] = last
            var parent = 0
            while true {
                let (left, right) = (2 * parent + 1, 2 * parent + 2)
                var smallest = parent
                if left < entries.count, Self.before(entries[left], entries[smallest]) { smallest = left }
                if right < entries.count, Self.before(entries[right], entries[smallest]) { smallest = right }
                guard smallest != parent else { return first }
                entries.swapAt(parent, smallest)
                parent = smallest
            }
        }
    }

    /// The corners of the polygon whose sides are lines fitted to `points`, starting from `start` (a convex polygon,
    /// corners in order). Each round gives every point to its nearest side (extended by `overshootAllowance` · 2 at
    /// both ends, so ink past a corner along a side stays that side's); points farther than 15% of the polygon's
    /// larger side from every side are left out. Each side becomes the total least squares line of its points, and
    /// each corner the crossing of its two sides. A round that would leave a side with too few points or too short
    /// a spread, make two sides parallel, or turn the polygon inside out or far past the drawing is not taken:
    /// the corners of the round before are. Ten rounds at most; `start` when no round is taken.
    static func fittedSides(_ points: [Point2], from start: [DrawingPoint]) -> [DrawingPoint] {
        var corners = start.map { (x: $0.x, y: $0.y) }
        let count = corners.count
        let size = largerSide(of: corners)
        guard size > 0, size.isFinite else { return start }
        let (lowX, highX) = (points.map(\.x).min() ?? 0, points.map(\.x).max() ?? 0)
        let (lowY, highY) = (points.map(\.y).min() ?? 0, points.map(\.y).max() ?? 0)
        let orientation = signedArea(corners) >= 0
        for _ in 0..<10 {
            var groups = [[Point2]](repeating: [], count: count)
            for point in points {
                var (best, nearest) = (Double.infinity, 0)
                for i in 0..<count {
                    let distance = squaredDistance(from: point, toSide: (corners[i], corners[(i + 1) % count]), allowance: 2 * overshootAllowance)
                    if distance < best { (best, nearest) = (distance, i) }
                }
                if best <= (0.15 * size) * (0.15 * size) { groups[nearest].append(point) }
            }
            var lines: [(point: Point2, direction: Point2)] = []
            for i in 0..<count {
                let side = hypot(corners[(i + 1) % count].x - corners[i].x, corners[(i + 1) % count].y - corners[i].y)
                guard let line = principalLine(groups[i]), line.spread >= 0.3 * side else { return corners.map { DrawingPoint(x: $0.x, y: $0.y) } }
                lines.append((line.point, line.direction))
            }
            var next: [Point2] = []
            for i in 0..<count {
                guard let corner = crossing(lines[(i + count - 1) % count], lines[i]),
                    corner.x >= lowX - 0.5 * size, corner.x <= highX + 0.5 * size,
                    corner.y >= lowY - 0.5 * size, corner.y <= highY + 0.5 * size
                else { return corners.map { DrawingPoint(x: $0.x, y: $0.y) } }
                next.append(corner)
            }
            let nextArea = signedArea(next)
            guard (nextArea >= 0) == orientation, abs(nextArea) > 0.05 * size * size, isConvex(next) else { break }
            let moved = zip(corners, next).map { hypot($0.x - $1.x, $0.y - $1.y) }.max() ?? 0
            corners = next
            if moved <= 1e-6 * size { break }
        }
        return corners.map { DrawingPoint(x: $0.x, y: $0.y) }
    }

    /// The total least squares line of `points` (through their mean, along their principal axis) and the spread of
    /// the points along it (largest minus smallest projection); `nil` for fewer than two points.
    static func principalLine(_ points: [Point2]) -> (point: Point2, direction: Point2, spread: Double)? {
        guard points.count >= 2 else { return nil }
        let n = Double(points.count)
        let mean = (x: points.map(\.x).reduce(0, +) / n, y: points.map(\.y).reduce(0, +) / n)
        var (sxx, syy, sxy) = (0.0, 0.0, 0.0)
        for p in points {
            let (dx, dy) = (p.x - mean.x, p.y - mean.y)
            (sxx, syy, sxy) = (sxx + dx * dx, syy + dy * dy, sxy + dx * dy)
        }
        let theta = 0.5 * atan2(2 * sxy, sxx - syy)
        let direction = (x: cos(theta), y: sin(theta))
        let along = points.map { ($0.x - mean.x) * direction.x + ($0.y - mean.y) * direction.y }
        return (mean, direction, (along.max() ?? 0) - (along.min() ?? 0))
    }

    /// Where two lines (a point and a direction each) cross; `nil` when they are parallel or nearly so (within
    /// about 3°).
    static func crossing(_ a: (point: Point2, direction: Point2), _ b: (point: Point2, direction: Point2)) -> Point2? {
        let denominator = a.direction.x * b.direction.y - a.direction.y * b.direction.x
        guard abs(denominator) > 0.05 else { return nil }
        let t = ((b.point.x - a.point.x) * b.direction.y - (b.point.y - a.point.y) * b.direction.x) / denominator
        let corner = (x: a.point.x + t * a.direction.x, y: a.point.y + t * a.direction.y)
        return corner.x.isFinite && corner.y.isFinite ? corner : nil
    }

    /// Whether the polygon turns the same way at every corner.
    static func isConvex(_ polygon: [Point2]) -> Bool {
        var sign = 0.0
        for i in polygon.indices {
            let (a, b, c) = (polygon[i], polygon[(i + 1) % polygon.count], polygon[(i + 2) % polygon.count])
            let turn = (b.x - a.x) * (c.y - b.y) - (b.y - a.y) * (c.x - b.x)
            if turn == 0 { continue }
            if sign == 0 { sign = turn } else if (turn > 0) != (sign > 0) { return false }
        }
        return true
    }

    static func triangle(_ hull: [(x: Double, y: Double)]) -> Outline {
        let middle = (x: hull.map(\.x).reduce(0, +) / Double(hull.count), y: hull.map(\.y).reduce(0, +) / Double(hull.count))
        func distance(_ p: (x: Double, y: Double), _ q: (x: Double, y: Double)) -> Double { hypot(p.x - q.x, p.y - q.y) }
        let first = hull.max { distance($0, middle) < distance($1, middle) } ?? hull[0]
        let second = hull.max { distance($0, first) < distance($1, first) } ?? hull[1]
        func twiceArea(_ p: (x: Double, y: Double)) -> Double {
            abs((second.x - first.x) * (p.y - first.y) - (second.y - first.y) * (p.x - first.x))
        }
        let third = hull.max { twiceArea($0) < twiceArea($1) } ?? hull[2]
        return .triangle(corners: [first, second, third].map { DrawingPoint(x: $0.x, y: $0.y) })
    }

    static func star(_ hull: [(x: Double, y: Double)]) -> Outline? {
        // The hull cut down to five vertices, the least significant (smallest triangle with its neighbours) first.
        var tips = reduced(hull, to: 5)
        guard tips.count == 5 else { return nil }
        let centre = (x: tips.map(\.x).reduce(0, +) / 5, y: tips.map(\.y).reduce(0, +) / 5)
        func angle(_ p: (x: Double, y: Double)) -> Double { atan2(p.y - centre.y, p.x - centre.x) }
        // Tips in order of angle; the inner point between tips i and i + 1 is where the lines joining every second tip
        // cross (i to i + 2, and i + 1 to i − 1): a five-pointed star's classic proportions, at any turn and stretch.
        tips.sort { angle($0) < angle($1) }
        var result: [DrawingPoint] = []
        for i in 0..<5 {
            let (a, b) = (tips[i], tips[(i + 2) % 5]), (c, d) = (tips[(i + 1) % 5], tips[(i + 4) % 5])
            let denominator = (b.x - a.x) * (d.y - c.y) - (b.y - a.y) * (d.x - c.x)
            guard denominator != 0, denominator.isFinite else { return nil }
            let t = ((c.x - a.x) * (d.y - c.y) - (c.y - a.y) * (d.x - c.x)) / denominator
            result += [DrawingPoint(x: a.x, y: a.y), DrawingPoint(x: a.x + t * (b.x - a.x), y: a.y + t * (b.y - a.y))]
        }
        return .star(points: result, centre: DrawingPoint(x: centre.x, y: centre.y), angle: angle(tips[0]))
    }

    /// The outline as a closed polygon (an ellipse as 256 points round it).
    static func polygon(_ outline: Outline) -> [(x: Double, y: Double)] {
        switch outline {
        case let .ellipse(centre, radii, angle):
            let (c, s) = (cos(angle), sin(angle))
            return (0..<256).map { k in
                let t = Double(k) / 256 * 2 * .pi
                let (u, v) = (radii.0 * cos(t), radii.1 * sin(t))
                return (centre.x + u * c - v * s, centre.y + u * s + v * c)
            }
        case let .rectangle(corners, _), let .quadrilateral(corners), let .triangle(corners), let .star(corners, _, _):
            return corners.map { ($0.x, $0.y) }
        }
    }

    /// The larger side of the polygon's bounding rectangle along its own smallest-rectangle axis.
    static func largerSide(of polygon: [(x: Double, y: Double)]) -> Double {
        let hull = convexHull(polygon)
        guard hull.count >= 3 else { return 0 }
        let box = enclosingRectangle(hull)
        return 2 * max(box.half.0, box.half.1)
    }

    /// The lines a drawing of the outline follows: the edges of its polygon, or a star's five lines joining every
    /// second tip (which hold its outline, and are what a star drawn in one stroke follows inside it too).
    static func segments(_ outline: Outline) -> [(Point2, Point2)] {
        if case let .star(points, _, _) = outline {
            let tips = stride(from: 0, to: points.count, by: 2).map { (x: points[$0].x, y: points[$0].y) }
            return tips.indices.map { (tips[$0], tips[($0 + 2) % tips.count]) }
        }
        let polygon = polygon(outline)
        return polygon.indices.map { (polygon[$0], polygon[($0 + 1) % polygon.count]) }
    }

    typealias Point2 = (x: Double, y: Double)

    /// The squared distance from the point (`u`, `v`), in the frame of an ellipse centred at the origin with `radii`
    /// along the axes, to the ellipse. By symmetry the point is taken into the first quadrant, with the larger
    /// radius first; the nearest point on the ellipse is (r₀² y₀ / (s + r₀²), r₁² y₁ / (s + r₁²)) for the root s of
    /// (r₀ y₀ / (s + r₀²))² + (r₁ y₁ / (s + r₁²))² = 1 above −r₁² (Eberly, "Distance from a point to an ellipse"),
    /// found by Newton's method from its left end, where the function is convex and falling, so that the steps
    /// rise to the root without passing it. A point on an axis has the nearest point in closed form.
    static func squaredDistance(u: Double, v: Double, radii: (Double, Double)) -> Double {
        let swapped = radii.0 < radii.1
        let (e0, e1) = swapped ? (radii.1, radii.0) : (radii.0, radii.1)
        let (y0, y1) = swapped ? (abs(v), abs(u)) : (abs(u), abs(v))
        // An ellipse thinner than a billionth of its length is its long axis, a segment (its ratio would overflow).
        guard e1 > 1e-9 * e0 else { return y1 * y1 + max(0, y0 - e0) * max(0, y0 - e0) }
        let (x0, x1): (Double, Double)
        // A point within a millionth of the minor radius of the major axis is on it: its distance differs from the
        // closed form's by less than that, and Newton's steps from so near the left end would need too many to rise.
        if y1 > 1e-6 * e1 && y0 > 0 {
            // In units of e1²: F(s) = (r z0 / (s + r))² + (z1 / (s + 1))² − 1 with r = (e0 / e1)², from the larger of
            // z1 − 1 and r z0 − r, where one of the two terms is 1 and F ≥ 0: left of the root, and as near it as
            // either term alone tells (a point near the major axis's ends starts steps nearer than from z1 − 1).
            let (z0, z1, r) = (y0 / e0, y1 / e1, (e0 / e1) * (e0 / e1))
            var s = max(z1 - 1, r * z0 - r)
            for _ in 0..<64 {
                let (p, q) = (r * z0 / (s + r), z1 / (s + 1))
                let f = p * p + q * q - 1
                let slope = -2 * (p * p / (s + r) + q * q / (s + 1))
                guard f > 0, slope < 0 else { break }
                let next = s - f / slope
                guard next > s else { break }
                s = next
            }
            (x0, x1) = (r * y0 / (s + r), y1 / (s + 1))
        } else if y1 > 1e-6 * e1 {
            (x0, x1) = (0, e1)
        } else if e0 * y0 < e0 * e0 - e1 * e1 {
            // On the major axis inside the evolute: the nearest point is off the axis.
            let ratio = e0 * y0 / (e0 * e0 - e1 * e1)
            (x0, x1) = (e0 * ratio, e1 * (1 - ratio * ratio).squareRoot())
        } else {
            (x0, x1) = (e0, 0)
        }
        return (x0 - y0) * (x0 - y0) + (x1 - y1) * (x1 - y1)
    }

    /// The squared distance from `p` to the side from `side.0` to `side.1` extended by `allowance` times its length
    /// at both ends.
    static func squaredDistance(from p: Point2, toSide side: (Point2, Point2), allowance: Double) -> Double {
        let (a, b) = side
        let (dx, dy) = (b.x - a.x, b.y - a.y)
        let lengthSquared = dx * dx + dy * dy
        let t = lengthSquared > 0 ? min(1 + allowance, max(-allowance, ((p.x - a.x) * dx + (p.y - a.y) * dy) / lengthSquared)) : 0
        let (ex, ey) = (p.x - a.x - t * dx, p.y - a.y - t * dy)
        return ex * ex + ey * ey
    }

    /// The squared distance from `p` to the nearest of `segments` (not extended).
    static func squaredDistance(from p: Point2, to segments: [(Point2, Point2)]) -> Double {
        nearestSquaredDistance(from: p, to: segments, allowance: 0)
    }

    /// The squared distance from `p` to the nearest of `sides`, each extended by `allowance` times its length.
    static func nearestSquaredDistance(from p: Point2, to sides: [(Point2, Point2)], allowance: Double) -> Double {
        var best = Double.infinity
        for side in sides { best = min(best, squaredDistance(from: p, toSide: side, allowance: allowance)) }
        return best
    }
}
