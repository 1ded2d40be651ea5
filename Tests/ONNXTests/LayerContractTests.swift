#if ONNX
import DataFiles
import Foundation
import Models
import Tensor
import Testing
import WeightsFormat

@testable import ONNX

/// Any input shape, for models whose input is not a drawing's or a window's: the preprocessing this suite's
/// recognizer-shaped models name, so that ONNX import checks their input as it checks the built-in tasks'.
struct AnyInputShape: ModelPreprocessing {
    static let kind = "test-any-shape"
    static let taskName = "test"
    static let classifierName = "a test classifier"
    var inputShape: [Int]

    init(_ shape: [Int]) { inputShape = shape }

    init(parameters: [String: JSONValue]) throws(DataError) {
        guard case .array(let axes)? = parameters["shape"] else { throw DataError(file: "weights", message: "no shape") }
        inputShape = axes.compactMap { if case .number(let n) = $0 { Int(n) } else { nil } }
    }

    var parameters: [String: JSONValue] { ["kind": .string(Self.kind), "shape": .array(inputShape.map { .number(Double($0)) })] }
}

/// Every kind of layer a weights file can hold, each through every place docs/architecture.md's "Adding a layer"
/// names: the weights file both ways (`LayerSpec`, the header JSON, the tensors; f32 and int8), the compiled plan
/// against the layer's own forward pass, and ONNX out and back (or, for the kinds only imported models have, the
/// export's refusal by name). A new `LayerSpec` case does not compile here until it is a `Kind` (`kind(of:)`
/// switches on every case), and a new `Kind` not until it has an example and says whether ONNX export writes it;
/// the example then goes through the same checks.
@Suite("Every layer kind through the file, the plan and ONNX")
struct LayerContractTests {
    /// The kinds of `LayerSpec`, one case each.
    enum Kind: String, CaseIterable, Sendable {
        case dense, conv1D, conv2D, pool1D, pool2D, globalAveragePool, batchNorm, flatten, activation, transpose, reshape, pad
        case constantOperation, reduce
    }

    /// The kind of `spec`.
    static func kind(of spec: LayerSpec) -> Kind {
        switch spec {
        case .dense: .dense
        case .conv1D: .conv1D
        case .conv2D: .conv2D
        case .pool1D: .pool1D
        case .pool2D: .pool2D
        case .globalAveragePool: .globalAveragePool
        case .batchNorm: .batchNorm
        case .flatten: .flatten
        case .activation: .activation
        case .transpose: .transpose
        case .reshape: .reshape
        case .pad: .pad
        case .constantOperation: .constantOperation
        case .reduce: .reduce
        }
    }

    /// A one-layer example of each kind inside a small classifier (the layer, then what makes three scores:
    /// logits, with `softmax` after them when `probabilities`), with the input shape it takes.
    static func example(of kind: Kind, probabilities: Bool) -> (input: [Int], layers: [any Layer]) {
        var g = SeededGenerator(seed: 11)
        func head(_ features: Int) -> [any Layer] {
            [Dense(inFeatures: features, outFeatures: 3, generator: &g)] + (probabilities ? [Activation(.softmax)] : [])
        }
        switch kind {
        case .dense: return ([8], [Dense(inFeatures: 8, outFeatures: 6, generator: &g)] + head(6))
        case .conv1D: return ([16, 3], [Conv1D(inChannels: 3, outChannels: 4, kernelSize: 3, stride: 2, generator: &g), Flatten()] + head(28))
        case .conv2D:
            return ([6, 6, 2], [Conv2D(inChannels: 2, outChannels: 3, kernel: (3, 3), padding: .same, generator: &g), Flatten()] + head(108))
        case .pool1D: return ([16, 3], [Pool1D(.max, size: 2), Flatten()] + head(24))
        case .pool2D: return ([6, 6, 2], [Pool2D(.average, size: (2, 2)), Flatten()] + head(18))
        case .globalAveragePool: return ([6, 6, 2], [GlobalAveragePool()] + head(2))
        case .batchNorm:
            let norm = BatchNorm(
                gamma: Tensor(randomUniform: [2], in: 0.5..<1.5, generator: &g), beta: Tensor(randomNormal: [2], generator: &g),
                mean: Tensor(randomNormal: [2], generator: &g), variance: Tensor(randomUniform: [2], in: 0.5..<2, generator: &g))
            return ([6, 6, 2], [norm, Flatten()] + head(72))
        case .flatten: return ([4, 4, 2], [Flatten()] + head(32))
        case .activation: return ([8], [Activation(.tanh)] + head(8))
        case .transpose: return ([4, 3], [Transpose(permutation: [1, 0]), Flatten()] + head(12))
        case .reshape: return ([4, 3], [Reshape(shape: [12])] + head(12))
        case .pad: return ([8, 3], [Pad(before: [1, 0], after: [2, 0], mode: .constant, value: 0.5), Flatten()] + head(33))
        case .constantOperation: return ([8], [ConstantOperation(.multiply, operand: Tensor(randomNormal: [8], generator: &g))] + head(8))
        case .reduce: return ([4, 3], [Reduce(.mean, axes: [0]), Flatten()] + head(3))
        }
    }

    /// Whether ONNX export writes the kind. The rearrangements and constant arithmetic come only from imported
    /// models (docs/onnx.md) and are refused by name on the way out; a new kind says here which it is.
    static func exportsToONNX(_ kind: Kind) -> Bool {
        switch kind {
        case .dense, .conv1D, .conv2D, .pool1D, .pool2D, .globalAveragePool, .batchNorm, .flatten, .activation: true
        case .transpose, .reshape, .pad, .constantOperation, .reduce: false
        }
    }

    /// The example of `kind` as a weights file, in `format`.
    static func file(_ kind: Kind, format: StorageFormat = .f32, probabilities: Bool = true) throws -> ModelFile {
        let (input, layers) = example(of: kind, probabilities: probabilities)
        return try ModelFile(
            name: "layer-example", model: Sequential(layers), labels: ["a", "b", "c"], input: InputSpec(shape: input, description: "test input"),
            preprocessing: AnyInputShape(input).parameters, format: format)
    }

    /// The file's model on `rows` seeded inputs: its own layers' forward pass, and its compiled plan.
    static func outputs(_ file: ModelFile, rows: Int = 5) -> (layers: [Float], plan: [Float]) {
        var g = SeededGenerator(seed: 5)
        let inputs = Tensor(randomNormal: [rows] + file.input.shape, generator: &g)
        return (file.makeModel()(inputs).scalars, file.makeCompiledModel()(inputs).scalars)
    }

    /// The file in `format` holds the example's kind and comes back from its bytes the same; its plan's logits
    /// (int8 weights dequantized in float, as a file without activation quantization runs them) are its layers'.
    @Test(arguments: Kind.allCases, [StorageFormat.f32, .int8])
    func theKindComesBackFromAWeightsFileAndItsPlanRunsAsItsLayers(kind: Kind, format: StorageFormat) throws {
        let file = try Self.file(kind, format: format, probabilities: false)
        #expect(file.architecture.map(Self.kind(of:)).contains(kind), "\(file.architecture)")
        let back = try ModelFile(bytes: file.encoded(), path: "layer-example")
        #expect(back.architecture == file.architecture && back.tensors == file.tensors)
        let (layers, plan) = Self.outputs(back)
        let scale = layers.map(abs).max() ?? 1
        #expect(
            layers.count == 15 && layers.count == plan.count && zip(layers, plan).allSatisfy { abs($0 - $1) <= 1e-5 * max(1, scale) },
            "layers \(layers), plan \(plan)")
    }

    @Test(arguments: Kind.allCases)
    func theKindGoesToONNXAndBack(kind: Kind) throws {
        let file = try Self.file(kind)
        guard Self.exportsToONNX(kind) else {
            let refused = #expect(throws: ONNXExportError.self) { try ONNXExport.data(of: file) }
            #expect(refused?.description.contains("is one only an imported model has, and is not exported") == true, "\(String(describing: refused))")
            return
        }
        let back = try ONNXImport.modelFile(bytes: try ONNXExport.data(of: file), path: "layer.onnx", preprocessings: [AnyInputShape.self])
        #expect(back.input.shape == file.input.shape && back.labels == file.labels)
        let (original, imported) = (Self.outputs(file).plan, Self.outputs(back).plan)
        #expect(
            original.count == 15 && original.count == imported.count && zip(original, imported).allSatisfy { abs($0 - $1) <= 1e-5 },
            "\(file.architecture) → \(back.architecture): \(original) against \(imported)")
    }
}
#endif
