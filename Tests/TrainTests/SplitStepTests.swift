import Models
import Tensor
import Testing
import WeightsFormat

@testable import Train

/// A step cut into parts (`Network.trainingParts`) adds the parts' gradients in another order than one pass over the
/// whole batch: the sums of 32 + 32 rows against 64 differ by float rounding only (about 1e-6 of the largest
/// gradient), and reading a gradient back from an SGD step, (θ − θ′) / rate, adds about 1e-7 absolute. Relative to
/// the largest gradient of the tensor (at least 1e-3).
let splitGradientRelativeTolerance: Float = 1e-4

/// The shipped shape architecture (16×16×1 → conv 16/32/48 → GAP → dense 4): a step of 64 rows is about 35M
/// multiply-adds, above `Network.smallestSplitWork`, so its batch is cut.
func shapeNetwork(seed: UInt64) -> Network {
    Network(converting: RecognitionTask.shape.layers(classes: 4, seed: seed))
}

@Suite("A training step cut into parts on threads")
struct SplitStepTests {
    let inputs = random([64, 16, 16, 1], seed: 60)
    let labels = (0..<64).map { $0 % 4 }

    @Test func theShapeNetworkIsCutAndTheMotionSizedOneIsNot() {
        let network = shapeNetwork(seed: 61)
        #expect(64 * network.multiplyAddsPerSample(sampleShape: [16, 16, 1]) >= Network.smallestSplitWork)
        var g = SeededGenerator(seed: 62)
        let motion = Network([
            Dense(inFeatures: 194, outFeatures: 32, generator: &g), Activation(.relu),
            Dense(inFeatures: 32, outFeatures: 2, generator: &g),
        ])
        #expect(motion.multiplyAddsPerSample(sampleShape: [194]) == 194 * 32 + 32 * 2)
        #expect(64 * motion.multiplyAddsPerSample(sampleShape: [194]) < Network.smallestSplitWork)
    }

    @Test func oneThreadAndTwoGiveTheSameWeights() {
        func run(threads: Int) -> [Float] {
            var network = shapeNetwork(seed: 63)
            var optimizer = Optimizer(.adamDefault, learningRate: 1e-2)
            var g = SeededGenerator(seed: 64)
            for _ in 0..<3 {
                network.trainingStep(
                    inputs, labels: labels, loss: SoftmaxCrossEntropy(), optimizer: &optimizer,
                    generator: &g, threads: threads)
            }
            return network.parameters.joined().flatMap(\.scalars)
        }
        #expect(run(threads: 1) == run(threads: 2))
    }

    /// With plain SGD (no momentum) a step moves each parameter by −rate · gradient, so the step's gradients can be
    /// read back and compared with one forward and backward pass over the whole batch.
    @Test func theCutStepFollowsTheWholeBatchGradient() {
        let start = shapeNetwork(seed: 65)
        let rate: Float = 0.5
        var stepped = start
        var sgd = Optimizer(.sgd(momentum: 0, nesterov: false), learningRate: rate)
        var g = SeededGenerator(seed: 66)
        let (loss, logits) = stepped.trainingStep(
            inputs, labels: labels, loss: SoftmaxCrossEntropy(), optimizer: &sgd,
            generator: &g, threads: 2)

        var h = SeededGenerator(seed: 66)
        let (wholeLogits, records) = start.forward(inputs, mode: .training, generator: &h)
        let (wholeLoss, dLogits) = SoftmaxCrossEntropy()(logits: wholeLogits, labels: labels)
        let whole = start.backward(dLogits, records: records)
        #expect(abs(loss - wholeLoss) <= 1e-5 * max(1, abs(wholeLoss)), "loss \(loss) vs \(wholeLoss)")
        #expect(logits.shape == wholeLogits.shape)
        for layer in whole.indices {
            for index in whole[layer].indices {
                let read = (start.parameters[layer][index] - stepped.parameters[layer][index]) * (1 / rate)
                let scale = max(whole[layer][index].scalars.map(abs).max() ?? 0, 1e-3)
                let worst = zip(read.scalars, whole[layer][index].scalars).map { abs($0 - $1) }.max() ?? 0
                #expect(
                    worst <= splitGradientRelativeTolerance * scale,
                    "layer \(layer) parameter \(index): max |difference| \(worst), scale \(scale)")
            }
        }
    }

    @Test func batchNormalizationKeepsTheWholeBatch() {
        var g = SeededGenerator(seed: 67)
        let network = Network([
            Conv2D(inChannels: 1, outChannels: 32, kernel: (3, 3), padding: .same, generator: &g), BatchNorm(channels: 32),
            Activation(.relu), GlobalAveragePool(), Dense(inFeatures: 32, outFeatures: 4, generator: &g),
        ])
        let cuttable = network.layers.allSatisfy { $0.trainsSampleBySample }
        #expect(!cuttable)
        #expect(!Dropout(rate: 0.2).trainsSampleBySample && Dropout(rate: 0).trainsSampleBySample)
        // Cutting would normalize each part with its own statistics: the step must equal the whole-batch one exactly.
        var cut = network, whole = network
        var first = Optimizer(.sgd(momentum: 0, nesterov: false), learningRate: 0.1), second = first
        var g1 = SeededGenerator(seed: 68), g2 = SeededGenerator(seed: 68)
        cut.trainingStep(inputs, labels: labels, loss: SoftmaxCrossEntropy(), optimizer: &first, generator: &g1, threads: 2)
        let (logits, records) = whole.forward(inputs, mode: .training, generator: &g2)
        var parameters = whole.parameters
        second.update(
            &parameters,
            gradients: whole.backward(
                SoftmaxCrossEntropy()(logits: logits, labels: labels).dLogits,
                records: records))
        whole.parameters = parameters
        #expect(cut.parameters.joined().flatMap(\.scalars) == whole.parameters.joined().flatMap(\.scalars))
    }

    @Test func rowsAreCutIntoNearlyEqualConsecutiveParts() {
        #expect(splitRows(64, into: 2) == [0..<32, 32..<64])
        #expect(splitRows(7, into: 2) == [0..<4, 4..<7])
        #expect(splitRows(1, into: 2) == [0..<1])
        #expect(splitRows(5, into: 3) == [0..<2, 2..<4, 4..<5])
    }
}
