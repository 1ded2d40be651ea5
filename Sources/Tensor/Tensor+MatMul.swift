/// Matrix products through `BLAS.sgemm`.
extension Tensor {
    /// The matrix product `op(a) · op(b)`, where `op(x)` transposes the last two axes of `x` when its flag is set.
    ///
    /// - 2-D: `a` is `[m, k]` (`[k, m]` when `transposeA`), `b` is `[k, n]` (`[n, k]` when `transposeB`);
    ///   the result is `[m, n]`.
    /// - Batched: `a` is `[batch, m, k]`; `b` is `[batch, k, n]`, or 2-D `[k, n]` shared by every batch item;
    ///   the result is `[batch, m, n]`.
    public static func matmul(_ a: Tensor, _ b: Tensor, transposeA: Bool = false, transposeB: Bool = false) -> Tensor {
        shapePrecondition(
            (a.rank == 2 && b.rank == 2) || (a.rank == 3 && (b.rank == 2 || b.rank == 3)),
            "matmul needs 2-D × 2-D or 3-D × 2-D/3-D tensors, got \(describeShape(a.shape)) × \(describeShape(b.shape))")
        let batch = a.rank == 3 ? a.shape[0] : 1
        let aRows = a.shape[a.rank - 2], aColumns = a.shape[a.rank - 1]
        let bRows = b.shape[b.rank - 2], bColumns = b.shape[b.rank - 1]
        let m = transposeA ? aColumns : aRows
        let k = transposeA ? aRows : aColumns
        let bK = transposeB ? bColumns : bRows
        let n = transposeB ? bRows : bColumns
        shapePrecondition(
            k == bK,
            "matmul inner dimensions differ: \(describeShape(a.shape))\(transposeA ? "ᵀ" : "") × "
                + "\(describeShape(b.shape))\(transposeB ? "ᵀ" : "") (\(k) vs \(bK))")
        shapePrecondition(
            b.rank == 2 || b.shape[0] == batch,
            "matmul batch sizes differ: \(describeShape(a.shape)) × \(describeShape(b.shape))")
        let outputShape = a.rank == 3 ? [batch, m, n] : [m, n]
        if k == 0 { return Tensor(zeros: outputShape) }
        let aStride = aRows * aColumns, bStride = b.rank == 3 ? bRows * bColumns : 0, cStride = m * n
        return Tensor(uninitializedShape: outputShape) { c in
            guard let cBase = c.baseAddress else { return }
            a.withUnsafeBufferPointer { aBuffer in
                b.withUnsafeBufferPointer { bBuffer in
                    guard let aBase = aBuffer.baseAddress, let bBase = bBuffer.baseAddress else { return }
                    for item in 0..<batch {
                        BLAS.gemm(
                            transposeA: transposeA, transposeB: transposeB, m: m, n: n, k: k,
                            alpha: 1, a: aBase + item * aStride, lda: aColumns,
                            b: bBase + item * bStride, ldb: bColumns,
                            beta: 0, c: cBase + item * cStride, ldc: n)
                    }
                }
            }
        }
    }

    /// `self · other` for 2-D or batched tensors; see `matmul(_:_:transposeA:transposeB:)`.
    public func matmul(_ other: Tensor, transposeA: Bool = false, transposeB: Bool = false) -> Tensor {
        Tensor.matmul(self, other, transposeA: transposeA, transposeB: transposeB)
    }
}
