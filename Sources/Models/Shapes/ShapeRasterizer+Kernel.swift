import Foundation
import Tensor

extension ShapeRasterizer {
    /// The shortest segment drawn, in pixels: a point closer than this to the last point kept is skipped unless
    /// it ends its stroke.
    static let segmentStep: Float = 0.5

    /// Writes the `size × size` image of `drawing` (row 0 at the top, values in [0, 1]) into `output`, without
    /// allocating for drawings of up to 4,096 points and images up to 64×64 (scratch on the stack; beyond, one
    /// temporary allocation). Its twin, `rasterizeReference` in Tests/ModelsTests/Reference, does the same steps
    /// one value at a time and the tests hold the two to the same bits.
    ///
    /// `drawing` must be one `problem(with:)` accepts; this is not checked again here (it runs for every drawing
    /// classified, after that check). Another drawing gives some image, but no crash and no write outside
    /// `output`; one without a finite, nonzero extent gives an empty image.
    public func rasterize(_ drawing: Drawing, into output: UnsafeMutableBufferPointer<Float>) {
        rasterize(drawing, into: output, level: Kernels.level)
    }

    /// `rasterize(_:into:)` with the kernels compiled for `level` (tests compare every level this CPU runs).
    func rasterize(_ drawing: Drawing, into output: UnsafeMutableBufferPointer<Float>, level: Kernels.Level) {
        shapePrecondition(
            output.count == size * size,
            "ShapeRasterizer.rasterize(_:into:): output has \(output.count) values, a \(size)×\(size) image needs \(size * size)")
        guard let image = output.baseAddress, output.count > 0 else { return }
        // The bounds, x and y in two lanes.
        var lowest = SIMD2<Double>(repeating: .infinity), highest = SIMD2<Double>(repeating: -.infinity)
        var count = 0
        for stroke in drawing.strokes {
            stroke.withUnsafeBufferPointer { points in
                for point in points {
                    let p = SIMD2(point.x, point.y)
                    lowest.replace(with: p, where: p .< lowest)
                    highest.replace(with: p, where: p .> highest)
                }
            }
            count += stroke.count
        }
        let unit = max(highest.x - lowest.x, highest.y - lowest.y)
        guard count > 0, unit > 0, unit.isFinite else {
            image.update(repeating: 0, count: output.count)
            return
        }
        let width = (size + 15) / 16 * 16
        withRasterScratch(points: count, strokes: drawing.strokes.count, pixels: size * width) { xs, ys, ends, nearest in
            // The points in units of the drawing's size from its corner (0…1), in float.
            let inverse = SIMD2(repeating: 1 / unit)
            var i = 0
            for (s, stroke) in drawing.strokes.enumerated() {
                stroke.withUnsafeBufferPointer { points in
                    for point in points {
                        let normalized = SIMD2<Float>((SIMD2(point.x, point.y) - lowest) * inverse)
                        xs[i] = normalized.x
                        ys[i] = normalized.y
                        i &+= 1
                    }
                }
                ends[s] = Int32(truncatingIfNeeded: i)
            }
            PreprocessingKernels.rasterize(
                xs: xs, ys: ys, count: count, strokeEnds: ends, strokes: drawing.strokes.count, rasterizer: self,
                step: Self.segmentStep, nearest: nearest, image: image, level: level)
        }
    }
}

/// Runs `body` with scratch for the rasterizer: `points` floats twice (x, y), `strokes` stroke ends and `pixels`
/// floats of distances. On the stack up to 16,384 values in all (64 KiB: a 64×64 image with 4,096 points), in
/// the smallest of three fixed frames that holds them (cleared first, as Swift requires); beyond, a temporary
/// allocation of their size (the heap on Linux).
func withRasterScratch<R>(
    points: Int, strokes: Int, pixels: Int,
    _ body: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>, UnsafeMutablePointer<Int32>, UnsafeMutablePointer<Float>) -> R
) -> R {
    let values = 2 * points + strokes + pixels
    if values <= 1024 { return withScratchFrame(InlineArray<1024, Float>.self) { carveRasterScratch($0, points, strokes, pixels, body) } }
    if values <= 4096 { return withScratchFrame(InlineArray<4096, Float>.self) { carveRasterScratch($0, points, strokes, pixels, body) } }
    if values <= 16384 { return withScratchFrame(InlineArray<16384, Float>.self) { carveRasterScratch($0, points, strokes, pixels, body) } }
    return withUnsafeTemporaryAllocation(byteCount: 4 * values, alignment: 16) { carveRasterScratch($0, points, strokes, pixels, body) }
}

/// `body` with the rasterizer's scratch laid out in `raw`: x, y, distances, stroke ends.
@inline(__always)
private func carveRasterScratch<R>(
    _ raw: UnsafeMutableRawBufferPointer, _ points: Int, _ strokes: Int, _ pixels: Int,
    _ body: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>, UnsafeMutablePointer<Int32>, UnsafeMutablePointer<Float>) -> R
) -> R {
    let values = 2 * points + strokes + pixels
    guard let base = raw.baseAddress, raw.count >= 4 * values else {
        preconditionFailure("withRasterScratch: \(raw.count) bytes for \(values) values")
    }
    let xs = base.bindMemory(to: Float.self, capacity: points)
    let ys = (base + 4 * points).bindMemory(to: Float.self, capacity: points)
    let nearest = (base + 8 * points).bindMemory(to: Float.self, capacity: pixels)
    let ends = (base + 8 * points + 4 * pixels).bindMemory(to: Int32.self, capacity: strokes)
    return body(xs, ys, ends, nearest)
}

/// `body` with a cleared frame of `values` floats on the stack (not inlined, so that only the frame in use takes
/// stack space).
@inline(never)
private func withScratchFrame<let values: Int, R>(
    _ frame: InlineArray<values, Float>.Type, _ body: (UnsafeMutableRawBufferPointer) -> R
) -> R {
    var storage = InlineArray<values, Float>(repeating: 0)
    return withUnsafeMutableBytes(of: &storage) { body($0) }
}
