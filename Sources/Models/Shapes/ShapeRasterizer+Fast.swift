import Foundation
import Tensor

extension ShapeRasterizer {
    /// Writes the `size × size` image of `drawing` (row 0 at the top, values in [0, 1]) into `output`, without
    /// allocating: the image `rasterize(_:)` returns, bit for bit (its twin, `rasterizeReference`, is the
    /// straightforward version the tests hold it to).
    ///
    /// `drawing` must be one `problem(with:)` accepts; this is not checked again here (it runs for every drawing
    /// classified, after that check). Another drawing gives some image, but no crash and no write outside
    /// `output`. Scratch lives on the stack for drawings of up to 2,048 points (a hand-drawn shape has 50–600) and
    /// images up to 64×64; beyond either, it is a temporary allocation (the heap on Linux), and drawings of more
    /// than 65,535 points are levelled with the reference's arrays.
    public func rasterize(_ drawing: Drawing, into output: UnsafeMutableBufferPointer<Float>) {
        shapePrecondition(output.count == size * size,
                          "ShapeRasterizer.rasterize(_:into:): output has \(output.count) values, a \(size)×\(size) image needs \(size * size)")
        guard let image = output.baseAddress, output.count > 0 else { return }
        guard let map = fastPlacement(of: drawing) else {
            image.update(repeating: 0, count: output.count)
            return
        }
        let reach = lineWidth / 2 + 0.5
        let reachSquared = reach * reach
        let skip = 0.5 * 0.5
        // A pixel's value only falls as its distance grows (`coverage` below), so the brightest value any segment
        // gives it is the value of its nearest segment: keep each pixel's smallest squared distance, then one
        // square root per pixel.
        withNearestScratch(count: output.count) { nearest in
            // `AffineMap.apply` in two lanes: each lane's operations are the scalar ones.
            let origin = SIMD2(map.originX, map.originY), inverseUnit = SIMD2(repeating: map.inverseUnit)
            let (alongU, alongV, offset) = (SIMD2(map.a, map.c), SIMD2(map.b, map.d), SIMD2(map.e, map.f))
            func apply(_ point: DrawingPoint) -> SIMD2<Double> {
                let unit = (SIMD2(point.x, point.y) - origin) * inverseUnit
                return alongU * unit.x + alongV * unit.y + offset
            }
            for stroke in drawing.strokes {
                stroke.withUnsafeBufferPointer { points in
                    guard let first = points.first else { return }
                    var start = apply(first)
                    if points.count == 1 { approach(from: start, to: start, by: .zero, lengthSquared: 0, reach: reach, into: nearest) }
                    for index in points.indices.dropFirst() {
                        let end = apply(points[index])
                        let delta = end - start
                        let lengthSquared = delta.x * delta.x + delta.y * delta.y
                        if lengthSquared < skip && index < points.count - 1 { continue }
                        approach(from: start, to: end, by: delta, lengthSquared: lengthSquared, reach: reach, into: nearest)
                        start = end
                    }
                }
            }
            coverage(of: nearest, reach: reach, reachSquared: reachSquared, into: image, count: output.count)
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
        var (minU, minV, maxU, maxV) = (lowestUV.x, lowestUV.y, highestUV.x, highestUV.y)
        if canonical && maxV - minV > maxU - minU {
            (ux, uy) = (-uy, ux)
            (minU, maxU, minV, maxV) = (minV, maxV, -maxU, -minU)
        }
        let fill = Double(size) - 2 * margin - 1
        let extent = max(maxU - minU, maxV - minV)
        guard extent > 0 else {
            return AffineMap(originX: minX, originY: minY, inverseUnit: 0, a: 0, b: 0, c: 0, d: 0, e: middle, f: middle)
        }
        let scaleU = fill / extent
        let scaleV = canonical ? fill / max(maxV - minV, extent / maxStretch) : scaleU
        let (centreU, centreV) = ((minU + maxU) / 2, (minV + maxV) / 2)
        return AffineMap(originX: minX, originY: minY, inverseUnit: inverseUnit,
                         a: scaleU * ux, b: scaleU * uy, c: -scaleV * uy, d: scaleV * ux,
                         e: middle - scaleU * centreU, f: middle - scaleV * centreV)
    }

    /// Lowers `nearest` (squared distances, row-major) to each pixel's squared distance from the segment from
    /// `start` to `end` (`delta` = end − start and its squared length, which the caller has), for the pixels
    /// `drawSegment` visits, with its arithmetic: four pixels of a row at a time, each lane computing what
    /// `drawSegment` computes for its pixel.
    ///
    /// `drawSegment` skips a segment with a coordinate that is not finite; here its distances come out NaN or ∞,
    /// which lower nothing (and the box is clamped to the image), so it lights nothing either.
    @inline(__always)
    private func approach(from start: SIMD2<Double>, to end: SIMD2<Double>, by delta: SIMD2<Double>, lengthSquared: Double,
                          reach: Double, into nearest: UnsafeMutablePointer<Double>) {
        let (x0, y0, dx, dy) = (start.x, start.y, delta.x, delta.y)
        let inverseLength = lengthSquared > 0 ? 1 / lengthSquared : 0
        // The pixel centres within `reach` of the segment's box, as `drawSegment` rounds them: both axes at once.
        var low = start, high = start
        low.replace(with: end, where: end .< start)
        high.replace(with: end, where: .!(end .< start))
        let (first, last) = (roundedUp(low - reach), roundedDown(high + reach))
        let firstX = max(0, first.x), lastX = min(size &- 1, last.x)
        let firstY = max(0, first.y), lastY = min(size &- 1, last.y)
        guard firstX <= lastX, firstY <= lastY else { return }
        guard size >= 4 else {
            // Rows narrower than the four lanes: one pixel at a time.
            for py in firstY...lastY {
                let qy = Double(py) - y0
                for px in firstX...lastX {
                    let qx = Double(px) - x0
                    let along = min(1, max(0, (qx * dx + qy * dy) * inverseLength))
                    let ex = qx - along * dx, ey = qy - along * dy
                    nearest[py * size + px] = min(nearest[py * size + px], ex * ex + ey * ey)
                }
            }
            return
        }
        let zero = SIMD4<Double>(repeating: 0), one = SIMD4<Double>(repeating: 1), lanes = SIMD4<Double>(0, 1, 2, 3)
        let (leftmost, rightmost) = (Double(firstX), Double(lastX))
        var column = firstX
        while column <= lastX {
            // Four pixels of the row from `start`, kept inside the row. Lanes outside firstX…lastX, which
            // `drawSegment` does not visit, are held at +∞ (`outside`), so they change nothing.
            let start = min(column, size &- 4)
            let pixelX = Double(start) + lanes
            var outside = zero
            outside.replace(with: .infinity, where: (pixelX .< leftmost) .| (pixelX .> rightmost))
            let qx = pixelX - x0
            let qxdx = qx * dx
            var row = nearest + (firstY &* size &+ start)
            var pixelY = Double(firstY)
            for _ in firstY...lastY {
                let qy = pixelY - y0
                // min(1, max(0, t)) as maxpd and minpd: they choose as `Swift.min` and `Swift.max` do except for a
                // −0, which gives +0 here, and a −0 or +0 along the segment gives the same distance.
                var along = (qxdx + qy * dy) * inverseLength
                along.replace(with: zero, where: .!(along .> zero))
                along.replace(with: one, where: .!(along .< one))
                let ex = qx - along * dx, ey = qy - along * dy
                var distanceSquared = ex * ex + ey * ey
                distanceSquared.replace(with: outside, where: distanceSquared .< outside)
                var old = UnsafeRawPointer(row).loadUnaligned(as: SIMD4<Double>.self)
                old.replace(with: distanceSquared, where: distanceSquared .< old)
                UnsafeMutableRawPointer(row).storeBytes(of: old, as: SIMD4<Double>.self)
                row += size
                pixelY += 1
            }
            column = start &+ 4
        }
    }

    /// The image from each pixel's smallest squared distance: `drawSegment`'s `Float(min(1, reach − √d²))` where
    /// d² < reach² and it is above 0, else 0 — the value `drawSegment` leaves after every segment.
    @inline(__always)
    private func coverage(of nearest: UnsafeMutablePointer<Double>, reach: Double, reachSquared: Double,
                          into image: UnsafeMutablePointer<Float>, count: Int) {
        let one = SIMD4<Double>(repeating: 1), reachLanes = SIMD4<Double>(repeating: reach)
        var i = 0
        while i &+ 4 <= count {
            let stored = UnsafeRawPointer(nearest + i).loadUnaligned(as: SIMD4<Double>.self)
            // Sums of squares are ≥ +0, so `magnitude` changes none; it tells the compiler so (sqrtpd, no libm call).
            let distanceSquared = SIMD4(stored.x.magnitude, stored.y.magnitude, stored.z.magnitude, stored.w.magnitude)
            var value = reachLanes - distanceSquared.squareRoot()
            value.replace(with: one, where: .!(value .< one))
            value.replace(with: 0, where: .!(distanceSquared .< reachSquared))
            var pixels = SIMD4<Float>(value)
            pixels.replace(with: 0, where: .!(pixels .> 0))
            UnsafeMutableRawPointer(image + i).storeBytes(of: pixels, as: SIMD4<Float>.self)
            i &+= 4
        }
        while i < count {
            let distanceSquared = nearest[i]
            let value = distanceSquared < reachSquared ? Float(min(1, reach - distanceSquared.squareRoot())) : 0
            image[i] = value > 0 ? value : 0
            i &+= 1
        }
    }

    /// `Int(value.rounded(.up))` for finite values, after clamping them to −1…size (which changes no pixel range:
    /// anything outside the image is outside it either way). Branch-free: adding 1.5 · 2⁵² rounds a value this
    /// small to a whole number, which the low bits of the sum then hold.
    @inline(__always)
    private func roundedUp(_ value: SIMD2<Double>) -> SIMD2<Int> {
        let clamped = clampedToImage(value)
        let nearest = (clamped + roundingShift) - roundingShift
        var result = nearest
        result.replace(with: nearest + 1, where: nearest .< clamped)
        return wholeNumbers(result)
    }

    /// `Int(value.rounded(.down))`, clamped like `roundedUp`.
    @inline(__always)
    private func roundedDown(_ value: SIMD2<Double>) -> SIMD2<Int> {
        let clamped = clampedToImage(value)
        let nearest = (clamped + roundingShift) - roundingShift
        var result = nearest
        result.replace(with: nearest - 1, where: nearest .> clamped)
        return wholeNumbers(result)
    }

    /// `value` held within −1…size (finite values; selects, which compile to maxpd and minpd).
    @inline(__always)
    private func clampedToImage(_ value: SIMD2<Double>) -> SIMD2<Double> {
        var clamped = value
        clamped.replace(with: -1, where: clamped .< -1)
        clamped.replace(with: Double(size), where: clamped .> Double(size))
        return clamped
    }

    /// Whole numbers within ±2⁵¹ as `Int`s: the low bits of their sums with 1.5 · 2⁵².
    @inline(__always)
    private func wholeNumbers(_ whole: SIMD2<Double>) -> SIMD2<Int> {
        let sum = whole + roundingShift
        return SIMD2(Int(truncatingIfNeeded: sum.x.bitPattern &- roundingShift.bitPattern),
                     Int(truncatingIfNeeded: sum.y.bitPattern &- roundingShift.bitPattern))
    }
}

/// 1.5 · 2⁵²: a `Double` in [2⁵², 2⁵³) has no fraction, so adding this rounds any value within ±2⁵¹ to an integer.
private let roundingShift = 6_755_399_441_055_744.0

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
