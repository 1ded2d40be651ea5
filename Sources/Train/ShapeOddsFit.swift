import Foundation
import Models
import WeightsFormat

/// A drawing of a shape run that a network answered without having trained on it, and which training file it came
/// from.
public struct HeldOutDrawing: Sendable {
    /// The drawing as the file holds it.
    public let drawing: Drawing
    /// The index of the file it came from (a source: generated drawings, Quick, Draw!, Omniglot, …).
    public let source: Int

    /// Creates one.
    public init(drawing: Drawing, source: Int) {
        (self.drawing, self.source) = (drawing, source)
    }
}

/// Drawings answered by networks that did not train on them, to fit the shape odds on: each drawing, its calibrated
/// probabilities (in the model's class order) and its label's index.
public struct ShapeOddsData: Sendable {
    /// The drawings.
    public var drawings: [HeldOutDrawing]
    /// Each drawing's calibrated probabilities.
    public var probabilities: [[Double]]
    /// Each drawing's label.
    public var truth: [Int]
    /// Where the answers came from, for the report: `4-fold answers`.
    public var origin: String

    /// Creates one.
    public init(drawings: [HeldOutDrawing], probabilities: [[Double]], truth: [Int], origin: String) {
        precondition(
            drawings.count == probabilities.count && drawings.count == truth.count,
            "ShapeOddsData: \(drawings.count) drawings, \(probabilities.count) probability rows, \(truth.count) labels")
        (self.drawings, self.probabilities, self.truth, self.origin) = (drawings, probabilities, truth, origin)
    }
}

/// The shape odds fitted on drawings that did not train the network, and how the decision does on them as it moves.
public struct ShapeOddsFit: Sendable {
    /// The fitted odds, their bias at the chosen operating point.
    public let odds: DecisionRule.ShapeOdds
    /// The drawings it was fitted on: shapes and non-shapes, and where their answers came from.
    public let shapes: Int, nonShapes: Int, origin: String
    /// The outline's weight when fitted beside the network's (0 or less: the outline did not help, and is left out).
    public let outlineWeight: Double
    /// Points of the curve: the bias moved by `shift` from the chosen point, the share of shapes answered as their
    /// own class, and the share of non-shapes answered `unknown` or uncertain, each source weighing the same.
    public let curve: [(shift: Double, shapesRight: Double, nonShapesFlagged: Double)]
    /// The same two shares with the network deciding alone.
    public let networkAlone: (shapesRight: Double, nonShapesFlagged: Double)
    /// The bias shifts the curve shows.
    public static let shifts = [-2.0, -1, -0.5, 0, 0.5, 1, 2]
}

extension ShapeOddsFit {
    /// Fits the shape odds on `data` (the reject class at `rejectIndex` of `classNames`; `rule` the files' rule,
    /// whose temperature calibrated the probabilities): a logistic regression of "one of the real classes" on the
    /// network's log-odds of it and, over the drawings the network gives the reject class at least 1%, on −log of
    /// the nearest class's outline distance — kept only when the outline's weight comes out above 0; otherwise the
    /// network's log-odds alone, over every drawing. Shapes and non-shapes weigh the same in total, and within each
    /// side every source (file) weighs the same, so that a few hundred real shapes count as much as thousands of
    /// generated ones. The operating point then moves the bias to accept the most shapes while flagging no fewer
    /// non-shapes (`unknown` or uncertain) than the network alone does on the same drawings: an answer that is
    /// confidently wrong costs more than an honest "not sure". `nil` when a real class has no outline (circle,
    /// triangle, square, star have), or fewer than `minimumEach` shapes or non-shapes: too little to fit.
    public static func fit(_ data: ShapeOddsData, classNames: [String], rejectIndex: Int, rule: DecisionRule, minimumEach: Int = 20) -> ShapeOddsFit?
    {
        let (drawings, probabilities, truth) = (data.drawings, data.probabilities, data.truth)
        let real = classNames.indices.filter { $0 != rejectIndex }
        guard !real.isEmpty, real.allSatisfy({ GeometricRecognizer.labels.contains(classNames[$0]) }) else { return nil }
        let shapes = truth.count { $0 != rejectIndex }
        guard shapes >= minimumEach, truth.count - shapes >= minimumEach else { return nil }
        // Each drawing's weight among `indices`: its side weighs 1/2, shared equally among that side's sources, then
        // among the source's drawings.
        func weights(_ indices: [Int]) -> [Int: Double] {
            var counts: [Bool: [Int: Int]] = [:]
            for index in indices { counts[truth[index] != rejectIndex, default: [:]][drawings[index].source, default: 0] += 1 }
            return Dictionary(
                uniqueKeysWithValues: indices.map { index in
                    let sources = counts[truth[index] != rejectIndex] ?? [:]
                    return (index, 0.5 / Double(sources.count) / Double(sources[drawings[index].source] ?? 1))
                })
        }
        let everyWeight = weights(Array(drawings.indices))
        func logOdds(_ row: [Double]) -> Double { DecisionRule.ShapeOdds.logOdds(rejectProbability: row[rejectIndex]) }
        // With the outline, over the drawings it would be consulted for.
        let from = 0.01
        var distances = [Double?](repeating: nil, count: drawings.count)
        let consulted = probabilities.indices.filter { probabilities[$0][rejectIndex] >= from }
        let consultedWeight = weights(consulted)
        var rows: [(offset: Double, features: [Double], y: Double, w: Double)] = []
        for index in consulted {
            let row = probabilities[index]
            let best = row.withUnsafeBufferPointer { Decision.nearest(calibrated: $0, rejectIndex: rejectIndex) }
            distances[index] = FittedShape.fit(drawings[index].drawing, as: classNames[best])?.relativeDistance
            let d = DecisionRule.ShapeOdds.heldDistance(distances[index])
            rows.append((0, [logOdds(row), -log(d), 1], truth[index] != rejectIndex ? 1 : 0, consultedWeight[index] ?? 0))
        }
        var odds: DecisionRule.ShapeOdds
        let withOutline = logisticRegression(rows)
        if let beta = withOutline, beta[0] > 0, beta[1] > 0 {
            odds = DecisionRule.ShapeOdds(network: beta[0], outline: beta[1], bias: beta[2], from: from)
        } else {
            let all = probabilities.indices.map { (0.0, [logOdds(probabilities[$0]), 1], truth[$0] != rejectIndex ? 1.0 : 0, everyWeight[$0] ?? 0) }
            guard let beta = logisticRegression(all), beta[0] > 0 else { return nil }
            odds = DecisionRule.ShapeOdds(network: beta[0], bias: beta[1])
        }

        // Every drawing answered as the shape worker would (`ShapeOdds.weigh`, then `Decision.choose`).
        func shares(_ odds: DecisionRule.ShapeOdds?) -> (shapesRight: Double, nonShapesFlagged: Double) {
            var (right, flagged, shapeWeight, otherWeight) = (0.0, 0.0, 0.0, 0.0)
            for (index, row) in probabilities.enumerated() {
                var p = row
                let decided = p.withUnsafeMutableBufferPointer { p in
                    odds?.weigh(calibrated: p, rejectIndex: rejectIndex) { _ in distances[index] }
                    return Decision.choose(calibrated: UnsafeBufferPointer(p), rejectIndex: rejectIndex, rule: rule)
                }
                let w = everyWeight[index] ?? 0
                if truth[index] == rejectIndex {
                    otherWeight += w
                    if decided.unknown || decided.uncertain { flagged += w }
                } else {
                    shapeWeight += w
                    if !decided.unknown && decided.best == truth[index] { right += w }
                }
            }
            return (right / max(shapeWeight, 1e-300), flagged / max(otherWeight, 1e-300))
        }
        func moved(_ shift: Double) -> DecisionRule.ShapeOdds {
            var odds = odds
            odds.bias += shift
            return odds
        }
        // The operating point: the largest bias (on a grid of 0.05) that flags as many non-shapes as the network alone.
        let alone = shares(nil)
        let grid = stride(from: -8.0, through: 8.0, by: 0.05).map { ($0 * 100).rounded() / 100 }
        let shift = grid.last { shares(moved($0)).nonShapesFlagged >= alone.nonShapesFlagged - 1e-12 } ?? grid[0]
        odds = moved(shift)
        // Rounded as the temperature is, so that the header reads back to the same rule.
        (odds.network, odds.outline, odds.bias) = (
            (odds.network * 1e4).rounded() / 1e4, (odds.outline * 1e4).rounded() / 1e4, (odds.bias * 1e4).rounded() / 1e4
        )
        let curve = shifts.map { shift in
            let (right, flagged) = shares(moved(shift))
            return (shift, right, flagged)
        }
        return ShapeOddsFit(
            odds: odds, shapes: shapes, nonShapes: truth.count - shapes, origin: data.origin, outlineWeight: withOutline?[1] ?? 0, curve: curve,
            networkAlone: alone)
    }

    /// Weighted logistic regression of `y` on `features` (the last feature the constant 1) beside a fixed `offset`
    /// (a term whose weight is 1), by Newton's method, each step halved until the penalized log-likelihood improves,
    /// with a small ridge on the slopes (1e-3 of the total weight) so that separable data still has an answer: the
    /// coefficients, or `nil` if the steps fail.
    static func logisticRegression(_ rows: [(offset: Double, features: [Double], y: Double, w: Double)]) -> [Double]? {
        guard let n = rows.first?.features.count, n >= 1 else { return nil }
        let ridge = 1e-3 * rows.reduce(0) { $0 + $1.w }
        func score(_ beta: [Double], _ row: (offset: Double, features: [Double], y: Double, w: Double)) -> Double {
            zip(beta, row.features).reduce(row.offset) { $0 + $1.0 * $1.1 }
        }
        func loss(_ beta: [Double]) -> Double {
            var total = 0.5 * ridge * beta.dropLast().reduce(0) { $0 + $1 * $1 }
            for row in rows {
                // −log σ(s) for y = 1, −log(1 − σ(s)) for y = 0, without overflow.
                let s = score(beta, row), m = row.y == 1 ? -s : s
                total += row.w * (m > 0 ? m + log1p(exp(-m)) : log1p(exp(m)))
            }
            return total
        }
        var beta = [Double](repeating: 0, count: n)
        var current = loss(beta)
        for _ in 0..<100 {
            var gradient = [Double](repeating: 0, count: n), hessian = [[Double]](repeating: [Double](repeating: 0, count: n), count: n)
            for row in rows {
                let q = 1 / (1 + exp(-score(beta, row)))
                for i in 0..<n {
                    gradient[i] += row.w * (row.y - q) * row.features[i]
                    for j in 0..<n { hessian[i][j] += row.w * q * (1 - q) * row.features[i] * row.features[j] }
                }
            }
            for i in 0..<(n - 1) {
                gradient[i] -= ridge * beta[i]
                hessian[i][i] += ridge
            }
            guard let step = solve(hessian, gradient) else { return nil }
            var scale = 1.0, improved = false
            for _ in 0..<40 {
                let trial = zip(beta, step).map { $0 + scale * $1 }
                let value = loss(trial)
                if value.isFinite, value <= current {
                    (beta, improved) = (trial, value < current)
                    current = value
                    break
                }
                scale /= 2
            }
            if !improved || (step.map(abs).max() ?? 0) * scale < 1e-10 { break }
        }
        return beta.allSatisfy(\.isFinite) ? beta : nil
    }

    /// `m · s = r` by Gaussian elimination with partial pivoting; `nil` when `m` is singular.
    static func solve(_ m: [[Double]], _ r: [Double]) -> [Double]? {
        let n = r.count
        var a = zip(m, r).map { $0 + [$1] }
        for column in 0..<n {
            guard let pivot = (column..<n).max(by: { abs(a[$0][column]) < abs(a[$1][column]) }), abs(a[pivot][column]) > 1e-300 else { return nil }
            a.swapAt(column, pivot)
            for row in 0..<n where row != column {
                let factor = a[row][column] / a[column][column]
                for k in column...n { a[row][k] -= factor * a[column][k] }
            }
        }
        return (0..<n).map { a[$0][n] / a[$0][$0] }
    }
}
