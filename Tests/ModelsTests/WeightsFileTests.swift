import Foundation
import Tensor
import Testing
import WeightsFormat

@testable import Models

/// Relative error of int8 outputs against f32: the L2 norm of the difference over the L2 norm of the f32 output.
///
/// Per-row absmax int8 is at the MSE optimum for Gaussian-like weights (a search over clipping scales gains under
/// 1%), and with the 7-bit magnitudes `int8` writes (`StorageFormat.int8Magnitude`, 63, since issue 49) leaves a
/// relative weight error of amax / (√12 · 63 · σ) ≈ 1.4% for rows of 100–600 weights (0.7% at 127): one layer
/// measured 1.50% here, held under 2%. Through a chain of layers the errors compound, and an untrained network's
/// near-zero logits amplify them: 7.3% on the logits of this file's 54.5k-weight test model (3.7% at 127; 0.9%,
/// 2.7% and 3.7% for three seeds then). The whole-model limit is set above that, to catch a wrong scale or axis
/// (errors of tens of percent) without claiming a precision int8 does not have; what a trained model loses is
/// measured on the dev files with the classifiers themselves (docs/tensor.md).
enum Int8OutputRelativeError {
    static let singleLayer = 0.02
    static let wholeUntrainedModel = 0.09
}

func relativeL2(_ actual: Tensor, _ expected: Tensor) -> Double {
    let difference = zip(actual.scalars, expected.scalars).reduce(0.0) { $0 + pow(Double($1.0 - $1.1), 2) }
    let norm = expected.scalars.reduce(0.0) { $0 + pow(Double($1), 2) }
    return (difference / norm).squareRoot()
}

@Suite("Weights file: save, load, sizes")
struct WeightsFileTests {
    /// An error's text is safe to print: control characters from the file (a tensor name, an importer's reason, the
    /// path) are `?`, in `description` and in `problemText` (issue 31, defect 8).
    @Test func errorTextShowsControlCharactersAsQuestionMarks() {
        let error = WeightsFileError(path: "m\u{1B}[2J.weights", problem: .missingTensor("0.\u{1B}]0;title\u{07}\r\nFAKE: ok\u{7F}\u{9B}"))
        #expect(
            error.description
                == "m?[2J.weights: the architecture needs tensor 0.?]0;title???FAKE: ok??, which the file lacks; re-run `classify train` to write it again"
        )
        let imported = WeightsFileError(path: "m.onnx", problem: .importFailed(format: "ONNX", reason: "operator \u{1B}[31mElu"))
        #expect(imported.problemText == "cannot be read as an ONNX model: operator ?[31mElu")
    }

    @Test func crc32MatchesTheStandardCheckValue() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([UInt8]()) == 0)
    }

    @Test func saveThenLoadGivesBitIdenticalOutputs() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for (model, input, name) in [
            (imageModel(), randomTensor([3, 28, 28, 1], seed: 10), "image"),
            (sequenceModel(), randomTensor([2, 128, 12], seed: 11), "sequence"),
        ] {
            let file = try ModelFile(
                name: name, model: model, labels: [], input: InputSpec(shape: Array(input.shape.dropFirst()), description: name))
            let url = directory.appendingPathComponent("\(name).f32.weights")
            try file.write(to: url)
            let loaded = try ModelFile(contentsOf: url)
            #expect(loaded == file, "every header field and tensor survives")
            #expect(loaded.makeModel()(input) == model(input), "\(name): outputs are bit-identical")
            #expect(loaded.makeModel(compact: true)(input) == model(input), "\(name): f32 compact too")
        }
    }

    @Test func headerFieldsRoundTrip() throws {
        let file = try imageModelFile()
        let loaded = try ModelFile(bytes: file.encoded(), path: "x")
        #expect(loaded.labels == ["circle", "triangle", "square", "star"])
        #expect(loaded.input == InputSpec(shape: [28, 28, 1], description: "28x28 test image"))
        #expect(loaded.preprocessing == ["lineWidth": .number(2.5), "antialias": .bool(true)])
        #expect(loaded.training?.seed == 7 && loaded.training?.validationAccuracy == 0.75)
        #expect(loaded.architecture.count == 12, "the nested Sequential is flattened into its 2 layers")
        #expect(loaded.outputShape == [1, 4])
    }

    @Test func activationQuantizationRoundTripsAndRunsInIntegers() throws {
        var file = try imageModelFile(format: .int8)
        // Layers 4 (Conv2D 16→32) and 8 (Dense 512→96) have int8 weights; their inputs get calibrated scales.
        let images = randomTensor([4, 28, 28, 1], seed: 12)
        file.activationQuantization = calibrateForTest(file.makeModel(), layers: [4, 8], on: images)
        let loaded = try ModelFile(bytes: file.encoded(), path: "x")
        #expect(loaded.activationQuantization == file.activationQuantization)
        // Its f32 equivalent (what inspect sizes against) is a valid file without the int8 layers' scales.
        let float = try ModelFile(bytes: loaded.float32Equivalent.encoded(), path: "f32")
        #expect(float.activationQuantization == nil)
        let compiled = loaded.makeCompiledModel()
        #expect(compiled.plan.integerSteps == 2, "\(compiled.plan.stepDescriptions)")
        let error = relativeL2(compiled(images), loaded.makeModel()(images))
        #expect(error <= Int8OutputRelativeError.wholeUntrainedModel, "int8 arithmetic against dequantized float: \(error)")

        for (bad, expected) in [
            (ActivationQuantization(layer: 2, scale: 1, zeroPoint: 0), "no int8 weight"),
            (ActivationQuantization(layer: 0, scale: 1, zeroPoint: 0), "no int8 weight"),
            (ActivationQuantization(layer: 99, scale: 1, zeroPoint: 0), "not one of layers"),
            (ActivationQuantization(layer: 4, scale: -1, zeroPoint: 0), "finite and positive"),
            (ActivationQuantization(layer: 4, scale: 1, zeroPoint: 300), "0…255"),
        ] {
            var corrupt = file
            corrupt.activationQuantization = [bad]
            #expect {
                _ = try ModelFile(bytes: corrupt.encoded(), path: "x")
            } throws: { error in
                "\(error)".contains(expected)
            }
        }
    }

    /// The input range of each of `layers` over `inputs`, as quantizations (what export calibrates).
    private func calibrateForTest(_ model: Sequential, layers: [Int], on inputs: Tensor) -> [ActivationQuantization] {
        var x = inputs
        var result: [ActivationQuantization] = []
        for (index, layer) in model.layers.enumerated() {
            if layers.contains(index) {
                result.append(ActivationQuantization(layer: index, minimum: x.scalars.min() ?? 0, maximum: x.scalars.max() ?? 0))
            }
            x = layer(x)
        }
        return result
    }

    @Test func encodingIsDeterministic() throws {
        #expect(try imageModelFile(format: .lut4).encoded() == imageModelFile(format: .lut4).encoded())
    }

    @Test func quantizedFilesAreSmallAndInt8StaysClose() throws {
        let f32 = try imageModelFile().encoded()
        let weightCount = imageModel().layers.reduce(0) { $0 + $1.parameterCount }
        #expect(weightCount >= 10_000)
        var sizes: [StorageFormat: Int] = [:]
        for format in StorageFormat.allCases { sizes[format] = try imageModelFile(format: format).encoded().count }
        let ratio = { (format: StorageFormat) in Double(sizes[format] ?? 0) / Double(f32.count) }
        #expect(ratio(.int8) <= 0.28, "int8: \(ratio(.int8))")
        #expect(ratio(.q4) <= 0.16, "q4: \(ratio(.q4))")
        #expect(ratio(.lut4) <= 0.16, "lut4: \(ratio(.lut4))")
        #expect(ratio(.f16) <= 0.51, "f16: \(ratio(.f16))")

        let reference = imageModel()
        let int8 = try ModelFile(bytes: imageModelFile(format: .int8).encoded(), path: "int8")
        let input = randomTensor([64, 28, 28, 1], seed: 12)
        // Compare the logits: the model without its final softmax.
        let logits = { (model: Sequential) in Sequential(Array(model.layers.dropLast()))(input) }
        for compact in [false, true] {
            let relative = relativeL2(logits(int8.makeModel(compact: compact)), logits(reference))
            #expect(relative <= Int8OutputRelativeError.wholeUntrainedModel, "int8 compact=\(compact): \(relative)")
        }
    }

    @Test func oneInt8LayerStaysWithinTwoPercent() {
        let dense = Dense(weight: randomTensor([128, 576], seed: 14), bias: randomTensor([128], seed: 15))
        let input = randomTensor([64, 576], seed: 16)
        let relative = relativeL2(QuantizedDense(quantizing: dense, as: .int8)(input), dense(input))
        #expect(relative <= Int8OutputRelativeError.singleLayer, "\(relative)")
    }

    @Test(arguments: StorageFormat.allCases)
    func compactModeMatchesDequantizedMode(format: StorageFormat) throws {
        let file = try ModelFile(bytes: imageModelFile(format: format).encoded(), path: "q")
        let input = randomTensor([2, 28, 28, 1], seed: 13)
        let dequantized = file.makeModel()(input), compact = file.makeModel(compact: true)(input)
        let worst = zip(dequantized.scalars, compact.scalars).map { abs($0 - $1) }.max() ?? 0
        #expect(worst <= 1e-5, "\(format): \(worst)")
        let quantizedLayers = file.makeModel(compact: true).layers.filter { $0 is QuantizedDense || $0 is QuantizedConv2D }
        #expect(quantizedLayers.count == (format == .f32 ? 0 : 3), "\(format): the 3 large weights stay quantized")
    }

    @Test func smallTensorsAndBiasesStayFloat() throws {
        let file = try imageModelFile(format: .q4)
        #expect(file.tensors["0.weight"]?.format == .f32, "144 weights are under the small-tensor limit")
        #expect(file.tensors["4.weight"]?.format == .q4)
        #expect(file.tensors["4.bias"]?.format == .f32)
        #expect(file.tensors["1.variance"]?.format == .f32)
    }

    @Test func writingReplacesAtomicallyAndAFailedWriteKeepsTheOldFile() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("model.weights")
        try imageModelFile(format: .int8).write(to: url)
        let first = try Data(contentsOf: url)
        try imageModelFile(format: .lut4).write(to: url)
        #expect(try Data(contentsOf: url) != first)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["model.weights"], "no temporary file left")

        // A write that cannot complete (the target is a directory) reports it and leaves everything as it was.
        let blocked = directory.appendingPathComponent("blocked.weights")
        try FileManager.default.createDirectory(at: blocked, withIntermediateDirectories: false)
        #expect(throws: WeightsFileError.self) { try imageModelFile().write(to: blocked) }
        let after = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(after == ["blocked.weights", "model.weights"])
        #expect(try ModelFile(contentsOf: url).tensors["4.weight"]?.format == .lut4)
    }

    @Test func unsupportedLayerAndNonFiniteWeightsAreRefused() {
        struct Custom: Layer {
            func forward(_ input: Tensor) -> Tensor { input }
            func outputShape(for inputShape: [Int]) -> [Int] { inputShape }
        }
        #expect(throws: WeightsFileError.self) {
            try ModelFile(name: "c", model: Sequential([Custom()]), labels: [], input: InputSpec(shape: [3], description: ""))
        }
        var weight = Tensor(zeros: [2, 3])
        weight[1, 1] = .nan
        do {
            _ = try ModelFile(
                name: "n", model: Sequential([Dense(weight: weight, bias: Tensor(zeros: [2]))]), labels: [],
                input: InputSpec(shape: [3], description: ""))
            Issue.record("a NaN weight was accepted")
        } catch {
            #expect(error.problem == .invalidValue(tensor: "0.weight", element: 4, reason: "not finite"))
        }
    }
}
