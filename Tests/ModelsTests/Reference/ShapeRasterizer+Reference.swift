import Foundation
import Tensor

@testable import Models

// The naive twin of the shape rasterizer's fast path (`rasterize(_:into:)`, the C kernels of CPreprocessing): a test
// oracle only, never a production path.
extension ShapeRasterizer {
    /// The loop-only twin of `rasterize(_:into:)`: arrays for the hull, every pixel of each segment's box one at
    /// a time. Tests hold the fast path to it.
    func rasterizeReference(_ drawing: Drawing) -> Tensor {
        var pixels = [Float](repeating: 0, count: size * size)
        guard let map = placement(of: drawing) else { return Tensor(shape: [size, size, 1], scalars: pixels) }
        let reach = lineWidth / 2 + 0.5
        let skip = 0.5 * 0.5
        pixels.withUnsafeMutableBufferPointer { image in
            for stroke in drawing.strokes {
                guard let first = stroke.first else { continue }
                var (x0, y0) = map.apply(first.x, first.y)
                if stroke.count == 1 { drawSegment(x0, y0, x0, y0, reach: reach, into: image) }
                for (index, point) in stroke.enumerated().dropFirst() {
                    let (x1, y1) = map.apply(point.x, point.y)
                    let dx = x1 - x0, dy = y1 - y0
                    if dx * dx + dy * dy < skip && index < stroke.count - 1 { continue }
                    drawSegment(x0, y0, x1, y1, reach: reach, into: image)
                    x0 = x1
                    y0 = y1
                }
            }
        }
        return Tensor(shape: [size, size, 1], scalars: pixels)
    }

    /// `value` (finite) rounded by `rule` to a pixel index after clamping to −1…size, as the C kernel does: the
    /// callers clamp to the image anyway, and a coordinate far outside it cannot overflow `Int`.
    @inline(__always)
    func pixel(_ value: Double, _ rule: FloatingPointRoundingRule) -> Int {
        Int(min(max(value, -1), Double(size)).rounded(rule))
    }

    /// Lights the pixels near the segment (x0, y0)–(x1, y1).
    @inline(__always)
    func drawSegment(
        _ x0: Double, _ y0: Double, _ x1: Double, _ y1: Double, reach: Double,
        into image: UnsafeMutableBufferPointer<Float>
    ) {
        guard x0.isFinite, y0.isFinite, x1.isFinite, y1.isFinite else { return }
        let dx = x1 - x0, dy = y1 - y0
        let lengthSquared = dx * dx + dy * dy
        let inverseLength = lengthSquared > 0 ? 1 / lengthSquared : 0
        let reachSquared = reach * reach
        let firstX = max(0, pixel(min(x0, x1) - reach, .up)), lastX = min(size - 1, pixel(max(x0, x1) + reach, .down))
        let firstY = max(0, pixel(min(y0, y1) - reach, .up)), lastY = min(size - 1, pixel(max(y0, y1) + reach, .down))
        guard firstX <= lastX, firstY <= lastY else { return }
        for py in firstY...lastY {
            let qy = Double(py) - y0
            for px in firstX...lastX {
                let qx = Double(px) - x0
                let along = min(1, max(0, (qx * dx + qy * dy) * inverseLength))
                let ex = qx - along * dx, ey = qy - along * dy
                let distanceSquared = ex * ex + ey * ey
                guard distanceSquared < reachSquared else { continue }
                let coverage = Float(min(1, reach - distanceSquared.squareRoot()))
                if coverage > image[py * size + px] { image[py * size + px] = coverage }
            }
        }
    }
}
