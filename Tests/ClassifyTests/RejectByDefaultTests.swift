import Foundation
import Testing

/// A model trained on a user's own labels, with default options, answers `unknown` (or not sure) for what it never
/// saw: `train` adds built-in negatives as `other` when the data has none, says so, and `--no-reject` turns it off.
@Suite("classify train: a reject class by default")
struct RejectByDefaultTests {
    /// A smiley and a spiral, drawn as a person would (a face, two dots, a mouth; a spiral of three turns), in the
    /// CSV `classify shape --dataset` reads.
    static let probes: String = {
        var lines = ["drawing,label,stroke,x,y,t"]
        var t = 0
        func stroke(_ name: String, _ index: Int, _ points: [(Double, Double)]) {
            for (x, y) in points {
                lines.append("\(name),other,\(index),\(String(format: "%.2f", x)),\(String(format: "%.2f", y)),\(t)")
                t += 16
            }
        }
        func circle(_ k: Int) -> (Double, Double) {
            let angle = Double(k) / 40 * 2 * Double.pi
            return (100 + 80 * cos(angle), 100 + 80 * sin(angle))
        }
        func mouth(_ k: Int) -> (Double, Double) {
            let angle = Double(k) / 20 * Double.pi
            return (100 + 45 * cos(angle), 110 + 36 * sin(angle))
        }
        func spiral(_ k: Int) -> (Double, Double) {
            let radius = 5 + 3 * Double(k), angle = Double(k) * 0.35
            return (100 + radius * cos(angle), 100 + radius * sin(angle))
        }
        stroke("smiley", 0, (0...40).map(circle))
        stroke("smiley", 1, [(70, 75), (72, 77), (70, 79)])
        stroke("smiley", 2, [(130, 75), (132, 77), (130, 79)])
        stroke("smiley", 3, (1..<20).map(mouth))
        t = 0
        stroke("spiral", 0, (0..<60).map(spiral))
        return lines.joined(separator: "\n") + "\n"
    }()

    /// Three classes of the user's own names (the generator's circles, squares and stars renamed round, box and
    /// pointy), default options: the report names the reject class and its source, the files hold `other`, and a
    /// smiley and a spiral are `unknown` or uncertain. With `--no-reject` the same data trains three classes.
    @Test func aCustomShapeModelAnswersUnknownForASmileyAndASpiral() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let generated = try CommandRun.classify(["generate", "shape", "--out", folder.path, "--count", "300", "--seed", "4"])
        #expect(generated.status == 0, "\(generated.standardError)")
        let names = ["circle": "round", "square": "box", "star": "pointy"]
        let data = folder.appendingPathComponent("doodles.csv"), probes = folder.appendingPathComponent("probes.csv")
        try TestDatasets.relabelled(folder.appendingPathComponent("shapes/train.csv"), names).write(to: data, atomically: true, encoding: .utf8)
        try Self.probes.write(to: probes, atomically: true, encoding: .utf8)

        let prefix = folder.appendingPathComponent("doodles").path
        let run = try CommandRun.classify(["train", "shape", "--data", data.path, "--out", prefix])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains("4 classes (round, box, pointy, other)"), "\(run.standardOutput)")
        #expect(
            run.standardOutput.contains("\nreject class  'other' learned from ")
                && run.standardOutput.contains(
                    "generated drawings: objects, letters, scribbles, spirals, arrows and the like, and circles, triangles, squares and stars)")
                && run.standardOutput.contains("; --no-reject trains without it"),
            "the report says where the reject class came from: \(run.standardOutput)")
        let inspect = try CommandRun.classify(["inspect", prefix + ".f32.weights"])
        #expect(inspect.standardOutput.contains(" + built-in negatives (crc32:"), "\(inspect.standardOutput)")
        #expect(inspect.standardOutput.contains("'other' answers unknown"), "\(inspect.standardOutput)")

        let answers = try CommandRun.classify(["shape", "--dataset", probes.path, "--weights", prefix + ".f32.weights", "--json"])
        #expect(answers.status == 0, "\(answers.standardError)")
        let objects = answers.standardOutput.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(objects.count == 2, "\(answers.standardOutput)")
        for object in objects {
            #expect(object["label"] as? String == "unknown" || object["uncertain"] as? Bool == true, "\(object)")
        }
        // The user's own held-out drawings stay theirs: at most a few go to the reject class.
        let heldOut = folder.appendingPathComponent("held-out.csv")
        try TestDatasets.relabelled(folder.appendingPathComponent("shapes/test.csv"), names).write(to: heldOut, atomically: true, encoding: .utf8)
        let evaluate = try CommandRun.classify(["evaluate", "shape", "--data", heldOut.path, "--weights", prefix + ".f32.weights", "--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(evaluate.standardOutput.utf8)) as? [String: Any])
        #expect((report["accuracy"] as? Double ?? 0) >= 0.9, "\(evaluate.standardOutput)")
        // Both sides of the reject decision: every held-out drawing is of the classes, and few are turned away.
        let reject = try #require(report["reject"] as? [String: Int], "\(evaluate.standardOutput)")
        #expect(reject["classes"] == report["count"] as? Int && reject["other"] == 0, "\(reject)")
        #expect(Double(reject["unknown"] ?? .max) <= 0.1 * Double(reject["classes"] ?? 0), "\(reject)")

        let closed = try CommandRun.classify(["train", "shape", "--data", data.path, "--epochs", "2", "--no-reject", "--out", prefix + "-closed"])
        #expect(closed.status == 0, "\(closed.standardError)")
        #expect(closed.standardOutput.contains("3 classes (round, box, pointy);"), "\(closed.standardOutput)")
        #expect(!closed.standardOutput.contains("built-in negative"), "\(closed.standardOutput)")
    }

    /// A walking/sitting model trained with default options takes the generator's running as its reject class
    /// (its walking is the user's class by name, and is left out): the bundled running recording is `unknown` or
    /// uncertain, the user's own walking is still walking.
    @Test func aWalkingSittingModelDoesNotCallRunningSitting() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let data = folder.appendingPathComponent("motion.csv")
        try TestDatasets.motion(sessions: 12, samples: 640, seed: 9, sitting: true).write(to: data, atomically: true, encoding: .utf8)
        let prefix = folder.appendingPathComponent("walk-sit").path
        let run = try CommandRun.classify(["train", "motion", "--data", data.path, "--out", prefix])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains("3 classes (walking, sitting, other)"), "\(run.standardOutput)")
        #expect(run.standardOutput.contains("generated phone recordings of 8 people running, about "), "\(run.standardOutput)")
        for (example, expected) in [("running", "unknown"), ("walking", "walking")] {
            let recording = packageRoot.appendingPathComponent("Datasets/examples/\(example).csv").path
            let answer = try CommandRun.classify(["motion", recording, "--weights", prefix + ".f32.weights", "--json"])
            #expect(answer.status == 0, "\(answer.standardError)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(answer.standardOutput.utf8)) as? [String: Any])
            if expected == "unknown" {
                #expect(object["label"] as? String == "unknown" || object["uncertain"] as? Bool == true, "\(example): \(answer.standardOutput)")
            } else {
                #expect(object["label"] as? String == expected, "\(example): \(answer.standardOutput)")
            }
        }
    }

    /// Labels that are all the generator's own activities leave no negatives: the report says so and the model has
    /// the user's classes only.
    @Test func noNegativesLeftIsSaid() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let data = folder.appendingPathComponent("motion.csv")
        try TestDatasets.motion(sessions: 6, samples: 448, seed: 2).write(to: data, atomically: true, encoding: .utf8)
        let run = try CommandRun.classify(["train", "motion", "--data", data.path, "--epochs", "2", "--out", folder.appendingPathComponent("m").path])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains("2 classes (walking, running);"), "\(run.standardOutput)")
        #expect(
            run.standardOutput.contains("reject class  none: the generator's walking and running are both your classes"), "\(run.standardOutput)")
    }
}
