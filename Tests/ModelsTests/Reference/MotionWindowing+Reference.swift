import Foundation
import Tensor

@testable import Models

extension MotionWindowing {
    /// How far the fast paths' outputs may lie from `referenceInput`'s: 1e-4 (absolute; the autocorrelations lie in
    /// −1…1, the intensities are logarithms near −7…1): the inputs feed a network, and 1e-4 is far below how much
    /// they vary from one window to the next of the same gait. The kernel's own error is far smaller — it centres
    /// each window in Double and sums in Float — and MotionWindowTests finds at most 1.5e-6 (a 4,200-sample window); the
    /// tolerance leaves room for windows near the noise floor and for signals far from zero.
    static let autocorrelationTolerance: Float = 1e-4

    /// The naive twin of `input` and `windows`: one window's input by the definition, in plain loops accumulating in
    /// Double — each signal less its mean, Σ_{t < W−l} c_t·c_{t+l} / Σ c_t² for l = 1…lags (zeros when
    /// Σ c_t² ≤ W · `noiseEnergyPerSample`), then ln(vertical SD) and ln(horizontal mean), floored at
    /// `intensityFloor`; with `lagSmoothing` k > 1 each autocorrelation is the mean of those within k / 2 lags. Slow on
    /// purpose; it shares no code with the fast paths.
    func referenceInput(
        vertical: UnsafeBufferPointer<Float>, horizontal: UnsafeBufferPointer<Float>,
        into output: UnsafeMutableBufferPointer<Float>
    ) {
        shapePrecondition(
            vertical.count == window && horizontal.count == window && output.count == inputSize,
            "MotionWindowing.referenceInput: \(vertical.count) vertical and \(horizontal.count) horizontal values into "
                + "\(output.count); expected \(window), \(window) into \(inputSize)")
        for (channel, signal) in [vertical, horizontal].enumerated() {
            var sum = 0.0
            for t in 0..<window { sum += Double(signal[t]) }
            let mean = sum / Double(window)
            var energy = 0.0
            for t in 0..<window { energy += (Double(signal[t]) - mean) * (Double(signal[t]) - mean) }
            var correlations = [Double](repeating: 0, count: lags)
            for lag in 1...lags {
                var total = 0.0
                for t in 0..<(window - lag) { total += (Double(signal[t]) - mean) * (Double(signal[t + lag]) - mean) }
                correlations[lag - 1] = energy > Double(window) * Self.noiseEnergyPerSample ? total / energy : 0
            }
            // With lagSmoothing k > 1: each the mean of the ones within k / 2 lags of it.
            for k in 0..<lags {
                let reach = lagSmoothing > 1 ? lagSmoothing / 2 : 0
                let near = correlations[max(0, k - reach)...min(lags - 1, k + reach)]
                output[channel * lags + k] = Float(near.reduce(0, +) / Double(near.count))
            }
            let level = channel == 0 ? (energy / Double(window)).squareRoot() : mean
            output[2 * lags + channel] = Float(log(max(level, Self.intensityFloor)))
        }
    }
}
