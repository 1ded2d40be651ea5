import MallocInterposerSwift

/// Counts heap allocations with ordo-one's malloc interposer (malloc-interposer 1.6.1).
///
/// bench links `libMallocInterposerSwift.so`, which comes before libc in bench's list of libraries, so its
/// `malloc`, `calloc`, `realloc`, `posix_memalign`, `aligned_alloc` and `free` replace libc's for the whole
/// process (the same as `LD_PRELOAD` would do); Swift's `swift_slowAlloc` reaches them like any C caller. Counting
/// costs nothing until it is switched on; every allocation still goes through the interposer, which adds a
/// 16-byte header and one indirect call to libc (a few nanoseconds per allocation).
///
/// A count of zero is only believed once `isActive` has seen a known allocation counted.
enum AllocationCounter {
    /// Whether the interposer sees this process's allocations: one made on purpose is counted.
    static let isActive: Bool = {
        let allocations = count {
            let block = UnsafeMutablePointer<Int>.allocate(capacity: 8)
            block.initialize(repeating: 1, count: 8)
            benchmarkSink += Float(block[3])
            block.deallocate()
        }
        return allocations >= 1
    }()

    /// Allocations on every thread while `body` runs.
    static func count(_ body: () -> Void) -> Int {
        MallocInterposerSwift.reset()
        MallocInterposerSwift.hook()
        body()
        MallocInterposerSwift.unhook()
        return MallocInterposerSwift.getStatistics().mallocCount
    }

    /// Allocations per call of `call` over `calls` calls after a first one (which may fill caches and pools), or
    /// `nil` when the interposer is not active.
    static func perCall(_ calls: Int = 1000, _ call: () -> Float) -> Double? {
        guard isActive else { return nil }
        benchmarkSink += call()
        let allocations = count {
            for _ in 0..<calls { benchmarkSink += call() }
        }
        return Double(allocations) / Double(calls)
    }
}
