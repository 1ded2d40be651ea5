import CKernels
import Foundation
import Synchronization

#if canImport(Accelerate)
import Accelerate

/// The library's BLAS integer.
private typealias BLASInt = Int32
#elseif LINK_OPENBLAS
import CBLAS

/// The library's BLAS integer (OpenBLAS's `blasint`: 32 bits unless it was built for 64-bit sizes).
private typealias BLASInt = blasint
#endif

/// The engine's only door to a BLAS library: every `cblas_*` call of the project is in this file.
///
/// Which library computes the products is decided when the package is built (`BLAS.linked`): Accelerate on Apple
/// platforms, OpenBLAS elsewhere when the `OpenBLAS` trait is on (the default), and otherwise the engine's own
/// kernels (`odml_sgemm` in Sources/CKernels/GemmKernels.c), with no library at all. `ODML_BLAS=builtin` in the
/// environment makes a build that links a library use the engine's own kernels too (`BLAS.library`): the tests
/// and benchmarks run both in one build that way.
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
    /// Where the products are computed.
    public enum Library: String, Sendable, CustomStringConvertible {
        /// OpenBLAS (the `OpenBLAS` trait, not on Apple platforms).
        case openBLAS = "OpenBLAS"
        /// Apple's Accelerate framework (Apple platforms).
        case accelerate = "Accelerate"
        /// The engine's own kernels (`odml_sgemm`, `odml_sdot`), with the instruction-set level of `Kernels.level`.
        case builtin = "built-in kernels"

        /// The library's name, as reports print it.
        public var description: String { rawValue }
    }

    /// The library this build links, if any: `.accelerate` on Apple platforms, `.openBLAS` with the `OpenBLAS`
    /// trait, `.builtin` when neither.
    public static var linked: Library {
        #if canImport(Accelerate)
        .accelerate
        #elseif LINK_OPENBLAS
        .openBLAS
        #else
        .builtin
        #endif
    }

    /// The environment variable that makes a build use the engine's own kernels (`ODML_BLAS=builtin`).
    public static let libraryVariable = "ODML_BLAS"

    /// The library the products run on: `linked`, or `.builtin` when `ODML_BLAS` is `builtin` (read once at
    /// start-up; other values are ignored, and reports print `library`, so a typo shows).
    public static let library: Library =
        ProcessInfo.processInfo.environment[libraryVariable]?.lowercased() == "builtin" ? .builtin : linked

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
    /// OpenBLAS's thread count before this file changed it, read on first use of `BLAS` (see `setThreads`); the
    /// active cores for Accelerate and the built-in kernels.
    private static let defaultThreads: Int = {
        #if LINK_OPENBLAS && !canImport(Accelerate)
        if library == .openBLAS { return max(1, Int(openblas_get_num_threads())) }
        #endif
        return Parallel.defaultThreads
    }()
    /// The count last given to OpenBLAS; the lock makes "compare, then set" one step across threads.
    private static let activeThreads = Mutex<Int>(0)

    /// The most threads one product may use. Defaults to OpenBLAS's own choice (the core count, or
    /// `OPENBLAS_NUM_THREADS`), or the active cores; values below 1 are treated as 1. The built-in kernels split
    /// a product's rows over `Parallel`; Accelerate chooses its own threads.
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
        let threads = threads(forM: m, n: n, k: k)
        #if canImport(Accelerate) || LINK_OPENBLAS
        if library != .builtin {
            setThreads(threads)
            timed {
                cblas_sgemm(
                    CblasRowMajor,
                    transposeA ? CblasTrans : CblasNoTrans,
                    transposeB ? CblasTrans : CblasNoTrans,
                    BLASInt(m), BLASInt(n), BLASInt(k),
                    alpha, a, BLASInt(lda), b, BLASInt(ldb),
                    beta, c, BLASInt(ldc))
            }
            return
        }
        #endif
        timed {
            builtinGemm(
                transposeA: transposeA, transposeB: transposeB, m: m, n: n, k: k, alpha: alpha, a: a, lda: lda,
                b: b, ldb: ldb, beta: beta, c: c, ldc: ldc, threads: threads)
        }
    }

    /// `sgemm` on the engine's own kernels (`odml_sgemm`) at `level`, its rows split into runs of whole
    /// `ODML_GEMM_MC`-row blocks, one run a thread, over up to `threads` threads. Arguments are checked by the
    /// caller; the tests compare it with a naive product at every level.
    package static func builtinGemm(
        transposeA: Bool, transposeB: Bool,
        m: Int, n: Int, k: Int,
        alpha: Float,
        a: UnsafePointer<Float>, lda: Int,
        b: UnsafePointer<Float>, ldb: Int,
        beta: Float,
        c: UnsafeMutablePointer<Float>, ldc: Int,
        threads: Int, level: Kernels.Level = Kernels.level
    ) {
        let block = Int(ODML_GEMM_MC)
        let blocks = (m + block - 1) / block
        let level = Int32(level.rawValue)
        let pointers = GemmPointers(a: a, b: b, c: c)
        // Rows first ..< first + count of C and of op(A).
        let rows: @Sendable (Int, Int) -> Void = { first, count in
            let work = odml_sgemm_work_floats(Int32(count), Int32(n), Int32(k))
            withUnsafeTemporaryAllocation(of: Float.self, capacity: work) { space in
                odml_sgemm(
                    transposeA ? 1 : 0, transposeB ? 1 : 0, Int32(count), Int32(n), Int32(k), alpha,
                    pointers.a + (transposeA ? first : first * lda), lda, pointers.b, ldb, beta,
                    pointers.c + first * ldc, ldc, space.baseAddress, level)
            }
        }
        guard threads > 1, blocks > 1 else { return rows(0, m) }
        // One contiguous run of blocks a thread, one call each: B is packed once a thread, not once a block.
        let noState: @Sendable () -> Void = {}
        let share = (blocks + min(threads, blocks) - 1) / min(threads, blocks)
        Parallel.forEach(count: blocks, threads: threads, chunk: share, state: noState) { _, range in
            let first = range.lowerBound * block
            rows(first, min(range.upperBound * block, m) - first)
        }
    }

    /// `builtinGemm`'s operands, shared by the threads of one product: each writes rows of C no other writes.
    private struct GemmPointers: @unchecked Sendable {
        let a: UnsafePointer<Float>
        let b: UnsafePointer<Float>
        let c: UnsafeMutablePointer<Float>
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
        #if canImport(Accelerate) || LINK_OPENBLAS
        if m == 1, n > 0, k > 0, library != .builtin {
            checkDimensions(
                "gemm", transposeA: transposeA, transposeB: transposeB, m: m, n: n, k: k, lda: lda, ldb: ldb, ldc: ldc)
            return gemv(
                transposeA: transposeA, transposeB: transposeB, n: n, k: k, alpha: alpha, a: a, lda: lda,
                b: b, ldb: ldb, beta: beta, c: c)
        }
        #endif
        // The engine's own kernels take a one-row product in `odml_sgemm`, unpacked, as sgemv does.
        sgemm(
            transposeA: transposeA, transposeB: transposeB, m: m, n: n, k: k, alpha: alpha,
            a: a, lda: lda, b: b, ldb: ldb, beta: beta, c: c, ldc: ldc)
    }

    #if canImport(Accelerate) || LINK_OPENBLAS
    /// `gemm`'s one-row product as the library's `cblas_sgemv`.
    private static func gemv(
        transposeA: Bool, transposeB: Bool, n: Int, k: Int, alpha: Float, a: UnsafePointer<Float>, lda: Int,
        b: UnsafePointer<Float>, ldb: Int, beta: Float, c: UnsafeMutablePointer<Float>
    ) {
        setThreads(1)
        // The one row of op(A) is the vector x: contiguous, or one element per stored row when A is transposed.
        // c = alpha · op(B)ᵀ · x + beta · c, where op(B) is k × n.
        let incX = transposeA ? lda : 1
        timed {
            if transposeB {
                // B is stored n × k, so op(B)ᵀ = B.
                cblas_sgemv(
                    CblasRowMajor, CblasNoTrans, BLASInt(n), BLASInt(k), alpha, b, BLASInt(ldb),
                    a, BLASInt(incX), beta, c, 1)
            } else {
                // B is stored k × n.
                cblas_sgemv(
                    CblasRowMajor, CblasTrans, BLASInt(k), BLASInt(n), alpha, b, BLASInt(ldb),
                    a, BLASInt(incX), beta, c, 1)
            }
        }
    }
    #endif

    /// The dot product of `count` values of `x` and `y` (both contiguous): `cblas_sdot`, single-threaded.
    public static func dot(_ x: UnsafePointer<Float>, _ y: UnsafePointer<Float>, count: Int) -> Float {
        shapePrecondition(count >= 0, "dot: count \(count) must not be negative")
        if count == 0 { return 0 }
        #if canImport(Accelerate) || LINK_OPENBLAS
        if library != .builtin { return cblas_sdot(BLASInt(count), x, 1, y, 1) }
        #endif
        return builtinDot(x, y, count: count)
    }

    /// `dot` on the engine's own kernel (`odml_sdot`) at `level`; the tests compare it with a naive sum at every level.
    package static func builtinDot(
        _ x: UnsafePointer<Float>, _ y: UnsafePointer<Float>, count: Int, level: Kernels.Level = Kernels.level
    ) -> Float {
        odml_sdot(x, y, Int32(count), Int32(level.rawValue))
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

    /// Sets OpenBLAS's thread count when it differs from the last one set; Accelerate chooses its own.
    private static func setThreads(_ count: Int) {
        #if LINK_OPENBLAS && !canImport(Accelerate)
        // Read OpenBLAS's own default before the first change, or `maxThreads` would report the changed value.
        _ = defaultThreads
        activeThreads.withLock { active in
            if active != count {
                openblas_set_num_threads(Int32(count))
                active = count
            }
        }
        #endif
    }
}
