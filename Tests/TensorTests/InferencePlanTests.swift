import Testing

@testable import Tensor

/// A compiled plan against its reference, `Sequential.forward`, at every instruction-set level this CPU runs.
@Suite struct InferencePlanTests {
    /// Runs `layers` both ways on a batch of 3 samples of `inputShape` and compares.
    func expectPlanMatches(
        _ layers: [any Layer], inputShape: [Int], allocationFree: Bool = true, _ context: String = "",
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let model = Sequential(layers)
        let batch = randomTensor([3] + inputShape, seed: 5)
        let expected = model(batch)
        for level in Kernels.availableLevels {
            let plan = InferencePlan(model, inputShape: inputShape, level: level)
            #expect(
                plan.isAllocationFree == allocationFree, "\(context) at \(level): \(plan.stepDescriptions)",
                sourceLocation: sourceLocation)
            expectCloseOnUnitScale(
                plan.run(batch), expected, relativeTolerance: Tolerance.kernelRelative, "\(context) at \(level)",
                sourceLocation: sourceLocation)
        }
    }

    @Test func convolutionsOfAwkwardShapes() {
        var g = SeededGenerator(seed: 3)
        for inChannels in [1, 3, 7] {
            for outChannels in awkwardSizes {
                for (kernel, stride, padding) in [
                    ((3, 3), (1, 1), Padding.same), ((1, 1), (1, 1), .valid), ((2, 3), (2, 1), .valid),
                    ((5, 5), (2, 2), .same), ((3, 1), (1, 2), .same),
                ] {
                    for size in [(1, 1), (2, 3), (7, 7), (17, 5)] where padding == .same || (size.0 >= kernel.0 && size.1 >= kernel.1) {
                        let conv = Conv2D(
                            inChannels: inChannels, outChannels: outChannels, kernel: kernel, stride: stride,
                            padding: padding, generator: &g)
                        let biased = Conv2D(weight: conv.weight, bias: randomTensor([outChannels], seed: 9), stride: stride, padding: padding)
                        expectPlanMatches(
                            [biased], inputShape: [size.0, size.1, inChannels],
                            "conv \(inChannels)→\(outChannels) k\(kernel) s\(stride) \(padding) on \(size)")
                        expectPlanMatches(
                            [biased, Activation(.relu)], inputShape: [size.0, size.1, inChannels],
                            "conv+relu \(inChannels)→\(outChannels) k\(kernel) s\(stride) \(padding) on \(size)")
                    }
                }
            }
        }
    }

    @Test func convolutionsWithFusedMaxPooling() {
        var g = SeededGenerator(seed: 12)
        for outChannels in awkwardSizes + [16, 24, 32] {
            for size in [(2, 2), (3, 5), (7, 7), (8, 8), (9, 16)] {
                let conv = Conv2D(inChannels: 3, outChannels: outChannels, kernel: (3, 3), padding: .same, generator: &g)
                let biased = Conv2D(weight: conv.weight, bias: randomTensor([outChannels], seed: 4), padding: .same)
                let pool = Pool2D(.max, size: (2, 2))
                expectPlanMatches([biased, Activation(.relu), pool], inputShape: [size.0, size.1, 3], "conv+relu+pool \(outChannels) on \(size)")
                expectPlanMatches([biased, pool, Activation(.relu)], inputShape: [size.0, size.1, 3], "conv+pool+relu \(outChannels) on \(size)")
                expectPlanMatches([biased, pool], inputShape: [size.0, size.1, 3], "conv+pool \(outChannels) on \(size)")
            }
        }
        let plan = InferencePlan(
            Sequential([
                Conv2D(inChannels: 1, outChannels: 2, kernel: (3, 3), generator: &g), Activation(.relu),
                Pool2D(.max, size: (2, 2)),
            ]), inputShape: [6, 6, 1])
        #expect(plan.stepDescriptions == ["conv 3x3 stride 1x1 1→2 + relu + max pool 2x2 (direct)"])
    }

    /// One input channel at stride 1 runs sixteen output pixels a vector (the columns past the last full 16 on
    /// the per-pixel path): widths below, at and past 16 and 32, pooled and not, channel counts around a block.
    @Test func singleChannelConvolutionsSixteenPixelsAtATime() {
        var g = SeededGenerator(seed: 14)
        for outChannels in [1, 8, 9, 16, 20] {
            for (size, kernel) in [((16, 16), (3, 3)), ((5, 33), (3, 3)), ((18, 40), (5, 3)), ((4, 15), (3, 3)), ((3, 17), (1, 2))] {
                let conv = Conv2D(inChannels: 1, outChannels: outChannels, kernel: kernel, padding: .same, generator: &g)
                let biased = Conv2D(weight: conv.weight, bias: randomTensor([outChannels], seed: 6), padding: .same)
                let valid = Conv2D(weight: conv.weight, bias: randomTensor([outChannels], seed: 7), padding: .valid)
                let pool = Pool2D(.max, size: (2, 2))
                let context = "1→\(outChannels) k\(kernel) on \(size)"
                expectPlanMatches([biased], inputShape: [size.0, size.1, 1], "conv \(context)")
                expectPlanMatches([valid, Activation(.relu)], inputShape: [size.0, size.1, 1], "valid conv+relu \(context)")
                expectPlanMatches([biased, Activation(.relu), pool], inputShape: [size.0, size.1, 1], "conv+relu+pool \(context)")
                expectPlanMatches([biased, pool], inputShape: [size.0, size.1, 1], "conv+pool \(context)")
            }
        }
    }

    @Test func conv1DAndPooling() {
        var g = SeededGenerator(seed: 4)
        for length in [8, 17, 33] {
            for padding in [Padding.same, .valid] {
                let conv = Conv1D(inChannels: 3, outChannels: 7, kernelSize: 3, stride: 1, padding: padding, generator: &g)
                expectPlanMatches(
                    [conv, Activation(.relu), Pool1D(.max, size: 2), Pool1D(.average, size: 3, stride: 1)],
                    inputShape: [length, 3], "conv1d \(padding) length \(length)")
            }
        }
        for size in [(2, 2), (3, 3), (7, 17)] {
            expectPlanMatches([Pool2D(.max, size: (2, 2))], inputShape: [size.0 * 2, size.1 * 2, 3], "max pool")
            expectPlanMatches([Pool2D(.average, size: (3, 2), stride: (1, 2))], inputShape: [size.0 + 2, size.1 * 2, 5], "average pool")
            expectPlanMatches([GlobalAveragePool()], inputShape: [size.0, size.1, 17], "global average")
        }
    }

    @Test func denseAndActivations() {
        var g = SeededGenerator(seed: 6)
        for inFeatures in awkwardSizes {
            for outFeatures in awkwardSizes + [32, 40, 64, 65] {
                let dense = Dense(inFeatures: inFeatures, outFeatures: outFeatures, generator: &g)
                let biased = Dense(weight: dense.weight, bias: randomTensor([outFeatures], seed: 2))
                expectPlanMatches([biased, Activation(.relu)], inputShape: [inFeatures], "dense \(inFeatures)→\(outFeatures)")
            }
        }
        for function in [Activation.Function.relu, .leakyRelu(alpha: 0.1), .sigmoid, .tanh, .softmax, .logSoftmax] {
            expectPlanMatches([Activation(function)], inputShape: [17], "activation \(function)")
            expectPlanMatches([Activation(function)], inputShape: [3, 2, 7], "activation \(function) on an image")
        }
        expectPlanMatches([Flatten(), Dense(inFeatures: 42, outFeatures: 3, generator: &g)], inputShape: [2, 3, 7], "flatten")
    }

    @Test func fallbackLayersStillAnswer() {
        // Batch normalization and padded pooling run through the layer's own forward pass.
        var g = SeededGenerator(seed: 8)
        let norm = BatchNorm(
            gamma: randomTensor([4], seed: 1), beta: randomTensor([4], seed: 2),
            mean: randomTensor([4], seed: 3), variance: Tensor(repeating: 2, shape: [4]))
        expectPlanMatches(
            [
                Conv2D(inChannels: 2, outChannels: 4, kernel: (3, 3), padding: .same, generator: &g), norm,
                Pool2D(.max, size: (2, 2), padding: .same), Activation(.relu),
            ],
            inputShape: [5, 5, 2], allocationFree: false, "fallback")
    }

    @Test func theShippedArchitectures() {
        var g = SeededGenerator(seed: 10)
        let shape = shapeNetworkLayers(&g)
        expectPlanMatches(shape, inputShape: [16, 16, 1], "shape network")
        let plan = InferencePlan(Sequential(shape), inputShape: [16, 16, 1])
        #expect(plan.stepDescriptions.count == 6, "ReLUs and poolings fused: \(plan.stepDescriptions)")
        let motion: [any Layer] = [
            Dense(inFeatures: 194, outFeatures: 32, generator: &g), Activation(.relu),
            Dense(inFeatures: 32, outFeatures: 3, generator: &g), Activation(.softmax),
        ]
        expectPlanMatches(motion, inputShape: [194], "motion network")
    }

    @Test func aWorkspaceIsReusableAndBordersStayZero() {
        var g = SeededGenerator(seed: 11)
        let model = Sequential([Conv2D(inChannels: 1, outChannels: 3, kernel: (3, 3), padding: .same, generator: &g)])
        let plan = InferencePlan(model, inputShape: [4, 4, 1])
        let workspace = plan.makeWorkspace()
        let first = randomTensor([1, 4, 4, 1], seed: 1), second = randomTensor([1, 4, 4, 1], seed: 2)
        _ = plan.run(first, workspace: workspace)
        // A second sample through the same workspace must not see the first one's values.
        expectClose(plan.run(second, workspace: workspace), model(second), relativeTolerance: Tolerance.kernelRelative)
    }
}
