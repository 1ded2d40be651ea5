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

/// Devices as input (issue 46, M4): every command that reads an input file refuses a character device by its path
/// before reading it ("is a character device, not a CSV file", exit 74), as it refuses a folder; before,
/// `/dev/zero` ran forever or read memory full. Standard input by its path (`/dev/stdin`) is still read.
@Suite("classify: devices as input")
struct DeviceInputTests {
    static let model = packageRoot.appendingPathComponent("Weights/motion-state.f32.weights").path

    @Test(arguments: [
        ["shape", "/dev/zero"], ["motion", "/dev/zero"], ["shape", "--dataset", "/dev/zero"], ["motion", "--dataset", "/dev/zero"],
        ["evaluate", "shape", "--data", "/dev/zero"], ["evaluate", "motion", "--data", "/dev/zero"],
        ["run", model, "--input", "/dev/zero"],
    ])
    func aCharacterDeviceIsRefusedBeforeItIsRead(arguments: [String]) throws {
        let run = try CommandRun.classify(arguments)
        #expect(run.status == 74, "\(arguments): \(run.standardError)")
        #expect(run.standardError.hasSuffix("error: /dev/zero: is a character device, not a CSV file\n"), "\(arguments): \(run.standardError)")
    }

    @Test func aTrainingSetThatIsADeviceIsRefused() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try CommandRun.classify([
            "train", "shape", "--data", "/dev/zero", "--epochs", "1", "--out", folder.appendingPathComponent("m").path,
        ])
        #expect(run.status == 74, "\(run.standardError)")
        #expect(run.standardError.contains("/dev/zero: is a character device, not a CSV file"), "\(run.standardError)")
    }

    @Test func standardInputByItsPathIsStillRead() throws {
        let run = try CommandRun.run(CommandRun.builtClassify, ["shape", "/dev/stdin"], input: "x,y\n0,0\n100,0\n100,100\n0,100\n0,0\n")
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.hasPrefix("square  (confidence "), "\(run.standardOutput)")
    }

    @Test func nulBytesOnStandardInputAreRefusedWithTheirLineAndColumn() throws {
        let run = try CommandRun.run(CommandRun.builtClassify, ["shape", "-"], input: "x,y\n0,0\n1,\u{0}\u{0}2\n")
        #expect(run.status == 65, "\(run.standardError)")
        #expect(run.standardError == "error: -:3: column 2 (y): contains a NUL byte; this is binary data, not a CSV file\n")
    }
}
