import Foundation
import Tensor

// The windows' autocorrelations, in one implementation: each window is centred on its own mean and its lagged
// products summed by the C kernel `odml_window_autocorrelation` (double fused multiply-adds in a fixed order, the
// same bits at every instruction-set level). A window's input is a function of its own samples alone, so a recording
// read whole and the same samples streamed (`MotionStream`) give the same bits. Windows of a recording overlap by
// 3/4, but sharing their products between windows (the previous design) cost a single window 2.4 times as much
// (bench motion) for 15% less per window of a long recording.
// Their naive twin is `MotionWindowing.referenceInput`, in Tests/ModelsTests/Reference/MotionWindowing+Reference.swift;
// MotionWindowTests compares them on awkward windowings.

extension MotionWindowing {
    /// How many windows `count` samples hold (`starts(count:)` without building the array).
    package func windowCount(samples count: Int) -> Int { count < window ? 0 : (count - window) / hop + 1 }

    /// Below this energy per sample (g², a standard deviation under 1 mg) a window's signal is sensor noise: its
    /// autocorrelations are zeros.
    package static let noiseEnergyPerSample = 1e-6

    /// The inputs of every window of two signals (`windowCount(samples:)` rows of `inputSize`), written row by row
    /// to `output`. Each window's row depends on its own samples only, bit for bit: it is `input(vertical:horizontal:
    /// into:)` of that window. Matches `referenceInput` on each window within `MotionWindowing.autocorrelationTolerance`.
    /// Every kernel `level` gives the same bits (tests compare them).
    package func windows(
        vertical: UnsafeBufferPointer<Float>, horizontal: UnsafeBufferPointer<Float>,
        into output: UnsafeMutableBufferPointer<Float>, level: Kernels.Level = Kernels.level
    ) {
        let count = windowCount(samples: vertical.count)
        shapePrecondition(
            horizontal.count == vertical.count && output.count == count * inputSize,
            "MotionWindowing.windows: \(vertical.count) vertical and \(horizontal.count) horizontal samples into "
                + "\(output.count) values; expected equal counts into \(count) windows × \(inputSize)")
        guard count > 0, let v = vertical.baseAddress, let h = horizontal.baseAddress, let out = output.baseAddress else { return }
        // A scratch of the kernel's own on its stack for the usual windows; one allocation per call for longer ones.
        let scratch =
            window <= PreprocessingKernels.autocorrelationStackWindow
            ? nil : UnsafeMutableBufferPointer<Double>.allocate(capacity: window + PreprocessingKernels.autocorrelationPad)
        defer { scratch?.deallocate() }
        // The smoothing's copy of one signal's autocorrelations, on the stack (empty for windowings that do not smooth).
        withUnsafeTemporaryAllocation(of: Double.self, capacity: lagSmoothing > 1 ? lags : 0) { smoothing in
            rows(count: count, vertical: v, horizontal: h, into: out, scratch: scratch, smoothing: smoothing, level: level)
        }
    }

    /// The rows of `windows(vertical:horizontal:into:level:)`, `count` of them, with its scratch buffers.
    private func rows(
        count: Int, vertical v: UnsafePointer<Float>, horizontal h: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>,
        scratch: UnsafeMutableBufferPointer<Double>?, smoothing: UnsafeMutableBufferPointer<Double>, level: Kernels.Level
    ) {
        let noise = Double(window) * Self.noiseEnergyPerSample
        for index in 0..<count {
            let start = index * hop, row = out + index * inputSize
            let (_, energy) = PreprocessingKernels.autocorrelation(
                v + start, window: window, lags: lags, noiseEnergy: noise, scratch: scratch, into: row, level: level)
            let (mean, _) = PreprocessingKernels.autocorrelation(
                h + start, window: window, lags: lags, noiseEnergy: noise, scratch: scratch, into: row + lags, level: level)
            // The intensities: the vertical signal's standard deviation and the horizontal one's mean.
            row[2 * lags] = Float(log(max((energy / Double(window)).squareRoot(), Self.intensityFloor)))
            row[2 * lags + 1] = Float(log(max(mean, Self.intensityFloor)))
            if lagSmoothing > 1 {
                smooth(row, scratch: smoothing)
                smooth(row + lags, scratch: smoothing)
            }
        }
    }

    /// Replaces `lags` autocorrelations at `values` by their means over `lagSmoothing` lags (fewer at the ends),
    /// summed in Double from the left, starting from 0; `scratch` holds `lags` Doubles. Lags whose neighbours all
    /// exist go eight at a time, each lane adding its own neighbours in the same order as the one-at-a-time loop, so
    /// every lag gets the same bits either way.
    private func smooth(_ values: UnsafeMutablePointer<Float>, scratch: UnsafeMutableBufferPointer<Double>) {
        guard let base = scratch.baseAddress, lags > 0 else { return }
        for k in 0..<lags { base[k] = Double(values[k]) }
        let half = lagSmoothing / 2, divisor = Double(lagSmoothing)
        var k = 0
        func one(_ k: Int) {
            let low = max(0, k - half), high = min(lags - 1, k + half)
            var sum = 0.0
            for j in low...high { sum += base[j] }
            values[k] = Float(sum / Double(high - low + 1))
        }
        while k < min(half, lags) {
            one(k)
            k += 1
        }
        while k + 8 <= lags - half {
            var sum = SIMD8<Double>(repeating: 0)
            for j in (k - half)...(k + half) {
                sum += UnsafeRawPointer(base + j).loadUnaligned(as: SIMD8<Double>.self)
            }
            let mean = sum / divisor
            for i in 0..<8 { values[k + i] = Float(mean[i]) }
            k += 8
        }
        while k < lags {
            one(k)
            k += 1
        }
    }

    /// One window's input from its `window` vertical and horizontal values, written to `output` (`inputSize`): the
    /// same bits as that window's row of `windows(vertical:horizontal:into:)` in any recording.
    public func input(
        vertical: UnsafeBufferPointer<Float>, horizontal: UnsafeBufferPointer<Float>,
        into output: UnsafeMutableBufferPointer<Float>
    ) {
        shapePrecondition(
            vertical.count == window && horizontal.count == window && output.count == inputSize,
            "MotionWindowing.input: \(vertical.count) vertical and \(horizontal.count) horizontal values into \(output.count); "
                + "expected \(window), \(window) into \(inputSize)")
        windows(vertical: vertical, horizontal: horizontal, into: output)
    }
}
