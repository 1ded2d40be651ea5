import Foundation

/// The one way the readers of input data open a file by its path, so a missing file, a folder, a device and an
/// unreadable file give the same errors (and exit codes) whatever the format.
package enum InputFile {
    /// A handle on `path` for reading (see `descriptor(_:as:)`), closed when the handle goes.
    package static func open(_ path: String, as what: String) throws(DataError) -> FileHandle {
        FileHandle(fileDescriptor: try descriptor(path, as: what), closeOnDealloc: true)
    }

    /// A descriptor of `path` open for reading, the caller's to close. No file there is `.missingFile` ("no such
    /// file"); a folder, a device, a socket (`refusal(_:path:as:)`), or a file that cannot be opened, is
    /// `.unreadable`, naming `what` was expected there ("a CSV file"). A regular file and a FIFO (a named pipe,
    /// `/dev/stdin` when standard input is a pipe) are read; a device is refused before it is opened, as opening
    /// one may act on it.
    package static func descriptor(_ path: String, as what: String) throws(DataError) -> Int32 {
        var status = stat()
        if stat(path, &status) == 0, let refused = refusal(status, path: path, as: what) { throw refused }
        var opened: Int32
        repeat {
            opened = systemOpen(path, O_RDONLY | O_CLOEXEC)
        } while opened < 0 && errno == EINTR
        guard opened >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { throw DataError(file: path, message: "no such file", kind: .missingFile) }
            if code == EISDIR { throw DataError(file: path, message: "is a directory, not \(what)", kind: .unreadable) }
            throw DataError(file: path, message: "cannot be opened for reading: \(String(cString: strerror(code)))", kind: .unreadable)
        }
        // What was opened, which may not be what was looked at (the path replaced in between).
        let refused: DataError? =
            fstat(opened, &status) == 0
            ? refusal(status, path: path, as: what)
            : DataError(file: path, message: "cannot be read: \(String(cString: strerror(errno)))", kind: .unreadable)
        if let refused {
            close(opened)
            throw refused
        }
        return opened
    }

    /// Why a file of `status` cannot be read as `what`, or `nil` when it can: a regular file or a FIFO, or
    /// standard input itself whatever it is (`/dev/stdin` on a terminal). A directory, a character device
    /// (`/dev/zero`, endless), a block device or a socket is `.unreadable`: "is a character device, not a CSV file".
    package static func refusal(_ status: stat, path: String, as what: String) -> DataError? {
        let type = status.st_mode & S_IFMT
        if type == S_IFREG || type == S_IFIFO { return nil }
        var input = stat()
        if type != S_IFDIR, fstat(0, &input) == 0, input.st_dev == status.st_dev, input.st_ino == status.st_ino, input.st_rdev == status.st_rdev {
            return nil
        }
        let kind =
            switch type {
            case S_IFDIR: "a directory"
            case S_IFCHR: "a character device"
            case S_IFBLK: "a block device"
            case S_IFSOCK: "a socket"
            default: "a special file"
            }
        return DataError(file: path, message: "is \(kind), not \(what)", kind: .unreadable)
    }
}
