import Foundation
import Tensor
import Testing

@Suite("Matrix multiply against the naive reference", .serialized)
struct MatMulTests {
    static let shapes: [(m: Int, n: Int, k: Int)] = {
        var cases: [(Int, Int, Int)] = []
        for m in awkwardSizes { for n in [1, 3, 17] { for k in [1, 7, 33] { cases.append((m, n, k)) } } }
        cases += [(2, 33, 17), (33, 2, 7), (64, 48, 100), (1, 128, 576)]
        return cases
    }()

    @Test(arguments: [(false, false), (true, false), (false, true), (true, true)])
    func twoDimensionalMatchesReference(transposeA: Bool, transposeB: Bool) {
        for (m, n, k) in Self.shapes {
            let a = randomTensor(transposeA ? [k, m] : [m, k], seed: 1)
            let b = randomTensor(transposeB ? [n, k] : [k, n], seed: 2)
            let product = Tensor.matmul(a, b, transposeA: transposeA, transposeB: transposeB)
            let expected = Reference.gemm(a, b, transposeA: transposeA, transposeB: transposeB)
            expectClose(product, expected, relativeTolerance: Tolerance.kernelRelative, "m=\(m) n=\(n) k=\(k)")
        }
    }

    @Test(arguments: [1, 2, 3])
    func batchedMatchesPerItemReference(batch: Int) {
        for (m, n, k) in [(1, 1, 1), (3, 7, 17), (17, 2, 33)] {
            for (transposeA, transposeB) in [(false, false), (true, true)] {
                let a = randomTensor(transposeA ? [batch, k, m] : [batch, m, k], seed: 3)
                let b3 = randomTensor(transposeB ? [batch, n, k] : [batch, k, n], seed: 4)
                let b2 = randomTensor(transposeB ? [n, k] : [k, n], seed: 5)
                let product3 = Tensor.matmul(a, b3, transposeA: transposeA, transposeB: transposeB)
                let product2 = Tensor.matmul(a, b2, transposeA: transposeA, transposeB: transposeB)
                #expect(product3.shape == [batch, m, n])
                let itemA = a.count / batch, itemB = b3.count / batch
                for item in 0..<batch {
                    let aItem = Tensor(
                        shape: Array(a.shape.dropFirst()),
                        scalars: Array(a.scalars[(item * itemA)..<((item + 1) * itemA)]))
                    let bItem = Tensor(
                        shape: Array(b3.shape.dropFirst()),
                        scalars: Array(b3.scalars[(item * itemB)..<((item + 1) * itemB)]))
                    let slice = { (t: Tensor) in
                        Tensor(shape: [m, n], scalars: Array(t.scalars[(item * m * n)..<((item + 1) * m * n)]))
                    }
                    expectClose(
                        slice(product3), Reference.gemm(aItem, bItem, transposeA: transposeA, transposeB: transposeB),
                        relativeTolerance: Tolerance.kernelRelative, "batch item \(item), 3-D × 3-D")
                    expectClose(
                        slice(product2), Reference.gemm(aItem, b2, transposeA: transposeA, transposeB: transposeB),
                        relativeTolerance: Tolerance.kernelRelative, "batch item \(item), 3-D × shared 2-D")
                }
            }
        }
    }

    @Test func emptyInnerDimensionGivesZeros() {
        let product = Tensor.matmul(Tensor(zeros: [3, 0]), Tensor(zeros: [0, 2]))
        #expect(product == Tensor(zeros: [3, 2]))
    }

    @Test func threadPolicyKeepsSmallProductsSingleThreaded() {
        #expect(BLAS.threads(forM: 1, n: 128, k: 576) == 1, "one sample through a Dense layer")
        #expect(BLAS.threads(forM: 196, n: 32, k: 144) == 1, "one 14×14×16→32 image through a Conv2D")
        #expect(BLAS.threads(forM: 1024, n: 1024, k: 1024) == BLAS.maxThreads)
    }

    @Test func aSmallFirstProductDoesNotLowerTheThreadLimit() async {
        // In a fresh process whose first product is one sample (run on one thread), the limit for batches must
        // still be OpenBLAS's default: the core count, or OPENBLAS_NUM_THREADS.
        await #expect(processExitsWith: .success) {
            _ = Tensor.matmul(Tensor(zeros: [2, 3]), Tensor(zeros: [3, 2]))
            let environment = ProcessInfo.processInfo.environment["OPENBLAS_NUM_THREADS"].flatMap { Int($0) }
            let expected = environment ?? ProcessInfo.processInfo.activeProcessorCount
            exit(BLAS.maxThreads == expected ? 0 : 1)
        }
    }

    @Test func largeProductIsTheSameWhicheverThreadCountRunsIt() {
        let a = randomTensor([256, 300], seed: 8), b = randomTensor([300, 200], seed: 9)
        let expected = Reference.gemm(a, b)
        let saved = BLAS.maxThreads
        defer { BLAS.maxThreads = saved }
        for threads in [1, 2] {
            BLAS.maxThreads = threads
            expectClose(a.matmul(b), expected, relativeTolerance: Tolerance.kernelRelative, "\(threads) threads")
        }
    }
}

@Suite("BLAS.gemm with padded leading dimensions")
struct StridedGemmTests {
    /// Copies `t` (2-D) into rows of `stride` elements, the padding filled with NaN so reading it would show.
    func strided(_ t: Tensor, stride: Int) -> [Float] {
        var out = [Float](repeating: .nan, count: t.shape[0] * stride)
        for r in 0..<t.shape[0] { for c in 0..<t.shape[1] { out[r * stride + c] = t[r, c] } }
        return out
    }

    @Test(arguments: [1, 3], [(false, false), (true, false), (false, true), (true, true)])
    func singleAndMultiRowProductsHonourLeadingDimensions(m: Int, flags: (Bool, Bool)) {
        let (transposeA, transposeB) = flags
        let (n, k, pad) = (17, 7, 5)
        let a = randomTensor(transposeA ? [k, m] : [m, k], seed: 60)
        let b = randomTensor(transposeB ? [n, k] : [k, n], seed: 61)
        let lda = a.shape[1] + pad, ldb = b.shape[1] + pad, ldc = n + pad
        let aStrided = strided(a, stride: lda), bStrided = strided(b, stride: ldb)
        var c = [Float](repeating: 1, count: m * ldc)  // beta = 0.5 keeps half of these ones
        aStrided.withUnsafeBufferPointer { aBuffer in
            bStrided.withUnsafeBufferPointer { bBuffer in
                c.withUnsafeMutableBufferPointer { cBuffer in
                    BLAS.gemm(
                        transposeA: transposeA, transposeB: transposeB, m: m, n: n, k: k, alpha: 2,
                        a: aBuffer.baseAddress!, lda: lda, b: bBuffer.baseAddress!, ldb: ldb,
                        beta: 0.5, c: cBuffer.baseAddress!, ldc: ldc)
                }
            }
        }
        let product = Reference.gemm(a, b, transposeA: transposeA, transposeB: transposeB)
        let expected = product * 2 + 0.5
        let actual = Tensor(shape: [m, n], scalars: (0..<m).flatMap { r in c[(r * ldc)..<(r * ldc + n)] })
        expectClose(actual, expected, relativeTolerance: Tolerance.kernelRelative)
        for r in 0..<m { #expect(c[(r * ldc + n)..<(r * ldc + ldc)].allSatisfy { $0 == 1 }, "padding of C untouched") }
    }
}
