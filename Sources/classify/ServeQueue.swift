import Dispatch
import Synchronization

/// Where `classify serve` does the work of a large request (parsing a body of megabytes, recognizing a long
/// recording): on the system's shared threads (as `Parallel` runs its helpers), never on the Swift tasks that
/// read requests and write answers. Swift's cooperative pool has one thread per core; a recognition of 100 ms
/// there would stall every other connection's pages and small requests behind it.
///
/// At most `workers` jobs run at once (one per core) and at most `waiting` more wait in line, first come first
/// served; a job beyond that is refused at once (the caller answers 503 with Retry-After), rather than making
/// every client wait longer.
final class ServeQueue: Sendable {
    let workers: Int
    let waiting: Int
    private let state = Mutex(State())

    private struct State {
        var running = 0
        var line: [@Sendable () -> Void] = []
        var next = 0  // the first job of `line` not yet started
    }

    init(workers: Int, waiting: Int) {
        precondition(workers >= 1 && waiting >= 0, "ServeQueue: workers \(workers) ≥ 1, waiting \(waiting) ≥ 0")
        (self.workers, self.waiting) = (workers, waiting)
    }

    /// How many jobs wait in line now.
    var inLine: Int { state.withLock { $0.line.count - $0.next } }

    /// `work()` on a worker thread, its result once done; `nil` when `workers` jobs run and `waiting` wait already.
    func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T? {
        await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
            let job: @Sendable () -> Void = { continuation.resume(returning: work()) }
            let start: Bool? = state.withLock { state in
                if state.running < workers {
                    state.running += 1
                    return true
                }
                guard state.line.count - state.next < waiting else { return nil }
                state.line.append(job)
                return false
            }
            switch start {
            case nil: continuation.resume(returning: nil)
            case true?: DispatchQueue.global().async { self.work(first: job) }
            case false?: break
            }
        }
    }

    /// Runs `first`, then the jobs waiting in line, until none is left.
    private func work(first: @escaping @Sendable () -> Void) {
        var job: (@Sendable () -> Void)? = first
        while let current = job {
            current()
            job = state.withLock { state in
                guard state.next < state.line.count else {
                    state.running -= 1
                    state.line.removeAll(keepingCapacity: true)
                    state.next = 0
                    return nil
                }
                let next = state.line[state.next]
                state.next += 1
                if state.next > 64 && state.next * 2 > state.line.count {
                    state.line.removeFirst(state.next)
                    state.next = 0
                }
                return next
            }
        }
    }
}
