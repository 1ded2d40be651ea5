import WeightsFormat

// Applying a decision rule's shape odds (their weights and formula are WeightsFormat's; fitting them is training's,
// Sources/Train/ShapeOddsFit.swift): the shape worker weighs them into the calibrated probabilities before the
// winner is chosen, and training's curve weighs them the same way.
extension DecisionRule.ShapeOdds {
    /// Weighs the odds into calibrated probabilities `p` (the reject class at `rejectIndex`): when the reject class
    /// has at least `from`, the probability of a shape becomes `shapeProbability(rejectProbability:relativeDistance:)`,
    /// shared among the real classes in their proportions (all of it to the nearest when the network gave them
    /// nothing). `distance` is asked for the nearest real class's outline distance (its index given) only when the
    /// odds weigh the outline. Returns whether `p` changed.
    @discardableResult
    package func weigh(
        calibrated p: UnsafeMutableBufferPointer<Double>, rejectIndex: Int, distance: (_ nearest: Int) -> Double?
    ) -> Bool {
        precondition(p.indices.contains(rejectIndex) && p.count >= 2, "ShapeOdds.weigh: \(p.count) probabilities, reject class at \(rejectIndex)")
        let reject = p[rejectIndex]
        guard reject >= from else { return false }
        let best = Decision.nearest(calibrated: UnsafeBufferPointer(p), rejectIndex: rejectIndex)
        let shape = shapeProbability(rejectProbability: reject, relativeDistance: outline > 0 ? distance(best) : nil)
        let real = 1 - reject
        for i in p.indices where i != rejectIndex { p[i] = real > 0 ? p[i] / real * shape : (i == best ? shape : 0) }
        p[rejectIndex] = 1 - shape
        return true
    }

    /// `weigh(calibrated:rejectIndex:distance:)` for `drawing` answered with `labels`: the distance is that of the
    /// outline of the nearest class fitted to the drawing (`nil`, the worst, for a class no outline is fitted for).
    package func weigh(_ drawing: Drawing, labels: [String], rejectIndex: Int, calibrated p: UnsafeMutableBufferPointer<Double>) {
        precondition(labels.count == p.count, "ShapeOdds.weigh: \(labels.count) labels, \(p.count) probabilities")
        weigh(calibrated: p, rejectIndex: rejectIndex) { FittedShape.fit(drawing, as: labels[$0])?.relativeDistance }
    }
}
