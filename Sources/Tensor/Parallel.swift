import Dispatch
import Foundation
import Synchronization

/// The engine's one executor: a parallel-for over `0..<count` on the calling thread and up to `threads − 1`
/// helpers from the system's shared pool. Batches of drawings and recordings, dataset parsing, the CLI's batch
/// printing and training steps all run on it.
///
/// Items are taken `chunk` at a time from a shared counter as each thread finishes its last, so threads end
/// together whatever the items cost. The calling thread works too and returns as soon as every item is done: a
/// helper the system has not started by then finds nothing left and is not waited for (on a busy device, waiting
/// for every helper to be scheduled made two threads slower than one). While more than one thread runs, BLAS
/// products run one thread each (`BLAS.threads(forM:n:k:)`), so the workers do not fight over cores.
public enum Parallel {
    /// The threads a batch uses when the caller does not say: the machine's active cores.
    public static var defaultThreads: Int { ProcessInfo.processInfo.activeProcessorCount }

    /// `body(state, range)` for consecutive ranges of at most `chunk` items covering `0..<count`, on up to
    /// `threads` threads (fewer than 1 counts as 1). Each thread makes its own `state` with `makeState` before its
    /// first range (a recognizer's work space, say: a class, or a closure over one) and keeps it for the rest.
    /// Returns when every range is done.
    public static func forEach<State>(
        count: Int, threads: Int, chunk: Int = 1, state makeState: @escaping @Sendable () -> State,
        _ body: @escaping @Sendable (State, Range<Int>) -> Void
    ) {
        precondition(count >= 0 && chunk >= 1, "Parallel.forEach: count \(count) ≥ 0, chunk \(chunk) ≥ 1")
        guard count > 0 else { return }
        let workers = max(1, min(threads, (count + chunk - 1) / chunk))
        let job = Job(count: count, chunk: chunk)
        let work: @Sendable () -> Void = {
            var state: State?
            while let range = job.take() {
                let current = state ?? makeState()
                state = current
                body(current, range)
                job.done(range.count)
            }
        }
        guard workers > 1 else { return work() }
        BLAS.parallelRegions.add(1, ordering: .relaxed)
        defer { BLAS.parallelRegions.subtract(1, ordering: .relaxed) }
        for _ in 1..<workers { DispatchQueue.global().async(execute: work) }
        work()
        // Every range was taken; wait for the helpers still working on theirs.
        job.finished.wait()
    }

    /// `work(0) … work(count − 1)` on up to `threads` threads, results in index order; each thread makes its own
    /// `state` before its first item.
    public static func map<T: Sendable, State>(
        count: Int, threads: Int, chunk: Int = 1, state makeState: @escaping @Sendable () -> State,
        _ work: @escaping @Sendable (State, Int) -> T
    ) -> [T] {
        let slots = Slots<T>(count: count)
        defer { slots.deallocate() }
        forEach(count: count, threads: threads, chunk: chunk, state: makeState) { state, range in
            for index in range { slots.store(work(state, index), at: index) }
        }
        return slots.values()
    }

    /// `work(0) … work(count − 1)` on up to `threads` threads, results in index order.
    public static func map<T: Sendable>(count: Int, threads: Int, chunk: Int = 1, _ work: @escaping @Sendable (Int) -> T) -> [T] {
        let none: @Sendable () -> Void = {}
        return map(count: count, threads: threads, chunk: chunk, state: none) { _, index in work(index) }
    }

    /// One call's shared counters: the next item to take, how many are done, and the signal that all are.
    private final class Job: Sendable {
        let count: Int, chunk: Int
        let next = Atomic<Int>(0)
        let completed = Atomic<Int>(0)
        /// Signalled once, when the last item is done.
        let finished = DispatchSemaphore(value: 0)

        init(count: Int, chunk: Int) {
            (self.count, self.chunk) = (count, chunk)
        }

        /// The next range to work on, or `nil` when every item was taken.
        func take() -> Range<Int>? {
            let start = next.wrappingAdd(chunk, ordering: .relaxed).oldValue
            return start < count ? start..<min(count, start + chunk) : nil
        }

        /// Counts `items` done; what the thread wrote is visible to whoever sees the count it reaches.
        func done(_ items: Int) {
            if completed.add(items, ordering: .acquiringAndReleasing).newValue == count { finished.signal() }
        }
    }

    /// Results written by index from any thread, each index exactly once, read after every write is done.
    private final class Slots<T>: @unchecked Sendable {
        private let base: UnsafeMutablePointer<T?>
        private let count: Int

        init(count: Int) {
            self.count = count
            base = .allocate(capacity: max(count, 1))
            base.initialize(repeating: nil, count: count)
        }

        func store(_ value: T, at index: Int) { base[index] = value }

        /// The results in index order (every index was stored).
        func values() -> [T] { (0..<count).compactMap { base[$0] } }

        func deallocate() {
            base.deinitialize(count: count)
            base.deallocate()
        }
    }
}
