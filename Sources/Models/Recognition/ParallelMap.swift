import Dispatch
import Synchronization

/// `work(0) … work(count − 1)` on up to `threads` threads at once, results in index order. Worker `w` takes
/// indices `w`, `w + workers`, …, so neighbouring items (often of similar cost) spread over the workers.
package func parallelMap<T: Sendable>(count: Int, threads: Int, _ work: @Sendable (Int) -> T) -> [T] {
    precondition(count >= 0 && threads >= 1, "parallelMap: count \(count) ≥ 0, threads \(threads) ≥ 1")
    guard count > 0 else { return [] }
    let workers = min(threads, count)
    if workers == 1 { return (0..<count).map(work) }
    let slots = Mutex<[T?]>(Array(repeating: nil, count: count))
    DispatchQueue.concurrentPerform(iterations: workers) { worker in
        for index in stride(from: worker, to: count, by: workers) {
            let result = work(index)
            slots.withLock { $0[index] = result }
        }
    }
    // Every index was written by exactly one worker before concurrentPerform returned.
    return slots.withLock { $0.compactMap { $0 } }
}
