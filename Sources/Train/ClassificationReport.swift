/// Accuracy, confusion matrix and per-class precision and recall of predictions against the truth.
public struct ClassificationReport: Sendable, Equatable, Encodable {
    /// Precision and recall of one class.
    public struct ClassScores: Sendable, Equatable, Encodable {
        /// Of the rows predicted as the class, the share that are it (0 when none was predicted).
        public let precision: Double
        /// Of the rows that are the class, the share predicted as it (0 when there are none).
        public let recall: Double
        /// Rows that are the class.
        public let support: Int
    }

    /// Class names, in label order.
    public let labels: [String]
    /// `confusion[true][predicted]` counts.
    public let confusion: [[Int]]
    /// Share of rows predicted correctly.
    public let accuracy: Double
    /// Rows compared.
    public let count: Int
    /// Scores by class name.
    public let perClass: [String: ClassScores]

    /// Compares `predicted` with `truth` (class indices into `labels`).
    public init(labels: [String], truth: [Int], predicted: [Int]) {
        var confusion = [[Int]](repeating: [Int](repeating: 0, count: labels.count), count: labels.count)
        for (t, p) in zip(truth, predicted) where labels.indices.contains(t) && labels.indices.contains(p) {
            confusion[t][p] += 1
        }
        self.labels = labels
        self.confusion = confusion
        count = truth.count
        let correct = labels.indices.reduce(0) { $0 + confusion[$1][$1] }
        accuracy = count > 0 ? Double(correct) / Double(count) : 0
        var scores: [String: ClassScores] = [:]
        for (c, name) in labels.enumerated() {
            let predictedAs = labels.indices.reduce(0) { $0 + confusion[$1][c] }
            let actual = confusion[c].reduce(0, +)
            scores[name] = ClassScores(
                precision: predictedAs > 0 ? Double(confusion[c][c]) / Double(predictedAs) : 0,
                recall: actual > 0 ? Double(confusion[c][c]) / Double(actual) : 0, support: actual)
        }
        perClass = scores
    }

    /// The report as text: accuracy, the confusion matrix (rows true, columns predicted), precision and recall.
    public var text: String {
        let width = max(9, (labels.map(\.count).max() ?? 0) + 2)
        func cell(_ text: String) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }
        var lines = ["accuracy \(percent(accuracy)) (\(labels.indices.reduce(0) { $0 + confusion[$1][$1] }) of \(count))"]
        lines.append("confusion (rows: true, columns: predicted)")
        lines.append(cell("") + labels.map(cell).joined())
        for (t, name) in labels.enumerated() { lines.append(cell(name) + confusion[t].map { cell(String($0)) }.joined()) }
        lines.append(cell("") + cell("precision") + cell("recall") + cell("support"))
        for name in labels {
            guard let score = perClass[name] else { continue }
            lines.append(cell(name) + cell(percent(score.precision)) + cell(percent(score.recall)) + cell(String(score.support)))
        }
        return lines.joined(separator: "\n")
    }
}

/// `0.98765` as `98.77%`.
public func percent(_ value: Double) -> String {
    let hundredths = Int((value * 10_000).rounded())
    let fraction = hundredths % 100
    return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)%"
}
