#if ONNX
import DataFiles
import Foundation
import Models
import ONNX
import SignalTask
import Tensor
import Testing
import Train
import WeightsFormat

/// A third task, written only in Tests/SignalTask/ (a target of its own), through every path the library has: loading
/// (one file, a chain with its fallbacks), one input, a batch, evaluation, the decision rule, and ONNX out and back.
/// Nothing in Sources names it, and it registers nothing: its preprocessing type is what it gives. ClassifyTests
/// serves it, and Bench times it.
@Suite("A third task through the recognizer machine")
struct ThirdTaskTests {
    /// The chain loads the int8 file first, falls to f32 past another task's file, and to the rule when neither loads;
    /// each answers a signal, and the answer names the link.
    @Test func theChainLoadsItsVariantsAndFallsBackToItsRule() throws {
        let (f32, int8, _) = try SignalModel.files()
        let both = SignalModel.Source(files: ["signal-waves.int8": int8, "signal-waves.f32": f32])
        #expect(SignalRecognizer.shippedVariants == ["signal-waves.int8", "signal-waves.f32"])
        let first = try SignalRecognizer.load(source: both)
        #expect(first.model == "signal-waves.int8" && first.attempts.isEmpty)
        #expect(first.engine.classifier?.compiled.plan.outputCount == 3)

        // A shape model where the int8 file should be: refused as another task's, the f32 file answers.
        let shape = try ModelFile(bytes: try #require(ShippedWeights.bytes(of: "shape-classifier.int8")), path: "shape-classifier.int8")
        let wrong = SignalModel.Source(files: ["signal-waves.int8": shape, "signal-waves.f32": f32])
        let second = try SignalRecognizer.load(source: wrong)
        #expect(second.model == "signal-waves.f32")
        #expect(second.attempts.map(\.model) == ["signal-waves.int8"])
        #expect(second.attempts.first?.error.contains("is a shape model (labels circle, triangle, square, star, other), not a signal model") == true)

        let none = try SignalRecognizer.load(source: SignalModel.Source(files: [:]))
        #expect(none.model == "waveform-rule" && none.attempts.count == 2)
        var noRule = RetryPolicy()
        noRule.ruleFallback = false
        #expect(throws: ChainFailure.self) { try SignalRecognizer.load(source: SignalModel.Source(files: [:]), policy: noRule) }

        var generator = SeededGenerator(seed: 99)
        let square = SignalExamples.signal("square", count: 120, generator: &generator)
        for recognizer in [first, second, none] {
            let answer = try recognizer.recognize(square)
            #expect(answer.label == "square", "\(recognizer.model): \(answer)")
            #expect(answer.model == recognizer.model && answer.windows.count == 6)
        }
    }

    /// A file loads by bytes or from disk as the shipped tasks' do, and a file of the other tasks is refused with
    /// the task's name, either way round.
    @Test func aFileLoadsAndAnotherTasksFileIsRefused() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("third-task-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("signal-waves.f32.weights")
        try Data(try SignalModel.files().f32.encoded()).write(to: url)
        #expect(try SignalRecognizer(contentsOf: url).model == "signal-waves.f32")
        #expect(try SignalRecognizer(weights: try SignalModel.files().int8.encoded()).model == "signal-waves")

        let motion = try #require(ShippedWeights.bytes(of: "motion-state.int8"))
        let refused = #expect(throws: DataError.self) { try SignalRecognizer(weights: motion) }
        #expect(refused?.message.contains("is a motion model") == true && refused?.message.contains("not a signal model") == true)
        let byShapes = #expect(throws: DataError.self) { try ShapeRecognizer(weights: try SignalModel.files().f32.encoded()) }
        #expect(byShapes?.message == "has preprocessing 'signal-windows' (labels sine, square, noise), not a shape model's ('raster')")
    }

    /// What the task's own types check when a file loads: its header's parameters, the input shape they make, a
    /// decision rule with shape odds, and weights that could overflow for the inputs it makes (the bound it gives).
    @Test func theTasksChecksRefuseWhatItCannotRun() throws {
        let f32 = try SignalModel.files().f32
        func refusal(_ edit: (inout ModelFile) -> Void) -> String? {
            var file = f32
            edit(&file)
            do {
                _ = try SignalRecognizer(model: try ModelFile(bytes: file.encoded(), path: "edited"), named: "edited")
                return nil
            } catch {
                return "\(error)"
            }
        }
        #expect(refusal { $0.preprocessing["hop"] = .number(0) }?.contains("does not describe signal windows") == true)
        #expect(
            refusal { $0.preprocessing["window"] = .number(16) }?.contains("the model takes input [32] with labels") == true
                && refusal { $0.preprocessing["window"] = .number(16) }?.contains("a signal classifier takes [16] with labels") == true)
        let odds = refusal { $0.decision = DecisionRule(rejectLabel: "noise", shapeOdds: DecisionRule.ShapeOdds(network: 1, bias: 0)) }
        #expect(odds?.contains("the decision rule holds shape odds, which are for shape models, not signal") == true, "\(odds ?? "")")
        // Weights of 10³⁷: the first layer's outputs could pass the float range for a window of 32 (√32 ≈ 5.7 at most).
        let huge = refusal { file in
            for (name, tensor) in file.tensors where name.hasSuffix(".weight") {
                file.tensors[name] = QuantizedTensor(quantizing: Tensor(repeating: 1e37, shape: tensor.shape), as: .f32)
            }
        }
        #expect(huge?.contains("layer 0 (Dense 32→24) can give values up to") == true, "\(huge ?? "nil")")
        #expect(refusal { _ in } == nil)
    }

    /// One signal and a batch: the batch (on 3 threads) answers each signal as `recognize(_:)` does, bad signals
    /// in their places with a precise error, and a signal too short for one window or with a NaN is a `DataError`.
    @Test func oneSignalAndABatchGiveTheSameAnswers() throws {
        let recognizer = try SignalRecognizer.load(source: SignalModel.Source(files: ["signal-waves.int8": try SignalModel.files().int8]))
        var signals = SignalModel.testSignals(count: 5, seed: 21).map(\.signal)
        signals.insert([1, 2, 3], at: 4)
        signals.insert([Float](repeating: 0.5, count: 40) + [.nan], at: 9)
        let batch = recognizer.recognize(batch: signals, threads: 3)
        #expect(batch.count == signals.count)
        for (index, signal) in signals.enumerated() {
            let single = Result { () throws(DataError) in try recognizer.recognize(signal) }
            switch (single, batch.answer(at: index)) {
            case let (.success(one), .success(many)): #expect(one == many)
            case let (.failure(one), .failure(many)): #expect(one.message == many.message)
            default: Issue.record("signal \(index): one gives \(single), the batch \(batch.answer(at: index))")
            }
        }
        #expect(throws: DataError(file: "signal", message: "the signal has 3 samples; one window needs 32")) { try recognizer.recognize([1, 2, 3]) }
        let nan = #expect(throws: DataError.self) { try recognizer.recognize([Float](repeating: 0.5, count: 40) + [.nan]) }
        #expect(nan?.message == "sample 41 is nan; every sample must be a finite number")
    }

    /// Evaluation on signals the model never trained on (another seed): the int8 and f32 files and the rule, through
    /// `Evaluation`, the tallies and report `classify evaluate` prints; a label the model does not know is refused
    /// in its words.
    @Test func itIsEvaluatedOnSignalsItNeverSaw() throws {
        let (f32, int8, validation) = try SignalModel.files()
        #expect(validation >= 0.95, "validation accuracy \(validation)")
        let test = SignalModel.testSignals(count: 40, seed: 31)
        let source = SignalModel.Source(files: ["signal-waves.int8": int8, "signal-waves.f32": f32])
        for recognizer in [
            try SignalRecognizer.load(source: source), try SignalRecognizer.load(variants: ["signal-waves.f32"], source: source),
            try SignalRecognizer.load(variants: [], source: source),
        ] {
            let answers = recognizer.recognize(batch: test.map(\.signal), threads: 2)
            var evaluation = Evaluation(answerLabels: recognizer.answerLabels)
            for (index, item) in test.enumerated() {
                #expect(evaluation.refusal(of: item.label, item: "signal \(index)", line: index + 2, file: "test", model: recognizer.model) == nil)
                let answer = try answers.answer(at: index).get()
                evaluation.count(truth: item.label, answer: answer.label, confidence: answer.confidence, uncertain: answer.uncertain)
            }
            let text = evaluation.text(unit: "signals")
            #expect(evaluation.report.accuracy >= 0.95 && evaluation.report.count == 120, "\(recognizer.model): \(text)")
            #expect(text.hasPrefix("accuracy ") && text.contains("uncertain \(evaluation.uncertainCount) of 120 signals"), "\(text)")
            #expect(evaluation.report.labels.prefix(3) == ["sine", "square", "noise"])
            #expect(
                evaluation.refusal(of: "triangle", item: "signal 7", line: 9, file: "test.csv", model: recognizer.model)
                    == DataError(
                        file: "test.csv", line: 9,
                        message:
                            "signal 7 has label 'triangle', which \(recognizer.model) does not know (it knows sine, square, noise, and other for none of them)"
                    ))
        }
    }

    /// ONNX out and back: the export carries the task's preprocessing, the import reads it when given the task's
    /// type (refusing it, naming the kinds it knows, when not), and the imported model answers as the file did.
    @Test func itGoesToONNXAndBack() throws {
        for file in [try SignalModel.files().f32, try SignalModel.files().int8] {
            let data = try ONNXExport.data(of: file)
            let refused = #expect(throws: WeightsFileError.self) { try ONNXImport.modelFile(bytes: data, path: "signal.onnx") }
            #expect("\(refused.map { "\($0)" } ?? "")".contains("preprocessing kind \"signal-windows\" is not raster or motion-autocorrelation"))
            let back = try ONNXImport.modelFile(bytes: data, path: "signal.onnx", preprocessings: [SignalWindows.self])
            #expect(back.preprocessing == file.preprocessing && back.labels == file.labels && back.decision == file.decision)
            let original = try SignalRecognizer(model: file, named: "original"), imported = try SignalRecognizer(model: back, named: "original")
            for (_, signal) in SignalModel.testSignals(count: 10, seed: 41) {
                let (a, b) = (try original.recognize(signal), try imported.recognize(signal))
                #expect(a.label == b.label && a.windows.map(\.label) == b.windows.map(\.label))
                #expect(abs(a.confidence - b.confidence) < 1e-5)
            }
        }
    }

    /// The task's files (Tests/SignalTask) type-check as an outside package's would: against the built modules, without this
    /// package's name, so only public declarations are visible to them. An app writes the same four types with
    /// nothing `package`. (A `package` declaration used in them fails here: tried with `DecisionRule.default`.)
    @Test(.enabled(if: ThirdTaskTests.swiftc != nil, "needs swiftc on PATH"))
    func itUsesOnlyPublicDeclarations() throws {
        let debug = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        let modules = debug.appendingPathComponent("Modules")
        try #require(FileManager.default.fileExists(atPath: modules.path), "no Modules beside the test binary: \(debug.path)")
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let folder = root.appendingPathComponent("Tests/SignalTask")
        var arguments = ["-typecheck", "-swift-version", "6", "-parse-as-library", "-module-name", "SignalTask", "-I", modules.path]
        for map in [
            debug.appendingPathComponent("CPreprocessing.build/module.modulemap").path,
            root.appendingPathComponent("Sources/CKernels/include/module.modulemap").path,
            root.appendingPathComponent("Sources/CBLAS/module.modulemap").path,
        ] {
            arguments += ["-Xcc", "-fmodule-map-file=\(map)"]
        }
        for include in ["Sources/CPreprocessing/include", "Sources/CKernels/include"] {
            arguments += ["-Xcc", "-I", "-Xcc", root.appendingPathComponent(include).path]
        }
        // OpenBLAS's header, where pkg-config says it is (Debian keeps it in a folder of its own).
        for flag in (Self.output(of: "/usr/bin/pkg-config", ["--cflags", "openblas"]) ?? "").split(separator: " ") where flag.hasPrefix("-I") {
            arguments += ["-Xcc", String(flag)]
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }.sorted()
        #expect(files == ["SignalModel.swift", "SignalTask.swift"])
        arguments += files.map { folder.appendingPathComponent($0).path }
        let process = Process()
        process.executableURL = try #require(Self.swiftc)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
    }

    /// `swiftc` on `PATH`.
    static let swiftc: URL? = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        .map { URL(fileURLWithPath: String($0)).appendingPathComponent("swiftc") }
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }

    /// What `tool` prints with `arguments`, or `nil` when it does not run or fails.
    static func output(of tool: String, _ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return process.terminationStatus == 0 ? text.trimmingCharacters(in: .whitespacesAndNewlines) : nil
    }
}
#endif
