import ArgumentParser
import DataFiles
import Foundation
import Models
import Tensor

/// A chain link's model as answers name it: a built-in link (tried after the folders' files failed) by its
/// variant (`shape-classifier.int8`; its weights are `built-in`, and the warnings said why).
func modelName(_ link: String) -> String { WeightsLocator.builtInVariant(link) ?? link }

/// The link's name for a weights file: its file name without `.weights`.
func modelName(ofWeights path: String) -> String {
    URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
}

/// An input that got no answer, as `--json` prints it: `{"input": …, "error": …, "exit": …}`.
struct ErrorLineJSON: Encodable {
    let input: String
    let error: String
    let exit: Int32
}

/// One input's outcome in a batch: the line to print and the exit status it implies (0 for an answer).
struct ItemOutcome: Sendable {
    let line: String
    let status: Int32
}

/// The inputs named on the command line: files as given, directories as their `.csv` files in name order. A
/// folder without any `.csv` file (66), or one that cannot be listed (74), stays an input of its own with that
/// error in `problems`: reported in its place while the rest of a batch goes on (a batch of nothing would look
/// like success).
func expandInputs(_ inputs: [String]) -> (files: [String], problems: [String: DataError]) {
    var files: [String] = [], problems: [String: DataError] = [:]
    for input in inputs {
        var isDirectory: ObjCBool = false
        guard input != "-", FileManager.default.fileExists(atPath: input, isDirectory: &isDirectory), isDirectory.boolValue else {
            files.append(input)
            continue
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: input)
        } catch {
            files.append(input)
            problems[input] = DataError(file: input, message: "the folder cannot be listed: \(error.localizedDescription)", kind: .unreadable)
            continue
        }
        let csvFiles = names.filter { $0.lowercased().hasSuffix(".csv") }.sorted()
        guard !csvFiles.isEmpty else {
            files.append(input)
            problems[input] = DataError(
                file: input, message: "the folder holds no .csv files (\(names.count) other entr\(names.count == 1 ? "y" : "ies"))",
                kind: .missingFile)
            continue
        }
        files += csvFiles.map { input.hasSuffix("/") ? input + $0 : input + "/" + $0 }
    }
    return (files, problems)
}

/// Fails with the missing-file error (66) when `path` (not `-`) does not exist: for commands that must know before
/// they load any model that their one input is there (a missing input is the user's error, not every model's).
func requireExisting(_ path: String) throws(DataError) {
    guard path != "-", !FileManager.default.fileExists(atPath: path) else { return }
    throw DataError(file: path, message: "no such file", kind: .missingFile)
}

/// Works through `count` items on every core, `chunk` at a time, printing each outcome's line in input order as
/// soon as its chunk is done. Returns the first failed item's status, or 0; 74 at once when standard output
/// cannot be written.
func runBatch(
    count: Int, threads: Int = Parallel.defaultThreads, chunk: Int = 512,
    _ work: @escaping @Sendable (Int) -> ItemOutcome
) -> Int32 {
    runBatch(count: count, threads: threads, chunk: chunk, block: 1) { index, bytes in
        let outcome = work(index)
        bytes += outcome.line.utf8
        return outcome.status
    }
}

/// The one batch printer: `line(index, &bytes)` appends item `index`'s line (without its line end) and returns its
/// status (0 for an answer). Items are taken `chunk` at a time (`prepare(range)` first, on this thread, when given:
/// the work the chunk's lines read), their lines made on `threads` threads `block` items to a thread-task, and
/// written in input order as each chunk is done; a failure count is reported at the end. Returns the first failed
/// item's status, or 0; 74 at once when standard output cannot be written.
func runBatch(
    count: Int, threads: Int, chunk: Int, block: Int, prepare: ((Range<Int>) -> Void)? = nil,
    _ line: @escaping @Sendable (Int, inout [UInt8]) -> Int32
) -> Int32 {
    precondition(chunk >= 1 && block >= 1, "runBatch: chunk \(chunk), block \(block)")
    var status: Int32 = 0
    var failures = 0
    for start in stride(from: 0, to: count, by: chunk) {
        let end = min(count, start + chunk)
        prepare?(start..<end)
        let parts = Parallel.map(count: (end - start + block - 1) / block, threads: threads) { part in
            var bytes: [UInt8] = []
            var status: Int32 = 0, failures = 0
            for index in (start + part * block)..<min(end, start + (part + 1) * block) {
                let itemStatus = line(index, &bytes)
                bytes.append(UInt8(ascii: "\n"))
                if itemStatus != 0 {
                    failures += 1
                    if status == 0 { status = itemStatus }
                }
            }
            return (text: String(decoding: bytes, as: UTF8.self), status: status, failures: failures)
        }
        for part in parts {
            guard StandardStreams.write(part.text) else {
                // Nobody can read the rest: stop; `Classify.main` reports the lost output and exits 74.
                return ExitStatus.ioError
            }
            failures += part.failures
            if status == 0 { status = part.status }
        }
    }
    if failures > 0 { reportError("\(failures) of \(count) inputs failed; each is reported in its place above") }
    return status
}

/// An input's error as a line: text `INPUT  error: MESSAGE`, or JSON `{"input", "error", "exit"}` (`exit` the
/// status the input alone would have exited with). A batch prints it in the input's place; a single input with
/// `--json` prints it on standard output too, so that every input gives one JSON line.
func errorOutcome(_ error: any Error, input: String, json: Bool) -> ItemOutcome {
    let (message, status): (String, Int32)
    switch error {
    case let error as DataError: (message, status) = (error.description, ExitStatus.code(for: error))
    default: (message, status) = (String(describing: error), ExitStatus.software)
    }
    return ItemOutcome(
        line: json ? jsonText(ErrorLineJSON(input: input, error: message, exit: status)) : "\(input)  error: \(message)", status: status)
}

/// A single input's failure: with `--json`, its error line on standard output (as a batch would print it), then
/// the `error:` line on standard error and the exit, as `failure` gives them.
func inputFailure(_ error: any Error, input: String, json: Bool) -> ExitCode {
    if json, error is DataError { print(errorOutcome(error, input: input, json: true).line) }
    return failure(error)
}
