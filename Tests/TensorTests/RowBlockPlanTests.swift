import Foundation
import Testing

@testable import Tensor

/// A plan of dense layers runs a batch a block of rows at a time (InferencePlan+Rows.swift): its answers against
/// the same samples run one at a time, bit for bit, for batch sizes on both sides of a block.
@Suite struct RowBlockPlanTests {
    /// The motion model's shape (8-bit dense 194→32 with ReLU, float dense 32→3, softmax), its 8-bit layer alone,
    /// and an all-float twin: every one gives the same bits in a block as alone (integer sums and the same scaling;
    /// float layers row by row with the single sample's kernel).
    func models() -> [(name: String, model: Sequential, quantization: [ActivationQuantization])] {
        var g = SeededGenerator(seed: 77)
        let first = Dense(weight: Dense(inFeatures: 194, outFeatures: 32, generator: &g).weight, bias: randomTensor([32], seed: 3))
        let second = Dense(inFeatures: 32, outFeatures: 3, generator: &g)
        let integer = Sequential([QuantizedDense(quantizing: first, as: .int8), Activation(.relu), second, Activation(.softmax)])
        let float = Sequential([Flatten(), first, Activation(.relu), second, Activation(.logSoftmax)])
        let scale = [ActivationQuantization(layer: 0, minimum: -4, maximum: 4)]
        return [
            ("int8 dense, f32 dense, softmax", integer, scale),
            ("int8 dense alone", Sequential([QuantizedDense(quantizing: first, as: .int8), Activation(.relu)]), scale),
            ("f32 dense, f32 dense, log softmax", float, []),
        ]
    }

    @Test func aBatchOfRowsGivesWhatEachRowGivesAlone() {
        for (name, model, quantization) in models() {
            for level in Kernels.availableLevels {
                let plan = InferencePlan(model, inputShape: [194], quantization: quantization, level: level)
                #expect(plan.rowBlocks != nil, "\(name): \(plan.stepDescriptions) should run in blocks of rows")
                for rows in [0, 1, 2, 63, 64, 65, 200] {
                    let batch = randomTensor([rows, 194], seed: UInt64(rows))
                    let together = plan.run(batch)
                    let workspace = plan.makeWorkspace()
                    let outputs = plan.outputCount
                    var alone = [Float](repeating: .nan, count: rows * outputs)
                    batch.withUnsafeBufferPointer { input in
                        alone.withUnsafeMutableBufferPointer { output in
                            for row in 0..<rows {
                                plan.run(
                                    UnsafeBufferPointer(rebasing: input[(row * 194)..<((row + 1) * 194)]),
                                    into: UnsafeMutableBufferPointer(rebasing: output[(row * outputs)..<((row + 1) * outputs)]),
                                    workspace: workspace)
                            }
                        }
                    }
                    #expect(together.shape == [rows, outputs])
                    let worst = zip(together.scalars, alone).map { abs($0 - $1) }.max() ?? 0
                    #expect(
                        zip(together.scalars, alone).allSatisfy { $0.bitPattern == $1.bitPattern },
                        "\(name), \(rows) rows at \(level): largest difference \(worst), expected none")
                }
            }
        }
    }

    /// A plan without steps gives its input back at batch, as sample by sample.
    @Test func aPlanWithoutStepsGivesItsInputBack() {
        let plan = InferencePlan(Sequential([]), inputShape: [4])
        let batch = randomTensor([70, 4], seed: 5)
        #expect(plan.rowBlocks == nil)
        #expect(plan.run(batch).scalars == batch.scalars)
    }

    /// A workspace made for another plan is refused with both sizes named, not written past its end.
    @Test func aWorkspaceOfAnotherPlanIsRefused() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var g = SeededGenerator(seed: 79)
            let small = InferencePlan(Sequential([Dense(inFeatures: 4, outFeatures: 4, generator: &g)]), inputShape: [4])
            let wide = InferencePlan(
                Sequential([Dense(inFeatures: 4, outFeatures: 4096, generator: &g), Dense(inFeatures: 4096, outFeatures: 4, generator: &g)]),
                inputShape: [4])
            _ = wide.run(randomTensor([8, 4], seed: 6), workspace: small.makeWorkspace())
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("workspace"), "stderr: \(message)")
    }

    /// A plan with a convolution is not row-wise: it runs sample by sample.
    @Test func aConvolutionKeepsTheSampleBySamplePath() {
        var g = SeededGenerator(seed: 78)
        let model = Sequential([Conv2D(inChannels: 1, outChannels: 4, kernel: (3, 3), stride: (1, 1), padding: .same, generator: &g), Flatten()])
        #expect(InferencePlan(model, inputShape: [5, 5, 1]).rowBlocks == nil)
    }
}
