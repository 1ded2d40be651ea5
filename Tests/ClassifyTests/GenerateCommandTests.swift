import Foundation
import Testing

@Suite("classify generate")
struct GenerateCommandTests {
    /// A large dataset is written into a temporary file for a long time; stopped by a signal meanwhile, the command
    /// removes it and ends by that signal, leaving nothing beside the target.
    @Test func aStoppedGenerationLeavesNoTemporaryFile() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let process = Process()
        process.executableURL = CommandRun.builtClassify
        process.arguments = ["generate", "shape", "--out", folder.path, "--count", "1000000"]
        process.standardOutput = Pipe()
        process.standardError = Pipe()
        try process.run()
        defer { process.stopAndWait() }
        // Wait for the training set's temporary file (generous: a loaded machine), then stop the command.
        let shapes = folder.appendingPathComponent("shapes")
        func partials() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: shapes.path)) ?? []).filter { $0.contains(".partial-") }
        }
        let deadline = Date().addingTimeInterval(120)
        while partials().isEmpty && process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        try #require(!partials().isEmpty, "no temporary file appeared")
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGTERM)
        #expect(partials().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: shapes.appendingPathComponent("train.csv").path))
    }
}
