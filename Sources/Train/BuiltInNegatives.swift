import DataFiles
import Datasets
import Foundation
import Models
import Tensor
import WeightsFormat

/// The reject class a model trained on a user's own labels gets when their data has none: drawings or
/// recordings that are none of the user's classes, labelled `other`, so that the model can answer `unknown` for a
/// smiley it was never shown instead of the nearest class at 100%.
///
/// The candidates come from the generators built into the engine (so every installed `classify` has them and
/// the same seed gives the same ones): for shapes the generator's non-shapes (objects, letters, scribbles,
/// spirals, arrows, …) and its four shapes; for motion its walking and running recordings. A candidate
/// that lies among the user's own examples would teach the model to reject their own classes (a user's class
/// `round` beside generated circles, a user's `walking` beside generated walking), so every candidate row closer
/// to the user's examples than `closeness` is dropped: the distance, in the network's input (the raster or the
/// window features), to the nearest user example, against the distances between the user's examples of one class
/// (each to its nearest of the same class from another drawing or session; the `quantile` of those is the cut).
public struct BuiltInNegatives: Sendable {
    /// The kept candidates as examples labelled `other` (the last of `classNames`).
    public let examples: Examples
    /// How many candidate rows there were (drawings with their augmented copies, or windows).
    public let candidates: Int
    /// How many of them were dropped as too close to the user's examples.
    public let dropped: Int
    /// The candidate drawings or sessions, for the report (`600 generated drawings`).
    public let source: String
    /// How many drawings or sessions the candidates came from.
    let drawings: Int

    /// The share of the within-class nearest-neighbour distances under which a candidate counts as one of the
    /// user's own, by task: 0.95 keeps only candidates farther from every user example than 95% of that example's
    /// class are from their nearest neighbour of the same class. Shapes use 0.85: with sloppy drawings among a
    /// user's own (issue 47's generator: stars as five separate lines, careless pentagrams), the 95th percentile
    /// is an outlier's distance and the cut dropped 97% of the candidates (17 of 540) — no spiral was left, and a
    /// three-class model of 180 drawings called one `pointy` for 4 of 5 seeds (none with 0.85; docs/training.md).
    public static func quantile(for task: RecognitionTask) -> Double { task == .shape ? 0.85 : 0.95 }
    /// How much farther than that distance a candidate must be (1.5: half as far again).
    public static let margin: Float = 1.5
    /// The most user rows the distances are measured against (an even stride through the rest).
    public static let maximumReferenceRows = 3000

    /// The fewest drawings or sessions the kept negatives must come from to be trained as a class (fewer would
    /// be a class nothing measures: the seeded split needs some for training and some for validation).
    public static let minimumGroups = 4
    /// How many drawings or sessions the kept negatives come from.
    public var keptGroups: Int { Set(examples.groups).count }
    /// Whether there are enough kept negatives (`minimumGroups`) to train the reject class.
    public var isUsed: Bool { keptGroups >= Self.minimumGroups }

    /// The report's line: `reject class: 'other' from 512 of 720 built-in negatives (generated drawings: …); 208
    /// were too close to your drawings …`.
    public var summary: String {
        guard isUsed else {
            if candidates == 0 {
                return "reject class  none: \(source); label recordings that are none of your classes '\(DecisionRule.otherLabel)' to have one"
            }
            return
                "reject class  none: only \(keptGroups) of the \(drawings) built-in negative \(examples.inputs.rank > 2 ? "drawings" : "recordings") "
                + "are far enough from your own examples (\(Self.minimumGroups) are needed); label drawings or recordings "
                + "that are none of your classes '\(DecisionRule.otherLabel)' to have one"
        }
        let kept = candidates - dropped
        let unit = examples.inputs.rank > 2 ? (candidates > drawings ? "drawings and augmented copies" : "drawings") : "windows"
        return "reject class  '\(DecisionRule.otherLabel)' learned from \(kept) of \(candidates) built-in negative \(unit) (\(source)); "
            + "\(dropped) were dropped as too close to your own examples; --no-reject trains without it"
    }

    /// The negatives for `user` (examples whose class names have no `other`), built by `task`'s preprocessing
    /// and labelled with index `user.classNames.count` under `user.classNames + ["other"]`. `augment` copies are
    /// made of each drawing, as of the user's; `seed` picks the candidates.
    public static func make(
        for user: Examples, task: RecognitionTask, rasterizer: ShapeRasterizer, windowing: MotionWindowing, augment: Int, seed: UInt64
    ) throws(DataError) -> BuiltInNegatives {
        precondition(
            !user.classNames.contains(DecisionRule.otherLabel),
            "built-in negatives are for data without '\(DecisionRule.otherLabel)': \(user.classNames)")
        let names = user.classNames + [DecisionRule.otherLabel]
        let file = "built-in negatives"
        let all: Examples
        let source: String
        // The candidates' own seed: not the user's split or initialization stream.
        let candidateSeed = seed ^ 0x4E45_4741_5449_5645
        switch task {
        case .shape:
            var generator = ShapeGenerator(seed: candidateSeed)
            // As many candidates as the user has drawings (at least 40, at most 1,500), three in five the
            // generator's non-shapes and the rest its other shapes in turn; then twice as many more non-shapes.
            // About a third survive the closeness cut, a class about the size of the user's. With the first part
            // alone, a three-class model of 180 drawings kept 58 and called a spiral a star (`pointy`) for 3 of 5
            // seeds; with three times as many of the same mix, a digit model's zero went to the reject class
            // (more circles); with the non-shapes added, neither.
            let base = min(1500, max(40, Set(user.groups).count)), count = 3 * base
            // The generator's shapes that are not among the user's labels (a user's `circle` is never a negative).
            let shapes = ShapeDataset.standardLabels.filter { !user.classNames.contains($0) }
            var drawings: [LabeledDrawing] = []
            var person = generator.person()
            for index in 0..<count {
                if index % 10 == 0 { person = generator.person() }
                let label = index >= base || index % 5 < 3 || shapes.isEmpty ? ShapeDataset.otherLabel : shapes[index % shapes.count]
                drawings.append(
                    LabeledDrawing(id: "negative-\(index)", label: DecisionRule.otherLabel, drawing: generator.draw(label, by: person), lines: 0...0))
            }
            all = try ShapeDataset.examples(drawings, classNames: names, rasterizer: rasterizer, file: file, augment: augment, seed: candidateSeed)
            source =
                "\(count) generated drawings: objects, letters, scribbles, spirals, arrows and the like"
                + (shapes.isEmpty ? "" : ", and " + spokenList(shapes.map { $0 + "s" }))
        case .motion:
            // 16 sessions (8 people walking and running), each as long as makes about as many windows as the user's
            // in all: 12 s to a minute. The generator's still recordings are left out: windows of a still phone or
            // watch differ from one device to another mostly by sensor noise, and a reject class learned from them
            // took a user's own sitting windows as none of their classes.
            let people = 8
            let perSession = Double(user.count) / Double(2 * people)
            let seconds = min(60, max(12, (Double(windowing.window) + Double(windowing.hop) * (perSession - 1)) / windowing.rate))
            var generator = MotionGenerator(seed: candidateSeed)
            // Nor are the activities among the user's labels (a user's `walking` is never a negative).
            let moving = generator.sessions(people: people, seconds: seconds).filter {
                $0.label != MotionStillness.label && !user.classNames.contains($0.label)
            }
            let sessions = moving.enumerated().map { index, session in
                LabeledSession(
                    id: "negative-\(index)", label: DecisionRule.otherLabel, segments: session.recording(windowing: windowing).segments, lines: 0...0)
            }
            let activities = Set(moving.map(\.label)).sorted().joined(separator: " and ")
            all =
                sessions.isEmpty
                ? Examples(inputs: Tensor(shape: [0] + (user.inputs.shape.dropFirst()), scalars: []), labels: [], classNames: names)
                : try MotionDataset.examples(sessions, classNames: names, windowing: windowing, file: file)
            source =
                sessions.isEmpty
                ? "the generator's walking and running are both your classes"
                : String(format: "%d generated phone recordings of %d people %@, about %.0f s each", sessions.count, people, activities, seconds)
        }
        let close = closeRows(all, to: user, quantile: quantile(for: task))
        let kept = all.labels.indices.filter { !close[$0] }
        return BuiltInNegatives(
            examples: all.subset(kept), candidates: all.count, dropped: all.count - kept.count, source: source, drawings: Set(all.groups).count)
    }

    /// For each row of `candidates`, whether it is closer to one of `user`'s rows of some class than `quantile` of
    /// that class's rows are to their nearest neighbour of the same class from another group (each class its own
    /// cut: a class whose examples are spread wide, such as sitting among windows of motion, keeps a wider berth).
    static func closeRows(_ candidates: Examples, to user: Examples, quantile: Double) -> [Bool] {
        // No candidates (labels that are the generator's own): nothing to measure.
        guard candidates.count > 0 else { return [] }
        let stride = max(1, (user.count + maximumReferenceRows - 1) / maximumReferenceRows)
        let reference = user.subset(Array(Swift.stride(from: 0, to: user.count, by: stride)))
        let within = squaredDistances(reference.inputs, reference.inputs)
        let n = reference.count
        var nearest = [[Float]](repeating: [], count: user.classNames.count)
        for i in 0..<n {
            var best = Float.infinity
            for j in 0..<n where j != i && reference.labels[j] == reference.labels[i] && reference.groups[j] != reference.groups[i] {
                best = min(best, within[i * n + j])
            }
            if best.isFinite { nearest[reference.labels[i]].append(best) }
        }
        let cuts = nearest.map { distances -> Float in
            let sorted = distances.sorted()
            return sorted.isEmpty ? 0 : margin * margin * sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * quantile))]
        }
        // A block of candidates at a time: the distances of all of them at once could be hundreds of megabytes.
        var close: [Bool] = []
        close.reserveCapacity(candidates.count)
        for start in Swift.stride(from: 0, to: candidates.count, by: 1024) {
            let block = candidates.subset(Array(start..<min(candidates.count, start + 1024)))
            let across = squaredDistances(block.inputs, reference.inputs)
            close += (0..<block.count).map { i in (0..<n).contains { across[i * n + $0] <= cuts[reference.labels[$0]] } }
        }
        return close
    }

    /// `[a rows × b rows]` squared Euclidean distances between the rows of `a` and of `b` (each flattened), row-major.
    static func squaredDistances(_ a: Tensor, _ b: Tensor) -> [Float] {
        let width = a.shape.dropFirst().reduce(1, *)
        shapePrecondition(
            b.shape.dropFirst().reduce(1, *) == width, "distances need rows of one size: \(describeShape(a.shape)) and \(describeShape(b.shape))")
        let rows = Tensor(shape: [a.shape[0], width], scalars: a.scalars)
        let columns = Tensor(shape: [b.shape[0], width], scalars: b.scalars)
        let products = rows.matmul(columns, transposeB: true).scalars
        let normsA = norms(rows.scalars, width: width), normsB = norms(columns.scalars, width: width)
        var result = products
        for i in normsA.indices {
            for j in normsB.indices {
                result[i * normsB.count + j] = max(0, normsA[i] + normsB[j] - 2 * products[i * normsB.count + j])
            }
        }
        return result
    }

    private static func norms(_ values: [Float], width: Int) -> [Float] {
        Swift.stride(from: 0, to: values.count, by: max(1, width)).map { start in
            values[start..<(start + width)].reduce(0) { $0 + $1 * $1 }
        }
    }
}

/// `a`, `a and b`, `a, b and c`.
func spokenList(_ items: [String]) -> String {
    guard let last = items.last, items.count > 1 else { return items.first ?? "" }
    return items.dropLast().joined(separator: ", ") + " and " + last
}
