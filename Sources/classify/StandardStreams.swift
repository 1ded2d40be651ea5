// C's stdout and stderr are global variables; the C library locks each stream itself.
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
@preconcurrency import Darwin
#endif

/// Standard output and standard error as the CLI uses them: everything goes through C's buffered streams, so a
/// failed write is never a crash (Foundation's `FileHandle.write(_:)` traps on one) and is never lost silently:
/// `finishStandardOutput` flushes and reports it.
enum StandardStreams {
    /// Writes `text` to standard output (buffered; `print` shares the buffer). Returns `false` once a write to
    /// standard output has failed, so a long batch can stop early instead of computing answers nobody can read.
    @discardableResult
    static func write(_ text: String) -> Bool {
        fputs(text, stdout)
        return ferror(stdout) == 0
    }

    /// Sends what standard output holds on its way now (a follower's reader sees each line as it is printed).
    /// Returns `false` once a write to standard output has failed (`finishStandardOutput` reports it).
    @discardableResult
    static func flush() -> Bool {
        fflush(stdout) == 0 && ferror(stdout) == 0
    }

    /// Writes `text` to standard error unbuffered. A failure here has nowhere left to be reported, so it is
    /// ignored (as every Unix tool does).
    static func writeError(_ text: String) {
        fputs(text, stderr)
    }

    /// Flushes standard output and returns the exit status the run ends with: `status`, or 74 (I/O error) with one
    /// `error:` line on standard error when any of the output could not be written (a full disk, a closed file,
    /// an I/O error) and the run would otherwise have succeeded.
    static func finishStandardOutput(status: Int32) -> Int32 {
        let flushed = fflush(stdout) == 0
        let reason = flushed ? nil : String(cString: strerror(errno))
        guard !flushed || ferror(stdout) != 0 else { return status }
        writeError("error: standard output could not be written\(reason.map { ": \($0)" } ?? ""); the output is incomplete\n")
        return status == 0 ? ExitStatus.ioError : status
    }
}
