import DataFiles
import Foundation
import Models
import Tensor
import Testing
import WeightsFormat

@testable import Train

/// Examples of `labels` (class indices into `classNames`), one group per row unless `groups` says otherwise.
private func examples(_ labels: [Int], groups: [Int]? = nil, classNames: [String], inputShape: [Int] = [2]) -> Examples {
    var generator = SeededGenerator(seed: 5)
    return Examples(
        inputs: Tensor(randomNormal: [labels.count] + inputShape, generator: &generator), labels: labels,
        groups: groups, classNames: classNames)
}

@Suite("Training input checks")
struct TrainingSplitTests {
    func split(_ all: Examples, validation: Examples? = nil) throws(DataError) -> (training: Examples, validation: Examples) {
        try trainingSplit(all, validation: validation, seed: 1, unit: "drawings", file: "data.csv")
    }

    @Test func oneClassOrOnlyOtherIsRefused() {
        #expect(
            throws: DataError(
                file: "data.csv",
                message: "training needs at least 2 classes, and one that is not 'other'; "
                    + "the data has only 'circle' (6 drawings)")
        ) {
            try split(examples([0, 0, 0, 0, 0, 0], classNames: ["circle"]))
        }
        #expect(throws: DataError.self) { try split(examples([0, 0, 0, 0], classNames: ["other"])) }
    }

    /// Concatenated parts never share a group, whatever numbers each part used (negative, overlapping, sparse),
    /// and rows of one group in a part stay one group.
    @Test func concatenatedPartsNeverShareAGroup() {
        let parts = [
            examples([0, 1, 0], groups: [0, 1, 0], classNames: ["a", "b"]),
            examples([1, 0], groups: [-1, 0], classNames: ["a", "b"]),
            examples([0, 1, 1], groups: [-10, -5, -10], classNames: ["a", "b"]),
            examples([1], groups: [-6], classNames: ["a", "b"]),
        ]
        let all = Examples(concatenating: parts)
        #expect(all.labels == parts.flatMap(\.labels))
        #expect(all.groups == [0, 1, 0, 2, 3, 4, 5, 4, 6])
    }

    @Test func withoutValidationEveryClassNeedsTwoGroups() {
        #expect(
            throws: DataError(
                file: "data.csv",
                message: "every class needs at least 2 drawings so that one can be held out for "
                    + "validation; 'circle' has 1, 'square' has 1; add drawings of them, or give --validation")
        ) {
            try split(examples([0, 1], classNames: ["circle", "square"]))
        }
        #expect(throws: DataError.self, "copies of one drawing are one group") {
            try split(examples([0, 0, 0, 1, 1], groups: [0, 0, 0, 1, 2], classNames: ["circle", "square"]))
        }
    }

    @Test func aSplitThatLeavesAClassUntrainedIsRefused() throws {
        // Five classes of two drawings: the seeded split holds out 2 of 10 drawings; find a seed that takes both of one class.
        let all = examples([0, 0, 1, 1, 2, 2, 3, 3, 4, 4], classNames: ["a", "b", "c", "d", "e"])
        func trainsEveryClass(_ seed: UInt64) -> Bool {
            Set(all.splitByGroup(validationFraction: 0.2, seed: seed).training.labels).count == 5
        }
        let bad = try #require((UInt64(1)...200).first { !trainsEveryClass($0) })
        let good = try #require((UInt64(1)...200).first(where: trainsEveryClass))
        #expect(
            throws: DataError(
                file: "data.csv",
                message: "the validation split (seed \(bad)) took every one of the drawings of "
                    + "'\(all.classNames[Set(0..<5).subtracting(all.splitByGroup(validationFraction: 0.2, seed: bad).training.labels).min() ?? 0])', "
                    + "so it would never be trained; add drawings, choose another --seed, or give --validation")
        ) {
            try trainingSplit(all, validation: nil, seed: bad, unit: "drawings", file: "data.csv")
        }
        let (training, validation) = try trainingSplit(all, validation: nil, seed: good, unit: "drawings", file: "data.csv")
        #expect(Set(training.labels) == Set(0..<5) && validation.count == 2)
    }

    @Test func aGivenValidationSetMustNotBeEmptyAndNeedsNoSplit() throws {
        let all = examples([0, 1], classNames: ["circle", "square"])
        let given = try split(all, validation: examples([0, 1, 1], classNames: ["circle", "square"]))
        #expect(given.training.count == 2 && given.validation.count == 3, "one drawing per class is enough with --validation")
        #expect(
            throws: DataError(
                file: "--validation",
                message: "the validation data is empty; training needs validation examples "
                    + "to choose its best epoch")
        ) {
            try split(all, validation: examples([], classNames: ["circle", "square"]))
        }
    }
}

@Suite("A training run's files: one set")
struct TrainingRunFilesTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("run-files-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func plan(seed: UInt64 = 1) throws -> ExportPlan {
        let rasterizer = ShapeRasterizer(size: 8, canonical: false, maxStretch: 1)
        let inputShape = RecognitionTask.shape.inputShape(rasterizer: rasterizer)
        let network = Network(converting: RecognitionTask.shape.layers(classes: 2, seed: seed, inputShape: inputShape))
        return try prepareExport(
            network, name: "m", classNames: ["circle", "square"],
            input: InputSpec(shape: inputShape, description: RecognitionTask.shape.inputDescription), preprocessing: rasterizer.parameters,
            training: TrainingMetadata(seed: seed), validation: examples([0, 1, 0, 1], classNames: ["circle", "square"], inputShape: inputShape),
            formats: [.int8], prefix: folder.appendingPathComponent("m"))
    }

    @Test func everyFileRecordsTheRunWhichIsTheChecksumOfTheF32FileWithoutIt() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = try plan(), again = try plan(), other = try plan(seed: 2)
        #expect(first.run == again.run && first.contents == again.contents, "deterministic: the same training, the same bytes")
        #expect(first.run != other.run)
        let files = try zip(first.variants, first.contents).map { try ModelFile(bytes: $1, path: $0.url.path) }
        #expect(files.map(\.training?.run) == [first.run, first.run])
        var anonymous = files[0]
        anonymous.training?.run = nil
        #expect(first.run == String(format: "crc32:%08x", try #require(ModelFile.storedChecksum(of: anonymous.encoded()))))
    }

    @Test func aDirectoryAtOneTargetFailsBeforeAnyFileChanges() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let f32 = folder.appendingPathComponent("m.f32.weights")
        try Data("old f32".utf8).write(to: f32)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("m.int8.weights"), withIntermediateDirectories: true)
        let plan = try plan()
        #expect(
            throws: AtomicFile.WriteError(
                path: folder.appendingPathComponent("m.int8.weights").path,
                reason: "it is a directory; nothing was written")
        ) {
            try plan.write(prefix: folder.appendingPathComponent("m"))
        }
        #expect(try Data(contentsOf: f32) == Data("old f32".utf8), "the f32 file is the old one")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["m.f32.weights", "m.int8.weights"],
            "no temporary file and no lock file left")
    }

    @Test func theSetIsWrittenWithItsExtraFilesUnderTheLock() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let plan = try plan()
        try Data("left by a killed run".utf8).write(to: folder.appendingPathComponent(".m.f32.weights.partial-0badf00d"))
        let lock = folder.appendingPathComponent(".m.lock").path
        var heldByUs = false
        try withOutputLock(prefix: folder.appendingPathComponent("m")) { () throws(AtomicFile.WriteError) in
            let other = open(lock, O_RDWR)
            defer { close(other) }
            heldByUs = other >= 0 && flock(other, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK
        }
        #expect(heldByUs, "a second taker of the lock would wait")
        try plan.write(adding: [(folder.appendingPathComponent("m.curves.svg"), Array("<svg/>".utf8))], prefix: folder.appendingPathComponent("m"))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["m.curves.svg", "m.f32.weights", "m.int8.weights"],
            "the files of the set, and no temporary file of a killed run")
        #expect(try [UInt8](Data(contentsOf: folder.appendingPathComponent("m.int8.weights"))) == plan.contents[1])
    }
}

@Suite("Training from several files")
struct TrainingFromSeveralFilesTests {
    /// The weights record each file's checksum as it was when read: a file removed before the weights are written
    /// keeps its checksum in the header, and the header names both files.
    @Test func checksumsAreTakenWhenTheFilesAreRead() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("several-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var generator = MotionGenerator(seed: 11)
        let (a, b) = (folder.appendingPathComponent("a.csv"), folder.appendingPathComponent("b.csv"))
        try MotionGenerator.csv(generator.sessions(people: 2, seconds: 8), prefix: "a").write(to: a, atomically: true, encoding: .utf8)
        try MotionGenerator.csv(generator.sessions(people: 2, seconds: 8), prefix: "a").write(to: b, atomically: true, encoding: .utf8)
        let sums = try [a, b].map { String(format: "crc32:%08x", try #require(CRC32.checksum(ofFile: $0.path))) }
        let run = TrainingRun(
            task: .motion, data: [a.path, b.path], validation: nil, epochs: 1, batchSize: 64, seed: 1, patience: nil,
            learningRate: 0.003, rasterizer: ShapeRasterizer(), windowing: MotionWindowing(), augment: 0, formats: [],
            out: folder.appendingPathComponent("m").path, reject: false)
        let data = try run.prepare()
        #expect(data.checksums == sums)
        try FileManager.default.removeItem(at: b)
        let (result, report) = run.train(data)
        _ = try run.export(result, report: report, data: data)
        let file = try ModelFile(contentsOf: folder.appendingPathComponent("m.f32.weights"))
        #expect(file.training?.dataset == "\(a.path) + \(b.path)")
        #expect(file.training?.datasetChecksum == "\(sums[0]) + \(sums[1])")
    }

    /// Window options that would make more examples than memory holds, or features that take hours, are refused
    /// before any feature is computed, in the options' terms (issue 23; before: `--window 4096 --hop 1 --lags
    /// 4095` on a 13 MB dataset printed nothing for 600 s at 1.7 GB).
    @Test func motionWindowOptionsTooLargeForTheDataAreRefusedFirst() {
        #expect(throws: Never.self) { try PreparedData.checkMotionWork(windows: 100_000, windowing: MotionWindowing(), files: ["d.csv"]) }
        #expect {
            try PreparedData.checkMotionWork(windows: 189_648, windowing: MotionWindowing(window: 2048, hop: 1, lags: 2047), files: ["d.csv"])
        } throws: { error in
            (error as? DataError)?.message.hasPrefix("--window 2048 --hop 1 --lags 2047 make 189648 windows of 4096 features: 3.1 GB") == true
        }
    }
}
