import Foundation
import Tensor

// The windows' autocorrelations, in one implementation: each window is centred on its own mean (in double) and its
// lagged products summed by the C kernel `odml_window_autocorrelation` (float fused multiply-adds in a fixed order,
// sixteen lags a vector: the same bits at every instruction-set level; issue 49 let them move from double, which
// moved the shipped answers' confidences by at most 1.9e-5). A window's input is a function of its own samples alone, so a recording
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
            ? nil
            : UnsafeMutableBufferPointer<Double>.allocate(capacity: PreprocessingKernels.autocorrelationScratch(window: window, lags: lags))
        defer { scratch?.deallocate() }
        let noise = Double(window) * Self.noiseEnergyPerSample
        for index in 0..<count {
            let start = index * hop, row = out + index * inputSize
            let (_, energy) = PreprocessingKernels.autocorrelation(
                v + start, window: window, lags: lags, smoothing: lagSmoothing, noiseEnergy: noise, scratch: scratch, into: row,
                level: level)
            let (mean, _) = PreprocessingKernels.autocorrelation(
                h + start, window: window, lags: lags, smoothing: lagSmoothing, noiseEnergy: noise, scratch: scratch,
                into: row + lags, level: level)
            // The intensities: the vertical signal's standard deviation and the horizontal one's mean.
            row[2 * lags] = Float(log(max((energy / Double(window)).squareRoot(), Self.intensityFloor)))
            row[2 * lags + 1] = Float(log(max(mean, Self.intensityFloor)))
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
