import Foundation
import Testing

/// What `classify shape` and `classify motion` do with the inputs named on the command line before any work.
@Suite("classify input arguments")
struct InputArgumentTests {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Datasets/examples")

    static func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("classify-inputs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test(arguments: ["shape", "motion"])
    func aFolderWithoutCSVFilesIsAMissingInputNotAnEmptySuccess(command: String) throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("not a csv".utf8).write(to: folder.appendingPathComponent("notes.txt"))
        let run = try CommandRun.classify([command, folder.path])
        #expect(run.status == 66, "\(run.standardError)")
        #expect(run.standardError.contains("error: \(folder.path): the folder holds no .csv files (1 other entry)"), "\(run.standardError)")
        #expect(run.standardOutput == "")
    }

    @Test(arguments: [("shape", "star.csv", "Datasets/shapes/test.csv"), ("motion", "walking.csv", "Datasets/motion/test.csv")])
    func aDatasetAndFilesTogetherIsAUsageError(command: String, example: String, dataset: String) throws {
        let run = try CommandRun.classify([command, "--dataset", dataset, Self.examples.appendingPathComponent(example).path])
        #expect(run.status == 64, "\(run.standardError)")
        #expect(run.standardError.contains("or --dataset FILE, not both"), "\(run.standardError)")
    }

    /// A missing input is the user's error whatever state the weights are in: 66, as `shape` always did, not 70
    /// because the one model allowed failed first.
    @Test(arguments: ["shape", "motion"])
    func aMissingInputIs66EvenWhenNoModelCanLoad(command: String) throws {
        let run = try CommandRun.classify([command, "/no/such/input.csv", "--weights", "/no/such/model.weights", "--no-fallback"])
        #expect(run.status == 66, "\(run.standardError)")
        #expect(run.standardError.contains("error: /no/such/input.csv: no such file"), "\(run.standardError)")
        #expect(!run.standardError.contains("every model failed"), "\(run.standardError)")
    }
}
