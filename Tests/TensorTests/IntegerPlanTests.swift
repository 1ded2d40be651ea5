import Testing

@testable import Tensor

/// What an 8-bit layer computes, spelled out with float layers: the input rounded to its 8-bit grid and back.
private struct FakeQuantize: Layer {
    let quantization: ActivationQuantization
    func outputShape(for inputShape: [Int]) -> [Int] { inputShape }
    func forward(_ input: Tensor) -> Tensor {
        Tensor(
            shape: input.shape,
            scalars: input.scalars.map {
                Float(Int(quantization.quantize($0)) - quantization.zeroPoint) * quantization.scale
            })
    }
}

/// The 8-bit plan steps against their reference: the same layers in float with the input fake-quantized.
@Suite struct IntegerPlanTests {
    /// Inputs are N(0, 1), so a scale covering ±4 clips almost nothing.
    static let signed = ActivationQuantization(layer: 0, minimum: -4, maximum: 4)

    func check(
        _ layers: [any Layer], quantized: [Int: ActivationQuantization], inputShape: [Int], tolerance: Float,
        _ context: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        var reference: [any Layer] = []
        var compact: [any Layer] = []
        var scales: [ActivationQuantization] = []
        for (index, layer) in layers.enumerated() {
            guard var quantization = quantized[index] else { reference.append(layer); compact.append(layer); continue }
            quantization.layer = index
            scales.append(quantization)
            switch layer {
            case let conv as Conv2D:
                let q = QuantizedConv2D(quantizing: conv, as: .int8)
                reference += [FakeQuantize(quantization: quantization), q.dequantized()]
                compact.append(q)
            case let dense as Dense:
                let q = QuantizedDense(quantizing: dense, as: .int8)
                reference += [FakeQuantize(quantization: quantization), q.dequantized()]
                compact.append(q)
            case let conv as Conv1D:
                let q = QuantizedConv1D(quantizing: conv, as: .int8)
                reference += [FakeQuantize(quantization: quantization), q.dequantized()]
                compact.append(q)
            default:
                Issue.record("layer \(index) cannot be quantized")
            }
        }
        let batch = randomTensor([3] + inputShape, seed: 21)
        let expected = Sequential(reference)(batch)
        for level in Kernels.availableLevels {
            let plan = InferencePlan(Sequential(compact), inputShape: inputShape, quantization: scales, level: level)
            #expect(plan.integerSteps == scales.count, "\(context): \(plan.stepDescriptions)", sourceLocation: sourceLocation)
            // Weights the encoder writes are 7-bit, so every 8-bit step takes AVX2's vpmaddubsw path.
            #expect(plan.narrowIntegerSteps == scales.count, "\(context): \(plan.stepDescriptions)", sourceLocation: sourceLocation)
            #expect(plan.isAllocationFree, "\(context): \(plan.stepDescriptions)", sourceLocation: sourceLocation)
            expectCloseOnUnitScale(
                plan.run(batch), expected, relativeTolerance: tolerance, "\(context) at \(level)",
                sourceLocation: sourceLocation)
        }
    }

    @Test func oneIntegerConvolutionEqualsItsFloatSpelling() {
        var g = SeededGenerator(seed: 31)
        for inChannels in [1, 3, 4, 7] {
            // 16 and 32 channels take the VNNI kernel's 16-lane sums (two pooled pixels at once where a row has them).
            for outChannels in awkwardSizes + [16, 24, 32] {
                for (kernel, padding) in [((3, 3), Padding.same), ((1, 1), .valid), ((2, 3), .valid)] {
                    let conv = Conv2D(
                        weight: Conv2D(
                            inChannels: inChannels, outChannels: outChannels, kernel: kernel, padding: padding,
                            generator: &g
                        ).weight,
                        bias: randomTensor([outChannels], seed: 3), padding: padding)
                    for size in [(3, 3), (5, 8), (8, 8), (6, 10)] {
                        check(
                            [conv], quantized: [0: Self.signed], inputShape: [size.0, size.1, inChannels],
                            tolerance: Tolerance.kernelRelative, "int8 conv \(inChannels)→\(outChannels) k\(kernel) \(padding) on \(size)")
                        guard padding == .same else { continue }
                        check(
                            [conv, Activation(.relu), Pool2D(.max, size: (2, 2))], quantized: [0: Self.signed],
                            inputShape: [size.0, size.1, inChannels], tolerance: Tolerance.kernelRelative,
                            "int8 conv+relu+pool \(inChannels)→\(outChannels) k\(kernel) \(padding) on \(size)")
                    }
                }
            }
        }
    }

    @Test func denseAndConv1DInIntegers() {
        var g = SeededGenerator(seed: 32)
        for inFeatures in awkwardSizes + [194] {
            for outFeatures in awkwardSizes + [32] {
                let dense = Dense(
                    weight: Dense(inFeatures: inFeatures, outFeatures: outFeatures, generator: &g).weight,
                    bias: randomTensor([outFeatures], seed: 4))
                check(
                    [dense, Activation(.relu)], quantized: [0: Self.signed], inputShape: [inFeatures],
                    tolerance: Tolerance.kernelRelative, "int8 dense \(inFeatures)→\(outFeatures)")
            }
        }
        let conv = Conv1D(inChannels: 3, outChannels: 9, kernelSize: 5, stride: 2, padding: .same, generator: &g)
        check([conv], quantized: [0: Self.signed], inputShape: [17, 3], tolerance: Tolerance.kernelRelative, "int8 conv1d")
    }

    /// Weights written before issue 49 reach ±127 (and an imported model's −128): such a layer is not narrow, and
    /// AVX2 sums it with 16-bit multiply-adds instead of `vpmaddubsw`, whose pairs could saturate. Every level gives
    /// the same values, and they match the layer's float spelling.
    @Test func fullRangeWeightsTakeTheExactWidePath() {
        var g = SeededGenerator(seed: 33)
        for (inChannels, outChannels) in [(4, 16), (7, 9), (16, 32)] {
            let rows = outChannels, columns = 9 * inChannels
            var values = (0..<(rows * columns)).map { _ in Int8(truncatingIfNeeded: Int(g.next() % 255) - 127) }
            values[0] = -128
            values[1] = 127
            let weight = QuantizedTensor(
                int8Scales: (0..<rows).map { Float($0 + 1) / 2000 }, values: values, shape: [outChannels, 3, 3, inChannels])
            let conv = QuantizedConv2D(weight: weight, bias: randomTensor([outChannels], seed: 5), stride: (1, 1), padding: .same)
            var quantization = Self.signed
            quantization.layer = 0
            let batch = randomTensor([2, 6, 7, inChannels], seed: 22)
            let expected = Sequential([FakeQuantize(quantization: quantization), conv.dequantized()])(batch)
            var answers: [[Float]] = []
            for level in Kernels.availableLevels {
                let plan = InferencePlan(Sequential([conv]), inputShape: [6, 7, inChannels], quantization: [quantization], level: level)
                #expect(plan.integerSteps == 1, "\(plan.stepDescriptions)")
                #expect(plan.narrowIntegerSteps == 0, "±127 weights must not take the vpmaddubsw path")
                let got = plan.run(batch)
                expectCloseOnUnitScale(got, expected, relativeTolerance: Tolerance.kernelRelative, "\(inChannels)→\(outChannels) at \(level)")
                answers.append(got.scalars)
            }
            // The sums are exact at every level; only the float scaling after them may round differently.
            for (level, answer) in zip(Kernels.availableLevels, answers) {
                expectClose(
                    Tensor(shape: [answer.count], scalars: answer), Tensor(shape: [answers[0].count], scalars: answers[0]),
                    relativeTolerance: 1e-6, "\(inChannels)→\(outChannels): \(level) against portable")
            }
        }
    }

    @Test func chainedIntegerLayersRequantizeBetweenThem() {
        // The shipped shape architecture with its two middle convolutions in 8 bits: the first writes bytes for the
        // second directly. A requantized value may land one step away from the reference's where rounding ties
        // differ in the last float bit, so this compares at 1% of the output scale; a wrong index or scale is off
        // by far more.
        var g = SeededGenerator(seed: 33)
        let unsigned = ActivationQuantization(layer: 0, minimum: 0, maximum: 3)
        let layers = shapeNetworkLayers(&g, softmax: false)
        check(
            layers, quantized: [3: unsigned, 6: ActivationQuantization(layer: 0, minimum: 0, maximum: 6)], inputShape: [16, 16, 1],
            tolerance: 1e-2, "shape network in int8")
        let plan = InferencePlan(
            Sequential(
                layers.enumerated().map { index, layer in
                    index == 3 || index == 6 ? QuantizedConv2D(quantizing: layer as! Conv2D, as: .int8) : layer
                }),
            inputShape: [16, 16, 1],
            quantization: [
                ActivationQuantization(layer: 3, scale: 0.01, zeroPoint: 0),
                ActivationQuantization(layer: 6, scale: 0.02, zeroPoint: 0),
            ])
        #expect(plan.stepDescriptions.filter { $0.hasPrefix("quantize") }.isEmpty, "no quantize step: \(plan.stepDescriptions)")
        #expect(plan.stepDescriptions.contains { $0.hasSuffix("→ int8") }, "requantized in the kernel: \(plan.stepDescriptions)")
        #expect(
            plan.stepDescriptions.contains { $0.hasPrefix("conv ") && $0.hasSuffix("→ int8 (direct)") },
            "the float convolution writes bytes: \(plan.stepDescriptions)")
    }

    /// A float convolution followed by an 8-bit one writes the bytes itself; they are the quantize step's, bit for
    /// bit. The twin plan has a second ReLU (a no-op on ReLU'd values) between the two, which keeps the quantize
    /// step. Channel counts below, at and past a block of 8 (the quantize kernel rounds its blocks and the channels
    /// after them differently), a zero point, pooled and not.
    @Test func floatConvolutionWritesTheQuantizeStepsBytes() {
        var g = SeededGenerator(seed: 35)
        // Two input channels go the per-pixel way; one input channel on a 34-wide image runs 16 pixels a vector.
        for (channels, pool, inChannels) in [
            (1, false, 2), (3, true, 2), (8, false, 2), (12, true, 2), (17, true, 2), (33, false, 2),
            (8, true, 1), (3, false, 1), (12, true, 1), (17, false, 1),
        ] {
            let width = inChannels == 1 ? 34 : 10
            let first = Conv2D(inChannels: inChannels, outChannels: channels, kernel: (3, 3), padding: .same, generator: &g)
            let second = QuantizedConv2D(
                quantizing: Conv2D(inChannels: channels, outChannels: 5, kernel: (3, 3), padding: .same, generator: &g), as: .int8)
            let head: [any Layer] = [first, Activation(.relu)] + (pool ? [Pool2D(.max, size: (2, 2))] : [])
            let fusedLayers = head + [second]
            let twinLayers = head + [Activation(.relu), second]
            let scale = ActivationQuantization(layer: 0, scale: 0.0173, zeroPoint: 3)
            var fusedScale = scale, twinScale = scale
            fusedScale.layer = fusedLayers.count - 1
            twinScale.layer = twinLayers.count - 1
            let input = randomTensor([3, 6, width, inChannels], seed: UInt64(channels))
            for level in Kernels.availableLevels {
                let fused = InferencePlan(Sequential(fusedLayers), inputShape: [6, width, inChannels], quantization: [fusedScale], level: level)
                let twin = InferencePlan(Sequential(twinLayers), inputShape: [6, width, inChannels], quantization: [twinScale], level: level)
                #expect(fused.stepDescriptions.allSatisfy { !$0.hasPrefix("quantize") }, "\(fused.stepDescriptions)")
                #expect(twin.stepDescriptions.contains { $0.hasPrefix("quantize") }, "\(twin.stepDescriptions)")
                let (a, b) = (fused.run(input).scalars, twin.run(input).scalars)
                let first = a.indices.first { $0 >= b.count || a[$0].bitPattern != b[$0].bitPattern }
                #expect(
                    a.count == b.count && first == nil,
                    "\(inChannels)→\(channels) channels, pool \(pool) at \(level): first difference at \(String(describing: first))")
            }
        }
    }

    @Test func quantizedLayersWithoutAScaleRunDequantizedInFloat() {
        var g = SeededGenerator(seed: 34)
        let conv = Conv2D(inChannels: 3, outChannels: 7, kernel: (3, 3), padding: .same, generator: &g)
        let dense = Dense(inFeatures: 5 * 5 * 7, outFeatures: 4, generator: &g)
        let compact: [any Layer] = [
            QuantizedConv2D(quantizing: conv, as: .int8), Activation(.relu), Flatten(),
            QuantizedDense(quantizing: dense, as: .q4),
        ]
        let plan = InferencePlan(Sequential(compact), inputShape: [5, 5, 3])
        #expect(plan.isAllocationFree && plan.integerSteps == 0, "\(plan.stepDescriptions)")
        let batch = randomTensor([2, 5, 5, 3], seed: 8)
        expectCloseOnUnitScale(plan.run(batch), Sequential(compact)(batch), relativeTolerance: Tolerance.kernelRelative)
    }

    @Test func quantizationCoversTheRange() {
        let unsigned = ActivationQuantization(layer: 2, minimum: 0, maximum: 5.1)
        #expect(unsigned.zeroPoint == 0 && unsigned.quantize(5.1) == 255 && unsigned.quantize(0) == 0 && unsigned.quantize(-1) == 0)
        let signed = ActivationQuantization(layer: 2, minimum: -2, maximum: 1)
        #expect(signed.zeroPoint == 128 && signed.quantize(-2) == 1 && signed.quantize(0) == 128 && signed.quantize(2) == 255)
        #expect(ActivationQuantization(layer: 0, minimum: 0, maximum: 0).problem == nil)
        #expect(ActivationQuantization(layer: 0, scale: .nan, zeroPoint: 0).problem != nil)
        #expect(ActivationQuantization(layer: 0, scale: 1, zeroPoint: 256).problem != nil)
    }
}
