#if ONNX
import Datasets
import Foundation
import ONNX
import Tensor
import Testing
import WeightsFormat

/// ONNX's own importer test cases (Tests/ONNXTests/Suite, copied from the `onnx` wheel by
/// `scripts/onnx/copy_suite_fixtures.py`; Apache-2.0, the ONNX project): each model imported raw — no labels, no
/// task — and run by the compiled plan on its input, in the layout and rank the model declares, against ONNX's
/// expected output within rtol 1e-3 / atol 1e-4 (`numpy.allclose`'s rule, as `peers/onnx_suite.py` checks).
/// One or two cases per operator family the importer reads (ONNXImport+*.swift), and three it refuses.
@Suite("ONNX's own test models, run raw")
struct ONNXSuiteTests {
    static let suite = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Suite")

    /// The family each case stands for, by the importer file that reads it.
    @Test(arguments: [
        // ONNXImport+Convolution.swift: dilated, grouped, depthwise, explicit pads, 3-D.
        "test_Conv1d_dilated", "test_Conv1d_groups", "test_Conv1d_pad2size1", "test_Conv2d_depthwise_padded",
        "test_Conv2d_depthwise_with_multiplier", "test_Conv2d_padding", "test_Conv2d_dilated", "test_Conv3d_dilated_strided",
        "test_Conv3d_groups", "test_Conv3d_stride_padding",
        // ONNXImport+ConvTranspose.swift: strided, padded, output_padding, with and without a bias.
        "test_ConvTranspose2d", "test_ConvTranspose2d_no_bias",
        // Pools in 1-D (through Unsqueeze / Squeeze), 2-D and 3-D, padded.
        "test_AvgPool1d", "test_AvgPool3d_stride", "test_MaxPool2d", "test_MaxPool3d_stride_padding",
        // ONNXImport+Normalization.swift: BatchNormalization on its own, on 3-D and 5-D values (opset 6).
        "test_BatchNorm1d_3d_input_eval", "test_BatchNorm3d_momentum_eval",
        // ONNXImport+Elementwise.swift: PRelu (one slope, one per channel), Neg, Clip, Gemm's opset-6 broadcast.
        "test_PReLU_1d", "test_PReLU_2d_multiparam", "test_Softmin", "test_operator_clip", "test_Linear", "test_Linear_no_bias",
        // ONNXImport+Padding.swift: constant, reflect, edge.
        "test_ConstantPad2d", "test_ReflectionPad2d", "test_ReplicationPad2d", "test_operator_pad",
        // ONNXImport+Activations.swift: Elu, Selu, Softplus; softmax and log-softmax over a spatial axis.
        "test_ELU", "test_SELU", "test_Softplus", "test_log_softmax_dim3", "test_softmax_functional_dim3",
        // ONNXImport+Shape.swift and +Reduction.swift: a 6-D reshape and transpose, Flatten, ReduceMean / ReduceSum.
        "test_PixelShuffle", "test_operator_flatten", "test_operator_reduced_mean", "test_operator_reduced_sum_keepdim",
        // Ours (crafted-*, ONNX Runtime's outputs): a pad and a convolution after a global average pool, whose value
        // runs as a vector until then; a max pool padded with ceil_mode, its padding the repeated edge.
        "crafted-gap-pad", "crafted-gap-add-conv", "crafted-maxpool-pads-ceil",
    ])
    func runsAsONNXSays(name: String) throws {
        ONNXFormat.register()
        let file = try ModelFile(contentsOf: Self.suite.appendingPathComponent("\(name).onnx"))
        #expect(file.labels.isEmpty && file.decision == nil && file.preprocessing.isEmpty, "\(name) imports raw")
        let size = file.input.shape.reduce(1, *), outputs = file.outputShape.dropFirst().reduce(1, *)
        var inputs = try NPYRows(path: Self.suite.appendingPathComponent("\(name).inputs.npy").path, size: size)
        var expected = try NPYRows(path: Self.suite.appendingPathComponent("\(name).outputs.npy").path, size: outputs)
        // The declared layout and rank, on both sides: each input and output sample as ONNX shapes it.
        #expect(file.input.shape == Array(inputs.shape.dropFirst()), "\(name): input \(file.input.shape), file \(inputs.shape)")
        #expect(
            Array(file.outputShape.dropFirst()) == Array(expected.shape.dropFirst()), "\(name): output \(file.outputShape), ONNX \(expected.shape)")
        let compiled = try file.makeCompiledModel()
        var row = [Float](repeating: 0, count: size), want = [Float](repeating: 0, count: outputs), got = want
        var samples = 0, worst = 0.0
        while try inputs.next(into: &row) {
            #expect(try expected.next(into: &want))
            row.withUnsafeBufferPointer { values in got.withUnsafeMutableBufferPointer { compiled.run(values, into: $0) } }
            for (ours, theirs) in zip(got, want) {
                let difference = abs(Double(ours) - Double(theirs))
                worst = max(worst, difference)
                #expect(difference <= 1e-4 + 1e-3 * abs(Double(theirs)), "\(name) sample \(samples): \(ours), ONNX \(theirs)")
            }
            samples += 1
        }
        #expect(samples >= 1 && samples == expected.shape.first, "\(name): \(samples) samples")
        #expect(worst.isFinite)
    }

    /// What is not read is refused by name — the operator or the attribute, and the node — never run wrong.
    @Test(arguments: [
        ("test_Softsign", "operator Abs (node (unnamed), opset 6) is not supported"),
        ("test_GLU", "operator Split (node (unnamed), opset 6) is not supported with more than one output"),
        ("test_MaxPool2d_stride_padding_dilation", "operator MaxPool (node (unnamed), opset 12) is not supported with dilation"),
    ])
    func refusesByName(name: String, reason: String) {
        ONNXFormat.register()
        do {
            let file = try ModelFile(contentsOf: Self.suite.appendingPathComponent("\(name).onnx"))
            Issue.record("\(name) was read: \(file.architecture.map(\.summary))")
        } catch {
            #expect(error.problemText.contains(reason), "\(name): \(error.problemText)")
        }
    }
}
#endif
