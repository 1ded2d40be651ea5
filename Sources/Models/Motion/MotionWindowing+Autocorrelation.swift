import Foundation
import Tensor

// The two fast paths of the windows' autocorrelations. Their naive twin is `MotionWindowing.referenceInput`
// (MotionWindowing+Reference.swift); MotionWindowTests compares them on awkward windowings.
//
// One window, `input(vertical:horizontal:into:)`: each signal loses its mean (in Double), then the lag sums
// Σ_t c_t·c_{t+l} run in Float SIMD over four values of t at a time, eight lags at a time, on four copies of the
// centred window shifted by 0…3 values, so that every load is aligned (c_{t+l} for t a multiple of 4 is copy
// l mod 4 at t + l − l mod 4); sums go to Double every `directChunk` values of t. The copies live on the stack
// for windows up to `directStackWindow` samples.
//
// Many windows, `windows(vertical:horizontal:into:)`: the windows of one recording overlap (by 3/4 with the
// shipped windowing), so the lagged products are computed once per hop-sized block and each window is
// assembled from its blocks (SharedAutocorrelation.swift).

/// Lags per tile of the direct kernel: eight `SIMD4<Float>` accumulators.
private let directLanes = 8
/// The direct kernel adds its Float sums into Double every this many values of t: each Float lane has summed 64
/// products (at most 64 · 2⁻²⁴ ≈ 4e-6 of the window's energy in error) whatever the window's length.
private let directChunk = 256
/// Floats of the stack scratch of `input` (the `InlineArray` there has this size): four copies of
/// `directStride(window)` values, and 4 to align them.
private let directStackFloats = 2048
/// Values per shifted copy: the window, the reads of a tile's last lanes past its end (zeros), a multiple of 4.
private func directStride(_ window: Int) -> Int { (window + 12 + 3) / 4 * 4 }
/// The largest window `input(vertical:horizontal:into:)` computes without a heap allocation: the largest whose
/// four copies and alignment fit `directStackFloats` (4 · `directStride(496)` + 4 = 2036).
let directStackWindow = 496

extension MotionWindowing {
    /// How many windows `count` samples hold (`starts(count:)` without building the array).
    public func windowCount(samples count: Int) -> Int { count < window ? 0 : (count - window) / hop + 1 }

    /// Below this energy per sample (g², a standard deviation under 1 mg) a window's signal is sensor noise: its
    /// autocorrelations are zeros.
    public static let noiseEnergyPerSample = 1e-6

    /// The inputs of every window of two signals (`windowCount(samples:)` rows of `inputSize`), written row by row
    /// to `output` — the fast path of a whole recording: the products of overlapping windows are computed once per
    /// hop (see the comment at the top of MotionWindowing+Autocorrelation.swift). It allocates its work space once
    /// per call, never per window. Matches `referenceInput` on each window within
    /// `MotionWindowing.autocorrelationTolerance`.
    public func windows(vertical: UnsafeBufferPointer<Float>, horizontal: UnsafeBufferPointer<Float>,
                        into output: UnsafeMutableBufferPointer<Float>) {
        let count = windowCount(samples: vertical.count)
        shapePrecondition(horizontal.count == vertical.count && output.count == count * inputSize,
                          "MotionWindowing.windows: \(vertical.count) vertical and \(horizontal.count) horizontal samples into "
                          + "\(output.count) values; expected equal counts into \(count) windows × \(inputSize)")
        guard count > 1 else {
            // One window shares nothing: the direct kernel does the same products with no blocks to keep.
            if count == 1 {
                input(vertical: UnsafeBufferPointer(rebasing: vertical[0..<window]),
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
    /// without allocating (windows up to 496 samples; longer ones use one heap buffer). Matches `referenceInput`
    /// within `MotionWindowing.autocorrelationTolerance`.
    public func input(vertical: UnsafeBufferPointer<Float>, horizontal: UnsafeBufferPointer<Float>,
                      into output: UnsafeMutableBufferPointer<Float>) {
        shapePrecondition(vertical.count == window && horizontal.count == window && output.count == inputSize,
                          "MotionWindowing.input: \(vertical.count) vertical and \(horizontal.count) horizontal values into \(output.count); "
                          + "expected \(window), \(window) into \(inputSize)")
        let floats = 4 * directStride(window) + 4
        if floats <= directStackFloats {
            var stack = InlineArray<2048, Float>(repeating: 0)
            var span = stack.mutableSpan
            span.withUnsafeMutableBufferPointer { scratch in
                directInput(vertical, scratch, channel: 0, into: output)
                directInput(horizontal, scratch, channel: 1, into: output)
            }
        } else {
            var heap = [Float](repeating: 0, count: floats)
            heap.withUnsafeMutableBufferPointer { scratch in
                directInput(vertical, scratch, channel: 0, into: output)
                directInput(horizontal, scratch, channel: 1, into: output)
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

    /// One channel of one window by the direct kernel; `scratch` holds `4 · directStride(window) + 4` zeros, or
    /// what an earlier call of the same window length left there (it writes only the same places).
    private func directInput(_ signal: UnsafeBufferPointer<Float>, _ scratch: UnsafeMutableBufferPointer<Float>, channel: Int,
                             into output: UnsafeMutableBufferPointer<Float>) {
        guard let base = scratch.baseAddress, let x = signal.baseAddress else { return }
        let stride = directStride(window)
        // Copy k (k = 0…3) holds c_{i+k} at i, 16-byte aligned.
        let copies = UnsafeMutableRawPointer(base).alignedUp(toMultipleOf: 16).assumingMemoryBound(to: Float.self)
        let mean = Self.sum(signal) / Double(window)
        // Centre in Double (where the horizontal signal's mean would cancel), then keep the values as Float.
        var energies = SIMD4<Double>(), t = 0
        while t + 4 <= window {
            let centered = SIMD4<Double>(UnsafeRawPointer(x + t).loadUnaligned(as: SIMD4<Float>.self)) - SIMD4(repeating: mean)
            energies += centered * centered
            UnsafeMutableRawPointer(copies + t).storeBytes(of: SIMD4<Float>(centered), as: SIMD4<Float>.self)
            t += 4
        }
        var energy = energies.sum()
        while t < window {
            let centered = Double(x[t]) - mean
            energy += centered * centered
            copies[t] = Float(centered)
            t += 1
        }
        // Copies 1…3 from copy 0, four values at a time (its zeros past the window fill theirs).
        let raw = UnsafeMutableRawPointer(copies)
        for k in 1..<4 {
            var i = 0
            while i < window - k {
                raw.storeBytes(of: raw.loadUnaligned(fromByteOffset: (i + k) * 4, as: SIMD4<Float>.self),
                               toByteOffset: (k * stride + i) * 4, as: SIMD4<Float>.self)
                i += 4
            }
        }
        let inverse = energy > Double(window) * Self.noiseEnergyPerSample ? 1 / energy : 0
        var l0 = 1
        while l0 <= lags {
            let sums = SIMD8<Float>(directLagSums(copies, stride: stride, lag: l0) * SIMD8(repeating: inverse))
            if l0 + directLanes - 1 <= lags, let out = output.baseAddress {
                UnsafeMutableRawPointer(out + channel * lags + l0 - 1).storeBytes(of: sums, as: SIMD8<Float>.self)
            } else {
                for lane in 0..<(lags - l0 + 1) { output[channel * lags + l0 + lane - 1] = sums[lane] }
            }
            l0 += directLanes
        }
        let level = channel == 0 ? (energy / Double(window)).squareRoot() : mean
        output[2 * lags + channel] = Float(log(max(level, Self.intensityFloor)))
    }

    /// Σ_{t < W−l} c_t·c_{t+l} for the eight lags l0…l0+7 (zeros past the window fill the lanes past W − l).
    private func directLagSums(_ copies: UnsafePointer<Float>, stride: Int, lag l0: Int) -> SIMD8<Double> {
        let raw = UnsafeRawPointer(copies)
        func copy(_ lane: Int) -> UnsafeRawPointer {
            let lag = l0 + lane
            return raw + ((lag & 3) * stride + lag - (lag & 3)) * MemoryLayout<Float>.stride
        }
        let (p0, p1, p2, p3, p4, p5, p6, p7) = (copy(0), copy(1), copy(2), copy(3), copy(4), copy(5), copy(6), copy(7))
        var totals = SIMD8<Double>(), from = 0
        let end = window - l0
        while from < end {
            var a0 = SIMD4<Float>(), a1 = SIMD4<Float>(), a2 = SIMD4<Float>(), a3 = SIMD4<Float>()
            var a4 = SIMD4<Float>(), a5 = SIMD4<Float>(), a6 = SIMD4<Float>(), a7 = SIMD4<Float>()
            var t = from
            let to = min(end, from + directChunk)
            while t < to {
                let offset = t &* MemoryLayout<Float>.stride
                let c = raw.load(fromByteOffset: offset, as: SIMD4<Float>.self)
                a0 += c * p0.load(fromByteOffset: offset, as: SIMD4<Float>.self)
                a1 += c * p1.load(fromByteOffset: offset, as: SIMD4<Float>.self)
                a2 += c * p2.load(fromByteOffset: offset, as: SIMD4<Float>.self)
                a3 += c * p3.load(fromByteOffset: offset, as: SIMD4<Float>.self)
                a4 += c * p4.load(fromByteOffset: offset, as: SIMD4<Float>.self)
                a5 += c * p5.load(fromByteOffset: offset, as: SIMD4<Float>.self)
                a6 += c * p6.load(fromByteOffset: offset, as: SIMD4<Float>.self)
                a7 += c * p7.load(fromByteOffset: offset, as: SIMD4<Float>.self)
                t &+= 4
            }
            totals += SIMD8<Double>(Double(a0.sum()), Double(a1.sum()), Double(a2.sum()), Double(a3.sum()),
                                    Double(a4.sum()), Double(a5.sum()), Double(a6.sum()), Double(a7.sum()))
            from = to
        }
        return totals
    }
}
