import ArgumentParser
import Foundation
import Models

/// The sysexits codes of DESIGN.md, and the one place errors become them.
enum ExitStatus {
    static let usage: Int32 = 64
    static let dataError: Int32 = 65
    static let noInput: Int32 = 66
    static let software: Int32 = 70
    static let ioError: Int32 = 74

    /// The exit code for a weights-file error: missing 66, unreadable or unwritable 74, anything wrong with the
    /// file's content 65.
    static func code(for error: WeightsFileError) -> Int32 {
        switch error.problem {
        case .fileNotFound: noInput
        case .unreadable, .unwritable: ioError
        default: dataError
        }
    }
}

/// Prints `message` as one `error:` line on standard error.
func reportError(_ message: String) {
    FileHandle.standardError.write(Data("error: \(message)\n".utf8))
}
