import Synchronization
import Testing

@testable import Tensor

/// The one executor: every item done exactly once, results in index order, one state per thread that works.
@Suite("Parallel: the engine's executor")
struct ParallelTests {
    @Test(arguments: [(0, 1, 1), (1, 2, 1), (7, 2, 3), (100, 1, 4), (1000, 2, 1), (1000, 8, 64), (5, -3, 2)])
    func everyItemOnceInOrder(count: Int, threads: Int, chunk: Int) {
        let seen = Mutex<[Int]>(Array(repeating: 0, count: count))
        let states = Atomic<Int>(0)
        let makeState: @Sendable () -> Int = { states.add(1, ordering: .relaxed).newValue }
        let results = Parallel.map(count: count, threads: threads, chunk: chunk, state: makeState) { _, index in
            seen.withLock { $0[index] += 1 }
            return index * index
        }
        #expect(results == (0..<count).map { $0 * $0 })
        #expect(seen.withLock { $0.allSatisfy { $0 == 1 } })
        // A state per thread that took a range, and no more threads than asked (fewer than 1 counts as 1).
        #expect(states.load(ordering: .relaxed) <= max(1, threads))
        #expect(count == 0 || states.load(ordering: .relaxed) >= 1)
    }

    @Test func productsRunOnOneBLASThreadWhileWorkersRun() {
        let inside = Parallel.map(count: 8, threads: 2) { _ in BLAS.threads(forM: 4096, n: 4096, k: 4096) }
        // Two workers: a product that would use BLAS's threads outside runs on one inside.
        #expect(inside.allSatisfy { $0 == 1 }, "\(inside)")
    }
}
