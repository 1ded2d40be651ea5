import Foundation
import Testing

/// A copy of the built classify binary in its own folder, so that no shipped weights are found beside it, run
/// with a chosen environment and working directory.
struct IsolatedClassify {
    let folder: URL
    let binary: URL

    init() throws {
        folder = try testFolder()
        binary = folder.appendingPathComponent("bin/classify")
        try FileManager.default.createDirectory(at: binary.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Self.place(CommandRun.builtClassify, at: binary)
    }

    /// Puts the executable `source` at `destination` without this process ever holding a descriptor open for
    /// writing on it. Copying it here (FileManager.copyItem) did: while the copy was open for writing, a test on
    /// another thread could start a command, and the forked child inherits that descriptor until it execs (or for
    /// its whole life, if the descriptor was not close-on-exec), and exec of the copy fails with ETXTBSY ("Text file
    /// busy") for as long as any process holds it open for writing. Sleeping and retrying would only narrow that
    /// window. Instead: a hard link (same inode, no bytes written, so no writer at all; `classify` finds its
    /// shipped weights from the path it was started by, which is the link), and where that is impossible (another
    /// file system), `/bin/cp` in its own process: the only writer is `cp`, which no other child of this process
    /// inherits from, and every descriptor it had is closed once it has exited, before the copy is ever run.
    static func place(_ source: URL, at destination: URL) throws {
        if link(source.path, destination.path) == 0 { return }
        let copy = Process()
        copy.executableURL = URL(fileURLWithPath: "/bin/cp")
        copy.arguments = [source.path, destination.path]
        try copy.run()
        copy.waitUntilExit()
        guard copy.terminationReason == .exit && copy.terminationStatus == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: destination.path])
        }
    }

    /// A weights folder inside the test folder holding the shipped files named in `copy`, after `edit`.
    func weightsFolder(_ name: String, copy: [String], edit: (String, inout Data) -> Void = { _, _ in }) throws -> URL {
        let weights = folder.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: weights, withIntermediateDirectories: true)
        for file in copy {
            var bytes = try Data(contentsOf: packageRoot.appendingPathComponent("Weights/\(file)"))
            edit(file, &bytes)
            try bytes.write(to: weights.appendingPathComponent(file))
        }
        return weights
    }

    func run(_ arguments: [String], weights: URL? = nil) throws -> CommandRun {
        var environment = ProcessInfo.processInfo.environment
        environment["CLASSIFY_WEIGHTS"] = weights?.path
        return try CommandRun.run(binary, arguments, directory: folder, environment: environment)
    }

    func remove() { try? FileManager.default.removeItem(at: folder) }
}

@Suite("classify: retry with fallback, errors, batches")
struct ChainCommandTests {
    let star = packageRoot.appendingPathComponent("Datasets/examples/star.csv").path
    let walking = packageRoot.appendingPathComponent("Datasets/examples/walking.csv").path

    @Test func missingInt8WeightsFallToF32WithOneWarning() throws {
        let classify = try IsolatedClassify()
        defer { classify.remove() }
        let weights = try classify.weightsFolder("w", copy: ["shape-classifier.f32.weights"])
        let run = try classify.run(["shape", star, "--json"], weights: weights)
        #expect(run.status == 0, "\(run.standardError)")
        let object = try jsonObject(run)
        #expect(object["model"] as? String == "shape-classifier.f32")
        #expect(object["label"] as? String == "star")
        #expect(
            run.standardError == "warning: shape-classifier.int8: no shape-classifier.int8.weights; looked in "
                + "\(weights.path)/shape-classifier.int8.weights — not there, and $CLASSIFY_WEIGHTS holds shape-classifier.f32.weights, "
                + "so it serves every variant of shape-classifier and later folders are not searched; trying shape-classifier.f32\n"
                + "note: shape-classifier.f32: using \(weights.path)/shape-classifier.f32.weights from $CLASSIFY_WEIGHTS, not the installed "
                + "model (--weights FILE names one file)\n")
        #expect(object["weights"] as? String == "\(weights.path)/shape-classifier.f32.weights")
    }

    @Test(arguments: [("shape", "shape-classifier"), ("motion", "motion-state")])
    func aFlippedByteIsACheckSumWarningAndF32Answers(task: String, model: String) throws {
        let classify = try IsolatedClassify()
        defer { classify.remove() }
        let weights = try classify.weightsFolder("w", copy: ["\(model).int8.weights", "\(model).f32.weights"]) { name, bytes in
            if name.contains("int8") { bytes[bytes.count - 100] ^= 0x01 }
        }
        let run = try classify.run([task, task == "shape" ? star : walking, "--json"], weights: weights)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(try jsonObject(run)["model"] as? String == "\(model).f32")
        let lines = run.standardError.split(separator: "\n")
        // The warning, then the note that $CLASSIFY_WEIGHTS overrides the installed model.
        #expect(lines.count == 2 && lines.last?.hasPrefix("note: \(model).f32: using \(weights.path)/") == true, "\(run.standardError)")
        #expect(
            lines.first?.hasPrefix("warning: \(model).int8: \(weights.path)/\(model).int8.weights: checksum mismatch") == true, "\(run.standardError)"
        )
        #expect(lines.first?.hasSuffix("; trying \(model).f32") == true)
    }

    @Test func bothWeightsBrokenTheFallbackAnswersAndSaysSo() throws {
        let classify = try IsolatedClassify()
        defer { classify.remove() }
        let weights = try classify.weightsFolder("w", copy: ["shape-classifier.int8.weights", "shape-classifier.f32.weights"]) { _, bytes in
            bytes = bytes.prefix(40)
        }
        // The named folder's two variants, then an error: not the rule, without --fallback.
        let named = try classify.run(["shape", star], weights: weights)
        #expect(named.status == 70 && named.standardOutput.isEmpty)
        #expect(named.standardError.contains("shape-classifier.int8: ") && named.standardError.contains("; shape-classifier.f32: "))
        // A clean square, which the geometric rule knows whatever the generated examples look like.
        let square = classify.folder.appendingPathComponent("square.csv")
        try "x,y\n0,0\n100,0\n100,100\n0,100\n0,0\n".write(to: square, atomically: true, encoding: .utf8)
        let run = try classify.run(["shape", square.path, "--fallback"], weights: weights)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.hasPrefix("square  (confidence "), "\(run.standardOutput)")
        #expect(run.standardOutput.contains("model geometric)"))
        #expect(run.standardError.split(separator: "\n").count == 2)
        #expect(run.standardError.contains("; trying geometric\n"))
        let json = try classify.run(["shape", star, "--json", "--fallback"], weights: weights)
        let attempts = try #require(try jsonObject(json)["attempts"] as? [[String: String]])
        #expect(attempts.map { $0["model"] } == ["shape-classifier.int8", "shape-classifier.f32"])
        #expect(attempts.allSatisfy { $0["kind"] == "permanent" && $0["error"]?.contains("truncated") == true })
    }

    @Test func noFallbackWithBrokenWeightsExits70ListingTheAttempts() throws {
        let classify = try IsolatedClassify()
        defer { classify.remove() }
        let weights = try classify.weightsFolder("w", copy: ["motion-state.int8.weights"]) { _, bytes in bytes[0] = 0 }
        let run = try classify.run(["motion", walking, "--no-fallback"], weights: weights)
        #expect(run.status == 70)
        #expect(run.standardOutput == "")
        let lines = run.standardError.split(separator: "\n")
        #expect(
            lines.last?.hasPrefix(
                "error: $CLASSIFY_WEIGHTS (\(weights.path)): the model you named cannot answer: motion-state.int8: \(weights.path)/motion-state.int8.weights: not a weights file"
            ) == true,
            "\(run.standardError)")
    }

    /// A model the user names is that model or an error (issue 22): a broken file, another task's model or a
    /// folder without the model is exit 70 naming it and why, never a quiet answer from another model; `--fallback`
    /// opts into the chain.
    @Test func aNamedModelThatCannotAnswerIsAnErrorUnlessFallback() throws {
        let classify = try IsolatedClassify()
        defer { classify.remove() }
        let bad = classify.folder.appendingPathComponent("bad.weights")
        try Data("not weights".utf8).write(to: bad)
        let broken = try classify.run(["shape", star, "--weights", bad.path])
        #expect(broken.status == 70 && broken.standardOutput.isEmpty)
        #expect(
            broken.standardError.hasPrefix("error: \(bad.path): the model you named cannot answer: bad: \(bad.path): "),
            "\(broken.standardError)")
        #expect(broken.standardError.hasSuffix("(--fallback goes on to the non-ML recognizer instead)\n"))
        let chained = try classify.run(["shape", star, "--weights", bad.path, "--fallback"])
        #expect(chained.status == 0 && chained.standardOutput.contains("model geometric)"), "\(chained.standardError)")

        // A shape model named for motion: the wrong task, exit 70 (before: the cadence rule answered, exit 0).
        let shapeModel = packageRoot.appendingPathComponent("Weights/shape-classifier.int8.weights").path
        let wrongTask = try classify.run(["motion", walking, "--weights", shapeModel])
        #expect(wrongTask.status == 70 && wrongTask.standardOutput.isEmpty)
        #expect(wrongTask.standardError.contains("the model you named cannot answer"), "\(wrongTask.standardError)")
        #expect(
            wrongTask.standardError.contains("shape-classifier: is a shape model (labels circle, triangle, square, star, other), not a motion model"),
            "\(wrongTask.standardError)")

        // A folder of the user's own files (cc2.*, a motion model) named by $CLASSIFY_WEIGHTS for shapes: no shape
        // model there, so an error that says what the folder holds, not the built-in model quietly. (A shape model of
        // any name there would serve: WeightsPathCommandTests.)
        let own = try classify.weightsFolder("own", copy: [])
        let motionModel = packageRoot.appendingPathComponent("Weights/motion-state.int8.weights")
        try Data(contentsOf: motionModel).write(to: own.appendingPathComponent("cc2.int8.weights"))
        let folder = try classify.run(["shape", star], weights: own)
        #expect(folder.status == 70 && folder.standardOutput.isEmpty)
        #expect(
            folder.standardError
                == "error: \(own.path): holds 1 weights file (1 motion model), none a shape model, and no shape-classifier.*.weights: "
                + "put a shape model there (any name ending .weights), or name one with --weights\n", "\(folder.standardError)")
        let builtIn = try classify.run(["shape", star, "--fallback", "--json"], weights: own)
        #expect(builtIn.status == 0, "\(builtIn.standardError)")
        #expect(try jsonObject(builtIn)["model"] as? String == "shape-classifier.int8")
        #expect(try classify.run(["shape", star, "--fallback", "--no-fallback"]).status == 64)
    }

    @Test func aMissingInputFileExits66() throws {
        for task in ["shape", "motion"] {
            let run = try CommandRun.classifyAtRoot([task, "/nonexistent/input.csv"])
            #expect(run.status == 66, "\(task): \(run.standardError)")
            #expect(run.standardError.hasPrefix("error: /nonexistent/input.csv"), "\(run.standardError)")
        }
    }

    @Test func malformedCSVsExit65NamingTheLineAndColumn() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cases: [(String, Data, String)] = [
            ("shape", Data(), ":1: the file is empty"),
            ("shape", Data("x,y\n".utf8), ":2: "),
            ("shape", Data("x,t\n1,2\n".utf8), ":1: missing column 'y'"),
            ("shape", Data("x,y\n1,2\nabc,3\n".utf8), ":3: column 1 (x): 'abc' is not a number"),
            ("shape", Data("x,y\n1,2\n3,nan\n".utf8), ":3: column 2 (y): nan is not a finite number"),
            ("shape", Data("x,y\n1,2\n".utf8), "a drawing needs at least 2 points"),
            ("shape", Data([0x89, 0x50, 0x4E, 0x47, 0x00, 0x1A, 0xFF, 0xFE]), ":1: contains a NUL byte"),
            ("shape", Data(String(repeating: "1,", count: 5_000_000).utf8), ":1: "),
            ("motion", Data(), ":1: the file is empty"),
            ("motion", Data("acc.x,acc.y,acc.z\n".utf8), ":2: "),
            ("motion", Data("acc.x,acc.y,acc.z\n0,0,-1\n0,x,-1\n".utf8), ":3: column 2 (acc.y): 'x' is not a number"),
            ("motion", Data(String(repeating: "9", count: 10_000_000).utf8), ":1: "),
        ]
        for (index, (task, bytes, message)) in cases.enumerated() {
            let path = folder.appendingPathComponent("case\(index).csv").path
            try bytes.write(to: URL(fileURLWithPath: path))
            let run = try CommandRun.classifyAtRoot([task, path])
            #expect(run.status == 65, "case \(index): exit \(run.status): \(run.standardError)")
            #expect(run.standardError.hasPrefix("error: \(path)"), "case \(index): \(run.standardError)")
            #expect(run.standardError.contains(message), "case \(index): \(run.standardError)")
            #expect(run.standardError.split(separator: "\n").count == 1, "case \(index): one line: \(run.standardError)")
        }
    }

    @Test func aBatchOf10000DrawingsKeepsOrderAndReportsTheBadOne() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var lines = ["drawing,label,stroke,x,y"]
        for index in 0..<10_000 {
            if index == 5_000 {
                lines.append("d\(index),circle,0,nan,1")  // the bad drawing: line 2 + 2,500 · 5 + 2,500 · 4 = 22,502
                lines.append("d\(index),circle,0,2,2")
                continue
            }
            // Small squares and triangles, alternating, at varying sizes.
            let size = Double(10 + index % 7)
            let corners: [(Double, Double)] =
                index % 2 == 0 ? [(0, 0), (size, 0), (size, size), (0, size), (0, 0)] : [(0, size), (size / 2, 0), (size, size), (0, size)]
            for (x, y) in corners { lines.append("d\(index),square,0,\(x),\(y)") }
        }
        let dataset = folder.appendingPathComponent("batch.csv")
        try (lines.joined(separator: "\n") + "\n").write(to: dataset, atomically: true, encoding: .utf8)
        let run = try CommandRun.classifyAtRoot(["shape", "--dataset", dataset.path, "--json"])
        #expect(run.status == 65)
        let results = run.standardOutput.split(separator: "\n")
        #expect(results.count == 10_000)
        var inOrder = true, answers = 0
        for (index, line) in results.enumerated() {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            inOrder = inOrder && object["input"] as? String == "\(dataset.path)#d\(index)"
            if index == 5_000 {
                #expect(object["exit"] as? Int == 65)
                #expect((object["error"] as? String)?.contains(":22502: column 4 (x): nan is not a finite number") == true, "\(object)")
            } else if object["label"] != nil {
                answers += 1
            }
        }
        #expect(inOrder, "results come in input order")
        #expect(answers == 9_999)
        #expect(run.standardError.hasSuffix("error: 1 of 10000 inputs failed; each is reported in its place above\n"), "\(run.standardError)")
    }

    /// With `--json`, a single input that fails gives its error as one JSON line on standard output — the line a
    /// batch prints in its place — and the same exit; before, standard output stayed empty.
    @Test func aFailingSingleInputIsOneJSONLine() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bad = folder.appendingPathComponent("bad.csv"), missing = folder.appendingPathComponent("missing.csv")
        try "x,y\n0,0\n".write(to: bad, atomically: true, encoding: .utf8)
        for (task, file, exit) in [("shape", bad, 65), ("shape", missing, 66), ("motion", bad, 65), ("motion", missing, 66)] {
            let single = try CommandRun.classify([task, file.path, "--json"])
            #expect(single.status == Int32(exit), "\(task) \(file.lastPathComponent): \(single.standardError)")
            let lines = single.standardOutput.split(separator: "\n")
            #expect(lines.count == 1, "\(task) \(file.lastPathComponent): \(single.standardOutput)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data((lines.first ?? "").utf8)) as? [String: Any])
            #expect(object["input"] as? String == file.path && object["exit"] as? Int == exit && object["error"] is String, "\(object)")
            #expect(single.standardError.hasPrefix("error: "))
            // The same input in a batch prints the same line in its place.
            let batch = try CommandRun.classify([task, file.path, file.path, "--json"])
            #expect(batch.standardOutput.split(separator: "\n").first == lines.first, "\(batch.standardOutput)")
        }
    }

    /// Every answer names its weights: the built-in copy when no folder holds them, a `./Weights` of the current
    /// folder (with one note that it overrides the installed model), the file `--weights` names; the rule names
    /// none. Before: every answer said only `model shape-classifier.int8`, wherever its weights came from.
    @Test func everyAnswerNamesWhereItsWeightsCameFrom() throws {
        let classify = try IsolatedClassify()
        defer { classify.remove() }
        let builtIn = try classify.run(["shape", star])
        #expect(builtIn.standardOutput.hasPrefix("star  (confidence ") && builtIn.standardOutput.contains(", model shape-classifier.int8, built-in)"))
        #expect(builtIn.standardError.isEmpty, "\(builtIn.standardError)")
        #expect(try jsonObject(try classify.run(["motion", walking, "--json"]))["weights"] as? String == "built-in")

        _ = try classify.weightsFolder("Weights", copy: ["shape-classifier.int8.weights", "shape-classifier.f32.weights"])
        let local = try classify.run(["shape", star, star, "--json"])
        let lines = local.standardOutput.split(separator: "\n")
        #expect(lines.count == 2)
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["weights"] as? String == "./Weights/shape-classifier.int8.weights")
        }
        #expect(
            local.standardError
                == "note: shape-classifier.int8: using ./Weights/shape-classifier.int8.weights from ./Weights, not the installed model "
                + "(--weights FILE names one file)\n", "\(local.standardError)")
        #expect(try classify.run(["shape", star, "--quiet"]).standardError.isEmpty)

        let named = packageRoot.appendingPathComponent("Weights/shape-classifier.f32.weights").path
        let explicit = try classify.run(["shape", star, "--weights", named])
        #expect(explicit.standardOutput.contains(", model shape-classifier.f32, \(named))"), "\(explicit.standardOutput)")
        #expect(explicit.standardError.isEmpty, "\(explicit.standardError)")
        let rule = try classify.run(["shape", star, "--weights", classify.folder.appendingPathComponent("none.weights").path, "--fallback", "--json"])
        let ruleObject = try jsonObject(rule)
        #expect(ruleObject["model"] as? String == "geometric" && ruleObject["weights"] == nil, "\(ruleObject)")
    }

    /// With `--json`, a model that cannot answer (exit 70) still gives every input its line on standard output,
    /// single or batch. Before: nothing on standard output.
    @Test func aChainFailureIsOneJSONLinePerInput() throws {
        let classify = try IsolatedClassify()
        defer { classify.remove() }
        let bad = classify.folder.appendingPathComponent("bad.weights")
        try Data("not weights".utf8).write(to: bad)
        for (task, input) in [("shape", star), ("motion", walking)] {
            for inputs in [[input], [input, input]] {
                let run = try classify.run([task] + inputs + ["--weights", bad.path, "--json"])
                #expect(run.status == 70)
                let lines = run.standardOutput.split(separator: "\n")
                #expect(lines.count == inputs.count, "\(run.standardOutput)")
                for line in lines {
                    let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                    #expect(object["input"] as? String == input && object["exit"] as? Int == 70, "\(object)")
                    #expect((object["error"] as? String)?.contains("the model you named cannot answer") == true)
                }
                #expect(run.standardError.hasPrefix("error: \(bad.path): the model you named cannot answer"))
            }
        }
    }

    /// A folder without `.csv` files in a batch is an error in its place, and the batch goes on (before: exit 66
    /// with nothing classified); a dataset that cannot be read and a followed recording that fails give their
    /// `--json` error line too (before: nothing on standard output).
    @Test func failuresOutsideAListedFileAreLinesInTheirPlace() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let empty = folder.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        for (task, input) in [("shape", star), ("motion", walking)] {
            let text = try CommandRun.classify([task, empty.path, input])
            #expect(text.status == 66, "\(text.standardError)")
            let lines = text.standardOutput.split(separator: "\n")
            #expect(
                lines.count >= 2 && lines[0].hasPrefix("\(empty.path)  error: \(empty.path): the folder holds no .csv files"),
                "\(text.standardOutput)")
            #expect(lines.contains { $0.hasPrefix("\(input)  ") && !$0.contains("error") }, "\(text.standardOutput)")
            let json = try CommandRun.classify([task, empty.path, "--json"])
            #expect(json.status == 66)
            let object = try jsonObject(json)
            #expect(object["input"] as? String == empty.path && object["exit"] as? Int == 66, "\(object)")
            let missing = folder.appendingPathComponent("missing.csv").path
            let dataset = try CommandRun.classify([task, "--dataset", missing, "--json"])
            #expect(dataset.status == 66)
            #expect(try jsonObject(dataset)["input"] as? String == missing, "\(dataset.standardOutput)")
        }
        let followed = try CommandRun.run(CommandRun.builtClassify, ["motion", "--follow", "-", "--json"], input: "")
        #expect(followed.status == 65)
        #expect(try jsonObject(followed)["exit"] as? Int == 65, "\(followed.standardOutput)")
    }

    /// `evaluate` names the weights it measured, in its heading and as `weights` in JSON, and says when a
    /// `./Weights` overrides the installed model (before: neither).
    @Test func evaluateNamesItsWeights() throws {
        let classify = try IsolatedClassify()
        defer { classify.remove() }
        let data = packageRoot.appendingPathComponent("Datasets/shapes/test.csv").path
        let builtIn = try classify.run(["evaluate", "shape", "--data", data])
        #expect(builtIn.standardOutput.hasPrefix("shape-classifier.int8, built-in on \(data): 740 drawings"), "\(builtIn.standardOutput)")
        _ = try classify.weightsFolder("Weights", copy: ["shape-classifier.int8.weights", "shape-classifier.f32.weights"])
        let local = try classify.run(["evaluate", "shape", "--data", data, "--json"])
        #expect(try jsonObject(local)["weights"] as? String == "./Weights/shape-classifier.int8.weights")
        // A line of its own (a progress note may come first when the machine is slow).
        let lines = local.standardError.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("note: shape-classifier.int8: using ./Weights/") }, "\(local.standardError)")
    }

    /// Escape sequences and other control characters in the data are shown as `?` wherever `classify` prints them
    /// as text: in error messages of `shape`, `shape -`, `motion` and datasets, and in a dataset's drawing ids
    /// (before: echoed raw, so a file could drive the terminal). JSON escapes them itself.
    @Test func controlCharactersFromTheDataNeverReachTheTerminal() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let drawing = "x,y\n1,\u{1B}[31mred\n2,3\n3,4\n"
        let file = folder.appendingPathComponent("esc.csv")
        try Data(drawing.utf8).write(to: file)
        let motion =
            "timestamp,gravity.x,gravity.y,gravity.z,userAcceleration.x,userAcceleration.y,userAcceleration.z\n0,0,0,-1,0,0,\u{1B}]0;title\u{07}\n"
        let square = (0..<5).map { "\u{1B}[2Ja,b,0,\([1, 5, 5, 1, 1][$0]),\([1, 1, 5, 5, 1][$0])" }.joined(separator: "\n")
        let dataset = folder.appendingPathComponent("ids.csv")
        try Data(("drawing,label,stroke,x,y\n" + square + "\n").utf8).write(to: dataset)
        let runs = [
            try CommandRun.classify(["shape", file.path]),
            try CommandRun.run(CommandRun.builtClassify, ["shape", "-"], input: drawing),
            try CommandRun.run(CommandRun.builtClassify, ["motion", "-"], input: motion),
            try CommandRun.classify(["shape", "--dataset", dataset.path]),
        ]
        for run in runs {
            let text = run.standardOutput + run.standardError
            #expect(!text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || $0.value == 0x7F }, "\(text.debugDescription)")
        }
        #expect(runs[0].standardError.contains("'?[31mred' is not a number"), "\(runs[0].standardError)")
        #expect(runs[2].standardError.contains("'?]0;title?' is not a number"), "\(runs[2].standardError)")
        #expect(runs[3].standardOutput.hasPrefix("\(dataset.path)#?[2Ja  square"), "\(runs[3].standardOutput)")
    }

    /// An installed weights folder whose int8 file is corrupt and holds no f32: the same model built into the binary
    /// answers, after a warning for each folder link (before: the geometric rule answered though the built-in copy
    /// was intact).
    @Test func aCorruptInstalledModelFallsBackToTheBuiltInCopy() throws {
        let classify = try IsolatedClassify()
        defer { classify.remove() }
        let installed = classify.folder.appendingPathComponent("share/classify/Weights")
        try FileManager.default.createDirectory(at: installed, withIntermediateDirectories: true)
        var bytes = try Data(contentsOf: packageRoot.appendingPathComponent("Weights/shape-classifier.int8.weights"))
        bytes[bytes.count - 100] ^= 0x01
        try bytes.write(to: installed.appendingPathComponent("shape-classifier.int8.weights"))
        let run = try classify.run(["shape", star, "--json"])
        #expect(run.status == 0, "\(run.standardError)")
        let object = try jsonObject(run)
        // Named as the model it is (the same as the text line); the warnings say why the built-in copy answered.
        #expect(object["model"] as? String == "shape-classifier.int8" && object["weights"] as? String == "built-in", "\(object)")
        #expect((object["attempts"] as? [Any])?.count == 2, "\(object)")
        let warnings = run.standardError.split(separator: "\n")
        #expect(warnings.count == 2 && warnings[0].contains("checksum mismatch") && warnings[1].hasSuffix("trying built-in:shape-classifier.int8"))
        let text = try classify.run(["shape", star])
        #expect(text.standardOutput.hasPrefix("star  (confidence ") && text.standardOutput.contains("model shape-classifier.int8, built-in)"))
        // A named folder is explicit: no built-in copy after it.
        let named = try classify.run(["shape", star], weights: installed)
        #expect(named.status == 70, "\(named.standardError)")
    }
}
