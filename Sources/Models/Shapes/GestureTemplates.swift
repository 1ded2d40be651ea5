import DataFiles
import Foundation
import WeightsFormat

/// A user's own gestures, learnt from a few drawings each (one to ten): every drawing kept as a template, and a new
/// drawing compared with each of them in two ways that fail on different gestures.
///
/// - **Its path** (Protractor's measure, Li 2010): the drawing resampled to `sequencePoints` points along its path
///   in the order it was drawn, centred, turned to the nearest of eight orientations by its first point, and scaled
///   to unit length; two paths are as far apart as the angle between them at the best turn. It tells a caret from a
///   v and a left bracket from a right one, which have the same points in another order or direction.
/// - **Its points as a cloud** (the $P measure, Vatavu, Anthony and Wobbrock 2012): `cloudPoints` points along the
///   strokes, scaled to their box and centred, matched greedily to the template's; order, direction and the
///   number of strokes do not matter. It tells an H drawn in two strokes from the same H drawn in three.
///
/// Each distance is divided by its median over the templates (so the two weigh alike for every drawing), and their
/// sum to a class's nearest template is the class's distance. What a weights file's network is given, one input of
/// `inputShape` (`classCount + 1` values), is each class's distance beyond the nearest class's, then how far the
/// drawing is from its nearest template against the spread of the user's own drawings (`sequenceScale`,
/// `cloudScale`: how far one of their drawings typically is from the nearest other of its class). The network
/// (`classify train shape` writes one: a dense layer and a softmax) turns them into the classes' probabilities and
/// the reject class's, so the decision rule, the chain, the server and evaluation treat it like any shape model.
public struct GestureTemplates: Sendable, Equatable {
    /// One drawing kept: its class (an index into the model's labels) and its two forms.
    public struct Template: Sendable, Equatable {
        /// The class it is an example of.
        public let classIndex: Int
        /// The path: `sequencePoints` (x, y) pairs, centred, turned and of unit length.
        public let sequence: [Float]
        /// The cloud: `cloudPoints` (x, y) pairs, scaled to the box and centred.
        public let cloud: [Float]
    }

    /// Points along the path (Protractor's 16).
    public static let sequencePoints = 16
    /// Points in the cloud ($P's 32).
    public static let cloudPoints = 32
    /// The most templates a file may hold: each drawing is compared with every one (about 15,000 operations each).
    public static let maximumTemplates = 1000
    /// The largest input value (distances are clamped to it): a drawing this far is as far as any.
    public static let largestInput: Float = 100

    /// How many classes the templates are of (the model's labels, its reject class not counted).
    public let classCount: Int
    /// The templates, grouped by nothing in particular.
    public let templates: [Template]
    /// How far (path angle) one of the user's drawings typically is from the nearest other of its class.
    public let sequenceScale: Double
    /// How far (cloud distance) one of the user's drawings typically is from the nearest other of its class.
    public let cloudScale: Double

    /// Templates of `classCount` classes with the spreads their reject input is measured by; every class must have a
    /// template, every template the right sizes and finite values, and the scales must be positive.
    public init(classCount: Int, templates: [Template], sequenceScale: Double, cloudScale: Double) throws(DataError) {
        if let problem = Self.problem(classCount: classCount, templates: templates, sequenceScale: sequenceScale, cloudScale: cloudScale) {
            throw DataError(file: "gesture templates", message: problem)
        }
        self.classCount = classCount
        self.templates = templates
        self.sequenceScale = sequenceScale
        self.cloudScale = cloudScale
    }

    static func problem(classCount: Int, templates: [Template], sequenceScale: Double, cloudScale: Double) -> String? {
        guard (1...maximumTemplates).contains(classCount) else { return "needs 1 to \(maximumTemplates) classes, got \(classCount)" }
        guard (1...maximumTemplates).contains(templates.count) else {
            return "needs 1 to \(maximumTemplates) templates, got \(templates.count)"
        }
        guard sequenceScale.isFinite, sequenceScale > 0, cloudScale.isFinite, cloudScale > 0 else {
            return "the scales must be finite and above 0, got \(sequenceScale) and \(cloudScale)"
        }
        for (index, template) in templates.enumerated() {
            guard (0..<classCount).contains(template.classIndex) else {
                return "template \(index) is of class \(template.classIndex); there are \(classCount)"
            }
            guard template.sequence.count == 2 * sequencePoints, template.cloud.count == 2 * cloudPoints else {
                return "template \(index) has \(template.sequence.count) path and \(template.cloud.count) cloud values; "
                    + "\(2 * sequencePoints) and \(2 * cloudPoints) are needed"
            }
            guard template.sequence.allSatisfy(\.isFinite), template.cloud.allSatisfy(\.isFinite) else {
                return "template \(index) holds a value that is not finite"
            }
        }
        let covered = Set(templates.map(\.classIndex))
        if let missing = (0..<classCount).first(where: { !covered.contains($0) }) { return "class \(missing) has no template" }
        return nil
    }

    // MARK: Making templates

    /// `drawing` as a template of class `classIndex`; `nil` when no recognizer can see it
    /// (`ShapeRecognizer.problem(with:)`).
    public static func template(of drawing: Drawing, classIndex: Int) -> Template? {
        guard ShapeRecognizer.problem(with: drawing) == nil else { return nil }
        return Template(classIndex: classIndex, sequence: sequence(of: drawing), cloud: cloud(of: drawing))
    }

    /// `count` points evenly spaced along the strokes: along the whole path, the jumps between strokes included
    /// (`joined`), or along the strokes only, so that no point lies on a jump.
    static func resampled(_ drawing: Drawing, count: Int, joined: Bool) -> [(x: Double, y: Double)] {
        var pieces: [[(x: Double, y: Double)]] = drawing.strokes.map { $0.map { (Double($0.x), Double($0.y)) } }
        if joined { pieces = [pieces.flatMap { $0 }] }
        pieces.removeAll { $0.isEmpty }
        func length(_ a: (x: Double, y: Double), _ b: (x: Double, y: Double)) -> Double {
            ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot()
        }
        let total = pieces.reduce(0.0) { sum, piece in sum + zip(piece, piece.dropFirst()).reduce(0.0) { $0 + length($1.0, $1.1) } }
        guard total > 0, let first = pieces.first?.first else { return Array(repeating: pieces.first?.first ?? (0, 0), count: count) }
        let step = total / Double(count - 1)
        var points = [first]
        points.reserveCapacity(count)
        var travelled = 0.0  // along the path, up to the segment's start
        var next = step
        for piece in pieces {
            for (a, b) in zip(piece, piece.dropFirst()) {
                let segment = length(a, b)
                while segment > 0, next <= travelled + segment + 1e-9 * total, points.count < count {
                    let share = min(1, (next - travelled) / segment)
                    points.append((a.x + share * (b.x - a.x), a.y + share * (b.y - a.y)))
                    next += step
                }
                travelled += segment
            }
        }
        while points.count < count { points.append(pieces.last?.last ?? first) }
        return points
    }

    /// The path form: resampled along the whole path, centred, turned so that the first point lies at the nearest of
    /// eight orientations, and scaled to unit length.
    static func sequence(of drawing: Drawing) -> [Float] {
        var points = resampled(drawing, count: sequencePoints, joined: true)
        let cx = points.reduce(0) { $0 + $1.x } / Double(points.count), cy = points.reduce(0) { $0 + $1.y } / Double(points.count)
        points = points.map { ($0.x - cx, $0.y - cy) }
        let indicative = atan2(points[0].y, points[0].x)
        let base = Double.pi / 4 * ((indicative + Double.pi / 8) / (Double.pi / 4)).rounded(.down)
        let turn = base - indicative
        let (c, s) = (cos(turn), sin(turn))
        let turned = points.flatMap { [$0.x * c - $0.y * s, $0.x * s + $0.y * c] }
        let norm = turned.reduce(0) { $0 + $1 * $1 }.squareRoot()
        return turned.map { Float(norm > 0 ? $0 / norm : 0) }
    }

    /// The cloud form: resampled along the strokes, scaled by the larger side of its box and centred.
    static func cloud(of drawing: Drawing) -> [Float] {
        let points = resampled(drawing, count: cloudPoints, joined: false)
        let xs = points.map(\.x), ys = points.map(\.y)
        let size = max((xs.max() ?? 0) - (xs.min() ?? 0), (ys.max() ?? 0) - (ys.min() ?? 0))
        let scale = size > 0 ? size : 1
        let cx = xs.reduce(0, +) / Double(points.count), cy = ys.reduce(0, +) / Double(points.count)
        return points.flatMap { [Float(($0.x - cx) / scale), Float(($0.y - cy) / scale)] }
    }

    // MARK: Distances

    /// The angle between two path forms at the turn that brings them closest (Protractor's closed form), 0…π.
    package static func sequenceDistance(_ a: UnsafeBufferPointer<Float>, _ b: UnsafeBufferPointer<Float>) -> Double {
        var dot = 0.0, cross = 0.0
        var i = 0
        while i < a.count {
            let (ax, ay, bx, by) = (Double(a[i]), Double(a[i + 1]), Double(b[i]), Double(b[i + 1]))
            dot += ax * bx + ay * by
            cross += ax * by - ay * bx
            i += 2
        }
        let angle = atan2(cross, dot)
        return acos(min(1, max(-1, dot * cos(angle) + cross * sin(angle))))
    }

    /// The $P distance between two clouds: each point of one matched greedily to the nearest unmatched of the other,
    /// earlier matches weighing more, from several starting points and both ways; the smallest sum.
    package static func cloudDistance(_ a: UnsafeBufferPointer<Float>, _ b: UnsafeBufferPointer<Float>, matched: UnsafeMutableBufferPointer<Bool>)
        -> Double
    {
        let n = a.count / 2
        let step = max(1, Int(Double(n).squareRoot()))
        var best = Double.infinity
        for (from, to) in [(a, b), (b, a)] {
            var start = 0
            while start < n {
                matched.update(repeating: false)
                var sum = 0.0
                for k in 0..<n {
                    let i = (start + k) % n
                    let (x, y) = (from[2 * i], from[2 * i + 1])
                    var nearest = -1
                    var nearestDistance = Float.infinity
                    for j in 0..<n where !matched[j] {
                        let dx = x - to[2 * j], dy = y - to[2 * j + 1]
                        let d = dx * dx + dy * dy
                        if d < nearestDistance {
                            nearestDistance = d
                            nearest = j
                        }
                    }
                    matched[nearest] = true
                    sum += (1 - Double(k) / Double(n)) * Double(nearestDistance).squareRoot()
                    if sum >= best { break }
                }
                best = min(best, sum)
                start += step
            }
        }
        return best
    }

    /// The distances from a drawing's two forms to every template: path angles into `sequence`, cloud distances into
    /// `cloud` (as many as templates).
    func distances(sequence form: [Float], cloud points: [Float], sequence: inout [Double], cloud: inout [Double]) {
        sequence.removeAll(keepingCapacity: true)
        cloud.removeAll(keepingCapacity: true)
        withUnsafeTemporaryAllocation(of: Bool.self, capacity: Self.cloudPoints) { matched in
            form.withUnsafeBufferPointer { form in
                points.withUnsafeBufferPointer { points in
                    for template in templates {
                        template.sequence.withUnsafeBufferPointer { sequence.append(Self.sequenceDistance(form, $0)) }
                        template.cloud.withUnsafeBufferPointer { cloud.append(Self.cloudDistance(points, $0, matched: matched)) }
                    }
                }
            }
        }
    }

    /// The median of `values` (not empty), or 1 when it is 0.
    package static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let middle = sorted.count / 2
        let value = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        return value > 0 ? value : 1
    }

    /// The network's input for `drawing` into `input` (`classCount + 1` values): each class's distance beyond the
    /// nearest class's, then the nearest template's distance against the user's own spread. The drawing must be one
    /// `ShapeRecognizer.problem(with:)` accepts.
    public func input(for drawing: Drawing, into input: UnsafeMutableBufferPointer<Float>) {
        self.input(sequence: Self.sequence(of: drawing), cloud: Self.cloud(of: drawing), into: input)
    }

    /// The network's input for a drawing's two forms (`Template.sequence`, `Template.cloud`).
    package func input(sequence: [Float], cloud: [Float], into input: UnsafeMutableBufferPointer<Float>) {
        var sequenceDistances: [Double] = [], cloudDistances: [Double] = []
        distances(sequence: sequence, cloud: cloud, sequence: &sequenceDistances, cloud: &cloudDistances)
        self.input(sequenceDistances: sequenceDistances, cloudDistances: cloudDistances, into: input)
    }

    /// The network's input from a drawing's distances to every template (`templates`' order), the template at
    /// `skipping` left out (a template's own input when it is left out of the others, in training).
    package func input(
        sequenceDistances: [Double], cloudDistances: [Double], skipping: Int? = nil, into input: UnsafeMutableBufferPointer<Float>
    ) {
        precondition(input.count == classCount + 1, "GestureTemplates.input: \(input.count) places for \(classCount + 1) values")
        precondition(
            sequenceDistances.count == templates.count && cloudDistances.count == templates.count,
            "GestureTemplates.input: \(sequenceDistances.count) and \(cloudDistances.count) distances for \(templates.count) templates")
        let kept = skipping.map { skipped in templates.indices.filter { $0 != skipped } }
        let sequenceMedian = Self.median(kept.map { $0.map { sequenceDistances[$0] } } ?? sequenceDistances)
        let cloudMedian = Self.median(kept.map { $0.map { cloudDistances[$0] } } ?? cloudDistances)
        var classDistance = [Double](repeating: .infinity, count: classCount)
        var nearness = Double.infinity
        for (index, template) in templates.enumerated() where index != skipping {
            let fused = sequenceDistances[index] / sequenceMedian + cloudDistances[index] / cloudMedian
            classDistance[template.classIndex] = min(classDistance[template.classIndex], fused)
            nearness = min(nearness, sequenceDistances[index] / sequenceScale + cloudDistances[index] / cloudScale)
        }
        let nearest = classDistance.min() ?? 0
        for c in 0..<classCount { input[c] = Float(min(Double(Self.largestInput), classDistance[c] - nearest)) }
        input[classCount] = Float(min(Double(Self.largestInput), nearness))
    }
}

// MARK: The weights file's preprocessing header

extension GestureTemplates {
    /// `gesture-templates`.
    public static var kind: String { PreprocessingKind.gestureTemplates.rawValue }

    /// The header's `preprocessing` object: the kind, the sizes, the scales and every template (values rounded to
    /// five decimals, which moves no distance by more than 1e-4).
    public var parameters: [String: JSONValue] {
        func numbers(_ values: [Float]) -> JSONValue { .array(values.map { .number((Double($0) * 1e5).rounded() / 1e5) }) }
        return [
            "kind": .string(Self.kind), "classes": .number(Double(classCount)),
            "sequencePoints": .number(Double(Self.sequencePoints)), "cloudPoints": .number(Double(Self.cloudPoints)),
            "sequenceScale": .number(sequenceScale), "cloudScale": .number(cloudScale),
            "templates": .array(
                templates.map { .object(["class": .number(Double($0.classIndex)), "sequence": numbers($0.sequence), "cloud": numbers($0.cloud)]) }),
        ]
    }

    /// The templates a header's `preprocessing` object describes, or a `DataError` saying what is wrong with it.
    public init(parameters: [String: JSONValue]) throws(DataError) {
        func fail(_ problem: String) -> DataError { DataError(file: "preprocessing", message: "gesture templates: \(problem)") }
        func count(_ key: String) throws(DataError) -> Int {
            guard case .number(let value)? = parameters[key], value == value.rounded(), value >= 0, value <= 1e6 else {
                throw fail("'\(key)' must be a whole number")
            }
            return Int(value)
        }
        func number(_ key: String) throws(DataError) -> Double {
            guard case .number(let value)? = parameters[key] else { throw fail("'\(key)' must be a number") }
            return value
        }
        guard try count("sequencePoints") == Self.sequencePoints, try count("cloudPoints") == Self.cloudPoints else {
            throw fail("this build matches \(Self.sequencePoints) path points and \(Self.cloudPoints) cloud points")
        }
        guard case .array(let entries)? = parameters["templates"] else { throw fail("'templates' must be an array") }
        guard entries.count <= Self.maximumTemplates else { throw fail("at most \(Self.maximumTemplates) templates, got \(entries.count)") }
        var templates: [Template] = []
        for (index, entry) in entries.enumerated() {
            guard case .object(let fields) = entry, case .number(let classIndex)? = fields["class"], classIndex == classIndex.rounded(),
                abs(classIndex) <= 1e6, case .array(let sequence)? = fields["sequence"], case .array(let cloud)? = fields["cloud"]
            else { throw fail("template \(index) needs 'class' (a whole number), 'sequence' and 'cloud' (arrays of numbers)") }
            func floats(_ values: [JSONValue]) throws(DataError) -> [Float] {
                var out: [Float] = []
                for value in values {
                    guard case .number(let number) = value, number.isFinite, abs(number) <= 1e6 else {
                        throw fail("template \(index) holds a value that is not a finite number")
                    }
                    out.append(Float(number))
                }
                return out
            }
            templates.append(Template(classIndex: Int(classIndex), sequence: try floats(sequence), cloud: try floats(cloud)))
        }
        let classes = try count("classes")
        let sequenceScale = try number("sequenceScale"), cloudScale = try number("cloudScale")
        if let problem = Self.problem(classCount: classes, templates: templates, sequenceScale: sequenceScale, cloudScale: cloudScale) {
            throw fail(problem)
        }
        self.classCount = classes
        self.templates = templates
        self.sequenceScale = sequenceScale
        self.cloudScale = cloudScale
    }
}
