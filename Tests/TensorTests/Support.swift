import Tensor
import Testing

/// Named tolerances: every comparison in these tests says which one it uses.
enum Tolerance {
    /// Float32 kernels (BLAS, im2col, pooling) against their Double twins, relative to the reference's largest
    /// magnitude. Sums of ≤ 600 products of N(0,1) numbers stay near 1e-6; 1e-5 leaves headroom for BLAS's
    /// summation order.
    static let kernelRelative: Float = 1e-5
    /// Element-wise functions (exp, tanh, division) in Float32 against Double, relative to the largest magnitude.
    static let elementwiseRelative: Float = 1e-6
    /// Folding BatchNorm changes rounding once per weight.
    static let foldedRelative: Float = 1e-5
}

/// Sizes that are not multiples of any block: the awkward ones a blocked kernel gets wrong first.
let awkwardSizes = [1, 2, 3, 7, 17, 33]

/// Checks `actual` against `expected`: shapes first, then every element within `relativeTolerance` times the
/// largest magnitude of `expected`. A failure names the largest difference and the first index past the limit.
func expectClose(
    _ actual: Tensor, _ expected: Tensor, relativeTolerance: Float, _ context: @autoclosure () -> String = "",
    sourceLocation: SourceLocation = #_sourceLocation
) {
    guard actual.shape == expected.shape else {
        Issue.record(
            "shape \(actual.shape) differs from expected \(expected.shape) \(context())", sourceLocation: sourceLocation)
        return
    }
    let scale = max(expected.scalars.map(abs).max() ?? 0, Float.leastNormalMagnitude)
    let limit = relativeTolerance * scale
    var worst: Float = 0, firstBad: Int?
    for i in actual.scalars.indices {
        let difference = abs(actual.scalars[i] - expected.scalars[i])
        if !(difference <= limit) {
            if firstBad == nil { firstBad = i }
            worst = difference.isNaN ? .nan : max(worst, difference)
        } else {
            worst = max(worst, difference)
        }
    }
    if let bad = firstBad {
        let message =
            "max |difference| \(worst) exceeds \(limit) (= \(relativeTolerance) × \(scale)); "
            + "first at flat index \(bad): \(actual.scalars[bad]) vs \(expected.scalars[bad]) \(context())"
        Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
    }
}

/// A tensor of N(0, 1) numbers from a seed that depends on the shape, so every case gets its own data.
func randomTensor(_ shape: [Int], seed: UInt64 = 0) -> Tensor {
    var generator = SeededGenerator(seed: seed &+ UInt64(shape.reduce(17) { $0 &* 31 &+ $1 }))
    return Tensor(randomNormal: shape, generator: &generator)
}

/// The shape network shipped before issue 47 (16×16×1 → conv 12/24/32 with max pooling → GAP → dense 5; channel
/// counts that are not all multiples of 16, unlike today's 16/32/48), with weights from `generator`: what the plan
/// tests compile. The shipped weights themselves are run by the Models and Classify tests.
func shapeNetworkLayers(_ generator: inout SeededGenerator, softmax: Bool = true) -> [any Layer] {
    [
        Conv2D(inChannels: 1, outChannels: 12, kernel: (3, 3), padding: .same, generator: &generator), Activation(.relu),
        Pool2D(.max, size: (2, 2)),
        Conv2D(inChannels: 12, outChannels: 24, kernel: (3, 3), padding: .same, generator: &generator), Activation(.relu),
        Pool2D(.max, size: (2, 2)),
        Conv2D(inChannels: 24, outChannels: 32, kernel: (3, 3), padding: .same, generator: &generator), Activation(.relu),
        GlobalAveragePool(), Dense(inFeatures: 32, outFeatures: 5, generator: &generator),
    ] + (softmax ? [Activation(.softmax)] : [])
}

/// `expectClose` judged on a scale of at least 1: plan tests feed O(1) inputs and weights, so an output that
/// cancels to near zero is still compared on the O(1) scale its terms have.
func expectCloseOnUnitScale(
    _ actual: Tensor, _ expected: Tensor, relativeTolerance: Float, _ context: @autoclosure () -> String = "",
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let unit: [Float] = [1]
    expectClose(
        Tensor(shape: [actual.count + 1], scalars: actual.scalars + unit),
        Tensor(shape: [expected.count + 1], scalars: expected.scalars + unit),
        relativeTolerance: relativeTolerance, "\(context()) \(actual.shape)", sourceLocation: sourceLocation)
}
