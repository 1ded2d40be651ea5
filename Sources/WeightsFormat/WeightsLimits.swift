import Foundation
import Tensor

/// What the engine refuses to load, so that no weights file — however crafted, valid checksum included — makes one
/// input cost more than 100 MB of memory or a second of time. Each limit is set from what the shipped models need
/// (`classify inspect Weights/*.weights`), with a wide margin; a file over any of them is refused at load with the
/// quantity, its value and the limit (`WeightsFileError.Problem.overLimit`). `Weights/FORMAT.md` ("Limits") lists
/// them with the shipped figures and the measured worst cases.
///
/// Motion costs are per input sample as well as per window: a recording of `n` samples at the file's `rate` has
/// `n / hop` windows, so a file with a small hop multiplies every per-window cost.
package enum WeightsLimits {
    /// The largest weights file (1 MiB). The shipped files are 7.9–78 KB. Checked on the open file's size before
    /// anything past the 24-byte preamble is read.
    package static let maximumFileBytes = 1 << 20
    /// Weights and other parameters in all layers (2^20, 4 MiB as float). Shipped: 6,306 (motion), 18,917 (shape).
    package static let maximumParameters = 1 << 20
    /// Multiply-adds and comparisons of the whole network for one input (2^26 ≈ 67 million). Shipped: 0.56
    /// million (shape, per drawing), 6,306 (motion, per window).
    package static let maximumOperations = 1 << 26
    /// Floats one layer allocates for one input: its output, or a convolution's unrolled patches (2^20, 4 MiB).
    /// Shipped: 9,216 (shape), 32 (motion).
    package static let maximumLayerElements = 1 << 20
    /// Floats all layers allocate for one input, input included (2^22, 16 MiB). Shipped: 26,682 (shape), 262
    /// (motion).
    package static let maximumActivationElements = 1 << 22
    /// Inputs per output of a layer that runs in 8-bit integers: 255 · 127 · 65,536 still fits an `Int32` sum.
    package static let maximumIntegerFanIn = 1 << 16
    /// Pixels per side of the shape rasterizer's image (64: its allocation-free path's largest). Shipped: 16.
    /// A segment of a drawing costs at most `size²` pixel tests.
    package static let maximumRasterSize = 64
    /// The motion model's sample rate, Hz (recordings are resampled to it, so it sets how many samples an hour
    /// holds, and so the memory a long recording takes: a 1-hour recording at 100 Hz is 360,000 samples). Shipped:
    /// 50; Core Motion delivers at most 100.
    package static let maximumMotionRate = 100.0
    /// Samples per motion window. Shipped: 256.
    package static let maximumMotionWindow = 2048
    /// Autocorrelation lags per motion signal (the input has `2 · lags + 2` values). Shipped: 96.
    package static let maximumMotionLags = 512
    /// Motion windows per second of recording, `rate / hop` (4: a window every 0.25 s at least). Shipped: 0.78.
    package static let maximumWindowsPerSecond = 4.0
    /// Input values the windows of one second of recording hold, `(2 · lags + 2) · rate / hop`. Shipped: 152.
    package static let maximumInputValuesPerSecond = 1024.0
    /// Operations per input sample of a motion recording: a window's cost — the network's operations plus its
    /// autocorrelations, `2 · window · lags` multiply-adds — over the hop. Shipped: (6,306 + 49,152) / 64 = 867.
    package static let maximumOperationsPerSample = Double(1 << 14)
    /// The magnitude no layer's outputs may be able to reach (a quarter of the float range, which leaves room
    /// for rounding and for softmax's differences).
    package static let largestSafeMagnitude = Double(Float.greatestFiniteMagnitude) / 4
    /// The largest magnitude an input value can have for a file's preprocessing (`PreprocessingKind.inputMagnitude`),
    /// or `nil` for a preprocessing this build does not know.
    package static func inputMagnitude(_ preprocessing: [String: JSONValue]) -> Double? { PreprocessingKind(preprocessing)?.inputMagnitude }

    /// Throws `overLimit` when `value` exceeds `limit`.
    static func check<Value: BinaryInteger>(
        _ quantity: @autoclosure () -> String, _ value: Value, _ limit: Value,
        path: String
    ) throws(WeightsFileError) {
        guard value > limit else { return }
        throw WeightsFileError(path: path, problem: .overLimit(quantity: quantity(), value: Double(value), limit: Double(limit)))
    }

    /// Throws `overLimit` when `value` exceeds `limit`.
    static func check(_ quantity: @autoclosure () -> String, _ value: Double, _ limit: Double, path: String) throws(WeightsFileError) {
        guard value > limit else { return }
        throw WeightsFileError(path: path, problem: .overLimit(quantity: quantity(), value: value, limit: limit))
    }

    /// The preprocessing limits of `file`, whose network takes `operations` per input: the header's numbers that
    /// the limits name, whenever it holds them. Whether they make a preprocessing at all is left to the classifier
    /// that reads them (`ShapeRasterizer(parameters:)`, `MotionWindowing(parameters:)`: it says what it expects).
    static func checkPreprocessing(of file: ModelFile, operations: Int, path: String) throws(WeightsFileError) {
        let parameters = file.preprocessing
        switch file.preprocessingKind {
        case .raster?:
            guard case .number(let size)? = parameters["size"] else { return }
            try check("the preprocessing's raster size", size, Double(maximumRasterSize), path: path)
        case .motionAutocorrelation?:
            guard case .number(let window)? = parameters["window"], case .number(let hop)? = parameters["hop"],
                case .number(let lags)? = parameters["lags"], case .number(let rate)? = parameters["rate"], hop >= 1
            else { return }
            try check("the motion preprocessing's rate (Hz)", rate, maximumMotionRate, path: path)
            try check("the motion preprocessing's window (samples)", window, Double(maximumMotionWindow), path: path)
            try check("the motion preprocessing's lags", lags, Double(maximumMotionLags), path: path)
            try check("motion windows per second of recording (rate / hop)", rate / hop, maximumWindowsPerSecond, path: path)
            try check(
                "motion input values per second of recording ((2 · lags + 2) · rate / hop)",
                (2 * lags + 2) * rate / hop, maximumInputValuesPerSecond, path: path)
            try check(
                "motion operations per input sample ((network + 2 · window · lags) / hop)",
                ((Double(operations) + 2 * window * lags) / hop).rounded(.up), maximumOperationsPerSample, path: path)
        case .gestureTemplates?:
            // Each drawing is compared with every template: their count is the cost (GestureTemplates checks it).
            guard case .array(let templates)? = parameters["templates"] else { return }
            try check("the gesture templates", Double(templates.count), 1000, path: path)
        case nil:
            return
        }
    }
}
