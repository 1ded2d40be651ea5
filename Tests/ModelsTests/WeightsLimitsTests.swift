import Foundation
import Tensor
import Testing

@testable import Models
@testable import WeightsFormat

/// The worst weights files `WeightsLimits` lets through: each as close to its limits as the others allow, with a
/// valid checksum. Tests check that they load; `WORST_CASE_WEIGHTS_OUT=DIR swift test --filter WeightsLimits`
/// also writes them to DIR, to measure `classify shape` / `classify motion` on them (see Weights/FORMAT.md,
/// "Limits").
enum WorstCase {
    static let shapeLabels = ["circle", "triangle", "square", "star", "other"]

    /// A 64×64 raster through 3×3 convolutions of 16 channels: the most multiply-adds per drawing.
    static func shapeOperations() throws -> ModelFile {
        var g = SeededGenerator(seed: 11)
        var layers: [any Layer] = [Conv2D(inChannels: 1, outChannels: 16, kernel: (3, 3), padding: .same, generator: &g), Activation(.relu)]
        for _ in 0..<6 {
            layers += [Conv2D(inChannels: 16, outChannels: 16, kernel: (3, 3), padding: .same, generator: &g), Activation(.relu)]
        }
        layers += [GlobalAveragePool(), Dense(inFeatures: 16, outFeatures: 5, generator: &g), Activation(.softmax)]
        return try shapeFile("worst-shape-operations", layers)
    }

    /// Three 64×64×255 activations (a convolution, a batch normalization that allocates, a ReLU): the most
    /// memory per drawing.
    static func shapeMemory() throws -> ModelFile {
        var g = SeededGenerator(seed: 12)
        let layers: [any Layer] = [
            Conv2D(inChannels: 1, outChannels: 255, kernel: (3, 3), padding: .same, generator: &g),
            BatchNorm(channels: 255), Activation(.relu), Pool2D(.max, size: (2, 2)), GlobalAveragePool(),
            Dense(inFeatures: 255, outFeatures: 5, generator: &g), Activation(.softmax),
        ]
        return try shapeFile("worst-shape-memory", layers)
    }

    /// 16×16 max pooling at every pixel, three times (padded pooling runs the layer's own allocating forward).
    static func shapePooling() throws -> ModelFile {
        var g = SeededGenerator(seed: 13)
        var layers: [any Layer] = [Conv2D(inChannels: 1, outChannels: 16, kernel: (3, 3), padding: .same, generator: &g)]
        for _ in 0..<3 { layers.append(Pool2D(.max, size: (16, 16), stride: (1, 1), padding: .same)) }
        layers += [GlobalAveragePool(), Dense(inFeatures: 16, outFeatures: 5, generator: &g), Activation(.softmax)]
        return try shapeFile("worst-shape-pooling", layers)
    }

    /// Rate 100 Hz, window 2048, lags 512, hop 201 and a 1026→1000→2 int8 network: the most operations per
    /// recorded sample (15,553 of 16,384), and a 1 MB file.
    static func motionOperations() throws -> ModelFile {
        try motionFile("worst-motion-operations", MotionWindowing(window: 2048, hop: 201, rate: 100, lags: 512), hidden: 1000)
    }

    /// Rate 100 Hz, hop 25 (4 windows a second), lags 127 (1,024 input values a second), window 512 (2048 would
    /// cost more operations per sample than allowed at this hop): the most
    /// windows and input memory per second of recording.
    static func motionWindows() throws -> ModelFile {
        try motionFile("worst-motion-windows", MotionWindowing(window: 512, hop: 25, rate: 100, lags: 127), hidden: 1000)
    }

    static func all() throws -> [ModelFile] {
        [try shapeOperations(), try shapeMemory(), try shapePooling(), try motionOperations(), try motionWindows()]
    }

    private static func shapeFile(_ name: String, _ layers: [any Layer]) throws -> ModelFile {
        let rasterizer = ShapeRasterizer(size: WeightsLimits.maximumRasterSize, canonical: true, maxStretch: 4)
        return try ModelFile(
            name: name, model: Sequential(layers), labels: shapeLabels,
            input: InputSpec(shape: [rasterizer.size, rasterizer.size, 1], description: "worst case"),
            preprocessing: rasterizer.parameters, format: .f32)
    }

    private static func motionFile(_ name: String, _ windowing: MotionWindowing, hidden: Int) throws -> ModelFile {
        var g = SeededGenerator(seed: 14)
        let layers: [any Layer] = [
            Dense(inFeatures: windowing.inputSize, outFeatures: hidden, generator: &g), Activation(.relu),
            Dense(inFeatures: hidden, outFeatures: 2, generator: &g), Activation(.softmax),
        ]
        return try ModelFile(
            name: name, model: Sequential(layers), labels: ["walking", "running"],
            input: InputSpec(shape: [windowing.inputSize], description: "worst case"),
            preprocessing: windowing.parameters, format: .int8)
    }
}

@Suite("Weights limits")
struct WeightsLimitsTests {
    // MARK: Paths that are not weights files

    /// The error loading `path` gives.
    func loadProblem(_ path: String) -> WeightsFileError.Problem? {
        do {
            _ = try ModelFile(contentsOf: URL(fileURLWithPath: path))
            return nil
        } catch {
            return error.problem
        }
    }

    @Test func aDirectoryFIFOOrSymlinkLoopIsAPermanentPreciseError() throws {
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let directory = folder.appendingPathComponent("dir.weights").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let fifo = folder.appendingPathComponent("fifo.weights").path
        #expect(mkfifo(fifo, 0o644) == 0)
        let loop = folder.appendingPathComponent("loop.weights").path
        try FileManager.default.createSymbolicLink(atPath: loop, withDestinationPath: loop)

        #expect(loadProblem(directory) == .notRegularFile(kind: "a directory"))
        // Opening a FIFO with no writer would block without O_NONBLOCK; this returns at once.
        #expect(loadProblem(fifo) == .notRegularFile(kind: "a FIFO (named pipe)"))
        guard case .cannotOpen(let reason)? = loadProblem(loop) else {
            Issue.record("a symlink loop gave \(String(describing: loadProblem(loop)))")
            return
        }
        #expect(reason.contains("symbolic-link loop"))
        #expect(loadProblem(folder.appendingPathComponent("missing.weights").path) == .fileNotFound)
        for path in [directory, fifo, loop] {
            do {
                _ = try ModelFile(contentsOf: URL(fileURLWithPath: path))
            } catch {
                #expect(failureKind(of: error) == .permanent, "\(error)")
                #expect(error.description.hasPrefix(path + ": "))
            }
        }
    }

    @Test func onlyIOErrorsAreTransient() {
        #expect(ModelFile.openProblem(EIO) == .unreadable(String(cString: strerror(EIO))))
        #expect(WeightsFileError(path: "w", problem: ModelFile.openProblem(EIO)).isTransient)
        for code in [EACCES, EPERM, ELOOP, ENOTDIR, ENAMETOOLONG, EISDIR, ENXIO] {
            #expect(!WeightsFileError(path: "w", problem: ModelFile.openProblem(code)).isTransient, "errno \(code)")
        }
        #expect(ModelFile.openProblem(ENOENT) == .fileNotFound)
    }

    @Test func aFileLargerThanTheLimitIsRefusedBeforeItIsRead() throws {
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Sparse files with a weights preamble that declares their real length: only the size can refuse them.
        func sparse(_ name: String, size: Int) throws -> String {
            let path = folder.appendingPathComponent(name).path
            var preamble = ModelFile.magic
            preamble += withUnsafeBytes(of: ModelFile.formatVersion.littleEndian, Array.init)
            preamble += withUnsafeBytes(of: UInt32(16).littleEndian, Array.init)
            preamble += withUnsafeBytes(of: UInt64(size).littleEndian, Array.init)
            #expect(FileManager.default.createFile(atPath: path, contents: Data(preamble)))
            #expect(truncate(path, off_t(size)) == 0)
            return path
        }
        let limit = WeightsLimits.maximumFileBytes
        let huge = try sparse("huge.weights", size: 3 << 30)
        #expect(loadProblem(huge) == .fileTooLarge(bytes: 3 << 30, limit: limit))
        #expect(loadProblem(try sparse("over.weights", size: limit + 1)) == .fileTooLarge(bytes: limit + 1, limit: limit))
        // At the limit the whole file is read and checked: its zeros fail the checksum, not the size.
        guard case .checksumMismatch? = loadProblem(try sparse("at.weights", size: limit)) else {
            Issue.record("a file of exactly the limit was refused by size")
            return
        }
        // A preamble that claims more or less than the file holds is refused before the rest is read.
        let short = try sparse("short.weights", size: 4096)
        #expect(truncate(short, 2048) == 0)
        #expect(loadProblem(short) == .truncated(expectedBytes: 4096, actualBytes: 2048))
        // Not a weights file at all: the magic, whatever the size.
        let zeros = folder.appendingPathComponent("zeros.weights").path
        #expect(FileManager.default.createFile(atPath: zeros, contents: nil))
        #expect(truncate(zeros, off_t(3 << 30)) == 0)
        #expect(loadProblem(zeros) == .wrongMagic(found: [0, 0, 0, 0, 0, 0, 0, 0]))
    }

    // MARK: Network limits

    /// A checksum-valid file of `architecture` over `input`, without tensors, with `preprocessing`.
    func hostile(_ architecture: [Any], input: [Int], preprocessing: [String: Any] = [:]) throws -> [UInt8] {
        try reassemble(
            CorruptionTests.valid,
            editHeader: { header in
                header["architecture"] = architecture
                header["input"] = ["shape": input, "description": ""]
                header["labels"] = [String]()
                header["tensors"] = [Any]()
                header["preprocessing"] = preprocessing
            }, editData: { $0 = [] })
    }

    let relu: [String: Any] = ["activation": ["function": ["relu": [String: Any]()]]]

    func pool1D(_ size: Int) -> [String: Any] {
        ["pool1D": ["kind": "max", "size": size, "stride": 1, "padding": "same"]]
    }

    @Test func operationsAtTheLimitLoadAndOneMoreIsRefused() throws {
        // 1024 positions × a window of 2^16 = 2^26 comparisons exactly.
        #expect(problem(decoding: try hostile([pool1D(1 << 16)], input: [1024, 1])) == nil)
        #expect(
            problem(decoding: try hostile([pool1D((1 << 16) + 1)], input: [1024, 1]))
                == .overLimit(
                    quantity: "layers 0…0: multiply-adds and comparisons per input", value: Double(1024 * ((1 << 16) + 1)),
                    limit: Double(WeightsLimits.maximumOperations)))
    }

    @Test func activationMemoryAtTheLimitLoadsAndMoreIsRefused() throws {
        let layer = WeightsLimits.maximumLayerElements, total = WeightsLimits.maximumActivationElements
        // Input and three ReLUs of 2^20 floats: 2^22 in all.
        #expect(problem(decoding: try hostile([relu, relu, relu], input: [layer])) == nil)
        #expect(
            problem(decoding: try hostile([relu, relu, relu, relu], input: [layer]))
                == .overLimit(
                    quantity: "layers 0…3: floats they allocate per input, in all", value: Double(total + layer), limit: Double(total)))
        #expect(
            problem(decoding: try hostile([relu], input: [layer + 1]))
                == .overLimit(
                    quantity: "layer 0 (Activation relu): floats it allocates per input", value: Double(layer + 1), limit: Double(layer)))
    }

    @Test func parametersAtTheLimitAreAcceptedAndMoreRefused() throws {
        func dense(_ inputs: Int) throws -> ModelFile {
            var g = SeededGenerator(seed: 5)
            return try ModelFile(
                name: "p", model: Sequential([Dense(inFeatures: inputs, outFeatures: 1024, generator: &g)]),
                labels: [], input: InputSpec(shape: [inputs], description: ""))
        }
        // 1023 · 1024 weights + 1024 biases = 2^20.
        #expect(throws: Never.self) { try dense(1023) }
        #expect(
            throws: WeightsFileError(
                path: "p",
                problem: .overLimit(
                    quantity: "layers 0…0: parameters", value: Double((1 << 20) + 1024), limit: Double(WeightsLimits.maximumParameters)))
        ) {
            try dense(1024)
        }
    }

    // MARK: Preprocessing limits

    func motion(window: Int, hop: Int, rate: Double, lags: Int, layers: Int = 1) throws -> WeightsFileError.Problem? {
        let parameters: [String: Any] = ["kind": "motion-autocorrelation", "window": window, "hop": hop, "rate": rate, "lags": lags]
        return problem(decoding: try hostile(Array(repeating: relu, count: layers), input: [2 * lags + 2], preprocessing: parameters))
    }

    @Test func motionParametersAtTheirLimitsLoadAndJustPastAreRefused() throws {
        func over(_ quantity: String, _ value: Double, _ limit: Double) -> WeightsFileError.Problem {
            .overLimit(quantity: quantity, value: value, limit: limit)
        }
        #expect(try motion(window: 256, hop: 64, rate: 50, lags: 96) == nil, "the shipped windowing")
        #expect(try motion(window: 800, hop: 100, rate: 100, lags: 96) == nil)
        #expect(try motion(window: 800, hop: 100, rate: 100.5, lags: 96) == over("the motion preprocessing's rate (Hz)", 100.5, 100))
        #expect(try motion(window: 2048, hop: 2048, rate: 50, lags: 96) == nil)
        #expect(try motion(window: 2049, hop: 2049, rate: 50, lags: 96) == over("the motion preprocessing's window (samples)", 2049, 2048))
        #expect(try motion(window: 1024, hop: 1024, rate: 50, lags: 512) == nil)
        #expect(try motion(window: 1024, hop: 1024, rate: 50, lags: 513) == over("the motion preprocessing's lags", 513, 512))
        // 4 windows a second: hop 25 at 100 Hz.
        #expect(try motion(window: 256, hop: 25, rate: 100, lags: 8) == nil)
        #expect(
            try motion(window: 256, hop: 24, rate: 100, lags: 8)
                == over("motion windows per second of recording (rate / hop)", 100.0 / 24, 4))
        // (2 · 127 + 2) values × 4 windows a second = 1024.
        #expect(try motion(window: 256, hop: 25, rate: 100, lags: 127) == nil)
        #expect(
            try motion(window: 256, hop: 25, rate: 100, lags: 128)
                == over("motion input values per second of recording ((2 · lags + 2) · rate / hop)", 258 * 4, 1024))
        // (network + 2 · window · lags) / hop with no layers: 2 · 1024 · 32 / 4 = 16,384 exactly; window 1025 → 16,400.
        #expect(try motion(window: 1024, hop: 4, rate: 1, lags: 32, layers: 0) == nil)
        #expect(
            try motion(window: 1025, hop: 4, rate: 1, lags: 32, layers: 0)
                == over("motion operations per input sample ((network + 2 · window · lags) / hop)", 16_400, 16_384))
        // The issue's file: window 4096, hop 1, lags 4095.
        #expect(try motion(window: 4096, hop: 1, rate: 50, lags: 4095) == over("the motion preprocessing's window (samples)", 4096, 2048))
        // The format checks the header's numbers whenever it has them, even ones no windowing takes (window 8–4096,
        // rate up to 10 kHz: `MotionWindowing(parameters:)`, whose message the classifier gives); no hop is left to it.
        #expect(try motion(window: 5000, hop: 5000, rate: 50, lags: 96) == over("the motion preprocessing's window (samples)", 5000, 2048))
        #expect(try motion(window: 256, hop: 64, rate: 20_000, lags: 96) == over("the motion preprocessing's rate (Hz)", 20_000, 100))
        #expect(try motion(window: 256, hop: 0, rate: 50, lags: 96) == nil)
    }

    @Test func rasterSizeAtTheLimitLoadsAndPastIsRefused() throws {
        func raster(_ size: Int) throws -> WeightsFileError.Problem? {
            let parameters: [String: Any] = ["kind": "raster", "size": size, "lineWidth": 2, "margin": 2]
            return problem(decoding: try hostile([relu], input: [size, size, 1], preprocessing: parameters))
        }
        #expect(try raster(64) == nil)
        #expect(try raster(65) == .overLimit(quantity: "the preprocessing's raster size", value: 65, limit: 64))
    }

    // MARK: Worst cases

    @Test func theWorstCasesLoadAndFitTheFileLimit() throws {
        let out = ProcessInfo.processInfo.environment["WORST_CASE_WEIGHTS_OUT"]
        for file in try WorstCase.all() {
            let bytes = file.encoded()
            #expect(bytes.count <= WeightsLimits.maximumFileBytes, "\(file.name): \(bytes.count) bytes")
            let decoded = try ModelFile(bytes: bytes, path: file.name)
            if file.name.hasPrefix("worst-shape") {
                #expect(throws: Never.self) { try ShapeClassifier(file: decoded) }
            } else {
                #expect(throws: Never.self) { try MotionClassifier(file: decoded) }
            }
            if let out { try Data(bytes).write(to: URL(fileURLWithPath: out).appendingPathComponent("\(file.name).weights")) }
        }
    }

    // MARK: Extreme finite weights

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func theShippedModelsAreWithinEveryLimit() throws {
        for name in ["shape-classifier.int8", "shape-classifier.f32", "motion-state.int8", "motion-state.f32"] {
            #expect(throws: Never.self) { try ModelFile(contentsOf: Self.root.appendingPathComponent("Weights/\(name).weights")) }
        }
    }

    @Test func weightsLargeEnoughToOverflowAreRefusedAtLoad() throws {
        var file = try ModelFile(contentsOf: Self.root.appendingPathComponent("Weights/shape-classifier.f32.weights"))
        // Finite weights of 1e30: the first convolution can give 1e30 · 9, the second overflows.
        for name in ["0.weight", "3.weight"] {
            let weight = try #require(file.tensors[name])
            file.tensors[name] = QuantizedTensor(
                quantizing: Tensor(shape: weight.shape, scalars: weight.dequantized().scalars.map { $0 < 0 ? -1e30 : 1e30 }), as: .f32)
        }
        let bytes = file.encoded()
        guard case .mayOverflow(3, "Conv2D 16→32 3x3 stride 1x1 same", let bound)? = problem(decoding: bytes) else {
            Issue.record("got \(String(describing: problem(decoding: bytes)))")
            return
        }
        #expect(bound > Double(Float.greatestFiniteMagnitude) / 4)
        // Large but safe weights still load: 1e3 everywhere stays far below the float range.
        var large = try ModelFile(contentsOf: Self.root.appendingPathComponent("Weights/shape-classifier.f32.weights"))
        let weight = try #require(large.tensors["3.weight"])
        large.tensors["3.weight"] = QuantizedTensor(
            quantizing: Tensor(shape: weight.shape, scalars: weight.dequantized().scalars.map { $0 * 1e3 }), as: .f32)
        #expect(problem(decoding: large.encoded()) == nil)
    }

    @Test func intermediateOverflowsAreCaughtToo() throws {
        // A BatchNorm whose scale γ / √(σ² + ε) is beyond the float range overflows even on zeros (0 · ∞ = NaN).
        let windowing = MotionWindowing()
        let zeros = Dense(weight: Tensor(zeros: [2, windowing.inputSize]), bias: Tensor(zeros: [2]))
        let norm = BatchNorm(
            gamma: Tensor(shape: [2], scalars: [1e30, 1]), beta: Tensor(zeros: [2]), mean: Tensor(zeros: [2]),
            variance: Tensor(zeros: [2]), epsilon: 1e-30)
        #expect {
            try ModelFile(
                name: "bn", model: Sequential([zeros, norm]), labels: ["walking", "running"],
                input: InputSpec(shape: [windowing.inputSize], description: ""), preprocessing: windowing.parameters)
        } throws: { error in
            guard case .mayOverflow(1, "BatchNorm 2 ε=1e-30", let bound)? = (error as? WeightsFileError)?.problem else { return false }
            return bound > 1e44
        }
        // Global average pooling sums 64 × 64 values of up to 9e34 before it divides: 3.7e38 overflows.
        let conv = Conv2D(
            weight: Tensor(shape: [1, 3, 3, 1], scalars: [Float](repeating: 1e34, count: 9)), bias: Tensor(zeros: [1]),
            padding: .same)
        let rasterizer = ShapeRasterizer(size: 64, canonical: false, maxStretch: 1)
        #expect {
            try ModelFile(
                name: "gap", model: Sequential([conv, GlobalAveragePool()]), labels: ["circle"],
                input: InputSpec(shape: [64, 64, 1], description: ""), preprocessing: rasterizer.parameters)
        } throws: { error in
            guard case .mayOverflow(1, "GlobalAveragePool", _)? = (error as? WeightsFileError)?.problem else { return false }
            return true
        }
    }

    @Test func theMagnitudeBoundHoldsOnARealRun() throws {
        // The bound of each layer is at least what the layer gives on an input at the bound (all ones).
        let file = try ModelFile(contentsOf: Self.root.appendingPathComponent("Weights/shape-classifier.f32.weights"))
        var bound = 1.0
        var x = Tensor(shape: [1, 16, 16, 1], scalars: [Float](repeating: 1, count: 256))
        for (index, (spec, layer)) in zip(file.architecture, file.makeModel().layers).enumerated() {
            var layerTensors: [String: QuantizedTensor] = [:]
            for (role, _) in spec.tensorShapes { layerTensors[role] = file.tensors["\(index).\(role)"] }
            bound = spec.magnitudeBound(input: bound, tensors: layerTensors, inputShape: x.shape)
            x = layer(x)
            let largest = x.scalars.map { Double(abs($0)) }.max() ?? 0
            #expect(largest <= bound * (1 + 1e-5), "layer \(index): \(largest) > \(bound)")
        }
    }
}

/// A window classifier whose model has overflowed: every score NaN.
private struct OverflowedClassifier: MotionWindowClassifier {
    let windowing = MotionWindowing()
    let labels = ["walking", "running"]
    let decision = DecisionRule.legacy
    let name = "overflowed"
    func probabilities(_ inputs: UnsafeBufferPointer<Float>, rows: Int, into output: UnsafeMutableBufferPointer<Float>) {
        output.update(repeating: .nan)
    }
}

@Suite("Non-finite scores")
struct NonFiniteScoreTests {
    @Test func aDecisionOnNaNScoresIsUnknownAndUncertainWithoutANaNConfidence() {
        let decision = Decision(labels: ["circle", "square"], probabilities: [.nan, 0.5], rule: .legacy)
        #expect(decision.label == "unknown" && decision.uncertain && decision.confidence == 0)
        #expect(decision.probabilities.map(\.probability) == [0, 0])
        #expect(decision.reason == "the model gave a non-finite score (nan) for circle: its weights overflow; no answer from it can be trusted")
        let infinite = Decision(labels: ["circle", "square"], probabilities: [0.5, .infinity], rule: DecisionRule(temperature: 2))
        #expect(infinite.confidence == 0 && infinite.reason?.contains("(inf) for square") == true)
    }

    @Test func motionWindowsWithNaNScoresAreUnknownAndDoNotVote() throws {
        // A moving phone (not still), 300 samples: one window of 256.
        let samples = (0..<300).map { t in
            MotionSample(gravity: (0, 0, -1), rotationRate: (0, 0, 0), userAcceleration: (0, 0, 0.5 * sin(Double(t) / 4)))
        }
        let timeline = try OverflowedClassifier().classify(MotionRecording(segments: [samples], segmentStarts: [0], rate: 50, notes: []))
        #expect(timeline.windows.count == 1)
        let window = try #require(timeline.windows.first)
        #expect(window.label == "unknown" && window.uncertain && window.confidence == 0)
        #expect(window.reason?.hasPrefix("the model gave a non-finite score (nan) for walking") == true)
        #expect(timeline.label == "unknown" && timeline.uncertain)
    }
}
