import Foundation
import Testing

/// Output that cannot be written (a full disk: /dev/full answers every write with ENOSPC) is exit 74 with one
/// `error:` line, never a crash and never a silent 0.
@Suite("classify when standard output cannot be written")
struct OutputFailureTests {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Datasets/examples")

    static func runIntoFullDisk(_ arguments: [String]) throws -> CommandRun {
        try CommandRun.run(CommandRun.builtClassify, arguments, standardOutputFile: "/dev/full")
    }

    @Test(arguments: [
        ["shape", "star.csv"],  // one answer
        ["shape", "star.csv", "circle.csv"],  // a batch
        ["shape", "star.csv", "--json"],
        ["motion", "walking.csv"],
        ["inspect", "../../Weights/shape-classifier.int8.weights"],
        ["--help"],
    ])
    func lostOutputIsExit74WithOneErrorLine(arguments: [String]) throws {
        try #require(FileManager.default.isWritableFile(atPath: "/dev/full"), "this machine has no /dev/full")
        let resolved = arguments.map {
            $0.hasSuffix(".csv") || $0.hasSuffix(".weights") ? Self.examples.appendingPathComponent($0).standardizedFileURL.path : $0
        }
        let run = try Self.runIntoFullDisk(resolved)
        #expect(run.status == 74, "\(arguments): \(run.standardError)")
        let errors = run.standardError.split(separator: "\n").filter { $0.hasPrefix("error:") }
        #expect(
            errors == ["error: standard output could not be written: No space left on device; the output is incomplete"],
            "\(run.standardError)")
        #expect(!run.standardError.contains("Fatal error"))
    }

    @Test func aFailedRunKeepsItsOwnExitCodeWhenItsOutputIsLostToo() throws {
        try #require(FileManager.default.isWritableFile(atPath: "/dev/full"), "this machine has no /dev/full")
        let run = try Self.runIntoFullDisk(["shape", "/no/such/drawing.csv"])
        #expect(run.status == 66, "\(run.standardError)")
    }
}
