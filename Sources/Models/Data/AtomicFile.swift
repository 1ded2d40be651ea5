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
    ///
    /// The temporary file has a unique name (`mkstemp`), so concurrent writers never share one; after the rename
    /// the folder is flushed too, so the new name survives a power cut. A process killed between creating and
    /// renaming the temporary file leaves it behind as `.NAME.partial-XXXXXX`, never in place of `NAME`.
    public static func write(_ bytes: [UInt8], to url: URL) throws(WriteError) {
        let fail = { (reason: String) in WriteError(path: url.path, reason: reason) }
        let directory = url.deletingLastPathComponent()
        var template = Array(directory.appendingPathComponent(".\(url.lastPathComponent).partial-XXXXXX").path.utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.map { mkstemp($0) } ?? -1 }
        guard descriptor >= 0 else {
            throw fail("cannot create a temporary file in \(directory.path): \(String(cString: strerror(errno)))")
        }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var written = 0
        let writeFailure: String? = bytes.withUnsafeBytes { raw -> String? in
            while written < raw.count {
                let result = Glibc.write(descriptor, raw.baseAddress?.advanced(by: written), raw.count - written)
                if result < 0 {
                    if errno == EINTR { continue }
                    return String(cString: strerror(errno))
                }
                written += result
            }
            return fsync(descriptor) == 0 ? nil : String(cString: strerror(errno))
        }
        close(descriptor)
        if let reason = writeFailure {
            unlink(temporary)
            throw fail(reason)
        }
        chmod(temporary, 0o644)
        if rename(temporary, url.path) != 0 {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw fail(reason)
        }
        let folder = open(directory.path, O_RDONLY)
        if folder >= 0 {
            fsync(folder)
            close(folder)
        }
    }
}
