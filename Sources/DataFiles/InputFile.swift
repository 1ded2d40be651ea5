import Foundation

/// The one way the readers of input data open a file by its path, so a missing file, a folder and an unreadable
/// file give the same errors (and exit codes) whatever the format.
package enum InputFile {
    /// A handle on `path` for reading. No file there is `.missingFile` ("no such file"); a folder, or a file that
    /// cannot be opened, is `.unreadable`, naming `what` was expected there ("a CSV file").
    package static func open(_ path: String, as what: String) throws(DataError) -> FileHandle {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw DataError(file: path, message: "no such file", kind: .missingFile)
        }
        guard !isDirectory.boolValue, let opened = FileHandle(forReadingAtPath: path) else {
            throw DataError(
                file: path, message: isDirectory.boolValue ? "is a directory, not \(what)" : "cannot be opened for reading", kind: .unreadable)
        }
        return opened
    }
}
