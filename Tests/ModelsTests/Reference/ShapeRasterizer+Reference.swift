import Foundation
import Tensor

@testable import Models

// The plain twin of the shape rasterizer (`rasterize(_:into:)`, the C kernel `odml_rasterize`): a test oracle only,
// never a production path. The same steps in the same float operations, one value at a time, with arrays.
extension ShapeRasterizer {
    /// The image `rasterize(_:into:)` must give, bit for bit.
    func rasterizeReference(_ drawing: Drawing) -> Tensor {
        var pixels = [Float](repeating: 0, count: size * size)
        guard let bounds = drawing.bounds, case let unit = max(bounds.maxX - bounds.minX, bounds.maxY - bounds.minY),
            unit > 0, unit.isFinite
        else { return Tensor(shape: [size, size, 1], scalars: pixels) }
        let inverse = 1 / unit
        let strokes = drawing.strokes.map { stroke in
            stroke.map { (x: Float(($0.x - bounds.minX) * inverse), y: Float(($0.y - bounds.minY) * inverse)) }
        }
        let points = strokes.flatMap { $0 }
        let map = referencePlacement(points)
        let reach = Float(lineWidth / 2 + 0.5)
        for stroke in strokes {
            let placed = stroke.map { (x: map.a * $0.x + map.b * $0.y + map.e, y: map.c * $0.x + map.d * $0.y + map.f) }
            guard var last = placed.first else { continue }
            if placed.count == 1 { referenceSegment(last, last, reach: reach, into: &pixels) }
            for (index, point) in placed.enumerated().dropFirst() {
                let dx = point.x - last.x, dy = point.y - last.y
                if dx * dx + dy * dy < Self.segmentStep * Self.segmentStep && index < placed.count - 1 { continue }
                referenceSegment(last, point, reach: reach, into: &pixels)
                last = point
            }
        }
        return Tensor(shape: [size, size, 1], scalars: pixels)
    }

    /// The affine map `(x, y) ↦ (a x + b y + e, c x + d y + f)` from normalized points to pixels.
    func referencePlacement(_ points: [(x: Float, y: Float)]) -> (a: Float, b: Float, c: Float, d: Float, e: Float, f: Float) {
        var (ux, uy): (Float, Float) = (1, 0)
        if canonical { (ux, uy) = referenceAxis(referenceHull(points)) }
        let us = points.map { $0.x * ux + $0.y * uy }, vs = points.map { $0.y * ux - $0.x * uy }
        var (minU, maxU) = (us.min() ?? 0, us.max() ?? 0)
        var (minV, maxV) = (vs.min() ?? 0, vs.max() ?? 0)
        if canonical && maxV - minV > maxU - minU {
            (ux, uy) = (-uy, ux)
            (minU, maxU, minV, maxV) = (minV, maxV, -maxU, -minU)
        }
        let middle = Float(size - 1) / 2
        let fill = Float(size) - 2 * Float(margin) - 1
        let extent = max(maxU - minU, maxV - minV)
        guard extent > 0 else { return (0, 0, 0, 0, middle, middle) }
        let scaleU = fill / extent
        let scaleV = canonical ? fill / max(maxV - minV, extent / Float(maxStretch)) : scaleU
        let (centreU, centreV) = ((minU + maxU) / 2, (minV + maxV) / 2)
        return (scaleU * ux, scaleU * uy, -scaleV * uy, scaleV * ux, middle - scaleU * centreU, middle - scaleV * centreV)
    }

    /// The levelling's directions (about 11° apart over half a turn), as the C kernel's table holds them.
    static let referenceDirections: [(Float, Float)] = [
        (1, 0), (5, 1), (5, 2), (3, 2), (1, 1), (2, 3), (2, 5), (1, 5), (0, 1), (-1, 5), (-2, 5), (-2, 3), (-1, 1), (-3, 2),
        (-5, 2), (-5, 1),
    ]

    /// The polygon of extreme points: for each direction the first point where the projection is largest, then
    /// for each the first where it is smallest, leaving out a point that repeats the one before it, and the last when
    /// it is the first (as the C kernel does).
    func referenceHull(_ points: [(x: Float, y: Float)]) -> [(x: Float, y: Float)] {
        guard !points.isEmpty else { return [] }
        var highest: [Int] = [], lowest: [Int] = []
        for (dx, dy) in Self.referenceDirections {
            let along = points.map { $0.x * dx + $0.y * dy }
            var (high, low) = (0, 0)
            for i in along.indices {
                if along[i] > along[high] { high = i }
                if along[i] < along[low] { low = i }
            }
            highest.append(high)
            lowest.append(low)
        }
        let extremes = highest + lowest
        var polygon: [(x: Float, y: Float)] = []
        for (k, index) in extremes.enumerated() {
            if k > 0 && index == extremes[k - 1] { continue }
            if k == extremes.count - 1 && index == extremes[0] { continue }
            polygon.append(points[index])
        }
        return polygon
    }

    /// The direction of the first polygon edge along which the rectangle around the vertices is smallest; x when
    /// no edge has a length.
    func referenceAxis(_ hull: [(x: Float, y: Float)]) -> (Float, Float) {
        var best = Float.infinity, direction: (Float, Float) = (1, 0)
        for i in hull.indices {
            let a = hull[i], b = hull[(i + 1) % hull.count]
            let (ex, ey) = (b.x - a.x, b.y - a.y)
            let lengthSquared = ex * ex + ey * ey
            guard lengthSquared > 0 else { continue }
            let length = lengthSquared.squareRoot()
            let (ux, uy) = (ex / length, ey / length)
            let along = hull.map { $0.x * ux + $0.y * uy }
            let across = hull.map { abs(($0.x - a.x) * uy - ($0.y - a.y) * ux) }
            let area = ((along.max() ?? 0) - (along.min() ?? 0)) * (across.max() ?? 0)
            if area < best { (best, direction) = (area, (ux, uy)) }
        }
        return direction
    }

    /// Lights the pixels near the segment p–q: min(1, reach − distance) where the distance is below `reach`, the
    /// brightest value any segment gives.
    func referenceSegment(_ p: (x: Float, y: Float), _ q: (x: Float, y: Float), reach: Float, into image: inout [Float]) {
        let dx = q.x - p.x, dy = q.y - p.y
        let lengthSquared = dx * dx + dy * dy
        let inverseLength = lengthSquared > 0 ? 1 / lengthSquared : 0
        for py in 0..<size {
            let qy = Float(py) - p.y
            for px in 0..<size {
                let qx = Float(px) - p.x
                let along = min(1, max(0, (qx * dx + qy * dy) * inverseLength))
                let ex = qx - along * dx, ey = qy - along * dy
                let distanceSquared = ex * ex + ey * ey
                guard distanceSquared < reach * reach else { continue }
                image[py * size + px] = max(image[py * size + px], min(1, reach - distanceSquared.squareRoot()))
            }
        }
    }
}
