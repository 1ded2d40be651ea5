import CKernels

/// The engine's only door to its hand-written C kernels (Sources/CKernels): every `odml_*` call is in this file.
///
/// Each kernel exists for several instruction-set levels; `Kernels.level` is the highest this CPU runs, chosen
/// once at start-up, and tests pass lower levels to check every variant against the naive references.
public enum Kernels {
    /// Instruction-set levels the kernels are compiled for, each including the ones below it.
    public enum Level: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
        /// Plain C for the compiler's baseline target (any CPU).
        case portable = 0
        /// AVX2 with FMA.
        case avx2 = 1
        /// AVX-512 F, BW and VL.
        case avx512 = 2
        /// AVX-512 with VNNI 8-bit dot products.
        case avx512VNNI = 3

        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }

        public var description: String {
            switch self {
            case .portable: "portable"
            case .avx2: "avx2"
            case .avx512: "avx512"
            case .avx512VNNI: "avx512-vnni"
            }
        }
    }

    /// The highest level this CPU runs.
    public static let level: Level = Level(rawValue: Int(odml_cpu_level())) ?? .portable

    /// The levels this CPU runs, lowest first (what tests compare).
    public static var availableLevels: [Level] { Level.allCases.filter { $0 <= level } }

    /// A direct 2-D convolution of one image; see `odml_conv2d_f32_args` in CKernels.h for every field.
    static func conv2D(_ arguments: odml_conv2d_f32_args, level: Level) {
        withUnsafePointer(to: arguments) { odml_conv2d_f32($0, Int32(level.rawValue)) }
    }

    /// `output = relu?(bias + input · weights)` for one sample, weights packed `[inFeatures][paddedOut]`.
    static func dense(
        input: UnsafePointer<Float>, inFeatures: Int, weights: UnsafePointer<Float>, bias: UnsafePointer<Float>,
        outFeatures: Int, output: UnsafeMutablePointer<Float>, relu: Bool, level: Level
    ) {
        odml_dense_f32(input, Int32(inFeatures), weights, bias, Int32(outFeatures), output, relu ? 1 : 0, Int32(level.rawValue))
    }

    /// An 8-bit direct convolution of one image; see `odml_conv2d_i8_args` in CKernels.h.
    static func integerConv2D(_ arguments: odml_conv2d_i8_args, level: Level) {
        withUnsafePointer(to: arguments) { odml_conv2d_i8($0, Int32(level.rawValue)) }
    }

    /// The most padded inputs `integerDense` takes (its bytes live on the C stack).
    static let integerDenseMaxInput = Int(ODML_DENSE_I8_MAX_INPUT)

    /// An 8-bit dense layer of one float sample: the input quantized, then the integer dot products, in one call;
    /// see `odml_dense_i8` (the step's weights and numbers are an `IntegerConvolutionStep`'s, a 1×1 convolution).
    static func integerDense(
        _ input: UnsafePointer<Float>, inFeatures: Int, quantization: ActivationQuantization, paddedIn: Int,
        weights: UnsafePointer<Int8>, correction: UnsafePointer<Int32>, scale: UnsafePointer<Float>, bias: UnsafePointer<Float>,
        outFeatures: Int, output: UnsafeMutablePointer<Float>, relu: Bool, level: Level
    ) {
        odml_dense_i8(input, Int32(inFeatures), 1 / quantization.scale, Int32(quantization.zeroPoint), Int32(paddedIn), weights,
                      correction, scale, bias, Int32(outFeatures), output, relu ? 1 : 0, Int32(level.rawValue))
    }

    /// `pixels` pixels of `channels` floats (`pixelStride` apart) quantized to pixels of `outChannels` bytes.
    static func quantize(
        _ input: UnsafePointer<Float>, pixels: Int, channels: Int, pixelStride: Int, into output: UnsafeMutablePointer<UInt8>,
        outChannels: Int, quantization: ActivationQuantization, level: Level
    ) {
        odml_quantize_u8(input, Int32(pixels), Int32(channels), pixelStride, output, Int32(outChannels), 1 / quantization.scale,
                         Int32(quantization.zeroPoint), Int32(level.rawValue))
    }

    /// Max or average pooling of one image without padding; see `odml_pool2d_f32_args`.
    static func pool2D(_ arguments: odml_pool2d_f32_args, level: Level) {
        withUnsafePointer(to: arguments) { odml_pool2d_f32($0, Int32(level.rawValue)) }
    }

    /// Lowers a shape rasterizer's distance map (`size × size` squared distances, row-major) to each pixel's squared
    /// distance from one stroke's segments, its `count` points mapped by `(x, y) ↦ (a u + b v + e, c u + d v + f)`,
    /// `u = (x − origin.x) · inverseUnit`; see `odml_raster_stroke_args` in CKernels.h. Point i's x is the `Double` at
    /// `points + i · pointStride` bytes, its y `yOffset` bytes after it. Bit-identical to the Swift reference.
    public static func rasterStroke(
        points: UnsafeRawPointer, count: Int, pointStride: Int, yOffset: Int, origin: (x: Double, y: Double),
        inverseUnit: Double, map: (a: Double, b: Double, c: Double, d: Double, e: Double, f: Double), reach: Double,
        size: Int, nearest: UnsafeMutablePointer<Double>, level: Level = Kernels.level
    ) {
        precondition(count >= 0 && count <= Int(Int32.max) && size >= 1 && size <= 46_340,
                     "Kernels.rasterStroke: \(count) points and a \(size)×\(size) image (1…46,340 a side, ≤ Int32.max points)")
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
    public static func rasterCoverage(
        _ nearest: UnsafePointer<Double>, count: Int, reach: Double, reachSquared: Double,
        into image: UnsafeMutablePointer<Float>, level: Level = Kernels.level
    ) {
        precondition(count >= 0 && count <= Int(Int32.max), "Kernels.rasterCoverage: \(count) pixels (≤ Int32.max)")
        odml_raster_coverage(nearest, Int32(count), reach, reachSquared, image, Int32(level.rawValue))
    }

    /// The convex hull of `count` points (`xs[i]`, `ys[i]`) as the shape rasterizer's reference `convexHull` finds
    /// it (sorted by x then y; Andrew's monotone chain, its test operand for operand), as indices into the points:
    /// returns the vertex count h, the vertices in `stack[0..<h]`. `order` (`count` entries) and `stack` (2 ·
    /// `count`) are scratch; fewer than 3 points come back sorted. Bit-identical to the reference.
    public static func convexHull(
        xs: UnsafePointer<Double>, ys: UnsafePointer<Double>, count: Int, order: UnsafeMutablePointer<UInt16>,
        stack: UnsafeMutablePointer<UInt16>
    ) -> Int {
        precondition(count >= 0 && count <= Int(UInt16.max), "Kernels.convexHull: \(count) points (0…65,535)")
        return Int(odml_convex_hull(xs, ys, Int32(count), order, stack))
    }

    /// The smallest rectangle around a convex polygon of `count` ≥ 3 vertices (`xs[hull[k]]`, `ys[hull[k]]`), as
    /// the shape rasterizer's `minimumRectangle` finds it (rotating calipers, bit for bit): its area and the direction
    /// of its side along a hull edge, a unit vector.
    public static func minimumRectangle(
        xs: UnsafePointer<Double>, ys: UnsafePointer<Double>, hull: UnsafePointer<UInt16>, count: Int
    ) -> (area: Double, direction: (Double, Double)) {
        precondition(count >= 3 && count <= Int(UInt16.max), "Kernels.minimumRectangle: \(count) vertices (3…65,535)")
        var (x, y) = (1.0, 0.0)
        let area = odml_minimum_rectangle(xs, ys, hull, Int32(count), &x, &y)
        return (area, (x, y))
    }
}

extension Kernels {
    /// The motion windows' vertical and horizontal signals of `count` samples, each sample's gravity and user
    /// acceleration three `Double`s at `gravityOffset` and `accelerationOffset` bytes into it, samples `stride`
    /// bytes apart; see `odml_motion_signals` in CKernels.h. Bit-identical to `MotionWindowing.features(of:)`.
    public static func motionSignals(
        _ samples: UnsafeRawPointer, count: Int, stride: Int, gravityOffset: Int, accelerationOffset: Int,
        vertical: UnsafeMutablePointer<Float>, horizontal: UnsafeMutablePointer<Float>, level: Level = Kernels.level
    ) {
        precondition(count >= 0 && count <= Int(Int32.max), "Kernels.motionSignals: \(count) samples (≤ Int32.max)")
        odml_motion_signals(samples, Int32(count), stride, gravityOffset, accelerationOffset, vertical, horizontal, Int32(level.rawValue))
    }

    /// Zeros `autocorrelation` keeps after the window in its scratch: it needs `window + autocorrelationPad` floats.
    public static let autocorrelationPad = Int(ODML_AUTOCORRELATION_PAD)

    /// The longest window `autocorrelation` computes with a scratch of its own (uninitialized, on the C stack).
    public static let autocorrelationStackWindow = Int(ODML_AUTOCORRELATION_STACK_WINDOW)

    /// One window's autocorrelation at lags 1…`lags` normalized by its energy (zeros when the energy is at most
    /// `noiseEnergy`) into `output` (`lags` floats); returns the window's mean and energy. `scratch` (`window +
    /// autocorrelationPad` floats) may be `nil` for windows up to `autocorrelationStackWindow`. See
    /// `odml_autocorrelation_f32` in CKernels.h.
    public static func autocorrelation(
        _ signal: UnsafePointer<Float>, window: Int, lags: Int, noiseEnergy: Double, scratch: UnsafeMutableBufferPointer<Float>?,
        into output: UnsafeMutablePointer<Float>, level: Level = Kernels.level
    ) -> (mean: Double, energy: Double) {
        precondition(window >= 2 && window <= Int(Int32.max) / 2 && lags >= 1 && lags < window
                     && (scratch.map { $0.count >= window + autocorrelationPad && $0.baseAddress != nil } ?? (window <= autocorrelationStackWindow)),
                     "Kernels.autocorrelation: window \(window), lags \(lags), scratch \(scratch?.count ?? 0) (need 1 ≤ lags < window "
                     + "and window + \(autocorrelationPad) floats of scratch, or none up to window \(autocorrelationStackWindow))")
        var mean = 0.0, energy = 0.0
        odml_autocorrelation_f32(signal, Int32(window), Int32(lags), noiseEnergy, scratch?.baseAddress, output, &mean, &energy,
                                 Int32(level.rawValue))
        return (mean, energy)
    }
}

/// `count` rounded up to a multiple of 8: the output width the float kernels' weight packing uses.
@inline(__always) func paddedToEight(_ count: Int) -> Int { (count + 7) & ~7 }
