import Foundation
import Tensor
import Testing

@Suite("Element-wise ops, activations and softmax")
struct ElementwiseTests {
    /// Applies `operation` with suffix broadcasting, written as index arithmetic in Double.
    func referenceBroadcast(_ a: Tensor, _ b: Tensor, _ operation: (Double, Double) -> Double) -> Tensor {
        let long = a.rank >= b.rank ? a : b
        var out = [Float]()
        for i in 0..<long.count {
            let x = a.rank >= b.rank ? a.scalars[i] : a.scalars[i % a.count]
            let y = a.rank >= b.rank ? b.scalars[i % b.count] : b.scalars[i]
            out.append(Float(operation(Double(x), Double(y))))
        }
        return Tensor(shape: long.shape, scalars: out)
    }

    @Test(arguments: [([3, 7], [7]), ([7], [3, 7]), ([2, 3, 17], [3, 17]), ([1, 33], [1, 33]), ([17, 1], [1])])
    func broadcastingMatchesReference(lhsShape: [Int], rhsShape: [Int]) {
        let a = randomTensor(lhsShape, seed: 10)
        let b = randomTensor(rhsShape, seed: 11).map { $0 + 3 }  // keep divisors away from 0
        expectClose(a + b, referenceBroadcast(a, b, +), relativeTolerance: Tolerance.elementwiseRelative)
        expectClose(a - b, referenceBroadcast(a, b, -), relativeTolerance: Tolerance.elementwiseRelative)
        expectClose(a * b, referenceBroadcast(a, b, *), relativeTolerance: Tolerance.elementwiseRelative)
        expectClose(a / b, referenceBroadcast(a, b, /), relativeTolerance: Tolerance.elementwiseRelative)
    }

    @Test func scalarOps() {
        let t = Tensor(shape: [2, 2], scalars: [1, -2, 3, -4])
        #expect((t + 1).scalars == [2, -1, 4, -3])
        #expect((t - 1).scalars == [0, -3, 2, -5])
        #expect((t * 2).scalars == [2, -4, 6, -8])
        #expect((t / 2).scalars == [0.5, -1, 1.5, -2])
        #expect((10 - t).scalars == [9, 12, 7, 14])
        #expect((12 / t).scalars == [12, -6, 4, -3])
        #expect((2 * t) == (t * 2))
        #expect((1 + t) == (t + 1))
        #expect((-t).scalars == [-1, 2, -3, 4])
    }

    @Test(arguments: awkwardSizes)
    func activationsMatchDoubleDefinitions(size: Int) {
        let x = randomTensor([size, 3], seed: 12) * 4
        func reference(_ f: (Double) -> Double) -> Tensor { Tensor(shape: x.shape, scalars: x.scalars.map { Float(f(Double($0))) }) }
        expectClose(x.relu(), reference { max($0, 0) }, relativeTolerance: Tolerance.elementwiseRelative)
        expectClose(x.leakyRelu(alpha: 0.1), reference { $0 > 0 ? $0 : 0.1 * $0 }, relativeTolerance: Tolerance.elementwiseRelative)
        expectClose(x.sigmoid(), reference { 1 / (1 + exp(-$0)) }, relativeTolerance: Tolerance.elementwiseRelative)
        expectClose(x.tanh(), reference { Foundation.tanh($0) }, relativeTolerance: Tolerance.elementwiseRelative)
    }

    @Test func sigmoidSaturatesWithoutOverflow() {
        let s = Tensor(shape: [4], scalars: [-1e4, -100, 100, 1e4]).sigmoid()
        #expect(s.scalars.allSatisfy { $0.isFinite })
        #expect(s.scalars[0] == 0 && s.scalars[3] == 1)
    }

    @Test(arguments: awkwardSizes)
    func softmaxAndLogSoftmaxMatchReference(width: Int) {
        let x = randomTensor([3, width], seed: 13) * 5
        expectClose(x.softmax(), Reference.softmax(x), relativeTolerance: Tolerance.elementwiseRelative)
        expectClose(
            x.logSoftmax(), Reference.softmax(x, logarithmic: true), relativeTolerance: Tolerance.kernelRelative)
    }

    @Test func softmaxOfHugeLogitsStaysFiniteAndSumsToOne() {
        let logits = Tensor([[1e4, -1e4, 9_999, 0], [-1e4, -1e4, -9_999.5, -1e4], [1e4, 1e4, 1e4, 1e4]])
        let p = logits.softmax()
        #expect(p.scalars.allSatisfy { $0.isFinite })
        for row in 0..<3 {
            let total = (0..<4).reduce(Float(0)) { $0 + p[row, $1] }
            #expect(abs(total - 1) < 1e-6, "row \(row) sums to \(total)")
        }
        expectClose(p, Reference.softmax(logits), relativeTolerance: Tolerance.elementwiseRelative)
        let logP = logits.logSoftmax()
        #expect(logP.scalars.allSatisfy { $0.isFinite })
        expectClose(logP, Reference.softmax(logits, logarithmic: true), relativeTolerance: Tolerance.elementwiseRelative)
    }
}
