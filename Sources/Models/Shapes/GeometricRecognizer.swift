import DataFiles
import Foundation

/// Recognizes circle, triangle, square and star by geometry alone: no weights file, so it is the last link of
/// the fallback chain.
///
/// Three measurements of the drawing's points decide:
/// - **path / hull perimeter**: the length of the strokes over the perimeter of their convex hull. A convex
///   outline traced once gives about 1; a pentagram's five chords give 1.62 (each chord is 2·sin 72° of the
///   radius, the hull's sides 2·sin 36°). Above the midpoint, 1.3, it is a star.
/// - **solidity**: the area the points enclose, in drawing order, over the hull's. A convex outline gives about 1;
///   a star's outline (ten corners, notches at 0.3–0.6 of the points' radius) 0.4–0.75, though its path is only
///   1.05–1.3 times its hull. Under 0.7 it is a star.
/// - **rectangularity**: the hull's area over the smallest rectangle around it at any angle. A rectangle gives 1,
///   an ellipse π/4 ≈ 0.785, a triangle 0.5. The cut points are the midpoints: above 0.89 a square, below 0.64 a
///   triangle, between them a circle.
/// The thresholds come from those ideal shapes, not from fitting data; the probabilities fall off with the
/// distance from each class's ideal value.
public struct GeometricRecognizer: RuleRecognizer {
    /// The classes it knows, in output order.
    package static let labels = ["circle", "triangle", "square", "star"]

    /// Creates the recognizer.
    public init() {}

    /// `geometric`.
    public var name: String { "geometric" }

    /// circle, triangle, square, star.
    public var labels: [String] { Self.labels }

    /// The three measurements of a drawing, or why there are none (fewer than 3 distinct points, no area).
    ///
    /// All are ratios, so they are measured in units of the drawing's size from its corner: no product of
    /// coordinates overflows or underflows at any scale or place (a square of side 10⁻¹⁷⁰ is a square), and a
    /// drawing whose points span no finite, non-zero extent has no measurements.
    package func measure(_ drawing: Drawing) throws(DataError) -> (pathOverHull: Double, rectangularity: Double, solidity: Double) {
        guard drawing.strokes.joined().allSatisfy({ $0.x.isFinite && $0.y.isFinite }) else {
            throw DataError(file: "drawing", message: "a point is not a finite number")
        }
        guard let bounds = drawing.bounds, case let extent = max(bounds.maxX - bounds.minX, bounds.maxY - bounds.minY),
            extent > 0, extent.isFinite
        else {
            throw DataError(file: "drawing", message: "the drawing has no area (its points lie on a line or on one spot)")
        }
        let unit = { (point: DrawingPoint) in (x: (point.x - bounds.minX) / extent, y: (point.y - bounds.minY) / extent) }
        let points = drawing.strokes.joined().map(unit)
        let hull = convexHull(points)
        let hullArea = area(hull)
        let hullPerimeter = perimeter(hull, closed: true)
        guard hull.count >= 3, hullArea > 1e-9 * max(hullPerimeter * hullPerimeter, 1e-300) else {
            throw DataError(file: "drawing", message: "the drawing has no area (its points lie on a line or on one spot)")
        }
        var pathLength = 0.0
        for stroke in drawing.strokes {
            pathLength += perimeter(stroke.map(unit), closed: false)
        }
        let measures = (
            pathOverHull: pathLength / hullPerimeter, rectangularity: hullArea / minimumRectangleArea(hull),
            solidity: min(1, area(points) / hullArea)
        )
        guard measures.pathOverHull.isFinite, measures.rectangularity.isFinite, measures.solidity.isFinite else {
            throw DataError(file: "drawing", message: "the drawing has no area (its points lie on a line or on one spot)")
        }
        return measures
    }

    /// The most likely shape with probabilities for each class.
    package func classify(_ drawing: Drawing) throws(DataError) -> ShapePrediction {
        let (ratio, rectangularity, solidity) = try measure(drawing)
        // Scores: how close each measurement is to each class's ideal, as Gaussian likelihoods.
        func closeness(_ value: Double, _ ideal: Double, _ spread: Double) -> Double {
            exp(-0.5 * pow((value - ideal) / spread, 2))
        }
        // A star is a pentagram's crossing lines (the path ratio) or a star's outline (the solidity).
        let star = max(closeness(ratio, 1.62, 0.15), closeness(solidity, 0.6, 0.1))
        let convex = closeness(ratio, 1.0, 0.15) * closeness(solidity, 1, 0.1)
        let scores = [
            convex * closeness(rectangularity, 0.785, 0.05),
            convex * closeness(rectangularity, 0.5, 0.07),
            convex * closeness(rectangularity, 1.0, 0.05),
            star,
        ]
        // The decision follows the midpoint rules exactly; the scores only shape the probabilities.
        let decided: Int
        if ratio > 1.3 || solidity < 0.7 {
            decided = 3
        } else if rectangularity > 0.89 {
            decided = 2
        } else if rectangularity < 0.64 {
            decided = 1
        } else {
            decided = 0
        }
        let total = scores.reduce(0, +)
        var probabilities = total > 0 ? scores.map { $0 / total } : [0.25, 0.25, 0.25, 0.25]
        if probabilities.indices.max(by: { probabilities[$0] < probabilities[$1] }) != decided {
            // Near a threshold the likelihoods can disagree with the rule; keep the rule and say it is unsure.
            probabilities = probabilities.indices.map { $0 == decided ? 0.4 : 0.6 / 3 }
        }
        return ShapePrediction(labels: Self.labels, probabilities: probabilities)
    }
}

/// The convex hull, counter-clockwise in y-up terms (Andrew's monotone chain).
///
/// Only points below the line from the first sorted point to the last can be vertices of the lower chain, and only
/// points above it of the upper one (a point on it lies between the two ends): each chain runs over its own side,
/// both ends included. Both chains are built in the one buffer that is returned, the upper one after the lower.
func convexHull(_ points: [(x: Double, y: Double)]) -> [(x: Double, y: Double)] {
    var sorted = points
    sorted.sort { $0.x < $1.x || ($0.x == $1.x && $0.y < $1.y) }
    guard sorted.count >= 3 else { return sorted }
    let n = sorted.count
    var hull = [(x: Double, y: Double)](repeating: (0, 0), count: n + 1)
    let count = sorted.withUnsafeBufferPointer { p in
        hull.withUnsafeMutableBufferPointer { h in
            @inline(__always) func cross(_ o: (x: Double, y: Double), _ a: (x: Double, y: Double), _ b: (x: Double, y: Double)) -> Double {
                (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x)
            }
            let (first, last) = (p[0], p[n - 1])
            var count = 0
            /// Adds `q` to the chain that starts at `start`, after dropping the vertices it turns clockwise from.
            @inline(__always) func push(_ q: (x: Double, y: Double), chainStart start: Int) {
                while count - start >= 2 && cross(h[count - 2], h[count - 1], q) <= 0 { count -= 1 }
                h[count] = q
                count += 1
            }
            push(first, chainStart: 0)
            for i in 1..<(n - 1) where cross(first, last, p[i]) < 0 { push(p[i], chainStart: 0) }
            push(last, chainStart: 0)
            // The upper chain starts at `last`, the lower chain's end, and ends at `first`, which is left off.
            let upper = count - 1
            for i in stride(from: n - 2, through: 1, by: -1) where cross(first, last, p[i]) > 0 { push(p[i], chainStart: upper) }
            push(first, chainStart: upper)
            return count - 1
        }
    }
    hull.removeLast(hull.count - count)
    return hull
}

/// The shoelace area of a polygon.
func area(_ polygon: [(x: Double, y: Double)]) -> Double { abs(signedArea(polygon)) }

/// The shoelace area of a polygon, positive when its corners run counter-clockwise (with y up).
func signedArea(_ polygon: [(x: Double, y: Double)]) -> Double {
    guard polygon.count >= 3 else { return 0 }
    var total = 0.0
    for i in polygon.indices {
        let (a, b) = (polygon[i], polygon[(i + 1) % polygon.count])
        total += a.x * b.y - b.x * a.y
    }
    return total / 2
}

/// The length of a polyline, closed or not.
func perimeter(_ points: [(x: Double, y: Double)], closed: Bool) -> Double {
    guard points.count >= 2 else { return 0 }
    var total = 0.0
    for i in 1..<points.count { total += hypot(points[i].x - points[i - 1].x, points[i].y - points[i - 1].y) }
    if closed, let first = points.first, let last = points.last { total += hypot(first.x - last.x, first.y - last.y) }
    return total
}

/// The smallest area of a rectangle holding a convex polygon: one of its sides lies along a hull edge.
func minimumRectangleArea(_ hull: [(x: Double, y: Double)]) -> Double { minimumRectangle(hull).area }

/// The smallest rectangle holding a convex polygon (hull order from index 0, no repeated points): its area and the
/// direction of the side that lies along a hull edge, as a unit vector. Rotating calipers: for each edge in turn,
/// the vertices furthest forward, furthest back and furthest out only move on, so the walk is O(n), not the O(n²)
/// of `minimumRectangleReference`. Generic so that the rasterizer's allocation-free hull (indices into scratch)
/// takes the same code as an array.
func minimumRectangle<Hull: RandomAccessCollection<(x: Double, y: Double)>>(_ hull: Hull) -> (area: Double, direction: (Double, Double))
where Hull.Index == Int {
    let n = hull.count
    guard n >= 3 else { return minimumRectangleReference(hull) }
    var best = Double.infinity, direction = (1.0, 0.0)
    var ahead = 0, behind = 0, out = 0
    var first = true
    // The vertex after `k` (< n), without an integer division.
    func next(_ k: Int) -> Int { k + 1 == n ? 0 : k + 1 }
    for i in 0..<n {
        let a = hull[i], b = hull[next(i)]
        let length = hypot(b.x - a.x, b.y - a.y)
        guard length > 0 else { continue }
        let (ux, uy) = ((b.x - a.x) / length, (b.y - a.y) / length)
        func along(_ k: Int) -> Double { hull[k].x * ux + hull[k].y * uy }
        func across(_ k: Int) -> Double { abs((hull[k].x - a.x) * uy - (hull[k].y - a.y) * ux) }
        if first {
            // The first edge: whole scans.
            ahead = (0..<n).max { along($0) < along($1) } ?? 0
            behind = (0..<n).min { along($0) < along($1) } ?? 0
            out = (0..<n).max { across($0) < across($1) } ?? 0
            first = false
        } else {
            var steps = 0
            while steps < n && along(next(ahead)) >= along(ahead) { ahead = next(ahead); steps += 1 }
            steps = 0
            while steps < n && across(next(out)) >= across(out) { out = next(out); steps += 1 }
            steps = 0
            while steps < n && along(next(behind)) <= along(behind) { behind = next(behind); steps += 1 }
        }
        let area = (along(ahead) - along(behind)) * across(out)
        if area < best { (best, direction) = (area, (ux, uy)) }
    }
    return (best, direction)
}

/// The loop-only twin of `minimumRectangle`: every hull edge against every vertex.
func minimumRectangleReference<Hull: RandomAccessCollection<(x: Double, y: Double)>>(_ hull: Hull) -> (area: Double, direction: (Double, Double))
where Hull.Index == Int {
    var best = Double.infinity, direction = (1.0, 0.0)
    for i in hull.indices {
        let (a, b) = (hull[i], hull[(i + 1) % hull.count])
        let length = hypot(b.x - a.x, b.y - a.y)
        guard length > 0 else { continue }
        let (ux, uy) = ((b.x - a.x) / length, (b.y - a.y) / length)
        var minU = Double.infinity, maxU = -Double.infinity, minV = Double.infinity, maxV = -Double.infinity
        for p in hull {
            let u = (p.x - a.x) * ux + (p.y - a.y) * uy, v = -(p.x - a.x) * uy + (p.y - a.y) * ux
            minU = min(minU, u); maxU = max(maxU, u); minV = min(minV, v); maxV = max(maxV, v)
        }
        let area = (maxU - minU) * (maxV - minV)
        if area < best { (best, direction) = (area, (ux, uy)) }
    }
    return (best, direction)
}
