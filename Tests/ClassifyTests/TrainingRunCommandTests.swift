import Foundation
import Testing

@Suite("classify train: input checks and one set of files; evaluate goes on past a bad item")
struct TrainingRunCommandTests {
    @Test(arguments: ["--epochs", "--batch-size", "--patience"])
    func anOverflowingCountIsAUsageErrorWithTheRange(option: String) throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try CommandRun.classify([
            "train", "shape", "--data", "x.csv", option, "9223372036854775807",
            "--out", folder.appendingPathComponent("m").path,
        ])
        #expect(run.status == 64)
        #expect(run.standardError.contains("\(option) must be between 1 and "), "\(run.standardError)")
    }

    @Test func tooFewDrawingsPerClassIsRefusedBeforeTrainingAndWritesNothing() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let data = folder.appendingPathComponent("two.csv")
        let rows = TestDatasets.shapes(count: 8, seed: 3).split(separator: "\n")
        let kept = Set(rows.dropFirst().compactMap { $0.split(separator: ",").first }.prefix(1))
        let firstDrawing = ([rows[0]] + rows.dropFirst().filter { kept.contains($0.split(separator: ",")[0]) }).joined(separator: "\n") + "\n"
        try firstDrawing.write(to: data, atomically: true, encoding: .utf8)
        let run = try CommandRun.classify(["train", "shape", "--data", data.path, "--epochs", "1", "--out", folder.appendingPathComponent("m").path])
        #expect(run.status == 65)
        #expect(run.standardError.hasPrefix("error: \(data.path): training needs at least 2 classes"), "\(run.standardError)")
        #expect(!run.standardError.contains("epoch 1/1"), "refused before training")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["two.csv"])
    }

    @Test func aDirectoryAtTheInt8TargetFailsBeforeTrainingAndLeavesTheOldSet() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let data = folder.appendingPathComponent("shapes.csv")
        try TestDatasets.shapes(count: 24, seed: 1).write(to: data, atomically: true, encoding: .utf8)
        let prefix = folder.appendingPathComponent("m").path
        try Data("old f32".utf8).write(to: URL(fileURLWithPath: prefix + ".f32.weights"))
        try FileManager.default.createDirectory(atPath: prefix + ".int8.weights", withIntermediateDirectories: true)
        let run = try CommandRun.classify(["train", "shape", "--data", data.path, "--epochs", "1", "--quantize", "int8", "--out", prefix])
        #expect(run.status == 74)
        #expect(run.standardError == "error: \(prefix).int8.weights: could not be written: it is a directory; nothing was written\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: prefix + ".f32.weights")) == Data("old f32".utf8))
    }

    @Test func everyFileOfARunRecordsTheRunAndTheChainRefusesAMixedSet() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let data = folder.appendingPathComponent("shapes.csv")
        try TestDatasets.shapes(count: 24, seed: 1).write(to: data, atomically: true, encoding: .utf8)
        let weights = folder.appendingPathComponent("Weights")
        try FileManager.default.createDirectory(at: weights, withIntermediateDirectories: true)
        func train(seed: String) throws -> String {
            let run = try CommandRun.classify([
                "train", "shape", "--data", data.path, "--epochs", "1", "--seed", seed, "--quantize", "int8",
                "--out", weights.appendingPathComponent("shape-classifier").path,
            ])
            #expect(run.status == 0, "\(run.standardError)")
            return try #require(run.standardOutput.split(separator: "\n").first { $0.hasPrefix("weights (run crc32:") }).dropFirst(13).dropLast()
                .description
        }
        let first = try train(seed: "1")
        let curves = try String(contentsOf: weights.appendingPathComponent("shape-classifier.curves.svg"), encoding: .utf8)
        #expect(curves.contains("data-training-run=\"\(first)\""))
        let oldInt8 = try Data(contentsOf: weights.appendingPathComponent("shape-classifier.int8.weights"))
        let second = try train(seed: "2")
        #expect(first != second)
        try oldInt8.write(to: weights.appendingPathComponent("shape-classifier.int8.weights"))  // as a run killed between renames leaves it
        let drawing = "x,y\n0,0\n10,0\n10,10\n0,10\n0,0\n"
        let run = try CommandRun.run(
            CommandRun.builtClassify, ["shape", "-", "--no-fallback"], directory: folder,
            environment: ["PATH": "/usr/bin:/bin"], input: drawing)
        #expect(run.status == 70)
        #expect(
            run.standardError.contains(
                "\(weights.path)/shape-classifier.int8.weights (run \(first)) and "
                    + "\(weights.path)/shape-classifier.f32.weights (run \(second)) are from different training runs"),
            "\(run.standardError)")
        #expect(run.standardError.contains("run `classify train … --out \(weights.path)/shape-classifier` again"))
    }

    @Test func classifyWeightsNamingAMissingFolderIsExit66() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = folder.appendingPathComponent("none").path
        let run = try CommandRun.run(
            CommandRun.builtClassify, ["shape", "-"], directory: folder,
            environment: ["CLASSIFY_WEIGHTS": missing], input: "x,y\n0,0\n10,0\n10,10\n")
        #expect(run.status == 66)
        // One error line, before any model is tried (not a failed attempt of every link as well).
        #expect(
            run.standardError == "error: \(missing): does not exist; $CLASSIFY_WEIGHTS names the folder weights files are "
                + "looked for in (use --weights for one file), so set it to an existing folder or unset it\n",
            "\(run.standardError)")
    }

    @Test func evaluateNamesABadDrawingAndGoesOn() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let data = folder.appendingPathComponent("test.csv")
        let shapes = TestDatasets.shapes(count: 8, seed: 2)
        let header = try #require(shapes.split(separator: "\n").first)
        let dot = header.split(separator: ",").map { column -> String in
            switch column {
            case "drawing": "dot";
            case "label": "circle";
            default: "5"
            }
        }.joined(separator: ",")
        try (header + "\n" + dot + "\n" + dot + "\n" + shapes.split(separator: "\n").dropFirst().joined(separator: "\n") + "\n")
            .write(to: data, atomically: true, encoding: .utf8)
        let run = try CommandRun.classify(["evaluate", "shape", "--data", data.path, "--rule"])
        #expect(run.status == 65)
        #expect(
            run.standardError.hasPrefix("warning: \(data.path):2: drawing 'dot' (lines 2–3): all 2 points are at the same place"),
            "\(run.standardError)")
        #expect(run.standardOutput.hasPrefix("geometric on \(data.path): 8 drawings\n"), "the other drawings are counted")
        #expect(run.standardOutput.contains("failed 1 drawings, not in the figures above"))
    }
}
