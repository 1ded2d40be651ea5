import DataFiles
import Foundation
import Tensor
import WeightsFormat

/// The Core Motion device-motion columns a recording carries, in the order `MotionSample` keeps them.
package let coreMotionColumns = [
    "attitude.roll", "attitude.pitch", "attitude.yaw", "gravity.x", "gravity.y", "gravity.z",
    "rotationRate.x", "rotationRate.y", "rotationRate.z", "userAcceleration.x", "userAcceleration.y",
    "userAcceleration.z",
]

/// One device-motion sample: gravity (g), rotation rate (rad/s) and user acceleration (g).
public struct MotionSample: Sendable, Equatable {
    /// Gravity in the phone's frame, in g.
    public var gravity: (x: Double, y: Double, z: Double)
    /// Rotation rate, in rad/s.
    public var rotationRate: (x: Double, y: Double, z: Double)
    /// Acceleration the user gives the phone, gravity removed, in g.
    public var userAcceleration: (x: Double, y: Double, z: Double)

    /// Creates a sample.
    public init(gravity: (Double, Double, Double), rotationRate: (Double, Double, Double), userAcceleration: (Double, Double, Double)) {
        self.gravity = gravity
        self.rotationRate = rotationRate
        self.userAcceleration = userAcceleration
    }

    /// Equal values, component by component.
    public static func == (a: MotionSample, b: MotionSample) -> Bool {
        a.gravity == b.gravity && a.rotationRate == b.rotationRate && a.userAcceleration == b.userAcceleration
    }
}

/// Turns samples into windows and each window into the motion classifier's input: a vector that says how the
/// gait repeats and how hard it is, and that depends neither on how the phone sits in the pocket nor on a
/// gyroscope (so accelerometer-only recordings give the same input).
///
/// Per sample, two orientation-free signals: user acceleration along gravity (vertical, g) and its magnitude
/// across gravity (horizontal, g). Per window, each loses its mean, and the input is
/// - the normalized autocorrelation of the vertical signal at lags 1…`lags` (how the signal repeats: walking and
///   running differ most in their stride period, about 0.9–1.1 s walking and 0.65–0.8 s running),
/// - the same for the horizontal signal,
/// - the natural logarithm of the vertical standard deviation and of the horizontal mean (how hard the gait is),
///
/// `2 · lags + 2` values in all. The autocorrelation is normalized by the lag-0 energy (the biased estimate), so
/// it lies in −1…1 and does not grow with intensity; a window with no motion gives zeros. With `lagSmoothing` k > 1,
/// each autocorrelation is the mean of itself and its neighbours up to k / 2 lags on either side (fewer at the ends):
/// the network then reads the period, not the fine shape of one sensor's curve.
public struct MotionWindowing: Sendable, Equatable {
    /// Samples per window.
    public var window: Int
    /// Samples between window starts.
    public var hop: Int
    /// Samples per second the windows assume.
    public var rate: Double
    /// Autocorrelation lags per signal (1…lags).
    public var lags: Int
    /// Lags each autocorrelation is averaged over (odd, at most `lags`); 0 or 1 for none. Models before issue 48
    /// have none.
    public var lagSmoothing: Int

    /// Whether `k` lags of smoothing suit `lags` autocorrelations: 0 or 1 (none), or an odd number up to `lags`.
    package static func allowsLagSmoothing(_ k: Int, lags: Int) -> Bool { k == 0 || k == 1 || (k % 2 == 1 && k > 1 && k <= lags) }

    /// The two intensity values' floor (g): keeps the logarithm finite for a still phone.
    package static let intensityFloor = 0.001

    /// Creates the windowing.
    public init(window: Int = 256, hop: Int = 64, rate: Double = 50, lags: Int = 96, lagSmoothing: Int = 0) {
        shapePrecondition(
            window >= 2 && hop >= 1 && lags >= 1 && lags < window,
            "MotionWindowing: window \(window), hop \(hop), lags \(lags) (need window ≥ 2, hop ≥ 1, 1 ≤ lags < window)")
        shapePrecondition(
            Self.allowsLagSmoothing(lagSmoothing, lags: lags),
            "MotionWindowing: lagSmoothing \(lagSmoothing) with \(lags) lags (need 0, 1 or an odd number up to lags)")
        self.lagSmoothing = lagSmoothing > 1 ? lagSmoothing : 0  // 1 is none, as 0
        self.window = window
        self.hop = hop
        self.rate = rate
        self.lags = lags
    }

    /// Values per window: two autocorrelations and two intensities.
    public var inputSize: Int { 2 * lags + 2 }

    /// Where, in a window's input, the vertical signal's autocorrelations at lags 1…lags are.
    package var verticalAutocorrelations: Range<Int> { 0..<lags }
    /// Where the horizontal signal's autocorrelations at lags 1…lags are.
    package var horizontalAutocorrelations: Range<Int> { lags..<(2 * lags) }
    /// Where the logarithm of the vertical standard deviation is.
    public var logVerticalDeviationIndex: Int { 2 * lags }
    /// Where the logarithm of the horizontal mean is.
    public var logHorizontalMeanIndex: Int { 2 * lags + 1 }

    /// The parameters as a weights file's `preprocessing` header stores them.
    package var parameters: [String: JSONValue] {
        [
            "kind": .string("motion-autocorrelation"), "window": .number(Double(window)), "hop": .number(Double(hop)),
            "rate": .number(rate), "lags": .number(Double(lags)),
            "features": .string("vertical-autocorrelation,horizontal-autocorrelation,log-vertical-sd,log-horizontal-mean"),
        ].merging(lagSmoothing > 1 ? ["lagSmoothing": .number(Double(lagSmoothing))] : [:]) { a, _ in a }
    }

    /// The windowing a weights file's `preprocessing` header describes, or why it cannot be built.
    public init(parameters: [String: JSONValue]) throws(DataError) {
        guard case .string("motion-autocorrelation")? = parameters["kind"], case .number(let window)? = parameters["window"],
            case .number(let hop)? = parameters["hop"], case .number(let rate)? = parameters["rate"],
            case .number(let lags)? = parameters["lags"],
            window >= 8, window <= 4096, window == window.rounded(), hop >= 1, hop <= window, hop == hop.rounded(),
            lags >= 1, lags < window, lags == lags.rounded(), rate > 0, rate <= 10_000
        else {
            throw DataError(
                file: "weights",
                message: "the preprocessing header does not describe motion windows: expected kind "
                    + "motion-autocorrelation, window 8–4096, hop 1…window, lags 1…window−1 and rate 0–10000 Hz")
        }
        var smoothing = 0.0
        if let given = parameters["lagSmoothing"] {
            guard case .number(let k) = given, k >= 0, k <= lags, k == k.rounded(), Self.allowsLagSmoothing(Int(k), lags: Int(lags)) else {
                throw DataError(
                    file: "weights",
                    message: "the preprocessing header's lagSmoothing must be 0, 1 or an odd number of lags up to lags (\(Int(lags)))")
            }
            smoothing = k
        }
        self.init(window: Int(window), hop: Int(hop), rate: rate, lags: Int(lags), lagSmoothing: Int(smoothing))
    }

    /// The three orientation-free signals of one sample: vertical and horizontal user acceleration (g) and the
    /// rotation rate's magnitude (rad/s).
    package static func features(of sample: MotionSample) -> (vertical: Double, horizontal: Double, rotation: Double) {
        let g = sample.gravity, a = sample.userAcceleration, r = sample.rotationRate
        let gravityNorm = (g.x * g.x + g.y * g.y + g.z * g.z).squareRoot()
        let vertical = gravityNorm > 0 ? (a.x * g.x + a.y * g.y + a.z * g.z) / gravityNorm : 0
        let total = a.x * a.x + a.y * a.y + a.z * a.z
        return (vertical, max(0, total - vertical * vertical).squareRoot(), (r.x * r.x + r.y * r.y + r.z * r.z).squareRoot())
    }

    /// Window start positions for a recording of `count` samples: every `hop`, while a whole window fits.
    public func starts(count: Int) -> [Int] {
        count < window ? [] : Array(stride(from: 0, through: count - window, by: hop))
    }

    /// Throws unless a recording whose longest segment has `longest` samples holds one whole window: the error
    /// says how long its longest stretch without a gap is and how long a window is.
    package func requireWindow(longest: Int, source: String) throws(DataError) {
        guard longest < window else { return }
        throw DataError(
            file: source,
            message: String(
                format: "the recording is too short: its longest stretch without a gap has %d samples (%.2f s at %.0f Hz); "
                    + "one window needs %d (%.2f s)", longest, Double(longest) / rate, rate, window, Double(window) / rate))
    }

    /// The vertical and horizontal signals of `samples`, as the windows read them.
    public static func signals(_ samples: [MotionSample]) -> (vertical: [Float], horizontal: [Float]) {
        var horizontal: [Float] = []
        let vertical = [Float](unsafeUninitializedCapacity: samples.count) { v, vCount in
            horizontal = [Float](unsafeUninitializedCapacity: samples.count) { h, hCount in
                samples.withUnsafeBufferPointer { signals($0, vertical: v, horizontal: h) }
                hCount = samples.count
            }
            vCount = samples.count
        }
        return (vertical, horizontal)
    }

    /// The vertical and horizontal signals of `samples` written to `vertical` and `horizontal` (as many values as
    /// samples), without allocating: `features(of:)` of each (the same operations in the same order, so the same
    /// bits) less the rotation rate, whose square root the windows never read. Eight samples at a time in the C
    /// kernel `PreprocessingKernels.motionSignals` (square roots and divisions are correctly rounded in every lane).
    public static func signals(
        _ samples: UnsafeBufferPointer<MotionSample>, vertical: UnsafeMutableBufferPointer<Float>,
        horizontal: UnsafeMutableBufferPointer<Float>
    ) {
        signals(samples, vertical: vertical, horizontal: horizontal, level: Kernels.level)
    }

    /// `signals(_:vertical:horizontal:)` with the kernel at `level` (tests compare every level).
    static func signals(
        _ samples: UnsafeBufferPointer<MotionSample>, vertical: UnsafeMutableBufferPointer<Float>,
        horizontal: UnsafeMutableBufferPointer<Float>, level: Kernels.Level
    ) {
        shapePrecondition(
            vertical.count == samples.count && horizontal.count == samples.count,
            "MotionWindowing.signals: \(samples.count) samples into \(vertical.count) vertical and \(horizontal.count) horizontal values")
        guard let base = samples.baseAddress, let v = vertical.baseAddress, let h = horizontal.baseAddress else { return }
        guard let gravity = MemoryLayout<MotionSample>.offset(of: \.gravity),
            let acceleration = MemoryLayout<MotionSample>.offset(of: \.userAcceleration)
        else {
            for (i, sample) in samples.enumerated() {
                let f = features(of: sample)
                (v[i], h[i]) = (Float(f.vertical), Float(f.horizontal))
            }
            return
        }
        PreprocessingKernels.motionSignals(
            UnsafeRawPointer(base), count: samples.count, stride: MemoryLayout<MotionSample>.stride,
            gravityOffset: gravity, accelerationOffset: acceleration, vertical: v, horizontal: h, level: level)
    }

    /// The inputs of every window of `samples`, `[windows, inputSize]`: their signals, then
    /// `windows(vertical:horizontal:into:)`.
    package func windows(_ samples: [MotionSample]) -> Tensor {
        let (vertical, horizontal) = Self.signals(samples)
        let count = windowCount(samples: samples.count)
        let values = [Float](unsafeUninitializedCapacity: count * inputSize) { out, initialized in
            vertical.withUnsafeBufferPointer { v in
                horizontal.withUnsafeBufferPointer { h in windows(vertical: v, horizontal: h, into: out) }
            }
            initialized = count * inputSize
        }
        return Tensor(shape: [count, inputSize], scalars: values)
    }

    /// One window's input from its `window` vertical and horizontal values, written to `output` (`inputSize`); see
    /// `input(vertical:horizontal:into:)` on buffers.
    public func input(vertical: ArraySlice<Float>, horizontal: ArraySlice<Float>, into output: UnsafeMutableBufferPointer<Float>) {
        vertical.withUnsafeBufferPointer { v in
            horizontal.withUnsafeBufferPointer { h in input(vertical: v, horizontal: h, into: output) }
        }
    }

    /// The stride frequency (Hz) the vertical autocorrelation of one window's input shows, and how strongly the
    /// signal repeats at it (the autocorrelation's value, −1…1): the highest local peak of the autocorrelation at
    /// a period between 1/1.8 s and 1/0.6 s (a stride at 0.6–1.8 Hz). `nil` when there is no peak there (a signal
    /// that does not repeat at a gait's rate) or the lags do not reach those periods.
    package func strideRate(_ input: UnsafeBufferPointer<Float>) -> (frequency: Double, strength: Double)? {
        let shortest = max(2, Int((rate / 1.8).rounded(.up))), longest = min(lags - 1, Int((rate / 0.6).rounded(.down)))
        guard input.count == inputSize, shortest <= longest else { return nil }
        var best: Int?
        for lag in shortest...longest where input[lag - 1] >= input[lag - 2] && input[lag - 1] >= input[lag] {
            if best.map({ input[lag - 1] > input[$0 - 1] }) ?? true { best = lag }
        }
        guard let best else { return nil }
        return (rate / Double(best), Double(input[best - 1]))
    }
}
