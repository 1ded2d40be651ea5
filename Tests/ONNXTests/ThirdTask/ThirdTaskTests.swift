import DataFiles
import Foundation
import Models
import ONNX
import Tensor
import Testing
import Train
import WeightsFormat

/// The signal task's weights, trained once for the suite: f32 and int8 files of a small dense network, made and
/// checked by the engine's own training, export and loading.
enum SignalModel {
    static let windows = SignalWindows()

    /// The trained network's weights files (f32, int8), and its accuracy on the validation split; trained once.
    static let trained = Result { () throws -> (f32: ModelFile, int8: ModelFile, validation: Double) in
        var generator = SeededGenerator(seed: 7)
        let network = Network(converting: [
            Dense(inFeatures: windows.window, outFeatures: 24, generator: &generator), Activation(.relu),
            Dense(inFeatures: 24, outFeatures: SignalExamples.labels.count, generator: &generator),
        ])
        let training = SignalExamples.examples(perClass: 400, seed: 1), validation = SignalExamples.examples(perClass: 100, seed: 2)
        let result = train(network, on: training, validation: validation, configuration: TrainingConfiguration(epochs: 40, batchSize: 32, seed: 3))
        let model = result.network.exportedModel()
        // The engine's own export: the file described, int8 activations calibrated on the validation split, encoded
        // and read back as any weights file is.
        func file(_ format: StorageFormat) throws -> ModelFile {
            var file = try ModelFile(
                name: SignalRecognizer.modelName, model: model, labels: SignalExamples.labels,
                input: InputSpec(shape: windows.inputShape, description: "a signal window"), preprocessing: windows.parameters,
                decision: DecisionRule(), format: format)
            if format == .int8 {
                let integer = file.architecture.indices.filter { file.tensors["\($0).weight"]?.format == .int8 }
                file.activationQuantization = calibrateActivations(of: model, layers: integer, on: validation.inputs)
            }
            return try ModelFile(bytes: file.encoded(), path: SignalRecognizer.modelName)
        }
        return (try file(.f32), try file(.int8), result.history[result.bestEpoch - 1].validationAccuracy ?? 0)
    }

    /// `trained`, or the error that stopped it.
    static func files() throws -> (f32: ModelFile, int8: ModelFile, validation: Double) { try trained.get() }

    /// A weights source of the test's own: variants from a dictionary, a missing one not found.
    struct Source: WeightsSource {
        let files: [String: ModelFile]
        func load(_ variant: String) throws -> ModelFile {
            guard let file = files[variant] else { throw WeightsNotFound(variant: variant, places: ["the test's files"]) }
            return file
        }
    }

    /// Signals for testing, of people and seeds the model never saw: `count` of each label, 200 samples each
    /// (11 windows).
    static func testSignals(count: Int, seed: UInt64) -> [(label: String, signal: [Float])] {
        var generator = SeededGenerator(seed: seed)
        return (0..<count).flatMap { _ in
            SignalExamples.labels.map { ($0, SignalExamples.signal($0, count: 200, generator: &generator)) }
        }
    }
}

/// A third task, written only in Tests/ONNXTests/ThirdTask/, through every path the library has: loading (one file,
/// a chain with its fallbacks), one input, a batch, evaluation, the decision rule, and ONNX out and back. No file
/// outside those two names it, and it registers nothing: its preprocessing type is what it gives.
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

    /// Evaluation on signals the model never trained on (another seed): accuracy by signal from the int8 and f32
    /// files and the rule, through the same `ClassificationReport` `classify evaluate` prints.
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
            let labels = recognizer.answerLabels
            let predicted = (0..<answers.count).map { index in
                (try? answers.answer(at: index).get()).flatMap { labels.firstIndex(of: $0.label) } ?? labels.count - 1
            }
            let report = ClassificationReport(labels: labels, truth: test.map { labels.firstIndex(of: $0.label) ?? 0 }, predicted: predicted)
            #expect(report.accuracy >= 0.95, "\(recognizer.model): \(report.text)")
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

    /// The task's two files type-check as an outside package's would: against the built modules, without this
    /// package's name, so only public declarations are visible to them. An app writes the same four types with
    /// nothing `package`. (A `package` declaration used in them fails here: tried with `DecisionRule.default`.)
    @Test(.enabled(if: ThirdTaskTests.swiftc != nil, "needs swiftc on PATH"))
    func itUsesOnlyPublicDeclarations() throws {
        let debug = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        let modules = debug.appendingPathComponent("Modules")
        try #require(FileManager.default.fileExists(atPath: modules.path), "no Modules beside the test binary: \(debug.path)")
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        var arguments = ["-typecheck", "-swift-version", "6", "-I", modules.path]
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
        arguments += ["SignalTask.swift", "ThirdTaskTests.swift"].map { folder.appendingPathComponent($0).path }
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
