import Foundation
import Tensor

/// What a training run does.
public struct TrainingConfiguration: Sendable {
    /// The most epochs to run.
    public var epochs: Int
    /// Rows per step.
    public var batchSize: Int
    /// Seeds shuffling and dropout: the same data, seed and BLAS thread count give the same weights.
    public var seed: UInt64
    /// Stop after this many epochs without a better validation result — neither a better best epoch nor a lower
    /// validation loss (`nil`: never stop early). A loss still falling means the model is still getting surer of
    /// its answers even while the accuracy stands still.
    public var patience: Int?
    /// The update rule and its settings.
    public var optimizer: Optimizer
    /// The loss.
    public var loss: SoftmaxCrossEntropy

    /// Creates a configuration.
    public init(
        epochs: Int, batchSize: Int = 64, seed: UInt64 = 1, patience: Int? = 5,
        optimizer: Optimizer = Optimizer(.adamDefault, learningRate: 1e-3), loss: SoftmaxCrossEntropy = SoftmaxCrossEntropy()
    ) {
        self.epochs = epochs
        self.batchSize = batchSize
        self.seed = seed
        self.patience = patience
        self.optimizer = optimizer
        self.loss = loss
    }
}

/// One epoch's results.
public struct EpochSummary: Sendable, Equatable {
    /// 1-based.
    public let epoch: Int
    /// Mean training loss over the epoch's steps.
    public let trainingLoss: Double
    /// Share of training rows predicted correctly during the epoch (before each step's update).
    public let trainingAccuracy: Double
    /// Validation loss and accuracy after the epoch, when there is validation data.
    public let validationLoss: Double?
    /// The accuracy on the held-out examples at the best epoch, when there were any.
    public let validationAccuracy: Double?
    /// Training rows per second.
    public let samplesPerSecond: Double
    /// Whether this epoch is the best so far (its weights are kept).
    public let isBest: Bool
}

/// What the trainer reports as it goes.
public enum TrainingEvent: Sendable {
    /// A step finished: running loss and accuracy of the epoch so far.
    case step(epoch: Int, epochs: Int, step: Int, steps: Int, loss: Double, accuracy: Double, samplesPerSecond: Double)
    /// An epoch finished.
    case epoch(EpochSummary, epochs: Int)
    /// Training stopped before the last epoch: no better best epoch and no lower validation loss for `patience`
    /// epochs after `lastImprovement` (the last epoch with either); `bestEpoch` is the epoch kept.
    case stoppedEarly(epoch: Int, bestEpoch: Int, lastImprovement: Int)
}

/// The outcome of training.
public struct TrainingResult: Sendable {
    /// The network of the best epoch.
    public let network: Network
    /// Every epoch's results.
    public let history: [EpochSummary]
    /// The epoch whose weights `network` holds.
    public let bestEpoch: Int
}

/// Trains `network` on `training`, validating on `validation` after every epoch (the best epoch is the one with
/// the highest validation accuracy, ties going to the lower validation loss; without validation data, the lowest
/// training loss), and returns the best epoch's network.
public func train(
    _ network: Network, on training: Examples, validation: Examples?, configuration: TrainingConfiguration,
    report: (TrainingEvent) -> Void = { _ in }
) -> TrainingResult {
    shapePrecondition(
        configuration.batchSize >= 1 && configuration.epochs >= 1,
        "training needs a batch size and epochs of at least 1")
    var network = network
    var optimizer = configuration.optimizer
    var generator = SeededGenerator(seed: configuration.seed)
    var order = Array(0..<training.count)
    let steps = (training.count + configuration.batchSize - 1) / configuration.batchSize
    var history: [EpochSummary] = []
    var best: (network: Network, epoch: Int, accuracy: Double, loss: Double)?
    var stopping = EarlyStopping(patience: configuration.patience)
    let clock = ContinuousClock()

    for epoch in 1...configuration.epochs {
        shuffle(&order, generator: &generator)
        var lossTotal = 0.0, correct = 0, seen = 0
        let start = clock.now
        for step in 0..<steps {
            let indices = Array(order[(step * configuration.batchSize)..<min((step + 1) * configuration.batchSize, order.count)])
            let inputs = training.inputs.gathering(rows: indices)
            let labels = indices.map { training.labels[$0] }
            let (loss, logits) = network.trainingStep(
                inputs, labels: labels, loss: configuration.loss, optimizer: &optimizer, generator: &generator)
            lossTotal += Double(loss) * Double(indices.count)
            correct += zip(logits.argmax(axis: 1), labels).filter { $0 == $1 }.count
            seen += indices.count
            let elapsed = seconds(clock.now - start)
            report(
                .step(
                    epoch: epoch, epochs: configuration.epochs, step: step + 1, steps: steps,
                    loss: lossTotal / Double(seen), accuracy: Double(correct) / Double(seen),
                    samplesPerSecond: elapsed > 0 ? Double(seen) / elapsed : 0))
        }
        let elapsed = seconds(clock.now - start)
        let trainingLoss = lossTotal / Double(max(seen, 1))
        var validationLoss: Double?, validationAccuracy: Double?
        if let validation, validation.count > 0 {
            let logits = network.logits(validation.inputs)
            validationLoss = Double(configuration.loss(logits: logits, labels: validation.labels).loss)
            validationAccuracy =
                Double(zip(logits.argmax(axis: 1), validation.labels).filter { $0 == $1 }.count)
                / Double(validation.count)
        }
        let accuracy = validationAccuracy ?? 0
        let lossForChoice = validationLoss ?? trainingLoss
        let isBest = best.map { accuracy > $0.accuracy || (accuracy == $0.accuracy && lossForChoice < $0.loss) } ?? true
        if isBest { best = (network, epoch, accuracy, lossForChoice) }
        let summary = EpochSummary(
            epoch: epoch, trainingLoss: trainingLoss, trainingAccuracy: Double(correct) / Double(max(seen, 1)),
            validationLoss: validationLoss, validationAccuracy: validationAccuracy,
            samplesPerSecond: elapsed > 0 ? Double(seen) / elapsed : 0, isBest: isBest)
        history.append(summary)
        report(.epoch(summary, epochs: configuration.epochs))
        if stopping.record(summary), let bestEpoch = best?.epoch, epoch < configuration.epochs {
            report(.stoppedEarly(epoch: epoch, bestEpoch: bestEpoch, lastImprovement: stopping.lastImprovement))
            break
        }
    }
    return TrainingResult(network: best?.network ?? network, history: history, bestEpoch: best?.epoch ?? configuration.epochs)
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
}

/// When a run stops early: after `patience` epochs with neither a new best epoch nor a new lowest validation loss
/// (the training loss without validation data). A loss still falling means the model is still getting surer of its
/// answers even while the accuracy stands still.
struct EarlyStopping {
    /// Epochs without improvement before stopping; `nil` never stops.
    let patience: Int?
    private var lowestLoss = Double.infinity
    /// The last epoch that improved either.
    private(set) var lastImprovement = 0

    init(patience: Int?) { self.patience = patience }

    /// Records an epoch; whether the run should stop after it.
    mutating func record(_ summary: EpochSummary) -> Bool {
        let loss = summary.validationLoss ?? summary.trainingLoss
        if summary.isBest || loss < lowestLoss { lastImprovement = summary.epoch }
        lowestLoss = min(lowestLoss, loss)
        return patience.map { summary.epoch - lastImprovement >= $0 } ?? false
    }
}
