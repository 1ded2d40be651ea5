import Foundation
import Testing

/// Runs the built `classify` binary (a sibling of this test bundle in the build folder).
struct CommandRun {
    let status: Int32
    let standardOutput: String
    let standardError: String

    /// The built classify binary (a sibling of this test bundle in the build folder).
    static let builtClassify = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("classify")

    /// Writing to a command that has exited is an error to ignore, not a signal that ends the tests.
    static let ignoreBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()

    static func classify(_ arguments: [String]) throws -> CommandRun {
        try run(builtClassify, arguments)
    }

    /// Runs `executable` in `directory` (default: this process's), with `environment` (default: this process's)
    /// and `input` on standard input; `standardOutputFile` sends standard output to that file (e.g. /dev/full)
    /// instead of capturing it.
    static func run(
        _ executable: URL, _ arguments: [String], directory: URL? = nil, environment: [String: String]? = nil,
        input: String? = nil, standardOutputFile: String? = nil
    ) throws -> CommandRun {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        if let environment { process.environment = environment }
        let output = Pipe(), error = Pipe(), standardInput = Pipe()
        if let standardOutputFile, let file = FileHandle(forWritingAtPath: standardOutputFile) {
            process.standardOutput = file
            try output.fileHandleForWriting.close()
        } else {
            process.standardOutput = output
        }
        process.standardError = error
        process.standardInput = standardInput
        _ = ignoreBrokenPipes
        try process.run()
        // Nothing below throws today; the defer keeps it so (a command is always waited for).
        defer { process.stopAndWait() }
        // A command may stop reading before the input ends (an error on line 3 of 10,000): the rest is not written.
        if let input { try? standardInput.fileHandleForWriting.write(contentsOf: Data(input.utf8)) }
        try? standardInput.fileHandleForWriting.close()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CommandRun(
            status: process.terminationStatus,
            standardOutput: String(decoding: outputData, as: UTF8.self),
            standardError: String(decoding: errorData, as: UTF8.self))
    }
}

extension Process {
    /// Ends a command a test started and waits for it, so that no test leaves a process behind: SIGTERM, up to
    /// 5 seconds to exit, then SIGKILL (which cannot be caught or ignored), then wait for it to be reaped. Call it
    /// from a `defer` placed right after `run()`, so that it also runs when an expectation fails, a `#require`
    /// stops the test or an error is thrown. Nothing happens for a command that has already exited.
    func stopAndWait() {
        guard isRunning else { return waitUntilExit() }
        terminate()
        let deadline = Date().addingTimeInterval(5)
        while isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if isRunning { kill(processIdentifier, SIGKILL) }
        waitUntilExit()
    }
}

@Suite("classify binary")
struct CommandLineTests {
    /// A kernel level asked for and not used is said (once, as a note), not silently dropped; one that is used
    /// gives the same answer without a word.
    @Test func anIgnoredKernelLevelIsSaid() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["ODML_KERNEL_LEVEL"] = "avx9"
        let example = ["shape", packageRoot.appendingPathComponent("Datasets/examples/circle.csv").path]
        let ignored = try CommandRun.run(CommandRun.builtClassify, example, environment: environment)
        #expect(ignored.status == 0)
        let notes = ignored.standardError.split(separator: "\n").filter { $0.contains("ODML_KERNEL_LEVEL") }
        #expect(notes.count == 1 && notes[0].hasPrefix("note: ") && notes[0].contains("avx9 names no level"), "\(ignored.standardError)")
        environment["ODML_KERNEL_LEVEL"] = "portable"
        let used = try CommandRun.run(CommandRun.builtClassify, example, environment: environment)
        #expect(used.status == 0 && !used.standardError.contains("ODML_KERNEL_LEVEL"), "\(used.standardError)")
        #expect(used.standardOutput.split(separator: " ").first == "circle" && ignored.standardOutput.split(separator: " ").first == "circle")
        environment["ODML_KERNEL_LEVEL"] = "avx9"
        let quiet = try CommandRun.run(CommandRun.builtClassify, example + ["--quiet"], environment: environment)
        #expect(!quiet.standardError.contains("ODML_KERNEL_LEVEL"), "\(quiet.standardError)")
    }

    @Test func versionPrintsAndSucceeds() throws {
        let run = try CommandRun.classify(["--version"])
        #expect(run.status == 0)
        #expect(run.standardOutput == "0.1.0\n")
        #expect(run.standardError == "")
    }

    @Test func helpSaysWhatTheBuildContains() throws {
        let run = try CommandRun.classify(["--help"])
        #expect(run.status == 0)
        #expect(run.standardOutput.hasPrefix("OVERVIEW: On-device drawing and activity recognition."))
        #expect(run.standardOutput.contains("shape labels a drawing (circle, triangle, square, star, or unknown); motion"))
        #expect(run.standardOutput.contains("(walking, running or still)"))
        #expect(run.standardOutput.contains("Exit codes: 0 success, 64 usage, 65 bad input data"))
        for subcommand in ["shape", "motion", "train", "evaluate", "generate", "inspect"] {
            #expect(run.standardOutput.contains("\n  \(subcommand) "), "lists \(subcommand)")
        }
    }

    @Test(arguments: ["shape", "motion", "train", "evaluate", "generate", "inspect"])
    func everySubcommandsHelpHasASummaryDefaultsAndAnExample(subcommand: String) throws {
        let run = try CommandRun.classify([subcommand, "--help"])
        #expect(run.status == 0)
        #expect(run.standardOutput.hasPrefix("OVERVIEW: "), "\(run.standardOutput.prefix(80))")
        #expect(run.standardOutput.contains("Example"), "an example")
        // Options whose value has a default show it.
        let defaults =
            [
                "shape": ["--retries"], "motion": ["--retries", "--rate", "--smooth"], "train": ["--epochs", "--seed", "--batch-size"],
                "evaluate": [], "generate": ["--seed"], "inspect": [],
            ][subcommand] ?? []
        for option in defaults {
            let section = run.standardOutput.components(separatedBy: "  \(option) <").dropFirst().first ?? ""
            let description = section.components(separatedBy: "\n  --").first ?? ""
            #expect(description.contains("(default: "), "\(subcommand) \(option): \(description)")
        }
    }

    @Test func unknownOptionIsAUsageErrorWithExit64() throws {
        let run = try CommandRun.classify(["--no-such-option"])
        #expect(run.status == 64)
        #expect(run.standardOutput == "")
        #expect(run.standardError.hasPrefix("Error: Unknown option '--no-such-option'"))
    }
}
