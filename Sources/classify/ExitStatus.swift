import ArgumentParser
import Foundation
import Models
import Synchronization

/// The sysexits codes of DESIGN.md, and the one place errors become them.
enum ExitStatus {
    static let usage: Int32 = 64
    static let dataError: Int32 = 65
    static let noInput: Int32 = 66
    static let software: Int32 = 70
    static let ioError: Int32 = 74

    /// The exit code for a weights-file error: missing 66, unreadable (an I/O error, not a regular file, cannot be
    /// opened) or unwritable 74, anything wrong with the file's content 65.
    static func code(for error: WeightsFileError) -> Int32 {
        switch error.problem {
        case .fileNotFound: noInput
        case .unreadable, .unwritable, .notRegularFile, .cannotOpen: ioError
        default: dataError
        }
    }
}

extension ExitStatus {
    /// The exit code for a data error: missing 66, unreadable 74, wrong 65.
    static func code(for error: DataError) -> Int32 {
        switch error.kind {
        case .missingFile: noInput
        case .unreadable: ioError
        case .invalid: dataError
        }
    }
}

/// Reports `error` on stderr and returns the exit that goes with it, for the error types the libraries throw.
func failure(_ error: any Error) -> ExitCode {
    switch error {
    case let error as DataError:
        reportError(error.description)
        return ExitCode(ExitStatus.code(for: error))
    case let error as WeightsFileError:
        reportError(error.description)
        return ExitCode(ExitStatus.code(for: error))
    case let error as AtomicFile.WriteError where error.input != nil:
        // The command line names one file as an input and the output: the user's to fix, as `cp x x`.
        reportError("\(error.path): \(error.reason)")
        return ExitCode(ExitStatus.usage)
    case let error as AtomicFile.WriteError:
        reportError("\(error.path): could not be written: \(error.reason)")
        return ExitCode(ExitStatus.ioError)
    default:
        reportError("\(error)")
        return ExitCode(ExitStatus.software)
    }
}

/// Whether `--quiet` was given: `note:` and `warning:` lines are dropped (errors are always printed).
let quietOutput = Atomic<Bool>(false)

/// Prints `message` as one `warning:` line on standard error, unless `--quiet`.
func reportWarning(_ message: String) {
    guard !quietOutput.load(ordering: .relaxed) else { return }
    StandardStreams.writeError("warning: \(message)\n")
}

/// Prints `message` as one `error:` line on standard error.
func reportError(_ message: String) {
    StandardStreams.writeError("error: \(message)\n")
}

/// `value` as JSON with sorted keys (the CLI's stable output), on one line or pretty-printed.
func jsonText<Value: Encodable>(_ value: Value, pretty: Bool = false) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
    return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
}
