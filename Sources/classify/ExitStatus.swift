import ArgumentParser
import DataFiles
import Foundation
import Models
import Synchronization
import WeightsFormat

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
    StandardStreams.writeError("warning: \(DataError.terminalSafe(message))\n")
}

/// Prints `message` as one `error:` line on standard error.
func reportError(_ message: String) {
    // One line whatever the message holds: a control character from a file (its name, a model's text) is `?`.
    StandardStreams.writeError("error: \(DataError.terminalSafe(message))\n")
}

/// `value` as JSON with sorted keys (the CLI's stable output), on one line or pretty-printed. Every control
/// character in a string is escaped (`\u001b`): the encoder escapes C0 as JSON requires, and DEL and C1
/// (U+007F–U+009F), which JSON allows raw but a terminal may act on, are escaped here — so a name from a file
/// reaches the reader whole, and never drives the terminal.
func jsonText<Value: Encodable>(_ value: Value, pretty: Bool = false) -> String {
    (try? encodedJSON(value, pretty: pretty)) ?? "{}"
}

/// `jsonText`'s JSON, or the encoder's error (a number that is not finite, say) for a value the CLI does not make
/// itself (an app's answer).
func encodedJSON<Value: Encodable>(_ value: Value, pretty: Bool = false) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
    return escapingHighControls(String(decoding: try encoder.encode(value), as: UTF8.self))
}

/// `json` with DEL and the C1 controls as `\u00XX` escapes; in JSON text they can only be inside strings, where
/// the escape stands for the same character.
func escapingHighControls(_ json: String) -> String {
    let controls: ClosedRange<UInt32> = 0x7F...0x9F
    guard json.unicodeScalars.contains(where: { controls.contains($0.value) }) else { return json }
    var escaped = String.UnicodeScalarView()
    for scalar in json.unicodeScalars {
        if controls.contains(scalar.value) {
            escaped.append(contentsOf: String(format: "\\u%04x", scalar.value).unicodeScalars)
        } else {
            escaped.append(scalar)
        }
    }
    return String(escaped)
}
