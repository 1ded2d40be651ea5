import Foundation
import Tensor

// The shared path of `MotionWindowing.windows(vertical:horizontal:into:)`: the autocorrelations of every window
// of a recording from lagged products computed once per hop-sized block.
//
// With y the signal and a window of W samples starting at s, for lag l (n = W − l, m the window's mean):
//
//     Σ_{t=s}^{s+n−1} (y_t − m)(y_{t+l} − m) = P_l − m·(Σ_{t=s}^{s+n−1} y_t + Σ_{t=s+l}^{s+W−1} y_t) + n·m²,
//     P_l = Σ_{t=s}^{s+n−1} y_t·y_{t+l}.
//
// Windows start on the boundaries of blocks of H = hop samples. For each block [jH, jH+H) and lag l the products
// y_t·y_{t+l} are summed twice: over the whole block, and over its first cut_l = (W − l) mod H values of t. P_l
// of a window is the whole sums of its first full_l = ⌊(W − l) / H⌋ blocks plus the partial sum of the next one;
// the sums of y come from each block's prefix sums the same way. So each product is computed once per recording
// instead of once per window that holds it (four times with the shipped windowing), and a window costs a few
// additions per lag.
//
// Every sum a window reads runs over its own samples in the same order wherever the window lies, and y is the
// signal itself (no shift taken from the rest of the recording): a window's input is a function of its samples
// alone, the same bits in a recording read whole as in one window a stream hands over (`MotionStream`).
//
// Precision: everything is in Double, and no sum runs over more than one window, so nothing grows with the
// recording's length. The subtraction in the formula cancels when m² is large against the window's variance,
// which bounds the error by about W · 2⁻⁵³ · m²/σ² of the energy: a horizontal signal at 3 g with 2 mg of noise
// (just above the noise floor; no gait does this) makes m²/σ² about 2·10⁶ and the error about 6e-8, under a Float's
// rounding of the result (MotionWindowTests has that recording).

/// Lags per tile: two `SIMD8<Double>` accumulators (eight SSE registers).
private let lanes = 16

/// `destination[i] += source[i]` for i in 0..<count, two lanes at a time.
@inline(__always)
private func add(_ source: UnsafePointer<Double>, to destination: UnsafeMutablePointer<Double>, count: Int) {
    let from = UnsafeRawPointer(source), to = UnsafeMutableRawPointer(destination)
    var i = 0
    while i + 4 <= count {
        let offset = i * MemoryLayout<Double>.stride
        to.storeBytes(
            of: to.loadUnaligned(fromByteOffset: offset, as: SIMD4<Double>.self)
                + from.loadUnaligned(fromByteOffset: offset, as: SIMD4<Double>.self), toByteOffset: offset, as: SIMD4<Double>.self)
        i += 4
    }
    while i < count {
        destination[i] += source[i]
        i += 1
    }
}

/// The work space of the shared path for one recording: the signal in Double, and a ring of the last few blocks'
/// lag sums and prefix sums, and its tables. One allocation per call, freed by `deallocate()`.
struct SharedAutocorrelation {
    let window: Int, hop: Int, lags: Int, samples: Int, windows: Int
    /// Blocks one window reads, ⌊(W − 1) / H⌋ + 1: the ring's size.
    let slots: Int
    /// Blocks to compute: up to the last window's last one.
    let blocks: Int
    /// Tiles of `lanes` lags covering lags 1…lags (lag 0, the energy, has its own loop).
    let tiles: Int
    /// Values per ring slot of lag sums: lag 0, then the tiles' lanes.
    let width: Int
    private let doubles: UnsafeMutablePointer<Double>
    private let ints: UnsafeMutablePointer<Int>
    /// The signal, zero after its end.
    private let y: UnsafeMutablePointer<Double>
    /// Per slot and lag: the sum over the whole block.
    private let whole: UnsafeMutablePointer<Double>
    /// Per slot and lag: the sum over the block's first cut_l values of t.
    private let partial: UnsafeMutablePointer<Double>
    /// Per slot: Σ y over the block's first 0…H values.
    private let prefix: UnsafeMutablePointer<Double>
    /// Per window: Σ y over its first 0…slots blocks.
    private let blockPrefix: UnsafeMutablePointer<Double>
    /// Per window and lag 0…lags: P_l, Σ_{t<W−l} y_t, Σ_{t<l} y_t (from the window's start).
    private let products: UnsafeMutablePointer<Double>, heads: UnsafeMutablePointer<Double>, tails: UnsafeMutablePointer<Double>
    /// The tile's sums before its zone and after each t of it (16 per row).
    private let history: UnsafeMutablePointer<Double>
    /// Per window: the ring slot of its blocks 0…slots.
    private let slotOf: UnsafeMutablePointer<Int>
    /// Per lag 0…lags: full_l, cut_l, and cut_l less the smallest cut of its tile (its row in the history).
    private let full: UnsafeMutablePointer<Int>, cut: UnsafeMutablePointer<Int>, step: UnsafeMutablePointer<Int>
    /// Per block of a window, i in 0..<slots: how many lags (from lag 0) have full_l > i.
    private let above: UnsafeMutablePointer<Int>
    /// Per tile: the offsets in a block between its smallest and largest cut, where lanes part.
    private let zones: UnsafeMutablePointer<Int>
    /// `zones` and `step` as the C kernel takes them.
    private let zones32: UnsafeMutablePointer<Int32>, step32: UnsafeMutablePointer<Int32>
    /// The instruction-set level of the kernel (tests compare every level).
    private let level: Kernels.Level

    init(windowing: MotionWindowing, samples: Int, level: Kernels.Level = Kernels.level) {
        self.level = level
        (window, hop, lags, self.samples) = (windowing.window, windowing.hop, windowing.lags, samples)
        windows = windowing.windowCount(samples: samples)
        slots = (window - 1) / hop + 1
        blocks = windows + slots - 1
        tiles = (lags + lanes - 1) / lanes
        width = 1 + tiles * lanes
        // y is read up to the last block's end plus a tile past its last lag.
        let yCount = max(samples, blocks * hop) + width + lanes
        let doubleCount = yCount + 2 * slots * width + slots * (hop + 1) + (slots + 1) + 3 * (lags + 1) + (hop + 1) * lanes
        let intCount = (slots + 1) + 3 * (lags + 1) + slots + 2 * tiles, int32Count = 2 * tiles + lags + 1
        // One allocation: the doubles, the Int tables, then `zones` and `step` again as Int32 for the C kernel.
        let intBytes = intCount * MemoryLayout<Int>.stride
        let arena = UnsafeMutableRawPointer.allocate(
            byteCount: doubleCount * MemoryLayout<Double>.stride + intBytes + int32Count * MemoryLayout<Int32>.stride,
            alignment: max(MemoryLayout<Double>.alignment, MemoryLayout<Int>.alignment))
        doubles = arena.bindMemory(to: Double.self, capacity: doubleCount)
        let tables = arena + doubleCount * MemoryLayout<Double>.stride
        // Zeros where reads may come before writes: y past the signal, and each slot's prefix (its entry 0). The
        // rest is written before it is read (a stream makes this work space for every window).
        doubles.initialize(repeating: 0, count: yCount)
        (doubles + yCount + 2 * slots * width).initialize(repeating: 0, count: slots * (hop + 1))
        y = doubles
        whole = y + yCount
        partial = whole + slots * width
        prefix = partial + slots * width
        blockPrefix = prefix + slots * (hop + 1)
        products = blockPrefix + slots + 1
        heads = products + lags + 1
        tails = heads + lags + 1
        history = tails + lags + 1
        ints = tables.bindMemory(to: Int.self, capacity: intCount)
        ints.initialize(repeating: 0, count: intCount)
        slotOf = ints
        full = slotOf + slots + 1
        cut = full + lags + 1
        step = cut + lags + 1
        above = step + lags + 1
        zones = above + slots
        zones32 = (tables + intBytes).bindMemory(to: Int32.self, capacity: int32Count)
        zones32.initialize(repeating: 0, count: int32Count)
        step32 = zones32 + 2 * tiles
        for lag in 0...lags {
            full[lag] = (window - lag) / hop
            cut[lag] = (window - lag) % hop
        }
        // (Loops, not closures over arrays: a stream makes these tables for every window.)
        for i in 0..<slots {
            var count = 0
            for lag in 0...lags where full[lag] > i { count += 1 }
            above[i] = count
        }
        for tile in 0..<tiles {
            let tileLags = (1 + tile * lanes)...min(lags, (tile + 1) * lanes)
            var (smallest, largest) = (Int.max, Int.min)
            for lag in tileLags { (smallest, largest) = (min(smallest, cut[lag]), max(largest, cut[lag])) }
            zones[2 * tile] = smallest
            zones[2 * tile + 1] = largest
            for lag in tileLags { step[lag] = cut[lag] - smallest }
        }
        for i in 0..<(2 * tiles) { zones32[i] = Int32(zones[i]) }
        for lag in 0...lags { step32[lag] = Int32(step[lag]) }
    }

    func deallocate() {
        UnsafeMutableRawPointer(doubles).deallocate()
    }

    /// One channel's autocorrelations and level for every window, into `output` (rows of 2 · lags + 2).
    func run(_ signal: UnsafeBufferPointer<Float>, channel: Int, into output: UnsafeMutableBufferPointer<Float>) {
        for t in 0..<samples { y[t] = Double(signal[t]) }
        for block in 0..<blocks {
            sums(block: block)
            if block >= slots - 1 { assemble(window: block - slots + 1, channel: channel, into: output) }
        }
    }

    /// Block `block`'s prefix sums of y and whole and partial lag sums, into its ring slot: the C kernel
    /// `PreprocessingKernels.autocorrelationBlock` (in double, never contracted: the same bits at every level).
    private func sums(block: Int) {
        let slot = block % slots
        PreprocessingKernels.autocorrelationBlock(
            y, start: block * hop, hop: hop, samples: samples, lags: lags, tiles: tiles, cut0: cut[0], zones: zones32, step: step32,
            prefix: prefix + slot * (hop + 1), whole: whole + slot * width, partial: partial + slot * width, history: history, level: level)
    }

    /// Window `index`'s inputs of this channel from the ring, whose last `slots` blocks are the window's.
    private func assemble(window index: Int, channel: Int, into output: UnsafeMutableBufferPointer<Float>) {
        var slot = index % slots
        blockPrefix[0] = 0
        for i in 0..<slots {
            slotOf[i] = slot
            blockPrefix[i + 1] = blockPrefix[i] + prefix[slot * (hop + 1) + hop]
            slot = slot + 1 == slots ? 0 : slot + 1
        }
        // P_l and Σ_{t<W−l} y_t: lags whose full_l exceeds i take block i's whole sum; those with full_l = i its
        // partial sum and its prefix at cut_l = W − iH − l. full_l falls as l grows, so both are runs of lags.
        var upper = lags + 1
        products.update(repeating: 0, count: lags + 1)
        for i in 0..<slots {
            let lower = above[i]
            add(whole + slotOf[i] * width, to: products, count: lower)
            add(partial + slotOf[i] * width + lower, to: products + lower, count: upper - lower)
            let prefix = prefix + slotOf[i] * (hop + 1) + (window - i * hop), before = blockPrefix[i]
            for l in lower..<upper { heads[l] = before + prefix[-l] }
            upper = lower
        }
        // Lags with full_l = slots (cut_l = 0): the whole window.
        for l in 0..<upper { heads[l] = blockPrefix[slots] }
        // Σ_{t<l} y_t for l in block k of the window: block k's prefix at l − kH.
        var l = 0, k = 0
        while l <= lags {
            let prefix = prefix + slotOf[k] * (hop + 1) - k * hop, before = blockPrefix[k], stop = min(lags + 1, (k + 1) * hop)
            while l < stop {
                tails[l] = before + prefix[l]
                l += 1
            }
            k += 1
        }
        let all = heads[0], mean = all / Double(window)
        let energy = max(0, products[0] - mean * all)
        let inverse = energy > Double(window) * MotionWindowing.noiseEnergyPerSample ? 1 / energy : 0
        let row = index * (2 * lags + 2)
        // (P_l − m·(head_l + all − tail_l) + (W − l)·m²) / energy, four lags at a time.
        guard let out = output.baseAddress.map({ UnsafeMutableRawPointer($0 + row + channel * lags - 1) }) else { return }
        let products = UnsafeRawPointer(products), heads = UnsafeRawPointer(heads), tails = UnsafeRawPointer(tails)
        let m = SIMD4<Double>(repeating: mean), scale = SIMD4<Double>(repeating: inverse), lane = SIMD4<Double>(0, 1, 2, 3)
        var lag = 1
        while lag + 4 <= lags + 1 {
            let offset = lag * MemoryLayout<Double>.stride
            let n = SIMD4<Double>(repeating: Double(window - lag)) - lane
            let centered =
                products.loadUnaligned(fromByteOffset: offset, as: SIMD4<Double>.self)
                - m
                * (heads.loadUnaligned(fromByteOffset: offset, as: SIMD4<Double>.self) + SIMD4(repeating: all)
                    - tails.loadUnaligned(fromByteOffset: offset, as: SIMD4<Double>.self)) + n * m * m
            out.storeBytes(of: SIMD4<Float>(centered * scale), toByteOffset: lag * MemoryLayout<Float>.stride, as: SIMD4<Float>.self)
            lag += 4
        }
        while lag <= lags {
            let centered = self.products[lag] - mean * (self.heads[lag] + all - self.tails[lag]) + Double(window - lag) * mean * mean
            output[row + channel * lags + lag - 1] = Float(centered * inverse)
            lag += 1
        }
        let level = channel == 0 ? (energy / Double(window)).squareRoot() : mean
        output[row + 2 * lags + channel] = Float(log(max(level, MotionWindowing.intensityFloor)))
    }
}
