import Foundation

/// Writes files so that a reader never sees half of one: the bytes go to a temporary file beside the target,
/// are flushed to disk, and the temporary file is renamed over the target (an atomic step on one file system).
/// An interrupted or failed write leaves the previous file, if any, as it was.
public enum AtomicFile {
    /// Why a write failed.
    public struct WriteError: Error, Sendable {
        /// The target path.
        public let path: String
        /// What went wrong.
        public let reason: String
    }

    /// Writes `bytes` to `url` atomically.
    public static func write(_ bytes: [UInt8], to url: URL) throws(WriteError) {
        let fail = { (reason: String) in WriteError(path: url.path, reason: reason) }
        let directory = url.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).partial-\(ProcessInfo.processInfo.processIdentifier)")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else {
            throw fail("cannot create \(temporary.path) (does \(directory.path) exist and is it writable?)")
        }
        do {
            let handle = try FileHandle(forWritingTo: temporary)
            try handle.write(contentsOf: Data(bytes))
            try handle.synchronize()
            try handle.close()
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw fail(error.localizedDescription)
        }
        if rename(temporary.path, url.path) != 0 {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw fail(reason)
        }
    }
}
