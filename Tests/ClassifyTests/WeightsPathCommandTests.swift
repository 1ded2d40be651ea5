import Foundation
import Models
import Tensor
import Testing
import WeightsFormat

@testable import classify

/// `--weights` naming something that is not a regular file, or a file the engine refuses to run: one permanent
/// warning, no retries, and the fallback answers (or exit 70 without it).
@Suite("classify: weights paths and refused files")
struct WeightsPathCommandTests {
    let star = packageRoot.appendingPathComponent("Datasets/examples/star.csv").path

    /// `classify ARGUMENTS`, run in `folder` with `$CLASSIFY_WEIGHTS` naming the folder `models`.
    static func runner(weights models: URL, in folder: URL) -> ([String]) throws -> CommandRun {
        var environment = ProcessInfo.processInfo.environment
        environment["CLASSIFY_WEIGHTS"] = models.path
        return { arguments in try CommandRun.run(CommandRun.builtClassify, arguments, directory: folder, environment: environment) }
    }

    @Test func aFIFOIsOneWarningWithoutRetries() throws {
        // Each kind of path is checked in ModelsTests (WeightsLimitsTests); here, end to end, that the chain does
        // not retry it (it did, 10 times, with "You don't have permission") and the open does not block.
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = folder.appendingPathComponent("fifo.weights").path
        #expect(mkfifo(fifo, 0o644) == 0)
        // A clean square, which the geometric rule knows whatever the generated examples look like.
        let square = folder.appendingPathComponent("square.csv")
        try "x,y\n0,0\n100,0\n100,100\n0,100\n0,0\n".write(to: square, atomically: true, encoding: .utf8)
        let run = try CommandRun.classify(["shape", square.path, "--weights", fifo, "--retries", "10", "--fallback"])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.hasPrefix("square  (confidence "), "\(run.standardOutput)")
        #expect(run.standardOutput.contains(", model geometric)"), "\(run.standardOutput)")
        #expect(run.standardError == "warning: fifo: \(fifo): is a FIFO (named pipe), not a weights file (a regular file); trying geometric\n")
    }

    @Test func weightsThatCouldOverflowFallBackAndWithoutFallbackExit70() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // The shipped f32 shape model with every weight of the first two convolutions at ±1e30 (valid checksum).
        var file = try ModelFile(contentsOf: packageRoot.appendingPathComponent("Weights/shape-classifier.f32.weights"))
        for name in ["0.weight", "3.weight"] {
            let weight = try #require(file.tensors[name])
            let extreme = weight.dequantized().scalars.map { $0 < 0 ? Float(-1e30) : Float(1e30) }
            file.tensors[name] = QuantizedTensor(quantizing: Tensor(shape: weight.shape, scalars: extreme), as: .f32)
        }
        let bytes = file.encoded()
        let path = folder.appendingPathComponent("extreme.weights").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let refusal = "warning: extreme: \(path): layer 3 (Conv2D 16→32 3x3 stride 1x1 same) can give values up to"
        let fallback = try CommandRun.classify(["shape", star, "--weights", path, "--json", "--fallback"])
        #expect(fallback.status == 0)
        #expect(fallback.standardError.hasPrefix(refusal), "\(fallback.standardError)")
        #expect(!fallback.standardOutput.contains("nan"))
        #expect(fallback.standardOutput.contains("\"model\":\"geometric\""))
        let alone = try CommandRun.classify(["shape", star, "--weights", path, "--no-fallback"])
        #expect(alone.status == 70)
        #expect(alone.standardOutput.isEmpty)
        #expect(
            alone.standardError.contains(
                "over 8.51e+37, the most any layer may reach (a quarter of the float range ±3.4e38, kept for rounding and softmax)"))
    }

    /// `$CLASSIFY_WEIGHTS` naming a folder of one's own models (`train … --out my-models/doodles`): without the
    /// default file names, the one model of the task in the folder serves it; two of the task are an error naming
    /// both (exit 70); the default names, when there, still win (issue 33, item 5).
    @Test func aFolderOfOwnModelsServesItsOneModelOfTheTask() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let models = folder.appendingPathComponent("my-models")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        func place(_ shipped: String, as name: String) throws {
            try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("Weights/\(shipped)"), to: models.appendingPathComponent(name))
        }
        try place("shape-classifier.int8.weights", as: "doodles.int8.weights")
        try place("motion-state.int8.weights", as: "steps.int8.weights")
        let run = Self.runner(weights: models, in: folder)
        let shape = try run(["shape", star])
        #expect(shape.status == 0, "\(shape.standardError)")
        #expect(
            shape.standardOutput.hasPrefix("star  (confidence ")
                && shape.standardOutput.contains("model doodles.int8, \(models.path)/doodles.int8.weights)"))
        let walking = packageRoot.appendingPathComponent("Datasets/examples/walking.csv").path
        let motion = try run(["motion", walking])
        #expect(motion.status == 0, "\(motion.standardError)")
        #expect(motion.standardOutput.contains("model steps.int8, \(models.path)/steps.int8.weights)"), "\(motion.standardOutput)")

        try place("shape-classifier.f32.weights", as: "letters.f32.weights")
        let two = try run(["shape", star, "--json"])
        #expect(two.status == 70)
        #expect(
            two.standardError
                == "error: \(models.path): holds no shape-classifier.*.weights and 2 shape models (doodles, letters); $CLASSIFY_WEIGHTS serves "
                + "one: name a file with --weights, or keep one model of the task in the folder\n", "\(two.standardError)")
        #expect(two.standardOutput.contains(#""exit":70"#))
        #expect(try run(["motion", walking]).status == 0, "the motion model is still the only one of its task")

        try place("shape-classifier.int8.weights", as: "shape-classifier.int8.weights")
        let named = try run(["shape", star])
        #expect(named.status == 0 && named.standardOutput.contains("model shape-classifier.int8, \(models.path)/shape-classifier.int8.weights)"))
    }

    /// Issue 46, L7: the folder's one model of the task is any `*.weights` file, whatever its name (`foo.weights`
    /// served no shape, as only `PREFIX.VARIANT.weights` were looked at); a folder without one says what it holds;
    /// a folder of more than `WeightsLocator.maximumFolderCandidates` weights files is refused without reading them
    /// (10,001 motion models took 4 s a run, every file read whole).
    @Test func aFolderModelIsAnyWeightsFileAndAFolderWithoutOneSaysWhatItHolds() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let models = folder.appendingPathComponent("models")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        let shipped = packageRoot.appendingPathComponent("Weights")
        try FileManager.default.copyItem(
            at: shipped.appendingPathComponent("shape-classifier.int8.weights"), to: models.appendingPathComponent("foo.weights"))
        let run = Self.runner(weights: models, in: folder)
        let shape = try run(["shape", star])
        #expect(shape.status == 0, "\(shape.standardError)")
        #expect(shape.standardOutput.contains("\(models.path)/foo.weights)"), "\(shape.standardOutput)")

        try FileManager.default.removeItem(at: models.appendingPathComponent("foo.weights"))
        let motion = shipped.appendingPathComponent("motion-state.f32.weights")
        for name in ["m0.f32.weights", "m1.f32.weights", "steps.weights"] {
            try FileManager.default.copyItem(at: motion, to: models.appendingPathComponent(name))
        }
        try Data("not a model".utf8).write(to: models.appendingPathComponent("junk.weights"))
        let none = try run(["shape", star])
        #expect(none.status == 70, "\(none.standardError)")
        #expect(
            none.standardError
                == "error: \(models.path): holds 4 weights files (3 motion models, 1 unreadable), none a shape model, and no "
                + "shape-classifier.*.weights: put a shape model there (any name ending .weights), or name one with --weights\n",
            "\(none.standardError)")
        let fallback = try run(["shape", star, "--fallback"])
        #expect(fallback.status == 0, "--fallback goes on to the shipped model: \(fallback.standardError)")

        let limit = WeightsLocator.maximumFolderCandidates
        for index in 2..<(limit - 1) {
            #expect(link(models.appendingPathComponent("m0.f32.weights").path, models.appendingPathComponent("m\(index).f32.weights").path) == 0)
        }
        let many = try run(["shape", star])
        #expect(many.status == 70, "\(many.standardError)")
        #expect(
            many.standardError.hasPrefix(
                "error: \(models.path): holds \(limit + 1) weights files and no shape-classifier.*.weights; $CLASSIFY_WEIGHTS serves its "
                    + "one shape model from a folder of at most \(limit) weights files"), "\(many.standardError)")
        try FileManager.default.removeItem(at: models.appendingPathComponent("m2.f32.weights"))
        let atTheLimit = try run(["shape", star])
        #expect(atTheLimit.standardError.contains("holds \(limit) weights files (\(limit - 1) motion models, 1 unreadable), none a shape model"))
    }
}
