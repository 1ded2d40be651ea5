import Tensor
import Testing

@Suite("Layers")
struct LayerTests {
    @Test(arguments: awkwardSizes)
    func denseMatchesReference(batch: Int) {
        for (inFeatures, outFeatures) in [(1, 1), (3, 7), (17, 2), (33, 17), (576, 128)] {
            let input = randomTensor([batch, inFeatures], seed: 40)
            let layer = Dense(weight: randomTensor([outFeatures, inFeatures], seed: 41), bias: randomTensor([outFeatures], seed: 42))
            expectClose(
                layer(input), Reference.dense(input, weight: layer.weight, bias: layer.bias),
                relativeTolerance: Tolerance.kernelRelative, "\(inFeatures)→\(outFeatures)")
        }
    }

    static func statistics(_ channels: Int) -> BatchNorm {
        BatchNorm(
            gamma: randomTensor([channels], seed: 43), beta: randomTensor([channels], seed: 44),
            mean: randomTensor([channels], seed: 45), variance: randomTensor([channels], seed: 46).map { abs($0) + 0.1 })
    }

    @Test func batchNormMatchesItsFormula() {
        let norm = Self.statistics(3)
        let input = randomTensor([2, 5, 3], seed: 47)
        var expected = [Float]()
        for (i, x) in input.scalars.enumerated() {
            let c = i % 3
            let normalized = (Double(x) - Double(norm.mean.scalars[c])) / (Double(norm.variance.scalars[c]) + 1e-5).squareRoot()
            expected.append(Float(Double(norm.gamma.scalars[c]) * normalized + Double(norm.beta.scalars[c])))
        }
        expectClose(norm(input), Tensor(shape: input.shape, scalars: expected), relativeTolerance: Tolerance.elementwiseRelative * 10)
    }

    @Test func foldingBatchNormKeepsOutputs() {
        let dense = Dense(weight: randomTensor([7, 17]), bias: randomTensor([7]))
        let denseInput = randomTensor([3, 17], seed: 48)
        expectClose(
            dense.folding(Self.statistics(7))(denseInput), Self.statistics(7)(dense(denseInput)),
            relativeTolerance: Tolerance.foldedRelative)

        let conv2d = Conv2D(weight: randomTensor([5, 3, 3, 2]), bias: randomTensor([5]), stride: (2, 2), padding: .same)
        let image = randomTensor([2, 7, 9, 2], seed: 49)
        expectClose(
            conv2d.folding(Self.statistics(5))(image), Self.statistics(5)(conv2d(image)),
            relativeTolerance: Tolerance.foldedRelative)

        let conv1d = Conv1D(weight: randomTensor([4, 5, 3]), bias: randomTensor([4]), padding: .valid)
        let sequence = randomTensor([2, 17, 3], seed: 50)
        expectClose(
            conv1d.folding(Self.statistics(4))(sequence), Self.statistics(4)(conv1d(sequence)),
            relativeTolerance: Tolerance.foldedRelative)
    }

    @Test func flattenAndGlobalAveragePool() {
        let image = randomTensor([2, 3, 5, 4])
        let flat = Flatten()(image)
        #expect(flat.shape == [2, 60])
        #expect(flat.scalars == image.scalars)
        let pooled = GlobalAveragePool()(image)
        #expect(pooled.shape == [2, 4])
        for n in 0..<2 {
            for c in 0..<4 {
                var total = 0.0
                for y in 0..<3 { for x in 0..<5 { total += Double(image[n, y, x, c]) } }
                #expect(abs(Double(pooled[n, c]) - total / 15) < 1e-6)
            }
        }
        #expect(GlobalAveragePool().outputShape(for: [7, 33, 12]) == [7, 12])
    }

    @Test func activationLayerAppliesItsFunction() {
        let x = randomTensor([3, 7])
        #expect(Activation(.relu)(x) == x.relu())
        #expect(Activation(.leakyRelu(alpha: 0.2))(x) == x.leakyRelu(alpha: 0.2))
        #expect(Activation(.sigmoid)(x) == x.sigmoid())
        #expect(Activation(.tanh)(x) == x.tanh())
        #expect(Activation(.softmax)(x) == x.softmax())
        #expect(Activation(.logSoftmax)(x) == x.logSoftmax())
    }

    @Test func sequentialChainsLayersAndShapes() {
        var generator = SeededGenerator(seed: 51)
        let conv = Conv2D(inChannels: 1, outChannels: 4, kernel: (3, 3), padding: .same, generator: &generator)
        let dense = Dense(inFeatures: 4 * 4 * 4, outFeatures: 3, generator: &generator)
        let model = Sequential([
            conv, Activation(.relu), Pool2D(.max, size: (2, 2)), Flatten(), dense, Activation(.softmax),
        ])
        #expect(model.outputShape(for: [5, 8, 8, 1]) == [5, 3])
        #expect(model.parameterCount == 4 * 9 + 4 + 64 * 3 + 3)
        let input = randomTensor([5, 8, 8, 1])
        let byHand = dense(Flatten()(Pool2D(.max, size: (2, 2))(conv(input).relu()))).softmax()
        #expect(model(input) == byHand)
    }
}
