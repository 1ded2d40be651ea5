/// How far stated confidence can be trusted: answers grouped by confidence, with the share of each group that was
/// right. Calibrated answers have accuracy close to their mean confidence in every row.
public struct ReliabilityTable: Sendable, Equatable, Encodable {
    /// One group of answers.
    public struct Bin: Sendable, Equatable, Encodable {
        /// Confidence from (exclusive, except for the first bin) …
        public let low: Double
        /// … to (inclusive).
        public let high: Double
        /// Answers in the bin.
        public let count: Int
        /// Their mean confidence.
        public let meanConfidence: Double
        /// The share of them that were right.
        public let accuracy: Double
    }

    /// The bins, low to high; empty bins are kept (count 0).
    public let bins: [Bin]
    /// Expected calibration error: the count-weighted mean of |accuracy − confidence| over the bins.
    public let expectedCalibrationError: Double

    /// Groups `(confidence, correct)` pairs by `edges` (ascending, from 0 to 1).
    public init(confidences: [Double], correct: [Bool], edges: [Double] = [0, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99, 1]) {
        precondition(confidences.count == correct.count, "ReliabilityTable: \(confidences.count) confidences, \(correct.count) outcomes")
        precondition(edges.count >= 2, "ReliabilityTable: edges \(edges) need at least 2 values")
        var bins: [Bin] = []
        var error = 0.0
        for index in 0..<(edges.count - 1) {
            let (low, high) = (edges[index], edges[index + 1])
            let members = confidences.indices.filter { i in
                (confidences[i] > low || (index == 0 && confidences[i] >= low)) && confidences[i] <= high
            }
            let mean = members.isEmpty ? 0 : members.reduce(0) { $0 + confidences[$1] } / Double(members.count)
            let accuracy = members.isEmpty ? 0 : Double(members.filter { correct[$0] }.count) / Double(members.count)
            bins.append(Bin(low: low, high: high, count: members.count, meanConfidence: mean, accuracy: accuracy))
            error += Double(members.count) * abs(accuracy - mean)
        }
        self.bins = bins
        expectedCalibrationError = confidences.isEmpty ? 0 : error / Double(confidences.count)
    }

    /// The table as text: one row per non-empty bin.
    public var text: String {
        var lines = ["confidence      answers  mean confidence  accuracy"]
        for bin in bins where bin.count > 0 {
            let range = "\(percent(bin.low))–\(percent(bin.high))"
            lines.append(
                range.padding(toLength: 16, withPad: " ", startingAt: 0)
                    + String(bin.count).leftPadded(7) + percent(bin.meanConfidence).leftPadded(17) + percent(bin.accuracy).leftPadded(10))
        }
        lines.append("expected calibration error \(percent(expectedCalibrationError))")
        return lines.joined(separator: "\n")
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
