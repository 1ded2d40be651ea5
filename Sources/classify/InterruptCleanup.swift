#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The temporary file a long write is filling (a C string, or nil): what the signal handler removes.
nonisolated(unsafe) private var pendingTemporary: UnsafeMutablePointer<CChar>?

/// Removes a long write's temporary file when the process is interrupted (SIGINT, SIGTERM, SIGHUP), then lets the
/// signal end the process as it would have. `classify generate` fills a dataset's temporary file for minutes; without
/// this, Ctrl-C would leave hundreds of megabytes as `.NAME.partial-XXXXXXXX` beside the target.
///
/// A signal the process was started with ignored (by `nohup`, or a shell's background job) stays ignored.
enum InterruptCleanup {
    /// Makes `path` the file removed on interruption (replacing the previous one).
    static func removeOnInterrupt(_ path: String) {
        _ = installed
        withStopSignalsBlocked {
            free(pendingTemporary)
            pendingTemporary = strdup(path)
        }
    }

    /// No file to remove any more: the write finished (renamed) or failed (and removed its file).
    static func clear() {
        withStopSignalsBlocked {
            free(pendingTemporary)
            pendingTemporary = nil
        }
    }

    /// The handler, set once for each stop signal the process does not ignore.
    private static let installed: Void = {
        for stop in [SIGINT, SIGTERM, SIGHUP] {
            let previous = signal(stop) { received in
                if let path = pendingTemporary { unlink(path) }
                signal(received, SIG_DFL)
                raise(received)
            }
            if let previous, unsafeBitCast(previous, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) { signal(stop, SIG_IGN) }
        }
    }()

    /// Runs `body` with the stop signals blocked, so that the handler never sees the path half changed.
    private static func withStopSignalsBlocked(_ body: () -> Void) {
        var stops = sigset_t(), previous = sigset_t()
        sigemptyset(&stops)
        for stop in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&stops, stop) }
        pthread_sigmask(SIG_BLOCK, &stops, &previous)
        body()
        pthread_sigmask(SIG_SETMASK, &previous, nil)
    }
}
