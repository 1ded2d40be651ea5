/// A seeded pseudo-random generator that gives the same numbers on every machine and every Swift version.
///
/// The state is xoshiro256** (Blackman & Vigna), seeded by expanding the 64-bit seed with SplitMix64.
/// Uniform and normal draws use only this generator's bits and IEEE arithmetic defined here, never the
/// standard library's `random(in:using:)`, whose algorithm is not promised to stay the same.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: (UInt64, UInt64, UInt64, UInt64)
    private var spareNormal: Double?

    /// Creates a generator whose whole sequence is determined by `seed`.
    public init(seed: UInt64) {
        var splitMix = SplitMix64(state: seed)
        state = (splitMix.next(), splitMix.next(), splitMix.next(), splitMix.next())
        spareNormal = nil
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        let result = rotateLeft(state.1 &* 5, by: 7) &* 9
        let shifted = state.1 << 17
        state.2 ^= state.0
        state.3 ^= state.1
        state.1 ^= state.2
        state.0 ^= state.3
        state.2 ^= shifted
        state.3 = rotateLeft(state.3, by: 45)
        return result
    }

    /// A uniform draw from [0, 1) with 53 random bits.
    public mutating func nextUnitDouble() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// A uniform draw from `range` (lower bound included, upper bound excluded).
    public mutating func nextUniform(in range: Range<Double>) -> Double {
        range.lowerBound + (range.upperBound - range.lowerBound) * nextUnitDouble()
    }

    /// A draw from the normal distribution N(`mean`, `standardDeviation`²), by the Box–Muller transform.
    public mutating func nextNormal(mean: Double = 0, standardDeviation: Double = 1) -> Double {
        if let spare = spareNormal {
            spareNormal = nil
            return mean + standardDeviation * spare
        }
        // 1 - u lies in (0, 1], so the logarithm is finite.
        let u1 = 1 - nextUnitDouble()
        let u2 = nextUnitDouble()
        let radius = (-2 * _log(u1)).squareRoot()
        let angle = 2 * Double.pi * u2
        spareNormal = radius * _sin(angle)
        return mean + standardDeviation * radius * _cos(angle)
    }

    /// A uniformly chosen integer in `0..<upperBound`, without modulo bias.
    public mutating func nextIndex(below upperBound: Int) -> Int {
        shapePrecondition(upperBound > 0, "nextIndex(below:) needs a positive bound, got \(upperBound)")
        let bound = UInt64(upperBound)
        let limit = UInt64.max - UInt64.max % bound
        while true {
            let value = next()
            if value < limit { return Int(value % bound) }
        }
    }
}

/// SplitMix64 (Steele, Lea & Flood): expands one 64-bit seed into well-mixed words.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The current state; each call adds the golden-ratio increment.
    public var state: UInt64

    /// Creates the generator with its raw state.
    public init(state: UInt64) { self.state = state }

    /// The next 64 mixed bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@inline(__always)
private func rotateLeft(_ value: UInt64, by amount: UInt64) -> UInt64 {
    (value << amount) | (value >> (64 - amount))
}
