import Foundation
import Testing

/// The package root (the shipped Weights/ and Datasets/ are found relative to it).
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

extension CommandRun {
    /// Runs classify from the package root, optionally feeding `input` on stdin.
    static func classifyAtRoot(_ arguments: [String], input: String? = nil) throws -> CommandRun {
        try run(builtClassify, arguments, directory: packageRoot, input: input)
    }
}

@Suite("classify shape")
struct ShapeCommandTests {
    @Test(arguments: ["circle", "triangle", "square", "star"])
    func theShippedModelRecognizesEachExample(label: String) throws {
        let run = try CommandRun.classifyAtRoot(["shape", "Datasets/examples/\(label).csv"])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.hasPrefix("\(label)  (confidence "), "\(run.standardOutput)")
        // Run in the package folder, whose Weights/ are the shipped ones: named as such, and no note.
        #expect(run.standardOutput.contains("model shape-classifier.int8, ./Weights/shape-classifier.int8.weights)"))
        #expect(run.standardError == "")
        // The second line: the outline the drawing aimed at, and how neat it is.
        let fitted = run.standardOutput.split(separator: "\n").dropFirst().first.map(String.init) ?? ""
        let kinds = ["circle": ["circle", "ellipse"], "triangle": ["triangle"], "square": ["rectangle"], "star": ["star"]][label] ?? []
        #expect(kinds.contains { fitted.hasPrefix("fitted \($0): ") } && fitted.hasSuffix("% neat"), "\(fitted)")
    }

    @Test func anUnknownDrawingHasNoFittedShape() throws {
        let run = try CommandRun.classifyAtRoot(["shape", "Datasets/examples/other.csv"])
        #expect(run.standardOutput.hasPrefix("unknown"), "\(run.standardOutput)")
        #expect(!run.standardOutput.contains("fitted"))
        let svg = try testFolder().appendingPathComponent("other.svg")
        defer { try? FileManager.default.removeItem(at: svg.deletingLastPathComponent()) }
        _ = try CommandRun.classifyAtRoot(["shape", "Datasets/examples/other.csv", "--render", svg.path])
        #expect(!(try String(contentsOf: svg, encoding: .utf8)).contains("stroke-dasharray"))
    }

    @Test func jsonAndRenderAndStandardInput() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let svg = folder.appendingPathComponent("star.svg")
        let run = try CommandRun.classifyAtRoot(
            ["shape", "-", "--json", "--render", svg.path],
            input: try String(contentsOf: packageRoot.appendingPathComponent("Datasets/examples/star.csv"), encoding: .utf8))
        #expect(run.status == 0, "\(run.standardError)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
        #expect(object["label"] as? String == "star")
        #expect(object["model"] as? String == "shape-classifier.int8")
        #expect((object["attempts"] as? [Any])?.isEmpty == true)
        let probabilities = try #require(object["probabilities"] as? [String: Double])
        #expect(Set(probabilities.keys) == ["circle", "triangle", "square", "star", "other"])
        #expect(object["uncertain"] as? Bool == false)
        #expect(object["reason"] == nil && object["best"] == nil)
        #expect(abs(probabilities.values.reduce(0, +) - 1) < 1e-5)
        #expect(object["confidence"] as? Double == probabilities["star"])
        let picture = try String(contentsOf: svg, encoding: .utf8)
        #expect(picture.hasPrefix("<svg") && picture.contains("<polyline") && picture.contains("model's view: 16×16"))
        // The fitted star dashed over the strokes: a polygon of ten points, and its neatness in the caption.
        let outline = try #require(picture.firstMatch(of: /<polygon points="([^"]*)"[^>]*stroke-dasharray/), "\(picture.prefix(2000))")
        #expect(outline.1.split(separator: " ").count == 10)
        #expect(picture.contains("dashed: fitted star, "))
        let fitted = try #require(object["fitted"] as? [String: Any])
        #expect(fitted["shape"] as? String == "star" && (fitted["points"] as? [[Double]])?.count == 10)
    }

    func drawingFile(_ text: String, in folder: URL) throws -> String {
        let url = folder.appendingPathComponent("drawing-\(UUID().uuidString).csv")
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    @Test func drawingsWithoutAShapeGetAPreciseError() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let one = try drawingFile("x,y\n5,5\n", in: folder)
        let runOne = try CommandRun.classifyAtRoot(["shape", one])
        #expect(runOne.status == 65)
        #expect(runOne.standardError == "error: \(one): a drawing needs at least 2 points, this one has 1\n")
        let same = try drawingFile("x,y\n" + String(repeating: "7,7\n", count: 30), in: folder)
        let runSame = try CommandRun.classifyAtRoot(["shape", same])
        #expect(runSame.status == 65)
        #expect(runSame.standardError == "error: \(same): all 30 points are at the same place; there is no shape to see\n")
        let nan = try drawingFile("x,y\n1,2\nnan,3\n", in: folder)
        let runNaN = try CommandRun.classifyAtRoot(["shape", nan])
        #expect(runNaN.status == 65)
        #expect(runNaN.standardError == "error: \(nan):3: column 1 (x): nan is not a finite number\n")
        let missing = try CommandRun.classifyAtRoot(["shape", folder.appendingPathComponent("none.csv").path])
        #expect(missing.status == 66)
    }

    @Test func aHundredThousandPointCircleIsStillACircle() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var text = "x,y,t\n"
        for i in 0..<100_000 {
            let angle = Double(i) / 100_000 * 2 * .pi
            text += String(format: "%.3f,%.3f,%d\n", 300 + 120 * cos(angle), 300 + 110 * sin(angle), i)
        }
        let run = try CommandRun.classifyAtRoot(["shape", try drawingFile(text, in: folder)])
        #expect(run.status == 0)
        #expect(run.standardOutput.hasPrefix("circle  (confidence "), "\(run.standardOutput)")
        #expect(!run.standardOutput.contains("uncertain"))
    }

    @Test func aZigzagIsUnknownWithTheNearestClassAndAReason() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let zigzag = "x,y\n" + (0..<40).map { "\($0 * 6),\($0 % 2 == 0 ? 0 : 50)" }.joined(separator: "\n") + "\n"
        let file = try drawingFile(zigzag, in: folder)
        let run = try CommandRun.classifyAtRoot(["shape", file])
        #expect(run.status == 0)
        #expect(run.standardOutput.hasPrefix("unknown  (confidence "), "\(run.standardOutput)")
        // The same line a batch prints for it, after the input's name.
        let batch = try CommandRun.classifyAtRoot(["shape", file, file])
        #expect(
            batch.standardOutput.hasPrefix("\(file)  " + (run.standardOutput.split(separator: "\n").first ?? "") + "\n"), "\(batch.standardOutput)")
        let json = try CommandRun.classifyAtRoot(["shape", file, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        #expect(object["label"] as? String == "unknown")
        #expect(["circle", "triangle", "square", "star"].contains(object["best"] as? String ?? ""))
        #expect((object["reason"] as? String)?.hasPrefix("it looks like none of the classes") == true, "\(json.standardOutput)")
        #expect(object["uncertain"] is Bool)
    }

    @Test func theGeometricFallbackCallsAnOpenDrawingUnknown() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let zigzag = "x,y\n" + (0..<40).map { "\($0 * 6),\($0 % 2 == 0 ? 0 : 50)" }.joined(separator: "\n") + "\n"
        let run = try CommandRun.classifyAtRoot(["shape", try drawingFile(zigzag, in: folder), "--weights", "/nonexistent/w.weights", "--fallback"])
        #expect(run.status == 0)
        #expect(run.standardOutput.hasPrefix("unknown  ("), "\(run.standardOutput)")
        // The uncertain line comes right after the headline, before the probabilities.
        #expect(
            run.standardOutput.split(separator: "\n").dropFirst().first?.hasPrefix("uncertain: the drawing is open") == true, "\(run.standardOutput)")
        let line = try drawingFile("x,y\n0,0\n10,10\n20,20\n", in: folder)
        let straight = try CommandRun.classifyAtRoot(["shape", line, "--weights", "/nonexistent/w.weights", "--fallback"])
        #expect(straight.status == 0, "\(straight.standardError)")
        #expect(straight.standardOutput.hasPrefix("unknown  ("), "\(straight.standardOutput)")
    }

    @Test func brokenWeightsFallBackToTheGeometricRecognizer() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // A square tilted 20°, traced once round.
        let corners = [(0.0, 0.0), (1, 0), (1, 1), (0, 1), (0, 0)].map { ($0.0 * 0.94 - $0.1 * 0.34, $0.0 * 0.34 + $0.1 * 0.94) }
        var rows = ["x,y"]
        for (a, b) in zip(corners, corners.dropFirst()) {
            for k in 0..<10 { rows.append("\(100 * (a.0 + (b.0 - a.0) * Double(k) / 10)),\(100 * (a.1 + (b.1 - a.1) * Double(k) / 10))") }
        }
        let square = try drawingFile(rows.joined(separator: "\n") + "\n", in: folder)
        let run = try CommandRun.classifyAtRoot(["shape", square, "--weights", "/nonexistent/w.weights", "--json", "--fallback"])
        #expect(run.status == 0)
        #expect(run.standardError == "warning: w: /nonexistent/w.weights: no such weights file; trying geometric\n")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
        #expect(object["model"] as? String == "geometric")
        #expect(object["label"] as? String == "square")
        #expect((object["attempts"] as? [[String: String]])?.first?["model"] == "w")
    }

    /// `--dataset` on a plain file (mapped, parsed and recognized in parallel, in runs of lines) prints byte for byte
    /// what it prints for the same file with one quoted field (the same values; a file with a quote is parsed as one
    /// run, on one thread): answers, per-drawing errors in their places, the closing count and the exit status, as
    /// text and JSON, on 1 and 2 jobs.
    @Test func theParallelDatasetPathPrintsWhatTheOneRunPathPrints() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var lines = TestDatasets.shapes(count: 300, seed: 9).split(separator: "\n").map(String.init)
        func firstLine(of id: String) throws -> Int { try #require(lines.firstIndex { $0.hasPrefix(id + ",") }) }
        lines.insert("d40,circle,0,nan,1", at: try firstLine(of: "d40") + 2)  // a bad number inside a drawing
        lines.insert("d80,circle,0,1", at: try firstLine(of: "d80") + 1)  // a row with too few fields
        lines.insert("d5,circle,0,1,1", at: try firstLine(of: "d201"))  // a scattered id
        lines.insert("lonely,circle,0,3,3", at: try firstLine(of: "d250"))  // one point
        let plain = lines.joined(separator: "\n") + "\n"
        let quoted = plain.replacingOccurrences(of: "\nd7,", with: "\n\"d7\",")
        #expect(quoted != plain)
        let dataset = folder.appendingPathComponent("mixed.csv")
        for arguments in [["--jobs", "2"], ["--jobs", "1"], ["--json", "--jobs", "2"]] {
            try plain.write(to: dataset, atomically: true, encoding: .utf8)
            let fast = try CommandRun.classifyAtRoot(["shape", "--dataset", dataset.path] + arguments)
            try quoted.write(to: dataset, atomically: true, encoding: .utf8)
            let reference = try CommandRun.classifyAtRoot(["shape", "--dataset", dataset.path] + arguments)
            #expect(fast.status == 65 && reference.status == 65, "\(arguments)")
            #expect(fast.standardOutput == reference.standardOutput, "\(arguments)")
            #expect(fast.standardError == reference.standardError, "\(arguments)")
            #expect(fast.standardOutput.split(separator: "\n").count == 302, "\(arguments)")
            #expect(fast.standardError.hasSuffix("error: 5 of 302 inputs failed; each is reported in its place above\n"), "\(fast.standardError)")
        }
    }

    /// A dataset truncated by another process while `--dataset` reads it: the drawings read are answered, a row
    /// cut short is an error in its place, and the command exits 0 or 65 — never a signal. Before: the file was
    /// memory-mapped, and pages gone from under the mapping faulted (SIGBUS, exit 135, a register dump).
    @Test func aDatasetTruncatedWhileReadIsNeverASignal() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let test = try String(contentsOf: packageRoot.appendingPathComponent("Datasets/shapes/test.csv"), encoding: .utf8)
        let body = test.split(separator: "\n").dropFirst().joined(separator: "\n") + "\n"
        let header = String(test.prefix { $0 != "\n" })
        let big = header + "\n" + (0..<20).map { copy in body.replacingOccurrences(of: "test", with: "c\(copy)x") }.joined()
        let file = folder.appendingPathComponent("big.csv")
        for delay in [0.0, 0.02, 0.1] {
            try Data(big.utf8).write(to: file)
            let process = Process()
            process.executableURL = CommandRun.builtClassify
            process.arguments = ["shape", "--dataset", file.path]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            Thread.sleep(forTimeInterval: delay)
            try FileHandle(forWritingTo: file).truncate(atOffset: 4096)
            process.waitUntilExit()
            #expect(process.terminationReason == .exit, "signal \(process.terminationStatus) after \(delay) s")
            #expect([0, 65].contains(process.terminationStatus), "exit \(process.terminationStatus) after \(delay) s")
        }
    }

    /// A dataset that takes more than 2 s says how far it has got, on standard error, while the answers wait: here
    /// standard input holds its header, then nothing for 3 s, then its rows. Before: nothing until the answers.
    @Test func aLongDatasetSaysHowFarItHasGot() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let dataset = folder.appendingPathComponent("slow.csv")
        try TestDatasets.shapes(count: 40, seed: 3).write(to: dataset, atomically: true, encoding: .utf8)
        let script = "(head -n 1 \"$1\"; sleep 3; tail -n +2 \"$1\") | \"$0\" shape --dataset -"
        let run = try CommandRun.run(URL(fileURLWithPath: "/bin/sh"), ["-c", script, CommandRun.builtClassify.path, dataset.path])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.split(separator: "\n").count == 40)
        let notes = run.standardError.split(separator: "\n").filter { $0.hasPrefix("note: reading standard input: ") }
        #expect(notes.count == 1, "\(run.standardError)")
        // The first note comes after 2 s without a word; on a loaded machine the timer may say 3 s.
        #expect(
            notes.first?.range(of: #" bytes so far… \([23] s\)$"#, options: .regularExpression) != nil, "\(run.standardError)")
        let quiet = try CommandRun.run(URL(fileURLWithPath: "/bin/sh"), ["-c", script + " --quiet", CommandRun.builtClassify.path, dataset.path])
        #expect(quiet.status == 0 && quiet.standardError.isEmpty, "\(quiet.standardError)")
    }
}
