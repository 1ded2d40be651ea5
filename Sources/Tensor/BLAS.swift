import CBLAS
import Synchronization

/// The engine's only door to OpenBLAS: every `cblas_*` call of the project is in this file.
///
/// `gemm` is what the engine calls; `sgemm` is the raw product it builds on (and the benchmark's baseline).
/// Both check dimensions and leading dimensions with preconditions before they hand pointers to C, and pick
/// the BLAS thread count per call: products smaller than `singleThreadWorkLimit` multiply-adds (one sample
/// through a layer) run on the calling thread, because waking threads costs more than it saves there; larger
/// ones (batches) use up to `maxThreads` threads.
///
/// OpenBLAS's thread count is process-wide: a product runs with the count last set by any thread. While
/// `Parallel` runs work on more than one thread, every product runs on one (the workers are the parallelism);
/// nothing else in the engine sets a thread count (`maxThreads` is for a user, or the benchmarks).
public enum BLAS {
    /// Products of fewer multiply-adds (m·n·k) than this run single-threaded.
    public static let singleThreadWorkLimit = 1 << 22

    private static let timing = Atomic<Bool>(false)
    private static let timedNanoseconds = Atomic<Int>(0)

    /// Runs `body` while timing every BLAS product; returns its result and the seconds spent inside BLAS.
    /// (Meant for benchmarks: the timer is process-wide, and off, it costs one relaxed atomic load a product.)
    public static func measuringTime<R>(_ body: () throws -> R) rethrows -> (result: R, blasSeconds: Double) {
        timedNanoseconds.store(0, ordering: .relaxed)
        timing.store(true, ordering: .relaxed)
        defer { timing.store(false, ordering: .relaxed) }
        let result = try body()
        return (result, Double(timedNanoseconds.load(ordering: .relaxed)) * 1e-9)
    }

    /// Runs `call`, adding its duration to the BLAS timer when timing is on.
    @inline(__always)
    private static func timed(_ call: () -> Void) {
        guard timing.load(ordering: .relaxed) else { return call() }
        let start = ContinuousClock.now
        call()
        let elapsed = ContinuousClock.now - start
        timedNanoseconds.add(
            Int(elapsed.components.seconds) * 1_000_000_000 + Int(elapsed.components.attoseconds / 1_000_000_000),
            ordering: .relaxed)
    }

    private static let configuredMaxThreads = Atomic<Int>(0)
    /// OpenBLAS's thread count before this file changed it, read on first use of `BLAS` (see `setThreads`).
    private static let defaultThreads = max(1, Int(openblas_get_num_threads()))
    /// The count last given to OpenBLAS; the lock makes "compare, then set" one step across threads.
    private static let activeThreads = Mutex<Int>(0)

    /// The most threads one product may use. Defaults to OpenBLAS's own choice (the core count, or
    /// `OPENBLAS_NUM_THREADS`); values below 1 are treated as 1.
    public static var maxThreads: Int {
        get {
            let configured = configuredMaxThreads.load(ordering: .relaxed)
            return configured > 0 ? configured : defaultThreads
        }
        set {
            configuredMaxThreads.store(max(1, newValue), ordering: .relaxed)
        }
    }

    /// How many `Parallel` calls are running on more than one thread: while any is, products run on one.
    static let parallelRegions = Atomic<Int>(0)

    /// The thread count a product of `m`·`n`·`k` multiply-adds runs with: one inside a parallel `Parallel` call
    /// or below `singleThreadWorkLimit`, else `maxThreads`.
    public static func threads(forM m: Int, n: Int, k: Int) -> Int {
        if parallelRegions.load(ordering: .relaxed) > 0 { return 1 }
        let work = m.multipliedReportingOverflow(by: n).partialValue.multipliedReportingOverflow(by: k)
        if work.overflow { return maxThreads }
        return work.partialValue < singleThreadWorkLimit ? 1 : maxThreads
    }

    /// `C = alpha · op(A) · op(B) + beta · C` on row-major matrices, where `op(X)` is `Xᵀ` when its flag is set.
    ///
    /// `op(A)` is `m × k`, `op(B)` is `k × n`, `C` is `m × n`. `A` is stored `m × k` (or `k × m` when transposed)
    /// with row stride `lda`; likewise `B` with `ldb` and `C` with `ldc`. This is `cblas_sgemm` with its
    /// arguments checked; the benchmark times it as the raw-BLAS baseline.
    public static func sgemm(
        transposeA: Bool, transposeB: Bool,
        m: Int, n: Int, k: Int,
        alpha: Float,
        a: UnsafePointer<Float>, lda: Int,
        b: UnsafePointer<Float>, ldb: Int,
        beta: Float,
        c: UnsafeMutablePointer<Float>, ldc: Int
    ) {
        checkDimensions(
            "sgemm", transposeA: transposeA, transposeB: transposeB, m: m, n: n, k: k, lda: lda, ldb: ldb, ldc: ldc)
        if m == 0 || n == 0 { return }
        setThreads(threads(forM: m, n: n, k: k))
        timed {
            cblas_sgemm(
                CblasRowMajor,
                transposeA ? CblasTrans : CblasNoTrans,
                transposeB ? CblasTrans : CblasNoTrans,
                blasint(m), blasint(n), blasint(k),
                alpha, a, blasint(lda), b, blasint(ldb),
                beta, c, blasint(ldc))
        }
    }

    /// The engine's matrix product: `sgemm`'s contract, but a one-row product (`m == 1`, a single sample)
    /// runs as `cblas_sgemv`, which OpenBLAS computes several times faster than `sgemm` for that shape.
    public static func gemm(
        transposeA: Bool, transposeB: Bool,
        m: Int, n: Int, k: Int,
        alpha: Float,
        a: UnsafePointer<Float>, lda: Int,
        b: UnsafePointer<Float>, ldb: Int,
        beta: Float,
        c: UnsafeMutablePointer<Float>, ldc: Int
    ) {
        guard m == 1, n > 0, k > 0 else {
            sgemm(
                transposeA: transposeA, transposeB: transposeB, m: m, n: n, k: k, alpha: alpha,
                a: a, lda: lda, b: b, ldb: ldb, beta: beta, c: c, ldc: ldc)
            return
        }
        checkDimensions(
            "gemm", transposeA: transposeA, transposeB: transposeB, m: m, n: n, k: k, lda: lda, ldb: ldb, ldc: ldc)
        setThreads(1)
        // The one row of op(A) is the vector x: contiguous, or one element per stored row when A is transposed.
        // c = alpha · op(B)ᵀ · x + beta · c, where op(B) is k × n.
        let incX = transposeA ? lda : 1
        timed {
            if transposeB {
                // B is stored n × k, so op(B)ᵀ = B.
                cblas_sgemv(
                    CblasRowMajor, CblasNoTrans, blasint(n), blasint(k), alpha, b, blasint(ldb),
                    a, blasint(incX), beta, c, 1)
            } else {
                // B is stored k × n.
                cblas_sgemv(
                    CblasRowMajor, CblasTrans, blasint(k), blasint(n), alpha, b, blasint(ldb),
                    a, blasint(incX), beta, c, 1)
            }
        }
    }

    /// The dot product of `count` values of `x` and `y` (both contiguous): `cblas_sdot`, single-threaded.
    public static func dot(_ x: UnsafePointer<Float>, _ y: UnsafePointer<Float>, count: Int) -> Float {
        shapePrecondition(count >= 0, "dot: count \(count) must not be negative")
        if count == 0 { return 0 }
        return cblas_sdot(blasint(count), x, 1, y, 1)
    }

    /// Stops with every dimension in the message when a size is negative or a row stride is shorter than a row.
    private static func checkDimensions(
        _ name: String, transposeA: Bool, transposeB: Bool, m: Int, n: Int, k: Int, lda: Int, ldb: Int, ldc: Int
    ) {
        let aColumns = transposeA ? m : k
        let bColumns = transposeB ? k : n
        let limit = Int(Int32.max)
        shapePrecondition(
            m >= 0 && n >= 0 && k >= 0 && lda >= max(1, aColumns) && ldb >= max(1, bColumns) && ldc >= max(1, n)
                && [m, n, k, lda, ldb, ldc].allSatisfy { $0 <= limit },
            "\(name): sizes m=\(m) n=\(n) k=\(k) (transposeA=\(transposeA) transposeB=\(transposeB)) do not fit "
                + "leading dimensions lda=\(lda) ldb=\(ldb) ldc=\(ldc), or exceed BLAS's 32-bit sizes")
    }

    private static func setThreads(_ count: Int) {
        // Read OpenBLAS's own default before the first change, or `maxThreads` would report the changed value.
        _ = defaultThreads
        activeThreads.withLock { active in
            if active != count {
                openblas_set_num_threads(Int32(count))
                active = count
            }
        }
    }
}
