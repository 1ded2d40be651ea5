import CPreprocessing
import Tensor

/// The one Swift door to CPreprocessing: the shape rasterizer's and the motion windows' C kernels, each at the
/// instruction-set level the caller picks (`Kernels.level` by default), with its preconditions. Every kernel is
/// bit-identical to its Swift reference, which the tests compare at every level the CPU runs.
enum PreprocessingKernels {
    /// Lowers a shape rasterizer's distance map (`size × size` squared distances, row-major) to each pixel's squared
    /// distance from one stroke's segments, its `count` points mapped by `(x, y) ↦ (a u + b v + e, c u + d v + f)`,
    /// `u = (x − origin.x) · inverseUnit`; see `odml_raster_stroke_args` in CPreprocessing.h. Point i's x is the `Double` at
    /// `points + i · pointStride` bytes, its y `yOffset` bytes after it. Bit-identical to the Swift reference.
    static func rasterStroke(
        points: UnsafeRawPointer, count: Int, pointStride: Int, yOffset: Int, origin: (x: Double, y: Double),
        inverseUnit: Double, map: (a: Double, b: Double, c: Double, d: Double, e: Double, f: Double), reach: Double,
        size: Int, nearest: UnsafeMutablePointer<Double>, level: Kernels.Level = Kernels.level
    ) {
        precondition(
            count >= 0 && count <= Int(Int32.max) && size >= 1 && size <= 46_340,
            "PreprocessingKernels.rasterStroke: \(count) points and a \(size)×\(size) image (1…46,340 a side, ≤ Int32.max points)")
        var arguments = odml_raster_stroke_args()
        arguments.points = points
        arguments.pointStride = pointStride
        arguments.yOffset = yOffset
        arguments.count = Int32(count)
        (arguments.originX, arguments.originY, arguments.inverseUnit) = (origin.x, origin.y, inverseUnit)
        (arguments.a, arguments.b, arguments.c, arguments.d, arguments.e, arguments.f) = map
        arguments.reach = reach
        arguments.size = Int32(size)
        arguments.nearest = nearest
        withUnsafePointer(to: arguments) { odml_raster_stroke($0, Int32(level.rawValue)) }
    }

    /// A shape rasterizer's image from its `count` smallest squared distances: `Float(min(1, reach − √d²))` where
    /// d² < `reachSquared` and that is above 0, else +0. Bit-identical to the Swift reference.
    static func rasterCoverage(
        _ nearest: UnsafePointer<Double>, count: Int, reach: Double, reachSquared: Double,
        into image: UnsafeMutablePointer<Float>, level: Kernels.Level = Kernels.level
    ) {
        precondition(count >= 0 && count <= Int(Int32.max), "PreprocessingKernels.rasterCoverage: \(count) pixels (≤ Int32.max)")
        odml_raster_coverage(nearest, Int32(count), reach, reachSquared, image, Int32(level.rawValue))
    }

    /// The convex hull of `count` points (`xs[i]`, `ys[i]`) as the shape rasterizer's reference `convexHull` finds
    /// it (sorted by x then y; Andrew's monotone chain, its test operand for operand), as indices into the points:
    /// returns the vertex count h, the vertices in `stack[0..<h]`. `order` (`count` entries) and `stack` (2 ·
    /// `count`) are scratch; fewer than 3 points come back sorted. Bit-identical to the reference.
    static func convexHull(
        xs: UnsafePointer<Double>, ys: UnsafePointer<Double>, count: Int, order: UnsafeMutablePointer<UInt16>,
        stack: UnsafeMutablePointer<UInt16>
    ) -> Int {
        precondition(count >= 0 && count <= Int(UInt16.max), "PreprocessingKernels.convexHull: \(count) points (0…65,535)")
        return Int(odml_convex_hull(xs, ys, Int32(count), order, stack))
    }

    /// The smallest rectangle around a convex polygon of `count` ≥ 3 vertices (`xs[hull[k]]`, `ys[hull[k]]`), as
    /// the shape rasterizer's `minimumRectangle` finds it (rotating calipers, bit for bit): its area and the direction
    /// of its side along a hull edge, a unit vector.
    static func minimumRectangle(
        xs: UnsafePointer<Double>, ys: UnsafePointer<Double>, hull: UnsafePointer<UInt16>, count: Int
    ) -> (area: Double, direction: (Double, Double)) {
        precondition(count >= 3 && count <= Int(UInt16.max), "PreprocessingKernels.minimumRectangle: \(count) vertices (3…65,535)")
        var (x, y) = (1.0, 0.0)
        let area = odml_minimum_rectangle(xs, ys, hull, Int32(count), &x, &y)
        return (area, (x, y))
    }

    /// The motion windows' vertical and horizontal signals of `count` samples, each sample's gravity and user
    /// acceleration three `Double`s at `gravityOffset` and `accelerationOffset` bytes into it, samples `stride`
    /// bytes apart; see `odml_motion_signals` in CPreprocessing.h. Bit-identical to `MotionWindowing.features(of:)`.
    static func motionSignals(
        _ samples: UnsafeRawPointer, count: Int, stride: Int, gravityOffset: Int, accelerationOffset: Int,
        vertical: UnsafeMutablePointer<Float>, horizontal: UnsafeMutablePointer<Float>, level: Kernels.Level = Kernels.level
    ) {
        precondition(count >= 0 && count <= Int(Int32.max), "PreprocessingKernels.motionSignals: \(count) samples (≤ Int32.max)")
        odml_motion_signals(samples, Int32(count), stride, gravityOffset, accelerationOffset, vertical, horizontal, Int32(level.rawValue))
    }

    /// One block of the motion windows' shared autocorrelation: see `odml_autocorrelation_block` in
    /// CPreprocessing.h and `SharedAutocorrelation.sums(block:)`. `y` holds the signal from `start` to at least
    /// `start + hop + 16 · tiles` (zeros past `samples`).
    static func autocorrelationBlock(
        _ y: UnsafePointer<Double>, start: Int, hop: Int, samples: Int, lags: Int, tiles: Int, cut0: Int,
        zones: UnsafePointer<Int32>, step: UnsafePointer<Int32>, prefix: UnsafeMutablePointer<Double>,
        whole: UnsafeMutablePointer<Double>, partial: UnsafeMutablePointer<Double>, history: UnsafeMutablePointer<Double>,
        level: Kernels.Level = Kernels.level
    ) {
        precondition(
            start >= 0 && hop >= 1 && lags >= 1 && tiles >= 1 && samples <= Int(Int32.max) && start + hop <= Int(Int32.max),
            "PreprocessingKernels.autocorrelationBlock: start \(start), hop \(hop), samples \(samples), lags \(lags), tiles \(tiles)")
        odml_autocorrelation_block(
            y, Int32(start), Int32(hop), Int32(samples), Int32(lags), Int32(tiles), Int32(cut0), zones, step, prefix, whole, partial,
            history, Int32(level.rawValue))
    }
}
