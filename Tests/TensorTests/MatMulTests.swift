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
        // still be the default: the core count, or OpenBLAS's OPENBLAS_NUM_THREADS.
        await #expect(processExitsWith: .success) {
            _ = Tensor.matmul(Tensor(zeros: [2, 3]), Tensor(zeros: [3, 2]))
            let environment =
                BLAS.library == .openBLAS ? ProcessInfo.processInfo.environment["OPENBLAS_NUM_THREADS"].flatMap { Int($0) } : nil
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

/// The engine's own matrix product (`odml_sgemm`, what a build with no BLAS library runs) at every kernel level,
/// against the naive reference: every block edge (rows past 64, columns past 512 and not a multiple of 16, a
/// reduction past 256), both transposes, alpha and beta, strided operands, and rows split over threads.
@Suite("The built-in matrix product against the naive reference")
struct BuiltinGemmTests {
    static let shapes: [(m: Int, n: Int, k: Int)] = [
        (1, 1, 1), (1, 17, 9), (3, 16, 1), (4, 31, 33), (5, 15, 7), (63, 33, 17), (65, 513, 257), (130, 40, 600),
        (1, 1030, 300),
    ]

    @Test(arguments: [(false, false), (true, false), (false, true), (true, true)])
    func matchesTheReferenceAtEveryLevel(transposeA: Bool, transposeB: Bool) throws {
        for (m, n, k) in Self.shapes {
            let a = randomTensor(transposeA ? [k, m] : [m, k], seed: 70)
            let b = randomTensor(transposeB ? [n, k] : [k, n], seed: 71)
            let pad = 3
            let lda = a.shape[1] + pad, ldb = b.shape[1] + pad, ldc = n + pad
            let aStrided = StridedGemmTests().strided(a, stride: lda), bStrided = StridedGemmTests().strided(b, stride: ldb)
            let expected = Reference.gemm(a, b, transposeA: transposeA, transposeB: transposeB) * 2 + 0.5
            for level in Kernels.availableLevels {
                for threads in [1, 2] {
                    var c = [Float](repeating: 1, count: m * ldc)
                    aStrided.withUnsafeBufferPointer { aBuffer in
                        bStrided.withUnsafeBufferPointer { bBuffer in
                            c.withUnsafeMutableBufferPointer { cBuffer in
                                BLAS.builtinGemm(
                                    transposeA: transposeA, transposeB: transposeB, m: m, n: n, k: k, alpha: 2,
                                    a: aBuffer.baseAddress!, lda: lda, b: bBuffer.baseAddress!, ldb: ldb, beta: 0.5,
                                    c: cBuffer.baseAddress!, ldc: ldc, threads: threads, level: level)
                            }
                        }
                    }
                    let actual = Tensor(shape: [m, n], scalars: (0..<m).flatMap { r in c[(r * ldc)..<(r * ldc + n)] })
                    let context = "m=\(m) n=\(n) k=\(k) level \(level), \(threads) threads"
                    expectClose(actual, expected, relativeTolerance: Tolerance.kernelRelative, context)
                    for r in 0..<m {
                        #expect(c[(r * ldc + n)..<(r * ldc + ldc)].allSatisfy { $0 == 1 }, "padding of C untouched, \(context)")
                    }
                }
            }
        }
    }

    /// Beta 0 sets C without reading it (a NaN there is gone), and alpha 0 or an empty reduction leaves beta · C.
    @Test func betaZeroIgnoresCAndAlphaZeroOnlyScales() {
        let a: [Float] = [1, 2, 3, 4], b: [Float] = [5, 6, 7, 8]
        for level in Kernels.availableLevels {
            var c: [Float] = [.nan, .nan, .nan, .nan]
            BLAS.builtinGemm(
                transposeA: false, transposeB: false, m: 2, n: 2, k: 2, alpha: 1, a: a, lda: 2, b: b, ldb: 2, beta: 0,
                c: &c, ldc: 2, threads: 1, level: level)
            #expect(c == [19, 22, 43, 50], "level \(level)")
            var d: [Float] = [1, 2, 3, 4]
            BLAS.builtinGemm(
                transposeA: false, transposeB: false, m: 2, n: 2, k: 2, alpha: 0, a: a, lda: 2, b: b, ldb: 2, beta: 3,
                c: &d, ldc: 2, threads: 1, level: level)
            #expect(d == [3, 6, 9, 12], "level \(level)")
        }
    }

    /// The library a build links follows its traits, and `ODML_BLAS=builtin` (as `make test` runs the tensor and
    /// training tests a second time) moves every product to the engine's own kernels.
    @Test func theBuildAndTheEnvironmentChooseTheLibrary() {
        #if canImport(Accelerate)
        #expect(BLAS.linked == .accelerate)
        #elseif OpenBLAS
        #expect(BLAS.linked == .openBLAS)
        #else
        #expect(BLAS.linked == .builtin)
        #endif
        let requested = ProcessInfo.processInfo.environment["ODML_BLAS"]?.lowercased()
        #expect(BLAS.library == (requested == "builtin" ? .builtin : BLAS.linked), "ODML_BLAS=\(requested ?? "")")
    }

    @Test func dotMatchesTheReferenceAtEveryLevel() {
        for count in [0, 1, 7, 8, 31, 32, 33, 100] {
            let x = (0..<count).map { Float($0 % 7) - 2.5 }, y = (0..<count).map { Float($0 % 5) * 0.25 }
            let expected = zip(x, y).reduce(0) { $0 + $1.0 * $1.1 }
            for level in Kernels.availableLevels {
                #expect(abs(BLAS.builtinDot(x, y, count: count, level: level) - expected) <= 1e-4 * max(1, abs(expected)), "\(count) at \(level)")
            }
        }
    }
}
