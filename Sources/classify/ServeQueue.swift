#if Serve
import Foundation

/// Where `classify serve` does the work of a large request (parsing a body of megabytes, recognizing a long
/// recording): on threads of its own, never on the Swift tasks that read requests and write answers. Swift's
/// cooperative pool has one thread per core; a recognition of a second there would stall every other connection's
/// pages and small requests behind it.
///
/// The workers run at a lower priority (nice +10, on Linux a thread's own): when the cores are busy, reading
/// bodies, writing answers and the pages come first, and recognition takes what is left.
///
/// At most `workers` jobs run at once (one per core) and at most `waiting` more wait in line, first come first
/// served; a job beyond that is refused at once (the caller answers 503 with Retry-After), rather than making
/// every client wait longer.
final class ServeQueue: @unchecked Sendable {
    let workers: Int
    let waiting: Int
    /// Guards `line`, `next` and `busy`; workers wait on it for a job.
    private let condition = NSCondition()
    private var line: [@Sendable () -> Void] = []
    private var next = 0  // the first job of `line` not yet taken
    private var busy = 0  // jobs being run

    /// The nice value of the workers: below the threads that serve connections.
    static let niceness: Int32 = 10

    init(workers: Int, waiting: Int) {
        precondition(workers >= 1 && waiting >= 0, "ServeQueue: workers \(workers) ≥ 1, waiting \(waiting) ≥ 0")
        (self.workers, self.waiting) = (workers, waiting)
        for index in 0..<workers {
            let thread = Thread { [self] in work() }
            thread.name = "serve-worker-\(index)"
            thread.start()
        }
    }

    /// How many jobs wait in line now (not yet taken by a worker).
    var inLine: Int {
        condition.lock()
        defer { condition.unlock() }
        return line.count - next
    }

    /// `work()` on a worker thread, its result once done; `nil` when `workers` jobs run or wait to be taken and
    /// `waiting` more wait already.
    func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T? {
        await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
            condition.lock()
            let admitted = busy + line.count - next < workers + waiting
            if admitted {
                line.append { continuation.resume(returning: work()) }
                condition.signal()
            }
            condition.unlock()
            if !admitted { continuation.resume(returning: nil) }
        }
    }

    /// A worker: takes the first job in line, runs it, and so on for as long as the process runs.
    private func work() {
        // On Linux the nice value is a thread's own (man 2 setpriority, NOTES): `who` 0 is the calling thread.
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, Self.niceness)
        while true {
            condition.lock()
            while next == line.count { condition.wait() }
            let job = line[next]
            next += 1
            busy += 1
            if next == line.count {
                line.removeAll(keepingCapacity: true)
                next = 0
            }
            condition.unlock()
            job()
            condition.lock()
            busy -= 1
            condition.unlock()
        }
    }
}
#endif
