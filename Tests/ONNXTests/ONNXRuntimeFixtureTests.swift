#if ONNX
import Datasets
import Foundation
import Models
import ONNX
import Tensor
import Testing
import WeightsFormat

/// The committed fixtures (Tests/ONNXTests/Fixtures: models exported by PyTorch and by Keras through tf2onnx, with
/// the outputs ONNX Runtime gave on their inputs; `scripts/onnx/make_fixtures.py` regenerates them outside the
/// tests) imported by the library and run by the compiled plan, as `classify run` does.
@Suite("ONNX fixtures against ONNX Runtime")
struct ONNXRuntimeFixtureTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// Each fixture's 16 inputs through the imported model: within 1e-5 of ONNX Runtime's outputs (float models),
    /// within the int8 tolerance (0.02 on a probability, as `scripts/onnx/check_ort.py` allows our int8 models) for
    /// the models ONNX Runtime's quantizer made (QDQ, int8 weights per channel, uint8 activations, which our integer
    /// kernels run; `-all` has its ReLUs folded into the quantizers' clamps, and its outputs quantized too).
    @Test(arguments: [
        ("torch-shape-cnn", 1e-5), ("torch-shape-gap", 1e-5), ("torch-dynamo-shape-gap", 1e-5), ("torch-motion-mlp", 1e-5), ("keras-shape-cnn", 1e-5),
        ("keras-shape-mlp", 1e-5), ("crafted-bn-after-flatten", 1e-5), ("crafted-bn-after-transpose", 1e-5), ("crafted-maxpool-pads", 1e-5),
        ("crafted-qdq-int8-output-dtype", 1e-5),
        ("torch-shape-cnn-qdq", 0.02), ("torch-shape-cnn-qdq-all", 0.02),
    ])
    func fixturesGiveTheOutputsOfONNXRuntime(name: String, tolerance: Double) throws {
        ONNXFormat.register()
        let file = try ModelFile(contentsOf: Self.fixtures.appendingPathComponent("\(name).onnx"))
        let size = file.input.shape.reduce(1, *), outputs = file.outputShape.dropFirst().reduce(1, *)
        let compiled = try file.makeCompiledModel()
        var inputs = try NPYRows(path: Self.fixtures.appendingPathComponent("\(name).inputs.npy").path, size: size)
        var row = [Float](repeating: 0, count: size), result = [Float](repeating: 0, count: outputs)
        var ours: [[Double]] = []
        while try inputs.next(into: &row) {
            row.withUnsafeBufferPointer { values in result.withUnsafeMutableBufferPointer { compiled.run(values, into: $0) } }
            ours.append(result.map(Double.init))
        }
        let text = try String(contentsOf: Self.fixtures.appendingPathComponent("\(name).outputs.csv"), encoding: .utf8)
        let expected = text.split(separator: "\n").map { $0.split(separator: " ").compactMap { Double($0) } }
        #expect(ours.count == expected.count && ours.count == 16)
        #expect(zip(ours, expected).allSatisfy { $0.count == $1.count && $0.count >= 3 })
        let worst = zip(ours, expected).flatMap { zip($0, $1).map { abs($0 - $1) } }.max() ?? .infinity
        #expect(worst <= tolerance, "\(name): largest difference \(worst)")
    }
}
#endif
