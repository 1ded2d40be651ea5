import DataFiles
import Foundation
import Tensor
import Testing
import WeightsFormat

@testable import Models
@testable import classify

@Suite("WeightsLocator: one folder serves a model, and its files must be one set")
struct WeightsLookupTests {
    /// This test's folder, removed when the test's suite instance goes.
    final class Folder: Sendable {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("weights-tests-\(UUID().uuidString)")
        deinit { try? FileManager.default.removeItem(at: url) }
    }
    let folder = Folder()
    let root: URL
    let current: URL
    let shipped: URL

    init() throws {
        root = folder.url
        current = root.appendingPathComponent("cwd")
        shipped = root.appendingPathComponent("shipped")
        for folder in [current.appendingPathComponent("Weights"), shipped] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
    }

    func locator(environment: [String: String] = [:]) -> WeightsLocator {
        WeightsLocator(explicitFile: nil, environment: environment, currentDirectory: current.path, shippedFolder: shipped.path)
    }

    /// A two-label model file recording `run`, written to `folder/name`.
    func writeModel(_ name: String, in folder: URL, run: String?, labels: [String] = ["a", "b"]) throws {
        let file = try ModelFile(
            name: "m", model: Sequential([Activation(.softmax)]), labels: labels,
            input: InputSpec(shape: [2], description: "two numbers"), preprocessing: [:],
            training: TrainingMetadata(seed: 1, run: run), format: .f32)
        try file.write(to: folder.appendingPathComponent(name))
    }

    @Test func aFolderWithOnlyF32IsNotFilledWithTheShippedInt8() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let local = current.appendingPathComponent("Weights")
        try writeModel("m.f32.weights", in: local, run: nil, labels: ["local", "b"])
        try writeModel("m.int8.weights", in: shipped, run: nil, labels: ["shipped", "b"])
        try writeModel("m.f32.weights", in: shipped, run: nil, labels: ["shipped", "b"])
        #expect(try locator().load("m.f32").labels == ["local", "b"])
        #expect(
            throws: WeightsNotFound(
                variant: "m.int8",
                places: [
                    "$CLASSIFY_WEIGHTS (not set)",
                    "\(local.path)/m.int8.weights — not there, and ./Weights holds m.f32.weights, so it serves every variant of m "
                        + "and later folders are not searched",
                ])
        ) {
            try locator().load("m.int8")
        }
        try FileManager.default.removeItem(at: local.appendingPathComponent("m.f32.weights"))
        #expect(try locator().load("m.int8").labels == ["shipped", "b"], "an empty ./Weights serves nothing")
    }

    @Test func classifyWeightsNamingAMissingFolderOrAFileIsAnError() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        try writeModel("m.int8.weights", in: shipped, run: nil)
        let missing = root.appendingPathComponent("nowhere").path
        #expect(
            throws: DataError(
                file: missing,
                message: "does not exist; $CLASSIFY_WEIGHTS names the folder weights files are "
                    + "looked for in (use --weights for one file), so set it to an existing folder or unset it", kind: .missingFile)
        ) {
            try locator(environment: ["CLASSIFY_WEIGHTS": missing]).load("m.int8")
        }
        let file = shipped.appendingPathComponent("m.int8.weights").path
        #expect(
            throws: DataError(
                file: file,
                message: "is not a folder; $CLASSIFY_WEIGHTS names the folder weights files are "
                    + "looked for in (use --weights for one file), so set it to an existing folder or unset it", kind: .missingFile)
        ) {
            try locator(environment: ["CLASSIFY_WEIGHTS": file]).load("m.int8")
        }
        #expect(try locator(environment: ["CLASSIFY_WEIGHTS": ""]).load("m.int8").labels == ["a", "b"], "empty means not set")
    }

    @Test func filesOfTwoRunsInOneFolderAreRefusedNamingBoth() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        try writeModel("m.f32.weights", in: shipped, run: "crc32:00000001")
        try writeModel("m.int8.weights", in: shipped, run: "crc32:00000001")
        #expect(try locator().load("m.int8").labels == ["a", "b"], "one run: one set")
        try writeModel("m.f32.weights", in: shipped, run: "crc32:00000002")
        let int8 = shipped.appendingPathComponent("m.int8.weights").path, f32 = shipped.appendingPathComponent("m.f32.weights").path
        let prefix = shipped.appendingPathComponent("m").path
        #expect(throws: MixedWeightsSet(file: int8, run: "crc32:00000001", other: f32, otherRun: "crc32:00000002", prefix: prefix)) {
            try locator().load("m.int8")
        }
        #expect(throws: MixedWeightsSet(file: f32, run: "crc32:00000002", other: int8, otherRun: "crc32:00000001", prefix: prefix)) {
            try locator().load("m.f32")
        }
        #expect(
            failureKind(of: MixedWeightsSet(file: int8, run: nil, other: f32, otherRun: nil, prefix: prefix)) == .permanent,
            "the chain moves on to the non-ML link")
        try writeModel("m.int8.weights", in: shipped, run: nil)
        #expect(throws: MixedWeightsSet.self, "a file without a run beside one with a run is from an older run") { try locator().load("m.int8") }
        try writeModel("m.f32.weights", in: shipped, run: nil)
        #expect(try locator().load("m.int8").labels == ["a", "b"], "files from before runs were recorded are one set")
    }

    /// A file whose header the one reader refuses has no run to compare: the set check leaves it to the file's own
    /// load, which reports why (how the run is read, escapes and all: `recordedTrainingIsReadAsLoadingReadsIt` in
    /// ModelsTests).
    @Test func aHeaderTheReaderRefusesIsLeftToItsOwnLoad() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        try writeModel("m.f32.weights", in: shipped, run: "crc32:00000007")
        try writeModel("m.int8.weights", in: shipped, run: "crc32:00000007")
        let int8 = shipped.appendingPathComponent("m.int8.weights")
        #expect(recordedRun(ofWeights: int8.path) == .some("crc32:00000007"))
        #expect(try locator().load("m.int8").labels == ["a", "b"])
        var bytes = [UInt8](try Data(contentsOf: int8))
        bytes[ModelFile.preambleBytes] = UInt8(ascii: "x")  // the header's opening brace
        try Data(bytes).write(to: int8)
        #expect(recordedRun(ofWeights: int8.path) == nil)
        #expect(throws: WeightsFileError.self, "the file's own load reports the header") { try locator().load("m.int8") }
        try writeModel("m.int8.weights", in: shipped, run: nil)
        #expect(recordedRun(ofWeights: int8.path) == .some(nil))
    }

    @Test func curvesOfAnotherRunMakeTheSetMixed() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        try writeModel("m.f32.weights", in: shipped, run: "crc32:0000000a")
        let curves = shipped.appendingPathComponent("m.curves.svg")
        try #"<svg xmlns="http://www.w3.org/2000/svg" data-training-run="crc32:0000000a"></svg>"#.write(
            to: curves, atomically: false, encoding: .utf8)
        #expect(try locator().load("m.f32").labels == ["a", "b"])
        try #"<svg xmlns="http://www.w3.org/2000/svg" data-training-run="crc32:0000000b"></svg>"#.write(
            to: curves, atomically: false, encoding: .utf8)
        #expect(
            throws: MixedWeightsSet(
                file: shipped.appendingPathComponent("m.f32.weights").path, run: "crc32:0000000a",
                other: curves.path, otherRun: "crc32:0000000b", prefix: shipped.appendingPathComponent("m").path)
        ) {
            try locator().load("m.f32")
        }
    }

    @Test func onlyNamesOfTheFormModelDotVariantDotWeightsAreVariants() {
        #expect(WeightsLocator.isVariant("shape-classifier.int8.weights", of: "shape-classifier"))
        #expect(!WeightsLocator.isVariant("shape-classifier.old.int8.weights", of: "shape-classifier"))
        #expect(!WeightsLocator.isVariant(".shape-classifier.int8.weights.partial-0a1b2c3d", of: "shape-classifier"))
        #expect(!WeightsLocator.isVariant("shape-classifier..weights", of: "shape-classifier"))
        #expect(!WeightsLocator.isVariant("shape-classifier.curves.svg", of: "shape-classifier"))
    }

    @Test func theLocatorLooksInOrderAndNamesEveryPlace() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("locator-\(UUID().uuidString)")
        let environment = root.appendingPathComponent("env"), current = root.appendingPathComponent("cwd"),
            shipped = root.appendingPathComponent("shipped")
        for folder in [environment, current.appendingPathComponent("Weights"), shipped] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        defer { try? FileManager.default.removeItem(at: root) }
        let locator = WeightsLocator(
            explicitFile: nil, environment: ["CLASSIFY_WEIGHTS": environment.path],
            currentDirectory: current.path, shippedFolder: shipped.path)
        #expect(
            throws: WeightsNotFound(
                variant: "m.int8",
                places: [
                    "$CLASSIFY_WEIGHTS (\(environment.path)/m.int8.weights)", "\(current.path)/Weights/m.int8.weights",
                    "\(shipped.path)/m.int8.weights",
                ])
        ) {
            try locator.load("m.int8")
        }
        let file = try ModelFile(
            name: "m", model: Sequential([Activation(.softmax)]), labels: ["a", "b"], input: InputSpec(shape: [2], description: "two numbers"))
        try file.write(to: shipped.appendingPathComponent("m.int8.weights"))
        #expect(try locator.load("m.int8").labels == ["a", "b"], "found at the shipped location")
        try Data("junk".utf8).write(to: environment.appendingPathComponent("m.int8.weights"))
        #expect(throws: WeightsFileError.self, "the first place that has the file wins, even when it is broken") { try locator.load("m.int8") }
        let unset = WeightsLocator(explicitFile: nil, environment: [:], currentDirectory: current.path, shippedFolder: nil)
        #expect(throws: WeightsNotFound(variant: "x", places: ["$CLASSIFY_WEIGHTS (not set)", "\(current.path)/Weights/x.weights"])) {
            try unset.load("x")
        }
    }
}
