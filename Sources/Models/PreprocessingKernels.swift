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

    /// Zeros `autocorrelation` keeps after the window in its scratch: it needs `window + autocorrelationPad` doubles.
    static let autocorrelationPad = Int(ODML_AUTOCORRELATION_PAD)

    /// The longest window `autocorrelation` computes with a scratch of its own (uninitialized, on the C stack).
    static let autocorrelationStackWindow = Int(ODML_AUTOCORRELATION_STACK_WINDOW)

    /// One window's autocorrelation at lags 1…`lags` normalized by its energy (zeros when the energy is at most
    /// `noiseEnergy`) into `output` (`lags` floats); returns the window's mean and energy. `scratch` (`window +
    /// autocorrelationPad` doubles) may be `nil` for windows up to `autocorrelationStackWindow`. Every `level` gives
    /// the same bits. See `odml_window_autocorrelation` in CPreprocessing.h.
    static func autocorrelation(
        _ signal: UnsafePointer<Float>, window: Int, lags: Int, noiseEnergy: Double, scratch: UnsafeMutableBufferPointer<Double>?,
        into output: UnsafeMutablePointer<Float>, level: Kernels.Level = Kernels.level
    ) -> (mean: Double, energy: Double) {
        precondition(
            window >= 2 && window <= Int(Int32.max) / 2 && lags >= 1 && lags < window
                && (scratch.map { $0.count >= window + autocorrelationPad && $0.baseAddress != nil } ?? (window <= autocorrelationStackWindow)),
            "PreprocessingKernels.autocorrelation: window \(window), lags \(lags), scratch \(scratch?.count ?? 0) (need 1 ≤ lags < window "
                + "and window + \(autocorrelationPad) doubles of scratch, or none up to window \(autocorrelationStackWindow))")
        var mean = 0.0, energy = 0.0
        odml_window_autocorrelation(
            signal, Int32(window), Int32(lags), noiseEnergy, scratch?.baseAddress, output, &mean, &energy, Int32(level.rawValue))
        return (mean, energy)
    }
}
