import Foundation
import Tensor

extension ShapeRasterizer {
    /// Writes the `size × size` image of `drawing` (row 0 at the top, values in [0, 1]) into `output`, without
    /// allocating: the image `rasterize(_:)` returns, bit for bit (its twin, `rasterizeReference` in Tests/ModelsTests/Reference, is the
    /// straightforward version the tests hold it to).
    ///
    /// `drawing` must be one `problem(with:)` accepts; this is not checked again here (it runs for every drawing
    /// classified, after that check). Another drawing gives some image, but no crash and no write outside
    /// `output`. Scratch lives on the stack for drawings of up to 2,048 points (a hand-drawn shape has 50–600) and
    /// images up to 64×64; beyond either, it is a temporary allocation (the heap on Linux), and drawings of more
    /// than 65,535 points are levelled with the reference's arrays.
    public func rasterize(_ drawing: Drawing, into output: UnsafeMutableBufferPointer<Float>) {
        rasterize(drawing, into: output, level: Kernels.level)
    }

    /// `rasterize(_:into:)` with the kernels compiled for `level` (tests compare every level this CPU runs).
    func rasterize(_ drawing: Drawing, into output: UnsafeMutableBufferPointer<Float>, level: Kernels.Level) {
        shapePrecondition(
            output.count == size * size,
            "ShapeRasterizer.rasterize(_:into:): output has \(output.count) values, a \(size)×\(size) image needs \(size * size)")
        guard let image = output.baseAddress, output.count > 0 else { return }
        guard let map = fastPlacement(of: drawing) else {
            image.update(repeating: 0, count: output.count)
            return
        }
        let reach = lineWidth / 2 + 0.5
        let reachSquared = reach * reach
        // A pixel's value only falls as its distance grows, so the brightest value any segment gives it is the value
        // of its nearest segment: keep each pixel's smallest squared distance (C kernel `PreprocessingKernels.rasterStroke`, one
        // call per stroke), then one square root per pixel (`PreprocessingKernels.rasterCoverage`). Both do `drawSegment`'s
        // operations in its order, in Double and without fused multiply-adds, so the image is bit-identical.
        let stride = MemoryLayout<DrawingPoint>.stride
        guard let xOffset = MemoryLayout<DrawingPoint>.offset(of: \.x),
            let yOffset = MemoryLayout<DrawingPoint>.offset(of: \.y)
        else {
            preconditionFailure("DrawingPoint.x and .y are stored properties")
        }
        withNearestScratch(count: output.count) { nearest in
            for stroke in drawing.strokes {
                stroke.withUnsafeBytes { points in
                    guard let base = points.baseAddress, !stroke.isEmpty else { return }
                    PreprocessingKernels.rasterStroke(
                        points: base + xOffset, count: stroke.count, pointStride: stride, yOffset: yOffset - xOffset,
                        origin: (map.originX, map.originY), inverseUnit: map.inverseUnit,
                        map: (map.a, map.b, map.c, map.d, map.e, map.f), reach: reach, size: size, nearest: nearest,
                        level: level)
                }
            }
            PreprocessingKernels.rasterCoverage(
                nearest, count: output.count, reach: reach, reachSquared: reachSquared, into: image,
                level: level)
        }
    }

    /// `placement(of:)` with the levelling in stack scratch and the passes over contiguous points: the same map.
    func fastPlacement(of drawing: Drawing) -> AffineMap? {
        // Bounds as `Drawing.bounds` finds them, x and y in two lanes: `Swift.min(a, b)` is `b < a ? b : a` and
        // `Swift.max(a, b)` is `b >= a ? b : a`, the same choice for a −0 against a +0 and for a NaN.
        var lowest = SIMD2<Double>(repeating: .infinity), highest = SIMD2<Double>(repeating: -.infinity)
        var count = 0
        for stroke in drawing.strokes {
            stroke.withUnsafeBufferPointer { points in
                for point in points {
                    let p = SIMD2(point.x, point.y)
                    lowest.replace(with: p, where: p .< lowest)
                    highest.replace(with: p, where: p .>= highest)
                }
            }
            count += stroke.count
        }
        guard count > 0 else { return nil }
        let (minX, minY, maxX, maxY) = (lowest.x, lowest.y, highest.x, highest.y)
        let unit = max(maxX - minX, maxY - minY)
        let middle = Double(size - 1) / 2
        guard unit > 0, unit.isFinite else {
            return AffineMap(originX: minX, originY: minY, inverseUnit: 0, a: 0, b: 0, c: 0, d: 0, e: middle, f: middle)
        }
        let inverseUnit = 1 / unit
        var (ux, uy) = (1.0, 0.0)
        if canonical, let direction = levelDirection(of: drawing, count: count, bounds: (minX, minY, maxX, maxY), extent: unit) {
            (ux, uy) = direction
        }
        // u and v in two lanes: u = x ux + y uy, v = x (−uy) + y ux, and x (−uy) is exactly −x uy.
        let corner = SIMD2(minX, minY), inverse = SIMD2(repeating: inverseUnit)
        let (alongX, alongY) = (SIMD2(ux, -uy), SIMD2(uy, ux))
        var lowestUV = SIMD2<Double>(repeating: .infinity), highestUV = SIMD2<Double>(repeating: -.infinity)
        for stroke in drawing.strokes {
            stroke.withUnsafeBufferPointer { points in
                for point in points {
                    let unit = (SIMD2(point.x, point.y) - corner) * inverse
                    let uv = alongX * unit.x + alongY * unit.y
                    lowestUV.replace(with: uv, where: uv .< lowestUV)
                    highestUV.replace(with: uv, where: uv .>= highestUV)
                }
            }
        }
        return affineMap(
            origin: (minX, minY), inverseUnit: inverseUnit, axis: (ux, uy),
            extents: (lowestUV.x, highestUV.x, lowestUV.y, highestUV.y))
    }
}

/// Runs `body` with `count` squared distances, all +∞, on the stack for images up to 64×64 (the shipped one is
/// 16×16): 1,024 bytes or less in an uncleared temporary allocation, else the smallest of three fixed frames
/// (2, 8 and 32 KiB). Larger images get a temporary allocation of their size: the heap on Linux.
func withNearestScratch<R>(count: Int, _ body: (UnsafeMutablePointer<Double>) -> R) -> R {
    if count <= 128 {
        return withUnsafeTemporaryAllocation(of: Double.self, capacity: count) { scratch in
            guard let base = scratch.baseAddress else { preconditionFailure("no scratch for \(count) pixels") }
            base.initialize(repeating: .infinity, count: count)
            return body(base)
        }
    }
    if count <= 256 { return withDistanceFrame(InlineArray<256, Double>.self, body) }
    if count <= 1024 { return withDistanceFrame(InlineArray<1024, Double>.self, body) }
    if count <= 4096 { return withDistanceFrame(InlineArray<4096, Double>.self, body) }
    return withUnsafeTemporaryAllocation(of: Double.self, capacity: count) { scratch in
        guard let base = scratch.baseAddress else { preconditionFailure("no scratch for \(count) pixels") }
        base.initialize(repeating: .infinity, count: count)
        return body(base)
    }
}

/// `body` with `pixels` squared distances of +∞ on the stack (not inlined, so that only the frame in use takes
/// stack space).
@inline(never)
private func withDistanceFrame<let pixels: Int, R>(_ frame: InlineArray<pixels, Double>.Type, _ body: (UnsafeMutablePointer<Double>) -> R) -> R {
    var storage = InlineArray<pixels, Double>(repeating: .infinity)
    return withUnsafeMutableBytes(of: &storage) { raw in
        guard let base = raw.baseAddress else { preconditionFailure("no scratch for \(pixels) pixels") }
        return body(base.assumingMemoryBound(to: Double.self))
    }
}
