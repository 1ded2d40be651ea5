import Datasets
import Foundation
import Models
import Tensor
import Testing
import WeightsFormat

@testable import Train

/// The overfit test's bar: a network that can learn must drive one fixed batch's loss below this within
/// `overfitStepLimit` steps.
let overfitLossThreshold: Float = 0.02
let overfitStepLimit = 300
/// Held-out accuracy the generated two-class problem must reach.
let twoClassHeldOutAccuracy = 0.99

/// Two concentric rings in the plane, radius 1 (class 0) and 2 (class 1), with radial noise σ = 0.15: not
/// linearly separable, so a network must learn a curved boundary; the rings overlap with probability ~1e-6.
func rings(count: Int, seed: UInt64) -> Examples {
    var g = SeededGenerator(seed: seed)
    var points: [Float] = [], labels: [Int] = []
    for i in 0..<count {
        let label = i % 2
        let angle = g.nextUniform(in: 0..<(2 * Double.pi))
        let radius = Double(1 + label) + g.nextNormal(standardDeviation: 0.15)
        points += [Float(radius * cos(angle)), Float(radius * sin(angle))]
        labels.append(label)
    }
    return Examples(inputs: Tensor(shape: [count, 2], scalars: points), labels: labels, classNames: ["inner", "outer"])
}

func smallMLP(seed: UInt64) -> Network {
    var g = SeededGenerator(seed: seed)
    return Network([
        Dense(inFeatures: 2, outFeatures: 32, generator: &g), Activation(.tanh),
        Dense(inFeatures: 32, outFeatures: 32, generator: &g), Activation(.relu), Dropout(rate: 0.1),
        Dense(inFeatures: 32, outFeatures: 2, generator: &g),
    ])
}

@Suite("Loss, optimizers, training loop")
struct TrainingTests {
    @Test func crossEntropyGradientMatchesFiniteDifferences() {
        let logits = random([4, 3], seed: 40, scale: 2)
        let labels = [0, 2, 1, 2]
        let loss = SoftmaxCrossEntropy(labelSmoothing: 0.1, classWeights: [1, 2, 0.5])
        let (_, dLogits) = loss(logits: logits, labels: labels)
        expectGradient(
            dLogits,
            of: { z in
                // The definition in Double.
                var total = 0.0, weights = 0.0
                for (row, label) in labels.enumerated() {
                    let values = (0..<3).map { Double(z.scalars[row * 3 + $0]) }
                    let top = values.max() ?? 0
                    let logSum = log(values.reduce(0) { $0 + exp($1 - top) }) + top
                    let w = [1.0, 2.0, 0.5][label]
                    for c in 0..<3 {
                        let target = (c == label ? 0.9 : 0) + 0.1 / 3
                        total -= w * target * (values[c] - logSum)
                    }
                    weights += w
                }
                return total / weights
            }, at: logits, "dLogits")
    }

    @Test func crossEntropyOfAConfidentCorrectAnswerIsNearZero() {
        let (loss, _) = SoftmaxCrossEntropy()(logits: Tensor([[20, 0, 0]]), labels: [0])
        #expect(loss < 1e-6)
        let (uniform, _) = SoftmaxCrossEntropy()(logits: Tensor([[0, 0, 0, 0]]), labels: [3])
        #expect(abs(uniform - log(4)) < 1e-6)
    }

    @Test func sgdWithMomentumTakesTheTextbookSteps() {
        var optimizer = Optimizer(.sgd(momentum: 0.9, nesterov: false), learningRate: 0.1)
        var parameters = [[Tensor(shape: [1], scalars: [1])]]
        let gradient = [[Tensor(shape: [1], scalars: [0.5])]]
        optimizer.update(&parameters, gradients: gradient)  // v = 0.5, θ = 1 − 0.05
        #expect(abs(parameters[0][0].scalars[0] - 0.95) < 1e-7)
        optimizer.update(&parameters, gradients: gradient)  // v = 0.95, θ = 0.95 − 0.095
        #expect(abs(parameters[0][0].scalars[0] - 0.855) < 1e-6)

        var nesterov = Optimizer(.sgd(momentum: 0.9, nesterov: true), learningRate: 0.1)
        var p = [[Tensor(shape: [1], scalars: [1])]]
        nesterov.update(&p, gradients: gradient)  // v = 0.5, θ = 1 − 0.1·(0.5 + 0.45)
        #expect(abs(p[0][0].scalars[0] - 0.905) < 1e-6)
    }

    @Test func adamFirstStepIsTheLearningRateTimesTheSign() {
        var optimizer = Optimizer(.adamDefault, learningRate: 0.01)
        var parameters = [[Tensor(shape: [3], scalars: [1, 1, 1])]]
        optimizer.update(&parameters, gradients: [[Tensor(shape: [3], scalars: [0.3, -2, 1e-3])]])
        // Bias-corrected m / √v = g / |g| on the first step (up to ε).
        for (value, expected) in zip(parameters[0][0].scalars, [0.99, 1.01, 0.99] as [Float]) {
            #expect(abs(value - expected) < 1e-5)
        }
    }

    @Test func weightDecayIsL2ForAdamAndDecoupledForAdamW() {
        let zero = [[Tensor(zeros: [2, 2])]]
        var adamW = Optimizer(.adamW(beta1: 0.9, beta2: 0.999, epsilon: 1e-8), learningRate: 0.1, weightDecay: 0.5)
        var w = [[Tensor(repeating: 2, shape: [2, 2])]]
        adamW.update(&w, gradients: zero)  // θ ← θ·(1 − 0.1·0.5), no gradient step
        #expect(w[0][0].scalars.allSatisfy { abs($0 - 1.9) < 1e-6 })
        var adam = Optimizer(.adamDefault, learningRate: 0.1, weightDecay: 0.5)
        var v = [[Tensor(repeating: 2, shape: [2, 2]), Tensor(repeating: 2, shape: [2])]]
        adam.update(&v, gradients: [[Tensor(zeros: [2, 2]), Tensor(zeros: [2])]])
        // L2 turns the decay into a gradient of 1, so Adam steps by the learning rate; the bias is not decayed.
        #expect(v[0][0].scalars.allSatisfy { abs($0 - 1.9) < 1e-5 })
        #expect(v[0][1].scalars == [2, 2])
    }

    @Test func clippingScalesTheGlobalNorm() {
        var optimizer = Optimizer(.sgd(momentum: 0, nesterov: false), learningRate: 1, gradientClipNorm: 1)
        var p = [[Tensor(zeros: [2])], [Tensor(zeros: [1])]]
        optimizer.update(&p, gradients: [[Tensor(shape: [2], scalars: [3, 0])], [Tensor(shape: [1], scalars: [4])]])
        #expect(abs(p[0][0].scalars[0] + 0.6) < 1e-6 && abs(p[1][0].scalars[0] + 0.8) < 1e-6)
    }

    @Test func schedules() {
        let cosine = LearningRateSchedule.cosine(totalSteps: 100, minimumFactor: 0.1)
        #expect(cosine.rate(base: 1, step: 0) == 1)
        #expect(abs(cosine.rate(base: 1, step: 50) - 0.55) < 1e-6)
        #expect(abs(cosine.rate(base: 1, step: 100) - 0.1) < 1e-6)
        #expect(abs(cosine.rate(base: 1, step: 500) - 0.1) < 1e-6)
        let step = LearningRateSchedule.step(every: 10, factor: 0.5)
        #expect(step.rate(base: 2, step: 9) == 2 && step.rate(base: 2, step: 10) == 1 && step.rate(base: 2, step: 25) == 0.5)
    }

    @Test func aConvolutionalNetworkOverfitsOneBatch() {
        var g = SeededGenerator(seed: 41)
        var network = Network([
            Conv2D(inChannels: 1, outChannels: 4, kernel: (3, 3), padding: .same, generator: &g),
            BatchNorm(channels: 4), Activation(.relu), Pool2D(.max, size: (2, 2)), Flatten(),
            Dense(inFeatures: 4 * 4 * 4, outFeatures: 3, generator: &g),
        ])
        let inputs = Tensor(randomNormal: [12, 8, 8, 1], generator: &g)
        let labels = (0..<12).map { $0 % 3 }
        var optimizer = Optimizer(.adamDefault, learningRate: 0.01)
        var loss: Float = .infinity, steps = 0
        while loss > overfitLossThreshold && steps < overfitStepLimit {
            loss = network.trainingStep(inputs, labels: labels, loss: SoftmaxCrossEntropy(), optimizer: &optimizer, generator: &g).loss
            steps += 1
        }
        #expect(loss <= overfitLossThreshold, "loss \(loss) after \(steps) steps")
    }

    @Test func aGeneratedTwoClassProblemReaches99PercentHeldOut() {
        let data = rings(count: 2000, seed: 42)
        let (training, heldOut) = data.splitByGroup(validationFraction: 0.25, seed: 43)
        let result = train(
            smallMLP(seed: 44), on: training, validation: nil,
            configuration: TrainingConfiguration(
                epochs: 40, batchSize: 32, seed: 45, patience: nil,
                optimizer: Optimizer(.adamDefault, learningRate: 0.01)))
        let predicted = result.network.logits(heldOut.inputs).argmax(axis: 1)
        let report = ClassificationReport(labels: data.classNames, truth: heldOut.labels, predicted: predicted)
        #expect(heldOut.count == 500)
        #expect(report.accuracy >= twoClassHeldOutAccuracy, "held-out accuracy \(report.accuracy)")
    }

    @Test func theSameSeedGivesTheSameWeightsAndAnotherSeedDoesNot() {
        let data = rings(count: 300, seed: 46)
        func run(_ seed: UInt64) -> [Float] {
            let configuration = TrainingConfiguration(epochs: 3, batchSize: 16, seed: seed, patience: nil)
            return train(smallMLP(seed: 47), on: data, validation: nil, configuration: configuration)
                .network.parameters.joined().flatMap(\.scalars)
        }
        #expect(run(1) == run(1))
        #expect(run(1) != run(2))
    }

    /// Early stopping waits while the validation loss still falls, even when the accuracy stands still (issue 22:
    /// a run stopped at epoch 16 with its loss still going from 0.50 to 0.39).
    @Test func earlyStoppingWaitsWhileTheValidationLossFalls() {
        func summary(_ epoch: Int, accuracy: Double, loss: Double, best: Bool) -> EpochSummary {
            EpochSummary(
                epoch: epoch, trainingLoss: loss, trainingAccuracy: accuracy, validationLoss: loss, validationAccuracy: accuracy,
                samplesPerSecond: 1, isBest: best)
        }
        // The best accuracy at epoch 2, then lower accuracies while the loss falls to epoch 8, then a flat loss.
        var stopping = EarlyStopping(patience: 3)
        let losses = [0.9, 0.8, 0.7, 0.65, 0.6, 0.55, 0.5, 0.45, 0.46, 0.47, 0.48]
        var stoppedAt: Int?
        for (index, loss) in losses.enumerated() where stoppedAt == nil {
            let epoch = index + 1
            if stopping.record(summary(epoch, accuracy: epoch == 2 ? 0.95 : 0.9, loss: loss, best: epoch <= 2)) { stoppedAt = epoch }
        }
        #expect(stoppedAt == 11, "3 epochs after the lowest loss (epoch 8), not after the best accuracy (epoch 2, which would stop at 5)")
        var never = EarlyStopping(patience: nil)
        let stops = never.record(summary(1, accuracy: 0.5, loss: 1, best: true))
        #expect(!stops)
    }

    @Test func trainingWarnsWhenItIsNotDone() {
        func summary(_ epoch: Int, loss: Double) -> EpochSummary {
            EpochSummary(
                epoch: epoch, trainingLoss: loss, trainingAccuracy: 1, validationLoss: loss, validationAccuracy: 1, samplesPerSecond: 1,
                isBest: epoch == 1)
        }
        let falling = TrainingResult(network: smallMLP(seed: 1), history: (1...10).map { summary($0, loss: 1 / Double($0)) }, bestEpoch: 1)
        let report = ClassificationReport(labels: ["a", "b"], truth: [0, 0], predicted: [0, 0])
        let warnings = trainingWarnings(falling, epochs: 10, report: report, uncertainShare: 0.6, floor: 0.7)
        #expect(warnings.count == 3, "\(warnings)")
        #expect(
            warnings.first?.hasPrefix("validation loss was still falling when training stopped at epoch 10 (0.167 at epoch 6, 0.100 at the last)")
                == true)
        #expect(warnings.contains("class 'b' has no validation examples, so nothing measured it: give --validation FILE or more of its examples"))
        #expect(warnings.contains { $0.hasPrefix("60% of the validation answers fall under the 70% decision floor") })
        // A run that stopped early, or whose loss flattened, with every class measured and sure answers: nothing.
        let flat = TrainingResult(network: smallMLP(seed: 1), history: (1...10).map { summary($0, loss: 0.1) }, bestEpoch: 1)
        let measured = ClassificationReport(labels: ["a", "b"], truth: [0, 1], predicted: [0, 1])
        #expect(trainingWarnings(flat, epochs: 10, report: measured, uncertainShare: 0.1, floor: 0.7).isEmpty)
        #expect(trainingWarnings(falling, epochs: 20, report: measured, uncertainShare: 0.1, floor: 0.7).isEmpty, "stopped before its last epoch")
        // A flat loss, but the kept epoch is the last of the limit (as a walking/sitting model's best epoch 200 of 200):
        // still improving, so a warning; the same best epoch in a run that stopped early is none.
        let lastBest = TrainingResult(network: smallMLP(seed: 1), history: (1...10).map { summary($0, loss: 0.1) }, bestEpoch: 10)
        #expect(
            trainingWarnings(lastBest, epochs: 10, report: measured, uncertainShare: 0.1, floor: 0.7) == [
                "the best epoch was 10 of 10, at the epoch limit: the model was still improving when training stopped; train longer, e.g. --epochs 20"
            ])
        #expect(trainingWarnings(lastBest, epochs: 30, report: measured, uncertainShare: 0.1, floor: 0.7).isEmpty)
    }

    /// The early-stop line says what the rule counted: the epochs since the last better accuracy or lower loss, and
    /// which epoch is kept (issue 33: it named the kept epoch as if nothing had improved since).
    @Test func theEarlyStopLineSaysWhatTheRuleCounted() {
        #expect(
            earlyStopText(epoch: 33, bestEpoch: 15, lastImprovement: 26)
                == "stopped after epoch 33: no better validation accuracy and no lower validation loss in the 7 epochs since epoch 26 "
                + "(its lower loss); keeping epoch 15 (the best accuracy)")
        #expect(
            earlyStopText(epoch: 21, bestEpoch: 15, lastImprovement: 15)
                == "stopped after epoch 21: no better validation accuracy and no lower validation loss in the 6 epochs since epoch 15; keeping epoch 15"
        )
    }

    @Test func earlyStoppingKeepsTheBestEpoch() {
        let data = rings(count: 400, seed: 48)
        let (training, validation) = data.splitByGroup(validationFraction: 0.3, seed: 49)
        var events: [TrainingEvent] = []
        // A learning rate this large makes validation results wander, so patience 2 ends the run early.
        let result = train(
            smallMLP(seed: 50), on: training, validation: validation,
            configuration: TrainingConfiguration(
                epochs: 60, batchSize: 16, seed: 51, patience: 2,
                optimizer: Optimizer(.sgd(momentum: 0.9, nesterov: false), learningRate: 0.5))
        ) {
            events.append($0)
        }
        let best = result.history.filter(\.isBest).last
        #expect(best?.epoch == result.bestEpoch)
        #expect(result.history.count < 60, "stopped early")
        // The last epoch with a new best or a new lowest validation loss, counted here from the history.
        var lowest = Double.infinity, improvement = 0
        for summary in result.history {
            let loss = summary.validationLoss ?? .infinity
            if summary.isBest || loss < lowest { improvement = summary.epoch }
            lowest = min(lowest, loss)
        }
        #expect(result.history.count - improvement == 2)
        let kept = result.network.logits(validation.inputs).argmax(axis: 1)
        let accuracy = Double(zip(kept, validation.labels).filter { $0 == $1 }.count) / Double(validation.count)
        #expect(accuracy == best?.validationAccuracy, "the returned network is the best epoch's")
        let stops = events.compactMap { event -> (Int, Int, Int)? in
            if case let .stoppedEarly(epoch, bestEpoch, lastImprovement) = event { return (epoch, bestEpoch, lastImprovement) }
            return nil
        }
        #expect(stops.count == 1)
        #expect(stops.first?.0 == result.history.count && stops.first?.1 == result.bestEpoch && stops.first?.2 == improvement, "\(stops)")
    }

    @Test func splitsNeverSeparateAGroup() {
        let inputs = Tensor(zeros: [100, 1])
        let groups = (0..<100).map { $0 / 7 }
        let data = Examples(inputs: inputs, labels: Array(repeating: 0, count: 100), groups: groups, classNames: ["x"])
        let (a, b) = data.splitByGroup(validationFraction: 0.2, seed: 3)
        #expect(Set(a.groups).isDisjoint(with: Set(b.groups)))
        #expect(a.count + b.count == 100)
        #expect(Set(b.groups).count == 3)  // 15 groups × 0.2
    }

    /// Custom labels mean the labels in the data (`classNames` is Train's: the classes a training run numbers).
    @Test func classNamesAreTheLabelsInTheData() {
        let standard = ShapeDataset.standardLabels
        #expect(classNames(for: ["square", "circle", "square"], standard: standard) == ["circle", "square"])
        #expect(classNames(for: ["other", "star", "circle"], standard: standard) == ["circle", "star", "other"])
        #expect(classNames(for: ["heart", "circle", "arrow"], standard: standard) == ["circle", "heart", "arrow"])
    }

    @Test func reportCountsPrecisionAndRecall() {
        let report = ClassificationReport(labels: ["a", "b", "c"], truth: [0, 0, 1, 1, 2, 2], predicted: [0, 1, 1, 1, 2, 0])
        #expect(report.confusion == [[1, 1, 0], [0, 2, 0], [1, 0, 1]])
        #expect(abs(report.accuracy - 4.0 / 6) < 1e-12)
        #expect(report.perClass["b"] == .init(precision: 2.0 / 3, recall: 1, support: 2))
        #expect(report.perClass["a"] == .init(precision: 0.5, recall: 0.5, support: 2))
        #expect(report.text.hasPrefix("accuracy 66.67% (4 of 6)"))
    }
}

@Suite("The task table")
struct TaskTableTests {
    /// Each task's preprocessing kind leads back to the task, and a weights file written for it says that kind:
    /// the tables (the tasks, the preprocessing kinds, the preprocessing types) cannot drift apart; its names lead
    /// back to it.
    @Test(arguments: RecognitionTask.allCases)
    func eachTaskAndItsPreprocessingKindAgree(task: RecognitionTask) throws {
        #expect(task.kind.task == task)
        #expect(RecognitionTask(modelName: task.modelName) == task && RecognitionTask(name: task.rawValue) == task)
        let header = task.preprocessing(rasterizer: ShapeRasterizer(), windowing: MotionWindowing())
        #expect(PreprocessingKind(header) == task.kind)
        #expect(try RecognitionTask.inputShape(of: header)?.get() == task.inputShape())
        // The preprocessing type registered for the task reads the kind the task names, and is the task's.
        #expect(task.preprocessing.kind == task.kind.rawValue && task.preprocessing.taskName == task.rawValue)
    }
}
