import DataFiles
import Models
import WeightsFormat

/// The training and validation examples of a run, checked so that training means something, or a `DataError`
/// naming `file` and what is missing. The rules:
/// - at least 2 classes, at least one of them not the reject class `other`;
/// - without `validation` (a seeded split of `all` by group, `validationFraction` of the groups): every class has
///   at least 2 groups (drawings or sessions, named by `unit`), so that it can be both trained and validated;
/// - after the split: every class has examples in the training split, and the validation split is not empty.
public func trainingSplit(
    _ all: Examples, validation: Examples?, validationFraction: Double = 0.2, seed: UInt64, unit: String, file: String
) throws(DataError) -> (training: Examples, validation: Examples) {
    let names = all.classNames.map { "'\($0)'" }.joined(separator: ", ")
    guard all.classNames.count >= 2, all.classNames.contains(where: { $0 != DecisionRule.otherLabel }) else {
        throw DataError(
            file: file,
            message: "training needs at least 2 classes, and one that is not '\(DecisionRule.otherLabel)'; "
                + "the data has only \(names.isEmpty ? "no labels" : names) (\(Set(all.groups).count) \(unit))")
    }
    if validation == nil {
        let counts = groupCounts(all)
        let scarce = all.classNames.indices.filter { counts[$0] < 2 }
        guard scarce.isEmpty else {
            throw DataError(
                file: file,
                message: "every class needs at least 2 \(unit) so that one can be held out for validation; "
                    + scarce.map { "'\(all.classNames[$0])' has \(counts[$0])" }.joined(separator: ", ")
                    + "; add \(unit) of \(scarce.count == 1 ? "it" : "them"), or give --validation")
        }
    }
    let (training, held) = validation.map { (all, $0) } ?? all.splitByGroup(validationFraction: validationFraction, seed: seed)
    let trained = groupCounts(training)
    let missing = all.classNames.indices.filter { trained[$0] == 0 }
    guard missing.isEmpty else {
        throw DataError(
            file: file,
            message: "the validation split (seed \(seed)) took every one of the \(unit) of "
                + missing.map { "'\(all.classNames[$0])'" }.joined(separator: ", ") + ", so it would never be trained; "
                + "add \(unit), choose another --seed, or give --validation")
    }
    guard held.count > 0 else {
        throw DataError(
            file: validation == nil ? file : "--validation",
            message: "the validation data is empty; "
                + "training needs validation examples to choose its best epoch")
    }
    return (training, held)
}

/// The number of distinct groups of each class of `examples`.
private func groupCounts(_ examples: Examples) -> [Int] {
    var seen = Set<[Int]>()
    var counts = [Int](repeating: 0, count: examples.classNames.count)
    for (label, group) in zip(examples.labels, examples.groups) where seen.insert([label, group]).inserted {
        counts[label] += 1
    }
    return counts
}
