import Foundation
import Tensor
import Testing

@testable import Train

/// Analytic gradients against central finite differences, largest difference relative to the largest numeric
/// gradient, or to 1 when every gradient is smaller: inputs and weights are N(0, 1), so gradients are of order 1,
/// and below that the difference measures the reference outputs' Float rounding (about 1e-7 over 2h) rather than
/// the gradient. The losses are evaluated in Double from Double-accumulating reference forward passes; with
/// h = 1e-3 the truncation error (h² times the third derivative over 6) stays near 1e-6.
let gradientRelativeTolerance = 2e-3
let finiteDifferenceStep: Float = 1e-3

func random(_ shape: [Int], seed: UInt64, scale: Float = 1) -> Tensor {
    var g = SeededGenerator(seed: seed)
    return Tensor(randomNormal: shape, generator: &g) * scale
}

/// `Σ weights ⊙ values` in Double: the scalar loss whose gradient with respect to the output is `weights`.
func dot(_ values: Tensor, _ weights: Tensor) -> Double {
    zip(values.scalars, weights.scalars).reduce(0.0) { $0 + Double($1.0) * Double($1.1) }
}

/// Checks `analytic` against the central difference of `loss` around `point`, element by element.
func expectGradient(
    _ analytic: Tensor, of loss: (Tensor) -> Double, at point: Tensor, _ what: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    guard analytic.shape == point.shape else {
        Issue.record("\(what): gradient shape \(analytic.shape) differs from \(point.shape)", sourceLocation: sourceLocation)
        return
    }
    var numeric = [Double](repeating: 0, count: point.count)
    for i in 0..<point.count {
        var plus = point, minus = point
        plus.withUnsafeMutableBufferPointer { $0[i] += finiteDifferenceStep }
        minus.withUnsafeMutableBufferPointer { $0[i] -= finiteDifferenceStep }
        numeric[i] = (loss(plus) - loss(minus)) / Double(2 * finiteDifferenceStep)
    }
    let scale = max(numeric.map(abs).max() ?? 0, 1)
    var worst = 0.0, worstIndex = 0
    for i in 0..<point.count where abs(Double(analytic.scalars[i]) - numeric[i]) > worst {
        worst = abs(Double(analytic.scalars[i]) - numeric[i])
        worstIndex = i
    }
    if worst > gradientRelativeTolerance * scale {
        Issue.record(
            Comment(
                rawValue: "\(what): max |analytic − numeric| = \(worst) at \(worstIndex) (analytic "
                    + "\(analytic.scalars[worstIndex]), numeric \(numeric[worstIndex])), limit \(gradientRelativeTolerance * scale)"),
            sourceLocation: sourceLocation)
    }
}

/// Runs the layer's recorded forward and backward with `dOutput = weights` and returns the gradients.
func analytic<L: TrainableLayer>(_ layer: L, _ input: Tensor, weights: Tensor, mode: Mode = .training, seed: UInt64 = 1)
    -> (dInput: Tensor, gradients: [Tensor])
{
    var g = SeededGenerator(seed: seed)
    let record = layer.trainingForward(input, mode: mode, generator: &g)
    return layer.backward(weights, record: record)
}

@Suite("Gradients against finite differences")
struct GradientCheckTests {
    @Test(arguments: [(1, 1, 1), (3, 7, 5), (2, 17, 3)])
    func dense(batch: Int, inFeatures: Int, outFeatures: Int) {
        let layer = Dense(weight: random([outFeatures, inFeatures], seed: 1), bias: random([outFeatures], seed: 2))
        let x = random([batch, inFeatures], seed: 3), r = random([batch, outFeatures], seed: 4)
        let (dX, grads) = analytic(layer, x, weights: r)
        expectGradient(dX, of: { dot(Reference.dense($0, weight: layer.weight, bias: layer.bias), r) }, at: x, "dX")
        expectGradient(grads[0], of: { dot(Reference.dense(x, weight: $0, bias: layer.bias), r) }, at: layer.weight, "dW")
        expectGradient(grads[1], of: { dot(Reference.dense(x, weight: layer.weight, bias: $0), r) }, at: layer.bias, "db")
    }

    @Test(arguments: [
        ([2, 5, 7, 3], [4, 3, 2, 3], 2, Padding.same), ([1, 4, 4, 2], [3, 3, 3, 2], 1, .valid),
        ([2, 3, 5, 1], [2, 1, 1, 1], 1, .same), ([1, 7, 3, 2], [2, 2, 3, 2], 2, .valid),
    ])
    func conv2d(inputShape: [Int], weightShape: [Int], stride: Int, padding: Padding) {
        let layer = Conv2D(
            weight: random(weightShape, seed: 5), bias: random([weightShape[0]], seed: 6),
            stride: (stride, stride), padding: padding)
        let x = random(inputShape, seed: 7)
        let r = random(layer.outputShape(for: inputShape), seed: 8)
        let (dX, grads) = analytic(layer, x, weights: r)
        let reference = { (x: Tensor, w: Tensor, b: Tensor) in
            Reference.conv2d(x, weight: w, bias: b, stride: (stride, stride), padding: padding)
        }
        expectGradient(dX, of: { dot(reference($0, layer.weight, layer.bias), r) }, at: x, "dX")
        expectGradient(grads[0], of: { dot(reference(x, $0, layer.bias), r) }, at: layer.weight, "dW")
        expectGradient(grads[1], of: { dot(reference(x, layer.weight, $0), r) }, at: layer.bias, "db")
    }

    @Test(arguments: [([2, 9, 3], [4, 3, 3], 2, Padding.same), ([1, 7, 2], [3, 5, 2], 1, .valid), ([3, 1, 1], [1, 1, 1], 1, .same)])
    func conv1d(inputShape: [Int], weightShape: [Int], stride: Int, padding: Padding) {
        let layer = Conv1D(
            weight: random(weightShape, seed: 9), bias: random([weightShape[0]], seed: 10),
            stride: stride, padding: padding)
        let x = random(inputShape, seed: 11)
        let r = random(layer.outputShape(for: inputShape), seed: 12)
        let (dX, grads) = analytic(layer, x, weights: r)
        let reference = { (x: Tensor, w: Tensor, b: Tensor) in
            Reference.conv1d(x, weight: w, bias: b, stride: stride, padding: padding)
        }
        expectGradient(dX, of: { dot(reference($0, layer.weight, layer.bias), r) }, at: x, "dX")
        expectGradient(grads[0], of: { dot(reference(x, $0, layer.bias), r) }, at: layer.weight, "dW")
        expectGradient(grads[1], of: { dot(reference(x, layer.weight, $0), r) }, at: layer.bias, "db")
    }

    /// Inputs with distinct values at least 0.01 apart, so a max never changes hands within ±h.
    func separated(_ shape: [Int], seed: UInt64) -> Tensor {
        var g = SeededGenerator(seed: seed)
        let count = elementCount(shape)
        var values = (0..<count).map { Float($0) * 0.01 }
        for i in stride(from: count - 1, to: 0, by: -1) { values.swapAt(i, g.nextIndex(below: i + 1)) }
        return Tensor(shape: shape, scalars: values)
    }

    @Test(arguments: PoolingKind.allCases, [Padding.valid, .same])
    func pooling(kind: PoolingKind, padding: Padding) {
        let layer2d = Pool2D(kind, size: (3, 2), stride: (2, 1), padding: padding)
        let x2 = separated([2, 5, 6, 3], seed: 13)
        let r2 = random(layer2d.outputShape(for: x2.shape), seed: 14)
        expectGradient(
            analytic(layer2d, x2, weights: r2).dInput,
            of: {
                dot(Reference.pool2d($0, kind: kind, size: (3, 2), stride: (2, 1), padding: padding), r2)
            }, at: x2, "Pool2D dX")

        let layer1d = Pool1D(kind, size: 3, stride: 2, padding: padding)
        let x1 = separated([2, 8, 3], seed: 15)
        let r1 = random(layer1d.outputShape(for: x1.shape), seed: 16)
        expectGradient(
            analytic(layer1d, x1, weights: r1).dInput,
            of: {
                dot(Reference.pool1d($0, kind: kind, size: 3, stride: 2, padding: padding), r1)
            }, at: x1, "Pool1D dX")
    }

    @Test func globalAveragePoolAndFlatten() {
        let x = random([2, 3, 5, 4], seed: 17)
        let r = random([2, 4], seed: 18)
        expectGradient(
            analytic(GlobalAveragePool(), x, weights: r).dInput,
            of: { x in
                var total = 0.0
                for n in 0..<2 {
                    for c in 0..<4 {
                        var mean = 0.0
                        for p in 0..<15 { mean += Double(x.scalars[(n * 15 + p) * 4 + c]) }
                        total += mean / 15 * Double(r.scalars[n * 4 + c])
                    }
                }
                return total
            }, at: x, "GlobalAveragePool dX")
        let rf = random([2, 60], seed: 19)
        expectGradient(analytic(Flatten(), x, weights: rf).dInput, of: { dot($0, rf) }, at: x, "Flatten dX")
    }

    @Test(arguments: [
        Activation.Function.relu, .leakyRelu(alpha: 0.1), .sigmoid, .tanh, .softmax, .logSoftmax, .elu(alpha: 0.7),
        .selu(alpha: 1.6732632, gamma: 1.050701), .softplus, .softsign,
    ])
    func activations(function: Activation.Function) {
        // Away from relu's kink: |x| ≥ 0.05.
        let x = random([3, 7], seed: 20).map { $0 >= 0 ? $0 + 0.05 : $0 - 0.05 }
        let r = random([3, 7], seed: 21)
        let f: (Double) -> Double
        switch function {
        case .relu: f = { max($0, 0) }
        case .leakyRelu(let alpha): f = { $0 > 0 ? $0 : Double(alpha) * $0 }
        case .sigmoid: f = { 1 / (1 + exp(-$0)) }
        case .tanh: f = { Foundation.tanh($0) }
        case .softmax, .logSoftmax: f = { $0 }
        case .elu(let alpha): f = { $0 > 0 ? $0 : Double(alpha) * (exp($0) - 1) }
        case let .selu(alpha, gamma): f = { Double(gamma) * ($0 > 0 ? $0 : Double(alpha) * (exp($0) - 1)) }
        case .softplus: f = { log(1 + exp($0)) }
        case .softsign: f = { $0 / (1 + abs($0)) }
        }
        let loss: (Tensor) -> Double = { x in
            if function == .softmax || function == .logSoftmax {
                return dot(Reference.softmax(x, logarithmic: function == .logSoftmax), r)
            }
            return zip(x.scalars, r.scalars).reduce(0.0) { $0 + f(Double($1.0)) * Double($1.1) }
        }
        expectGradient(analytic(Activation(function), x, weights: r).dInput, of: loss, at: x, "\(function) dX")
    }

    /// Batch normalization in Double: batch statistics (training) or the running ones (inference).
    func batchNormLoss(_ x: Tensor, gamma: Tensor, beta: Tensor, norm: BatchNorm, training: Bool, r: Tensor) -> Double {
        let c = norm.channels, rows = x.count / c
        var total = 0.0
        for channel in 0..<c {
            let column = (0..<rows).map { Double(x.scalars[$0 * c + channel]) }
            let mean = training ? column.reduce(0, +) / Double(rows) : Double(norm.mean.scalars[channel])
            let variance =
                training
                ? column.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(rows) : Double(norm.variance.scalars[channel])
            for (row, value) in column.enumerated() {
                let y =
                    Double(gamma.scalars[channel]) * (value - mean) / (variance + Double(norm.epsilon)).squareRoot()
                    + Double(beta.scalars[channel])
                total += y * Double(r.scalars[row * c + channel])
            }
        }
        return total
    }

    @Test(arguments: [Mode.training, .inference])
    func batchNorm(mode: Mode) {
        let norm = BatchNorm(
            gamma: random([3], seed: 22), beta: random([3], seed: 23), mean: random([3], seed: 24),
            variance: random([3], seed: 25).map { abs($0) + 0.5 })
        let x = random([4, 5, 3], seed: 26, scale: 2), r = random([4, 5, 3], seed: 27)
        let training = mode == .training
        let (dX, grads) = analytic(norm, x, weights: r, mode: mode)
        expectGradient(dX, of: { batchNormLoss($0, gamma: norm.gamma, beta: norm.beta, norm: norm, training: training, r: r) }, at: x, "dX")
        expectGradient(grads[0], of: { batchNormLoss(x, gamma: $0, beta: norm.beta, norm: norm, training: training, r: r) }, at: norm.gamma, "dγ")
        expectGradient(grads[1], of: { batchNormLoss(x, gamma: norm.gamma, beta: $0, norm: norm, training: training, r: r) }, at: norm.beta, "dβ")
    }

    @Test func batchNormRunningStatisticsFollowTheBatches() {
        var norm = BatchNorm(channels: 2)
        let x = Tensor(shape: [4, 2], scalars: [1, 10, 3, 10, 5, 14, 7, 14])  // means 4, 12; variances 5, 4 (biased)
        var g = SeededGenerator(seed: 1)
        let record = norm.trainingForward(x, mode: .training, generator: &g)
        norm.absorb(record)
        #expect(norm.mean.scalars == [0.4, 1.2])
        // Unbiased variances 20/3 and 16/3, moved 10% from 1.
        #expect(abs(norm.variance.scalars[0] - (0.9 + 2 / 3)) < 1e-6 && abs(norm.variance.scalars[1] - (0.9 + 1.6 / 3)) < 1e-6)
        // Training output is normalized with the batch statistics: mean 0, variance 1 per channel.
        let y = record.output
        #expect(abs(y.mean(axis: 0).scalars[0]) < 1e-6)
        #expect(abs((y * y).mean(axis: 0).scalars[1] - 1) < 1e-4)
    }

    @Test(arguments: [Mode.training, .inference])
    func dropout(mode: Mode) {
        let layer = Dropout(rate: 0.3)
        let x = random([4, 25], seed: 28), r = random([4, 25], seed: 29)
        var g = SeededGenerator(seed: 30)
        let record = layer.trainingForward(x, mode: mode, generator: &g)
        let dX = layer.backward(r, record: record).dInput
        // The mask is fixed once drawn, so the layer is linear in x: check against the recorded mask.
        var mask = Tensor(repeating: 1, shape: x.shape)
        if case let .dropoutMask(kept) = record.saved { mask = kept }
        expectGradient(dX, of: { dot($0 * mask, r) }, at: x, "Dropout dX")
        if mode == .training {
            let dropped = mask.scalars.filter { $0 == 0 }.count
            #expect(dropped > 15 && dropped < 45, "about 30 of 100 dropped, got \(dropped)")
            #expect(mask.scalars.allSatisfy { $0 == 0 || abs($0 - 1 / 0.7) < 1e-6 })
        } else {
            #expect(record.output == x)
        }
        #expect(layer.exported == nil)
    }
}
