import Foundation
import Testing

/// A third recognizer made of what exists: the raster preprocessing with labels of its own (digits drawn with a
/// pen), trained by `classify train shape` and then run through every path a shape model takes — one drawing,
/// several files, a dataset, evaluation, export to ONNX and import back — with no change to the engine: this file
/// is all it takes. With `ODML_KEEP_DIGITS=FOLDER` in the environment the trained pair is copied to
/// FOLDER/digits.{int8,f32}.weights, for the benchmarks: `bench shape --weights FOLDER --model digits`.
@Suite("A raster recognizer with other labels: digits")
struct OtherLabelsRecognizerTests {
    /// Pen-drawn digits 0, 1 and 7, each drawing a little different (size, slant, where it starts, jitter), as a
    /// dataset CSV (`drawing,label,stroke,x,y`), `each` per label.
    static func digits(each: Int, seed: UInt64) -> String {
        var lines = ["drawing,label,stroke,x,y"]
        var state = seed &* 6_364_136_223_846_793_005 &+ 1
        func random() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) / Double(1 << 53)
        }
        func jitter(_ amount: Double) -> Double { (random() - 0.5) * 2 * amount }
        for index in 0..<each {
            let scale = 0.8 + 0.4 * random(), slant = jitter(0.15), (dx, dy) = (jitter(20), jitter(20))
            func point(_ x: Double, _ y: Double) -> String {
                let px = dx + scale * (x + slant * (100 - y)) + jitter(1.5), py = dy + scale * y + jitter(1.5)
                return String(format: "%.2f,%.2f", px, py)
            }
            let zero = (0...40).map { k -> String in
                let angle = Double(k) / 40 * 2 * Double.pi + 0.3
                return point(50 + 28 * sin(angle), 100 - 45 * cos(angle))
            }
            let one = [point(40, 25), point(50, 10)] + (0...20).map { point(50, 10 + 1.7 * Double($0) * 5) }
            let seven = (0...10).map { point(20 + 6 * Double($0), 15) } + (1...14).map { point(80 - 3 * Double($0), 15 + 11 * Double($0)) }
            for (label, points) in [("zero", zero), ("one", one), ("seven", seven)] {
                for point in points { lines.append("\(label)\(index)-\(seed),\(label),0,\(point)") }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test func digitsRunThroughEveryPathAShapeModelTakes() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let train = folder.appendingPathComponent("digits.csv"), test = folder.appendingPathComponent("digits-test.csv")
        try Self.digits(each: 60, seed: 1).write(to: train, atomically: true, encoding: .utf8)
        try Self.digits(each: 15, seed: 2).write(to: test, atomically: true, encoding: .utf8)
        let prefix = folder.appendingPathComponent("digits").path, weights = prefix + ".int8.weights"

        // Train: the shape task's preprocessing with these labels (and the built-in reject class).
        let trained = try CommandRun.classify(["train", "shape", "--data", train.path, "--out", prefix, "--seed", "3", "--quantize", "int8"])
        #expect(trained.status == 0, "\(trained.standardError)")
        #expect(trained.standardOutput.contains("zero") && trained.standardOutput.contains("seven"), "\(trained.standardOutput)")
        if let keep = ProcessInfo.processInfo.environment["ODML_KEEP_DIGITS"] {
            let into = URL(fileURLWithPath: keep, isDirectory: true)
            try FileManager.default.createDirectory(at: into, withIntermediateDirectories: true)
            for format in ["int8", "f32"] {
                let target = into.appendingPathComponent("digits.\(format).weights")
                try? FileManager.default.removeItem(at: target)
                try FileManager.default.copyItem(atPath: "\(prefix).\(format).weights", toPath: target.path)
            }
        }

        // One drawing, and several files: each drawing of the test set as a file of its own.
        var files: [String] = []
        for label in ["zero", "one", "seven"] {
            let rows = Self.digits(each: 1, seed: 9).split(separator: "\n").dropFirst().filter { $0.contains(",\(label),") }
            let file = folder.appendingPathComponent("\(label).csv")
            try (["x,y"] + rows.map { $0.split(separator: ",").suffix(2).joined(separator: ",") }).joined(separator: "\n")
                .write(to: file, atomically: true, encoding: .utf8)
            files.append(file.path)
        }
        let one = try CommandRun.classify(["shape", files[1], "--weights", weights])
        #expect(one.status == 0 && one.standardOutput.hasPrefix("one  (confidence "), "\(one.standardOutput)\(one.standardError)")
        let batch = try CommandRun.classify(["shape"] + files + ["--weights", weights])
        let batchLines = batch.standardOutput.split(separator: "\n")
        #expect(batch.status == 0 && batchLines.count == 3, "\(batch.standardOutput)")
        for (line, label) in zip(batchLines, ["zero", "one", "seven"]) { #expect(line.contains(".csv  \(label)  (confidence "), "\(line)") }

        // A dataset, and its evaluation.
        let dataset = try CommandRun.classify(["shape", "--dataset", test.path, "--weights", weights, "--json"])
        #expect(dataset.status == 0 && dataset.standardOutput.split(separator: "\n").count == 45, "\(dataset.standardError)")
        let evaluated = try CommandRun.classify(["evaluate", "shape", "--data", test.path, "--weights", weights, "--json"])
        #expect(evaluated.status == 0, "\(evaluated.standardError)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(evaluated.standardOutput.utf8)) as? [String: Any])
        #expect((report["accuracy"] as? Double ?? 0) >= 0.9, "\(report["accuracy"] ?? "none")")

        #if ONNX
        // Export to ONNX and import back: the imported model answers the dataset as the original does.
        let onnx = folder.appendingPathComponent("digits.onnx").path, imported = folder.appendingPathComponent("imported.weights").path
        let exported = try CommandRun.classify(["export", "onnx", weights, "-o", onnx])
        #expect(exported.status == 0, "\(exported.standardError)")
        let back = try CommandRun.classify(["import", "onnx", onnx, "-o", imported])
        #expect(back.status == 0, "\(back.standardError)")
        let original = try CommandRun.classify(["shape", "--dataset", test.path, "--weights", weights])
        let again = try CommandRun.classify(["shape", "--dataset", test.path, "--weights", imported])
        func labels(_ run: CommandRun) -> [String] {
            run.standardOutput.split(separator: "\n").map {
                $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.map(String.init) ?? ""
            }
        }
        #expect(again.status == 0 && labels(again) == labels(original), "\(again.standardError)")
        #endif
    }
}
