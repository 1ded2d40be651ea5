import Foundation
import Tensor

/// Softmax cross-entropy on logits, with optional label smoothing and class weights.
///
/// For logits `z` of a row with true class `t`, probabilities `p = softmax(z)` and target
/// `q = (1 − ε) · onehot(t) + ε / C`, the row's loss is `−Σ q log p`, weighted by `w[t]`; the batch loss is
/// `Σ w[t_i] · loss_i / Σ w[t_i]`, and its gradient with respect to the logits is `w[t_i] · (p_i − q_i) / Σ w`.
public struct SoftmaxCrossEntropy: Sendable {
    /// ε: the share of the target spread evenly over every class.
    public var labelSmoothing: Float
    /// One weight per class (a rare class can count more), or `nil` for equal weights.
    public var classWeights: [Float]?

    /// Creates the loss.
    public init(labelSmoothing: Float = 0, classWeights: [Float]? = nil) {
        shapePrecondition(labelSmoothing >= 0 && labelSmoothing < 1, "label smoothing must be in [0, 1), got \(labelSmoothing)")
        self.labelSmoothing = labelSmoothing
        self.classWeights = classWeights
    }

    /// The batch loss and its gradient with respect to `logits` `[N, C]`.
    public func callAsFunction(logits: Tensor, labels: [Int]) -> (loss: Float, dLogits: Tensor) {
        shapePrecondition(
            logits.rank == 2 && logits.shape[0] == labels.count,
            "cross-entropy needs logits [N, C] for N labels, got \(describeShape(logits.shape)) for \(labels.count)")
        let classes = logits.shape[1]
        shapePrecondition(
            classWeights.map { $0.count == classes } ?? true,
            "class weights must be one per class (\(classes)), got \(classWeights?.count ?? 0)")
        let logProbabilities = logits.logSoftmax()
        let smoothing = labelSmoothing / Float(classes)
        var totalWeight = 0.0, totalLoss = 0.0
        var gradient = [Float](repeating: 0, count: logits.count)
        for (row, label) in labels.enumerated() {
            shapePrecondition(label >= 0 && label < classes, "label \(label) is outside 0..<\(classes)")
            let weight = Double(classWeights?[label] ?? 1)
            totalWeight += weight
            var rowLoss = 0.0
            for c in 0..<classes {
                let target = (c == label ? 1 - labelSmoothing : 0) + smoothing
                let logP = logProbabilities.scalars[row * classes + c]
                rowLoss -= Double(target) * Double(logP)
                gradient[row * classes + c] = Float(weight) * (exp(logP) - target)
            }
            totalLoss += weight * rowLoss
        }
        let scale = totalWeight > 0 ? 1 / totalWeight : 0
        return (Float(totalLoss * scale), Tensor(shape: logits.shape, scalars: gradient.map { $0 * Float(scale) }))
    }
}
