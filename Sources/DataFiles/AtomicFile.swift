import Foundation

/// Writes files so that a reader never sees half of one, and never destroys what stands at the path.
///
/// The rules, by what is at the path when the write starts:
/// - **nothing**: a new regular file with mode 0666 minus the umask (as shell redirection creates it); its folder
///   must exist.
/// - **a regular file**: replaced atomically — the bytes go to a temporary file beside it, are flushed to disk,
///   and the temporary file is renamed over it, so a reader sees the old file or the new one and an interrupted
///   write leaves the old one as it was. The new file keeps the old one's permission bits (setuid and setgid are
///   dropped) and, when the writer may set them (as root), its owner and group; otherwise it belongs to the
///   writer, as after `mv`. The temporary file is created 0600 and given the old mode only after its owner is
///   set, so it never shows the data to anyone the target's mode would hide it from.
/// - **a hard-linked regular file**: the path gets the new file (a new inode); the other names keep the old
///   content, as after `rename` (unlike `cp` and redirection, which write in place and change every name).
/// - **a symbolic link**: the link is followed to the end of its chain (at most 40 links) and the file it names
///   is written by these rules; the links stay. A link to nothing creates the file it names (as redirection does),
///   if that file's folder exists. A loop, or a chain longer than 40, is an error naming the path.
/// - **a character device or a FIFO** (`/dev/null`, `/dev/stdout`, a named pipe): with `.writeInto` (the
///   default, for outputs such as `--render`) the bytes are written into it, as redirection does — no temporary
///   file, no rename; with `.refuse` (weights files, a training run's set) it is an error, and it stays as it was.
/// - **a directory, a socket or a block device**: an error naming the path and what is there; nothing changes.
///
/// The checks are made when the write starts; a path replaced by another process during the write is not
/// guarded against.
package enum AtomicFile {
    /// Why a write failed.
    package struct WriteError: Error, Sendable, Equatable {
        /// The target path.
        package let path: String
        /// What went wrong.
        package let reason: String
        /// The input the path is the same file as, when the write was refused for that (`checkNotAnyOf`): the
        /// command line names one file for both, a usage error rather than a failure to write.
        package let input: String?

        /// Creates the error.
        package init(path: String, reason: String, input: String? = nil) {
            self.path = path
            self.reason = reason
            self.input = input
        }
    }

    /// What a write does when the path (or the end of its symbolic links) is a character device or a FIFO.
    package enum SpecialFiles: Sendable {
        /// Write the bytes into it, as shell redirection does.
        case writeInto
        /// Refuse: the write is an error and the device or FIFO stays as it was.
        case refuse
    }

    /// Writes `bytes` to `url` by the rules of `AtomicFile`.
    ///
    /// The temporary file has a unique name, so concurrent writers never share one; after the rename the folder
    /// is flushed too, so the new name survives a power cut. A process killed between creating and renaming the
    /// temporary file leaves it behind as `.NAME.partial-XXXXXXXX`, never in place of `NAME`.
    package static func write(_ bytes: [UInt8], to url: URL, specialFiles: SpecialFiles = .writeInto) throws(WriteError) {
        try write(to: url, specialFiles: specialFiles) { emit throws(WriteError) in try emit(bytes) }
    }

    /// Writes to `url` by the rules of `AtomicFile` the bytes `body` makes a piece at a time, for a file too big to
    /// hold in memory: `body` passes each piece, in order, to the `emit` it is given, which writes it at once. The
    /// file appears whole when `body` returns, or not at all: when `body` or a write throws, the target stays as it
    /// was (a device or FIFO has the pieces written before the error).
    /// `temporary` is told the temporary file's path as soon as it exists (not for a device or FIFO), so that a
    /// caller writing for a long time can remove it if the process is interrupted (`classify generate` does).
    package static func write(
        to url: URL, specialFiles: SpecialFiles = .writeInto, temporary: (String) -> Void = { _ in },
        pieces body: (_ emit: ([UInt8]) throws(WriteError) -> Void) throws(WriteError) -> Void
    ) throws(WriteError) {
        let target = try Target(url.path)
        let pieces = { (descriptor: Int32) throws(WriteError) in
            try body { bytes throws(WriteError) in
                try target.write(bytes, to: descriptor)
            }
        }
        if target.isSpecial {
            guard specialFiles == .writeInto else { throw target.refusal() }
            return try target.writeInto(pieces)
        }
        try Staged(target: target, created: temporary, writing: pieces).commit()
    }

    /// Checks that `url` could be written as a regular file by these rules (devices and FIFOs refused), without
    /// writing anything: for a set of files, so that a bad target fails before any file changes.
    package static func checkWritable(_ url: URL) throws(WriteError) {
        let target = try Target(url.path)
        if target.isSpecial { throw target.refusal() }
        guard access(target.folder, W_OK) == 0 else {
            throw WriteError(
                path: url.path,
                reason: "cannot create files in \(target.folder): \(String(cString: strerror(errno)))"
                    + target.linkNote)
        }
    }

    /// Refuses `output` when it is one of `inputs`: the same file (device and inode) by any name — the same path,
    /// `./x` for `x`, a symbolic link to it (followed to its end, as a write follows it), a hard link of it — so that
    /// a command never replaces a file it reads, as `cp x x` refuses. Call it before reading anything.
    ///
    /// Not compared: an output that does not exist yet (it is no input), one that is not a regular file (a device
    /// or FIFO is written into, never replaced: `/dev/stdout` may be the terminal `/dev/stdin` is), `-` (standard
    /// input), and an input that cannot be examined (its reader reports it).
    /// - Throws: `WriteError` whose `input` names the input `output` is.
    package static func checkNotAnyOf(_ inputs: [String], output: URL) throws(WriteError) {
        let path = output.relativePath  // as the user gave it
        var written = stat()
        guard stat(path, &written) == 0, (written.st_mode & S_IFMT) == S_IFREG else { return }
        for input in inputs where input != "-" {
            var read = stat()
            guard stat(input, &read) == 0, read.st_dev == written.st_dev, read.st_ino == written.st_ino else { continue }
            let link = (try? Target(path)).map { $0.resolved == path ? "" : ": \(path) is a symbolic link to \($0.resolved)" } ?? ""
            throw WriteError(
                path: path,
                reason: "the output is the input \(input) (the same file\(link)); writing it would replace the input, so "
                    + "nothing was written: give another output path",
                input: input)
        }
    }

    /// Stages `bytes` for `url`: written and flushed to a temporary file beside the file `url` names (devices
    /// and FIFOs refused), to be renamed into place by `Staged.commit()`. Staging every file of a set before
    /// committing any makes the set's window of mixed files as short as a few renames.
    package static func stage(_ bytes: [UInt8], to url: URL) throws(WriteError) -> Staged {
        let target = try Target(url.path)
        if target.isSpecial { throw target.refusal() }
        return try Staged(target: target) { descriptor throws(WriteError) in
            try target.write(bytes, to: descriptor)
        }
    }

    /// A file written to its temporary name, waiting to be renamed over its target.
    package struct Staged: Sendable {
        /// The path as given.
        package let path: String
        /// The file the path names at the end of its symbolic links: the one that is replaced.
        package let resolvedPath: String
        let temporary: String
        let folder: String

        /// Creates the temporary file and has `writing` write the content into its descriptor; then keeps the old
        /// file's owner and mode and flushes. Removes the temporary file when anything fails.
        init(target: Target, created: (String) -> Void = { _ in }, writing: (Int32) throws(WriteError) -> Void) throws(WriteError) {
            path = target.path
            resolvedPath = target.resolved
            folder = target.folder
            let fail = { (reason: String) in WriteError(path: target.path, reason: reason + target.linkNote) }
            let name = (target.resolved as NSString).lastPathComponent
            var descriptor: Int32 = -1
            var candidate = ""
            for _ in 0..<100 {
                candidate = folder + "/." + name + ".partial-" + String(format: "%08x", UInt32.random(in: 0...UInt32.max))
                // A file that replaces another starts private and gets its mode after its owner; a new one gets
                // 0666 minus the umask from the kernel, like redirection.
                descriptor = open(candidate, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, target.info == nil ? 0o666 : 0o600)
                if descriptor >= 0 || errno != EEXIST { break }
            }
            guard descriptor >= 0 else {
                throw fail("cannot create a temporary file in \(folder): \(String(cString: strerror(errno)))")
            }
            temporary = candidate
            created(candidate)
            defer { close(descriptor) }
            do throws(WriteError) {
                try writing(descriptor)
                if let old = target.info { try keepOwnerAndMode(of: old, on: descriptor, fail: fail) }
                guard fsync(descriptor) == 0 else { throw fail(String(cString: strerror(errno))) }
            } catch {
                unlink(candidate)
                throw error
            }
        }

        /// Renames the temporary file over the target and flushes the folder.
        package func commit() throws(WriteError) {
            guard rename(temporary, resolvedPath) == 0 else {
                let reason = String(cString: strerror(errno))
                unlink(temporary)
                throw WriteError(path: path, reason: reason)
            }
            let descriptor = open(folder, O_RDONLY | O_CLOEXEC)
            if descriptor >= 0 {
                fsync(descriptor)
                close(descriptor)
            }
        }

        /// Removes the temporary file; the target stays as it was.
        package func discard() {
            unlink(temporary)
        }
    }

    /// What a path names, with its symbolic links followed.
    struct Target: Sendable {
        /// The path as given.
        let path: String
        /// The end of its symbolic links (the path itself when it is not a link).
        let resolved: String
        /// The resolved path's status, or `nil` when nothing is there.
        let info: stat?
        /// The resolved path's folder.
        let folder: String

        /// The most symbolic links followed, as the kernel's limit (`MAXSYMLINKS`).
        static let maximumLinks = 40

        init(_ path: String) throws(WriteError) {
            self.path = path
            var current = path
            var links = 0
            var status = stat()
            while true {
                if lstat(current, &status) != 0 {
                    guard errno == ENOENT else {
                        throw WriteError(path: path, reason: String(cString: strerror(errno)))
                    }
                    info = nil
                    break
                }
                guard (status.st_mode & S_IFMT) == S_IFLNK else {
                    info = status
                    break
                }
                links += 1
                guard links <= Self.maximumLinks else {
                    throw WriteError(
                        path: path,
                        reason: "a loop of symbolic links (or a chain of more than \(Self.maximumLinks)); "
                            + "point the link at a file, or remove it")
                }
                var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
                let count = readlink(current, &buffer, buffer.count - 1)
                guard count >= 0 else { throw WriteError(path: path, reason: String(cString: strerror(errno))) }
                let destination = String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
                current = destination.hasPrefix("/") ? destination : (Self.folder(of: current) as NSString).appendingPathComponent(destination)
            }
            resolved = current
            folder = Self.folder(of: current)
            if info == nil {
                var isFolder = stat()
                guard stat(folder, &isFolder) == 0, (isFolder.st_mode & S_IFMT) == S_IFDIR else {
                    throw WriteError(path: path, reason: "the folder \(folder) does not exist" + linkNote)
                }
            } else if let kind = refusedKind {
                throw WriteError(path: path, reason: "it is \(kind); nothing was written" + linkNote)
            }
        }

        static func folder(of path: String) -> String {
            let folder = (path as NSString).deletingLastPathComponent
            return folder.isEmpty ? "." : folder
        }

        /// `(a symbolic link to X)` when the path was a link.
        var linkNote: String { resolved == path ? "" : " (\(path) is a symbolic link to \(resolved))" }

        var fileType: mode_t { (info?.st_mode ?? 0) & S_IFMT }

        /// A character device or FIFO: written into or refused, never replaced.
        var isSpecial: Bool { info != nil && (fileType == S_IFCHR || fileType == S_IFIFO) }

        /// What is at the path when no write may touch it.
        var refusedKind: String? {
            switch fileType {
            case S_IFDIR: "a directory"
            case S_IFSOCK: "a socket"
            case S_IFBLK: "a block device"
            default: nil
            }
        }

        func refusal() -> WriteError {
            WriteError(
                path: path,
                reason: "it is \(fileType == S_IFIFO ? "a FIFO" : "a character device"), not a regular file; "
                    + "this output is written only to regular files, and the \(fileType == S_IFIFO ? "FIFO" : "device") was left as it was"
                    + linkNote)
        }

        /// Writes every byte of `bytes` to `descriptor` (the temporary file's, or the device's), an error naming
        /// the path otherwise.
        func write(_ bytes: [UInt8], to descriptor: Int32) throws(WriteError) {
            if let reason = writeAll(bytes, to: descriptor) { throw WriteError(path: path, reason: reason + linkNote) }
        }

        /// Writes into the device or FIFO in place, as redirection does: `writing` writes into its descriptor.
        func writeInto(_ writing: (Int32) throws(WriteError) -> Void) throws(WriteError) {
            let descriptor = open(resolved, O_WRONLY | O_CLOEXEC | O_NOCTTY)
            guard descriptor >= 0 else { throw WriteError(path: path, reason: String(cString: strerror(errno)) + linkNote) }
            defer { close(descriptor) }
            var now = stat()
            guard fstat(descriptor, &now) == 0, (now.st_mode & S_IFMT) == fileType else {
                throw WriteError(path: path, reason: "it changed while it was being opened; nothing was written" + linkNote)
            }
            try writing(descriptor)
        }
    }
}

/// Writes every byte, retrying short writes and interruptions; the error's text, or `nil`.
private func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> String? {
    var written = 0
    return bytes.withUnsafeBytes { raw -> String? in
        while written < raw.count {
            let result = systemWrite(descriptor, raw.baseAddress?.advanced(by: written), raw.count - written)
            if result < 0 {
                if errno == EINTR { continue }
                return String(cString: strerror(errno))
            }
            written += result
        }
        return nil
    }
}

/// Gives the temporary file `descriptor` the old file's owner and group where the writer may (root may; others
/// may set a group they belong to), then its permission bits without setuid and setgid.
private func keepOwnerAndMode(of old: stat, on descriptor: Int32, fail: (String) -> AtomicFile.WriteError) throws(AtomicFile.WriteError) {
    var new = stat()
    if fstat(descriptor, &new) == 0, new.st_uid != old.st_uid || new.st_gid != old.st_gid {
        if fchown(descriptor, old.st_uid, old.st_gid) != 0 {
            if geteuid() == 0 { throw fail("cannot keep the owner and group: \(String(cString: strerror(errno)))") }
            _ = fchown(descriptor, uid_t.max, old.st_gid)  // the group alone, when the writer belongs to it
        }
    }
    guard fchmod(descriptor, old.st_mode & 0o1777) == 0 else {
        throw fail("cannot keep the permissions: \(String(cString: strerror(errno)))")
    }
}
