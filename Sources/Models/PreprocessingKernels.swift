import CPreprocessing
import Tensor

/// The one Swift door to CPreprocessing: the shape rasterizer's and the motion windows' C kernels, each at the
/// instruction-set level the caller picks (`Kernels.level` by default), with its preconditions. Every kernel is
/// bit-identical to its Swift reference, which the tests compare at every level the CPU runs.
enum PreprocessingKernels {
    /// A shape rasterizer's image of `count` points normalized to 0…1 (`xs`, `ys`), in strokes ending at
    /// `strokeEnds` (ascending, the last one `count`): levelled, placed and drawn as `odml_raster_args` in
    /// CPreprocessing.h describes, with `rasterizer`'s parameters. `nearest` is scratch of `size · ⌈size / 16⌉ · 16`
    /// floats, `image` receives `size × size`. Bit-identical to the Swift twin in the tests.
    static func rasterize(
        xs: UnsafePointer<Float>, ys: UnsafePointer<Float>, count: Int, strokeEnds: UnsafePointer<Int32>, strokes: Int,
        rasterizer: ShapeRasterizer, step: Float, nearest: UnsafeMutablePointer<Float>, image: UnsafeMutablePointer<Float>,
        level: Kernels.Level = Kernels.level
    ) {
        precondition(
            count >= 0 && count <= Int(Int32.max) && strokes >= 0 && strokes <= Int(Int32.max) && rasterizer.size >= 1
                && rasterizer.size <= 46_336,
            "PreprocessingKernels.rasterize: \(count) points in \(strokes) strokes, a \(rasterizer.size)×\(rasterizer.size) image (1…46,340 a side, ≤ Int32.max points)"
        )
        var arguments = odml_raster_args()
        (arguments.xs, arguments.ys, arguments.count) = (xs, ys, Int32(count))
        (arguments.strokeEnds, arguments.strokes) = (strokeEnds, Int32(strokes))
        (arguments.size, arguments.canonical) = (Int32(rasterizer.size), rasterizer.canonical ? 1 : 0)
        arguments.margin = Float(rasterizer.margin)
        arguments.maxStretch = Float(rasterizer.maxStretch)
        arguments.reach = Float(rasterizer.lineWidth / 2 + 0.5)
        arguments.step = step
        (arguments.nearest, arguments.image) = (nearest, image)
        withUnsafePointer(to: arguments) { odml_rasterize($0, Int32(level.rawValue)) }
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

    /// Zeros `autocorrelation` keeps after the window in its scratch.
    static let autocorrelationPad = Int(ODML_AUTOCORRELATION_PAD)

    /// The doubles of scratch `autocorrelation` needs for `window` values and `lags` lags.
    static func autocorrelationScratch(window: Int, lags: Int) -> Int { lags + window + autocorrelationPad }

    /// The longest window `autocorrelation` computes with a scratch of its own (uninitialized, on the C stack).
    static let autocorrelationStackWindow = Int(ODML_AUTOCORRELATION_STACK_WINDOW)

    /// One window's autocorrelation at lags 1…`lags` normalized by its energy (zeros when the energy is at most
    /// `noiseEnergy`), each then the mean over the `smoothing` lags around it (0 or 1: none), into `output` (`lags`
    /// floats); returns the window's mean and energy. `scratch` (`autocorrelationScratch(window:lags:)` doubles) may
    /// be `nil` for windows up to `autocorrelationStackWindow`. Every `level` gives the same bits. See
    /// `odml_window_autocorrelation` in CPreprocessing.h.
    static func autocorrelation(
        _ signal: UnsafePointer<Float>, window: Int, lags: Int, smoothing: Int, noiseEnergy: Double,
        scratch: UnsafeMutableBufferPointer<Double>?, into output: UnsafeMutablePointer<Float>, level: Kernels.Level = Kernels.level
    ) -> (mean: Double, energy: Double) {
        precondition(
            window >= 2 && window <= Int(Int32.max) / 2 && lags >= 1 && lags < window
                && (smoothing <= 1 || (smoothing % 2 == 1 && smoothing <= lags))
                && (scratch.map { $0.count >= autocorrelationScratch(window: window, lags: lags) && $0.baseAddress != nil }
                    ?? (window <= autocorrelationStackWindow)),
            "PreprocessingKernels.autocorrelation: window \(window), lags \(lags), smoothing \(smoothing), scratch "
                + "\(scratch?.count ?? 0) (need 1 ≤ lags < window, smoothing 0, 1 or odd up to lags, and "
                + "\(autocorrelationScratch(window: window, lags: lags)) doubles of scratch, or none up to window "
                + "\(autocorrelationStackWindow))")
        var mean = 0.0, energy = 0.0
        odml_window_autocorrelation(
            signal, Int32(window), Int32(lags), Int32(smoothing), noiseEnergy, scratch?.baseAddress, output, &mean, &energy,
            Int32(level.rawValue))
        return (mean, energy)
    }
}
