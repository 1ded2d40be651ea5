import DataFiles
import Foundation
import Models

/// The lock file of the training output `prefix` (`.NAME.lock` in its folder).
package func outputLockPath(prefix: URL) -> String {
    prefix.deletingLastPathComponent().appendingPathComponent(".\(prefix.lastPathComponent).lock").path
}

/// Checks, before a run trains, that `withOutputLock` will be able to lock `prefix`: its lock file is a regular
/// file that can be opened for writing (not a folder, a link or a device), or one can be created there. One made
/// by the check is removed again only while the check holds its lock, as a run removes its own: a run that opened
/// it meanwhile either waits for that lock and then finds the file gone (and locks a new one), or holds the lock
/// first, and the check leaves the file to it.
package func checkOutputLock(prefix: URL) throws(AtomicFile.WriteError) {
    let path = outputLockPath(prefix: prefix)
    var status = stat()
    let exists = lstat(path, &status) == 0
    if exists {
        let kind = status.st_mode & S_IFMT
        guard kind == S_IFREG else {
            throw AtomicFile.WriteError(
                path: path,
                reason: "the lock of the training output is "
                    + (kind == S_IFDIR ? "a folder" : kind == S_IFLNK ? "a symbolic link" : "not a regular file")
                    + "; remove it (a run makes it, and removes it when done)")
        }
    }
    let descriptor = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | (exists ? 0 : O_CREAT | O_EXCL), 0o666)
    guard descriptor >= 0 else {
        // Made by another run just now: it can be made.
        if !exists && errno == EEXIST { return }
        throw AtomicFile.WriteError(path: path, reason: "cannot create the lock of the training output: " + String(cString: strerror(errno)))
    }
    if !exists && flock(descriptor, LOCK_EX | LOCK_NB) == 0 { unlink(path) }
    close(descriptor)
}

/// Runs `body` holding an exclusive lock on the training output `prefix`, so that two runs writing the same
/// `--out` never interleave their files: the second waits (after calling `waiting`) until the first has written
/// its whole set, then writes its own.
///
/// The lock is `flock` on `.NAME.lock` in the prefix's folder (NAME: the prefix's last component). The file is
/// removed when the lock is released; a run killed while holding it leaves the file behind, but not the lock
/// (the kernel releases it), and the next run takes it over. A lock taken on a file that another run removed
/// meanwhile is dropped and taken again on the new file.
package func withOutputLock(
    prefix: URL, waiting: () -> Void = {}, _ body: () throws(AtomicFile.WriteError) -> Void
) throws(AtomicFile.WriteError) {
    let path = outputLockPath(prefix: prefix)
    let fail = { (action: String) in
        AtomicFile.WriteError(
            path: path,
            reason: "cannot \(action) the lock of the training output: "
                + String(cString: strerror(errno)))
    }
    var announced = false
    while true {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o666)
        guard descriptor >= 0 else { throw fail("create") }
        if flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK else {
                close(descriptor)
                throw fail("take")
            }
            if !announced {
                waiting()
                announced = true
            }
            var result: Int32
            repeat { result = flock(descriptor, LOCK_EX) } while result != 0 && errno == EINTR
            guard result == 0 else {
                close(descriptor)
                throw fail("take")
            }
        }
        var held = stat(), named = stat()
        guard fstat(descriptor, &held) == 0, stat(path, &named) == 0, held.st_dev == named.st_dev, held.st_ino == named.st_ino else {
            close(descriptor)  // the file was removed by the run that held it: lock the new one
            continue
        }
        defer {
            unlink(path)
            close(descriptor)
        }
        try body()
        return
    }
}
