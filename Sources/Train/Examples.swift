import Models
import Tensor
import WeightsFormat

/// Labelled examples ready for a network: inputs `[N, …]`, one label per row, and the group each row came from
/// (its drawing or its recording session), so that splits never separate rows of one group.
public struct Examples: Sendable {
    /// `[N, …]`
    public var inputs: Tensor
    /// Class indices into `classNames`, one per row.
    public var labels: [Int]
    /// The drawing or session of each row.
    public var groups: [Int]
    /// The class names, in label order.
    public var classNames: [String]

    /// Creates the examples; the counts must agree.
    public init(inputs: Tensor, labels: [Int], groups: [Int]? = nil, classNames: [String]) {
        shapePrecondition(
            inputs.rank >= 1 && inputs.shape[0] == labels.count && (groups?.count ?? labels.count) == labels.count,
            "examples need one label and group per input row: inputs \(describeShape(inputs.shape)), "
                + "\(labels.count) labels, \(groups?.count ?? labels.count) groups")
        self.inputs = inputs
        self.labels = labels
        self.groups = groups ?? Array(labels.indices)
        self.classNames = classNames
    }

    /// The rows of `parts` in order, their groups renumbered 0, 1, 2, … in order of first appearance so that no
    /// two parts share one (whatever numbers each part used; a single part is returned as it is); the parts must
    /// have the same class names and input shape.
    public init(concatenating parts: [Examples]) {
        precondition(!parts.isEmpty, "Examples(concatenating:) needs at least one part, got 0")
        if parts.count == 1 {
            self = parts[0]
            return
        }
        // Each part's groups, renumbered in order of first appearance after every group of the parts before it.
        var labels: [Int] = [], groups: [Int] = [], next = 0
        for part in parts {
            precondition(
                part.classNames == parts[0].classNames && Array(part.inputs.shape.dropFirst()) == Array(parts[0].inputs.shape.dropFirst()),
                "concatenated examples must share class names and row shape: \(parts[0].classNames) \(describeShape(parts[0].inputs.shape)) "
                    + "and \(part.classNames) \(describeShape(part.inputs.shape))")
            labels += part.labels
            var renumbered: [Int: Int] = [:]
            for group in part.groups {
                if let number = renumbered[group] {
                    groups.append(number)
                } else {
                    renumbered[group] = next
                    groups.append(next)
                    next += 1
                }
            }
        }
        self.init(inputs: Tensor.concatenate(parts.map(\.inputs), axis: 0), labels: labels, groups: groups, classNames: parts[0].classNames)
    }

    /// The number of rows.
    public var count: Int { labels.count }

    /// The rows at `indices`, in that order.
    public func subset(_ indices: [Int]) -> Examples {
        Examples(
            inputs: inputs.gathering(rows: indices), labels: indices.map { labels[$0] },
            groups: indices.map { groups[$0] }, classNames: classNames)
    }

    /// Splits by group: a seeded shuffle of the groups sends `validationFraction` of them (at least one, when
    /// there are two or more) to validation, and every row follows its group.
    public func splitByGroup(validationFraction: Double, seed: UInt64) -> (training: Examples, validation: Examples) {
        var distinct: [Int] = []
        var seen = Set<Int>()
        for group in groups where seen.insert(group).inserted { distinct.append(group) }
        var generator = SeededGenerator(seed: seed)
        shuffle(&distinct, generator: &generator)
        let validationCount = distinct.count < 2 ? 0 : max(1, Int((Double(distinct.count) * validationFraction).rounded()))
        let validationGroups = Set(distinct.prefix(validationCount))
        let training = labels.indices.filter { !validationGroups.contains(groups[$0]) }
        let validation = labels.indices.filter { validationGroups.contains(groups[$0]) }
        return (subset(training), subset(validation))
    }
}

/// Fisher–Yates with the seeded generator: the same seed gives the same order on every machine.
public func shuffle<T>(_ values: inout [T], generator: inout SeededGenerator) {
    guard values.count > 1 else { return }
    for i in stride(from: values.count - 1, to: 0, by: -1) {
        values.swapAt(i, generator.nextIndex(below: i + 1))
    }
}

/// The class names for a dataset's labels: exactly the labels that occur — the ones in `standard` first, in its
/// order, then the rest in order of first appearance, and the reject class `other` last. A model trained on
/// circles and squares has two outputs, not four of which two never saw data.
public func classNames(for labels: [String], standard: [String]) -> [String] {
    var seen: [String] = []
    var known = Set<String>()
    for label in labels where known.insert(label).inserted { seen.append(label) }
    let other = DecisionRule.otherLabel
    return standard.filter { known.contains($0) } + seen.filter { !standard.contains($0) && $0 != other }
        + (known.contains(other) ? [other] : [])
}
