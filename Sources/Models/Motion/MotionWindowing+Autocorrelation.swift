import Foundation
import Tensor

// The windows' autocorrelations, in one implementation (SharedAutocorrelation.swift): the windows of one
// recording overlap (by 3/4 with the shipped windowing), so the lagged products are computed once per hop-sized
// block and each window is assembled from its blocks; one window alone is the same computation with nothing to
// share. Their naive twin is `MotionWindowing.referenceInput`, in
// Tests/ModelsTests/Reference/MotionWindowing+Reference.swift; MotionWindowTests compares them on awkward windowings.

extension MotionWindowing {
    /// How many windows `count` samples hold (`starts(count:)` without building the array).
    package func windowCount(samples count: Int) -> Int { count < window ? 0 : (count - window) / hop + 1 }

    /// Below this energy per sample (g², a standard deviation under 1 mg) a window's signal is sensor noise: its
    /// autocorrelations are zeros.
    package static let noiseEnergyPerSample = 1e-6

    /// The inputs of every window of two signals (`windowCount(samples:)` rows of `inputSize`), written row by row
    /// to `output`: the products of overlapping windows are computed once per hop (see SharedAutocorrelation.swift).
    /// It allocates its work space once per call, never per window. Each window's row depends on its own samples
    /// only, bit for bit. Matches `referenceInput` on each window within `MotionWindowing.autocorrelationTolerance`.
    package func windows(
        vertical: UnsafeBufferPointer<Float>, horizontal: UnsafeBufferPointer<Float>,
        into output: UnsafeMutableBufferPointer<Float>
    ) {
        let count = windowCount(samples: vertical.count)
        shapePrecondition(
            horizontal.count == vertical.count && output.count == count * inputSize,
            "MotionWindowing.windows: \(vertical.count) vertical and \(horizontal.count) horizontal samples into "
                + "\(output.count) values; expected equal counts into \(count) windows × \(inputSize)")
        guard count > 0 else { return }
        let shared = SharedAutocorrelation(windowing: self, samples: vertical.count)
        defer { shared.deallocate() }
        shared.run(vertical, channel: 0, into: output)
        shared.run(horizontal, channel: 1, into: output)
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
