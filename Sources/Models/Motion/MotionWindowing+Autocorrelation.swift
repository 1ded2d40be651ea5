import Foundation
import Tensor

// The two fast paths of the windows' autocorrelations. Their naive twin is `MotionWindowing.referenceInput`, in
// Tests/ModelsTests/Reference/MotionWindowing+Reference.swift; MotionWindowTests compares them on awkward windowings.
//
// One window, `input(vertical:horizontal:into:)`: the C kernel `PreprocessingKernels.autocorrelation` per signal: the mean and
// the centring in Double, then the lag sums Σ_t c_t·c_{t+l} in Float fused multiply-adds, sixteen lags per vector
// and up to 64 lags per pass over t (each c_t broadcast once), going to Double every 64 values of t; compiled for
// AVX-512, AVX2 and a portable baseline, chosen by `Kernels.level`. Its scratch (the centred window and zeros
// after it) lives on the kernel's stack for windows up to `directStackWindow` samples.
//
// Many windows, `windows(vertical:horizontal:into:)`: the windows of one recording overlap (by 3/4 with the
// shipped windowing), so the lagged products are computed once per hop-sized block and each window is
// assembled from its blocks (SharedAutocorrelation.swift).

/// The largest window `input(vertical:horizontal:into:)` computes without a heap allocation (the kernel's scratch
/// is then on its own stack).
let directStackWindow = PreprocessingKernels.autocorrelationStackWindow

extension MotionWindowing {
    /// How many windows `count` samples hold (`starts(count:)` without building the array).
    package func windowCount(samples count: Int) -> Int { count < window ? 0 : (count - window) / hop + 1 }

    /// Below this energy per sample (g², a standard deviation under 1 mg) a window's signal is sensor noise: its
    /// autocorrelations are zeros.
    package static let noiseEnergyPerSample = 1e-6

    /// The inputs of every window of two signals (`windowCount(samples:)` rows of `inputSize`), written row by row
    /// to `output` — the fast path of a whole recording: the products of overlapping windows are computed once per
    /// hop (see the comment at the top of MotionWindowing+Autocorrelation.swift). It allocates its work space once
    /// per call, never per window. Matches `referenceInput` on each window within
    /// `MotionWindowing.autocorrelationTolerance`.
    package func windows(
        vertical: UnsafeBufferPointer<Float>, horizontal: UnsafeBufferPointer<Float>,
        into output: UnsafeMutableBufferPointer<Float>
    ) {
        let count = windowCount(samples: vertical.count)
        shapePrecondition(
            horizontal.count == vertical.count && output.count == count * inputSize,
            "MotionWindowing.windows: \(vertical.count) vertical and \(horizontal.count) horizontal samples into "
                + "\(output.count) values; expected equal counts into \(count) windows × \(inputSize)")
        guard count > 1 else {
            // One window shares nothing: the direct kernel does the same products with no blocks to keep.
            if count == 1 {
                input(
                    vertical: UnsafeBufferPointer(rebasing: vertical[0..<window]),
                    horizontal: UnsafeBufferPointer(rebasing: horizontal[0..<window]), into: output)
            }
            return
        }
        let shared = SharedAutocorrelation(windowing: self, samples: vertical.count)
        defer { shared.deallocate() }
        shared.run(vertical, channel: 0, into: output)
        shared.run(horizontal, channel: 1, into: output)
    }

    /// One window's input from its `window` vertical and horizontal values, written to `output` (`inputSize`),
    /// without allocating (windows up to `directStackWindow` samples; longer ones use one heap buffer). Matches
    /// `referenceInput` within `MotionWindowing.autocorrelationTolerance`.
    public func input(
        vertical: UnsafeBufferPointer<Float>, horizontal: UnsafeBufferPointer<Float>,
        into output: UnsafeMutableBufferPointer<Float>
    ) {
        input(vertical: vertical, horizontal: horizontal, into: output, level: Kernels.level)
    }

    /// `input(vertical:horizontal:into:)` with the kernel at `level` (tests compare every level).
    func input(
        vertical: UnsafeBufferPointer<Float>, horizontal: UnsafeBufferPointer<Float>,
        into output: UnsafeMutableBufferPointer<Float>, level: Kernels.Level
    ) {
        shapePrecondition(
            vertical.count == window && horizontal.count == window && output.count == inputSize,
            "MotionWindowing.input: \(vertical.count) vertical and \(horizontal.count) horizontal values into \(output.count); "
                + "expected \(window), \(window) into \(inputSize)")
        if window <= directStackWindow {
            directInput(vertical, nil, channel: 0, into: output, level: level)
            directInput(horizontal, nil, channel: 1, into: output, level: level)
        } else {
            var heap = [Float](repeating: 0, count: window + PreprocessingKernels.autocorrelationPad)
            heap.withUnsafeMutableBufferPointer { scratch in
                directInput(vertical, scratch, channel: 0, into: output, level: level)
                directInput(horizontal, scratch, channel: 1, into: output, level: level)
            }
        }
    }

    /// Σ x in Double, four lanes at a time.
    static func sum(_ x: UnsafeBufferPointer<Float>) -> Double {
        guard let base = x.baseAddress else { return 0 }
        let raw = UnsafeRawPointer(base)
        var lanes = SIMD4<Double>(), t = 0
        while t + 4 <= x.count {
            lanes += SIMD4<Double>(raw.loadUnaligned(fromByteOffset: t * 4, as: SIMD4<Float>.self))
            t += 4
        }
        var total = lanes.sum()
        while t < x.count {
            total += Double(x[t])
            t += 1
        }
        return total
    }

    /// One channel of one window by the C kernel: its autocorrelations, then its intensity.
    private func directInput(
        _ signal: UnsafeBufferPointer<Float>, _ scratch: UnsafeMutableBufferPointer<Float>?, channel: Int,
        into output: UnsafeMutableBufferPointer<Float>, level: Kernels.Level
    ) {
        guard let x = signal.baseAddress, let out = output.baseAddress else { return }
        let (mean, energy) = PreprocessingKernels.autocorrelation(
            x, window: window, lags: lags, noiseEnergy: Double(window) * Self.noiseEnergyPerSample,
            scratch: scratch, into: out + channel * lags, level: level)
        let level = channel == 0 ? (energy / Double(window)).squareRoot() : mean
        output[2 * lags + channel] = Float(log(max(level, Self.intensityFloor)))
    }
}
