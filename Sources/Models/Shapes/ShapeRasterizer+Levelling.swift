import Foundation
import Tensor

// The allocation-free twin of `ShapeRasterizer.minimumRectangleDirection(of:bounds:)`: the same points in the
// same units, sorted into the same order, the same monotone chain (so the same hull, vertex for vertex) and the
// same rotating calipers — only kept in stack scratch as indices instead of in arrays, and run in C
// (`PreprocessingKernels.convexHull`, `PreprocessingKernels.minimumRectangle`: the same operations in the same order, without fused
// multiply-adds). The direction it returns is therefore the reference's, bit for bit; `ShapeRasterizerTwinTests`
// holds the two together.

extension ShapeRasterizer {
    /// The most points the levelling sorts by `UInt16` index; longer drawings take the reference's arrays.
    static let largestIndexedDrawing = Int(UInt16.max)

    /// The direction of a side of the smallest rectangle around the drawing's `count` points, or `nil` when they
    /// have no area: `minimumRectangleDirection(of:bounds:)` without its arrays. `bounds` and `extent` (their
    /// larger side) are as `placement` computes them, `extent` > 0 and finite.
    func levelDirection(
        of drawing: Drawing, count: Int, bounds: (minX: Double, minY: Double, maxX: Double, maxY: Double),
        extent: Double
    ) -> (Double, Double)? {
        guard count <= Self.largestIndexedDrawing else {
            // 65,536 points and more: far beyond a hand-drawn shape; the reference's arrays are as good.
            return minimumRectangleDirection(of: drawing, bounds: bounds)
        }
        let (minX, minY) = (bounds.minX, bounds.minY)
        return withHullScratch(count: count) { scratch in
            // The points in units of the drawing's size from its corner, exactly as the reference computes them.
            // Two lanes, each the reference's subtraction and division.
            let corner = SIMD2(minX, minY), extents = SIMD2(repeating: extent)
            var i = 0
            for stroke in drawing.strokes {
                stroke.withUnsafeBufferPointer { points in
                    for point in points {
                        let unit = (SIMD2(point.x, point.y) - corner) / extents
                        scratch.xs[i] = unit.x
                        scratch.ys[i] = unit.y
                        i &+= 1
                    }
                }
            }
            let hullCount = scratch.sortAndWrapHull(count: count)
            let hull = IndexedPoints(xs: scratch.xs, ys: scratch.ys, order: scratch.stack, count: hullCount)
            guard hullCount >= 3 else {
                guard let first = hull.first, let last = hull.last else { return nil }
                let length = hypot(last.x - first.x, last.y - first.y)
                return length > 0 ? ((last.x - first.x) / length, (last.y - first.y) / length) : nil
            }
            return PreprocessingKernels.minimumRectangle(xs: scratch.xs, ys: scratch.ys, hull: scratch.stack, count: hullCount).direction
        }
    }
}

/// Points `(xs[order[i]], ys[order[i]])` for `i` in `0..<count`: a hull kept as indices, as a collection.
struct IndexedPoints: RandomAccessCollection {
    let xs: UnsafeMutablePointer<Double>, ys: UnsafeMutablePointer<Double>, order: UnsafeMutablePointer<UInt16>
    let count: Int
    var startIndex: Int { 0 }
    var endIndex: Int { count }

    @inline(__always)
    subscript(position: Int) -> (x: Double, y: Double) {
        let k = Int(order[position])
        return (xs[k], ys[k])
    }
}

/// Stack scratch for the hull of `n` points: their coordinates, their sorted order (`n` indices) and a stack of
/// `2n` indices that ends as the hull (and serves the sort before that).
struct HullScratch {
    let xs: UnsafeMutablePointer<Double>, ys: UnsafeMutablePointer<Double>
    let order: UnsafeMutablePointer<UInt16>, stack: UnsafeMutablePointer<UInt16>

    /// Sorts the points by x, then y (the reference's `sorted` order), and leaves their convex hull in `stack`
    /// as Andrew's monotone chain in `convexHull` finds it: the same comparisons in the same order, in C
    /// (`PreprocessingKernels.convexHull`: a counting sort by x, then the two chains over the points gathered in sorted order,
    /// each chain's coordinates kept beside its indices). Returns
    /// the hull's vertex count; with fewer than 3 points, the hull is the points in sorted order, as there.
    func sortAndWrapHull(count n: Int) -> Int {
        PreprocessingKernels.convexHull(xs: xs, ys: ys, count: n, order: order, stack: stack)
    }
}

/// Runs `body` with scratch for the hull of `n` (≤ 65,535) points, on the stack up to 2,048 points: in blocks of
/// at most 1,024 bytes up to 128 points (`withUnsafeTemporaryAllocation` keeps those on the stack on every
/// platform, uncleared), else in the smallest of four fixed stack frames that holds them (5.5 to 44 KiB, cleared
/// first, as Swift requires). Longer drawings get a temporary allocation of their size: the heap on Linux.
func withHullScratch<R>(count n: Int, _ body: (HullScratch) -> R) -> R {
    if n <= 128 {
        return withUnsafeTemporaryAllocation(of: Double.self, capacity: n) { xs in
            withUnsafeTemporaryAllocation(of: Double.self, capacity: n) { ys in
                withUnsafeTemporaryAllocation(of: UInt16.self, capacity: 3 * n) { indices in
                    guard let xs = xs.baseAddress, let ys = ys.baseAddress, let indices = indices.baseAddress else {
                        preconditionFailure("HullScratch: no memory for \(n) points")
                    }
                    return body(HullScratch(xs: xs, ys: ys, order: indices, stack: indices + n))
                }
            }
        }
    }
    if n <= 256 { return withStackFrame(InlineArray<352, SIMD2<Double>>.self, count: n, body) }
    if n <= 512 { return withStackFrame(InlineArray<704, SIMD2<Double>>.self, count: n, body) }
    if n <= 1024 { return withStackFrame(InlineArray<1408, SIMD2<Double>>.self, count: n, body) }
    if n <= 2048 { return withStackFrame(InlineArray<2816, SIMD2<Double>>.self, count: n, body) }
    return withUnsafeTemporaryAllocation(byteCount: HullScratch.bytes(count: n), alignment: 16) { body(HullScratch(carving: $0, count: n)) }
}

/// `body` with a cleared `Frame` on the stack as scratch for `n` points (22 bytes each, 16 per `SIMD2<Double>`).
@inline(never)
private func withStackFrame<let chunks: Int, R>(
    _ frame: InlineArray<chunks, SIMD2<Double>>.Type, count n: Int,
    _ body: (HullScratch) -> R
) -> R {
    var storage = InlineArray<chunks, SIMD2<Double>>(repeating: .zero)
    return withUnsafeMutableBytes(of: &storage) { body(HullScratch(carving: $0, count: n)) }
}

extension HullScratch {
    /// Bytes for `n` points: two `Double`s and three `UInt16`s each.
    static func bytes(count n: Int) -> Int { 22 * n }

    /// The scratch for `n` points laid out in `raw` (16-byte aligned).
    init(carving raw: UnsafeMutableRawBufferPointer, count n: Int) {
        guard let base = raw.baseAddress, raw.count >= Self.bytes(count: n) else {
            preconditionFailure("HullScratch: \(raw.count) bytes for \(n) points, need \(Self.bytes(count: n))")
        }
        let indices = (base + 16 * n).bindMemory(to: UInt16.self, capacity: 3 * n)
        self.init(
            xs: base.bindMemory(to: Double.self, capacity: n), ys: (base + 8 * n).bindMemory(to: Double.self, capacity: n),
            order: indices, stack: indices + n)
    }
}
