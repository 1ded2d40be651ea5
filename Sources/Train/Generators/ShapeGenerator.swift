import Datasets
import Foundation
import Models
import Tensor

/// Synthetic hand-drawn shapes that imitate people rather than geometry textbooks, deterministic for a seed.
///
/// Each simulated person has habits — how round their corners are, how much their hand shakes, how fast they
/// draw, where they start and which way they go, how often they lift the pen — and draws many shapes, each with
/// its own size, stretch along a random axis, rotation (any angle), careless vertices, closing gap or overlap,
/// wobble, speed profile and point density; a fifth of the drawings are none of the four shapes (`other`).
/// Datasets split by person, so test drawings come from people the training set never saw.
public struct ShapeGenerator: Sendable {
    /// The classes drawn, in label order: the four shapes and `other` (drawings that are none of them).
    public static let labels = ShapeDataset.standardLabels + [ShapeDataset.otherLabel]

    /// A simulated person's habits.
    struct Person {
        let cornerRounding: Double  // share of an edge given to each rounded corner, 0…0.25
        let tremor: Double  // high-frequency jitter, fraction of the size
        let wobble: Double  // low-frequency wander, fraction of the size
        let speed: Double  // size units per second at full speed
        let sampleRate: Double  // touch samples per second
        let clockwise: Bool  // preferred direction
        let multiStroke: Double  // chance of drawing a polygon in several strokes
        let closing: Double  // typical closing gap (−) or overlap (+), fraction of the perimeter
        let bow: Double  // how far a straight side bulges, fraction of its length (standard deviation)
    }

    /// A drawing with its label and person.
    public struct Sample: Sendable {
        /// The shape (or `other`).
        public let label: String
        /// Which generated person drew it.
        public let person: Int
        /// The strokes.
        public let drawing: Drawing
    }

    var generator: SeededGenerator

    /// Creates a generator; the same seed always gives the same drawings.
    public init(seed: UInt64) { generator = SeededGenerator(seed: seed) }

    mutating func uniform(_ low: Double, _ high: Double) -> Double { generator.nextUniform(in: low..<high) }
    mutating func normal(_ sd: Double) -> Double { generator.nextNormal(standardDeviation: sd) }
    mutating func chance(_ p: Double) -> Bool { generator.nextUnitDouble() < p }
    mutating func logUniform(_ low: Double, _ high: Double) -> Double { exp(uniform(log(low), log(high))) }

    mutating func person() -> Person {
        Person(
            cornerRounding: chance(0.4) ? uniform(0, 0.04) : uniform(0.03, 0.22),
            tremor: logUniform(0.001, 0.012), wobble: uniform(0, 0.035), speed: logUniform(1.5, 8),
            sampleRate: uniform(30, 80), clockwise: chance(0.5), multiStroke: chance(0.7) ? 0.05 : uniform(0.2, 0.7),
            closing: uniform(-0.12, 0.06), bow: chance(0.5) ? uniform(0, 0.015) : uniform(0.015, 0.06))
    }

    /// `peopleCount` people drawing `perPerson` shapes each, cycling through the four classes.
    public mutating func samples(people peopleCount: Int, perPerson: Int, firstPerson: Int = 0) -> [Sample] {
        var result: [Sample] = []
        for p in 0..<peopleCount {
            let habits = person()
            for index in 0..<perPerson {
                let label = Self.labels[(index + p) % Self.labels.count]
                result.append(Sample(label: label, person: firstPerson + p, drawing: draw(label, by: habits)))
            }
        }
        return result
    }

    // MARK: - One drawing

    mutating func draw(_ label: String, by person: Person) -> Drawing {
        if label == ShapeDataset.otherLabel { return drawOther(by: person) }
        // The outline in unit coordinates (y down), as a closed path or as polygon corners; or, for a shape drawn
        // as separate strokes (a circle in two arcs, a star as five lines), as `pieces`.
        var path: [(Double, Double)] = []
        var corners: [Int] = []
        var pieces: [[(Double, Double)]] = []
        switch label {
        case "circle":
            if chance(0.08) { pieces = twoArcs() } else { path = ellipse(person: person) }
        case "triangle":
            // Isosceles-ish, scalene, right and obtuse: the apex anywhere from well left to well right of the base.
            let apexX = chance(0.5) ? 0.5 + normal(0.12) : uniform(-0.9, 1.9)
            var vertices = [(apexX, 0.0 + normal(0.03)), (1 + normal(0.07), 1 + normal(0.05)), (0 + normal(0.07), 1 + normal(0.05))]
            (path, corners) = polygon(&vertices, person: person)
        case "square":
            var vertices = [
                (0 + normal(0.04), 0 + normal(0.04)), (1 + normal(0.04), 0 + normal(0.04)),
                (1 + normal(0.04), 1 + normal(0.04)), (0 + normal(0.04), 1 + normal(0.04)),
            ]
            (path, corners) = polygon(&vertices, person: person)
        default:
            let spin = normal(0.08)
            var points: [(Double, Double)] = []
            var overshoot = 0.08
            if chance(0.5) {
                // A pentagram in one line: every second vertex of a pentagon, careless in two of five: points
                // pulled far out or in and off their angle, as quick hands place them ($1's s05, MMG's subject 10).
                let care = chance(0.4) ? uniform(1.5, 3) : 1
                for k in 0..<5 {
                    let angle = -Double.pi / 2 + Double(k * 2 % 5) * 2 * Double.pi / 5 + spin
                    let radius = 1 + normal(0.07 * care)
                    points.append((0.5 + 0.5 * radius * cos(angle + normal(0.05 * care)), 0.5 + 0.5 * radius * sin(angle + normal(0.05 * care))))
                }
                overshoot = 0.3  // quick pentagrams run on past their points
                // One in eight is five separate lines, each from a point to the next, run short of or past it.
                if chance(0.12) { pieces = separateLines(points) }
            } else {
                // The outline of a star, as most doodled stars are: ten corners, points and notches in turn.
                let inner = uniform(0.3, 0.6)
                for k in 0..<10 {
                    let angle = -Double.pi / 2 + Double(k) * Double.pi / 5 + spin + normal(0.04)
                    let radius = (k % 2 == 0 ? 1 : inner) * (1 + normal(0.07))
                    points.append((0.5 + 0.5 * radius * cos(angle), 0.5 + 0.5 * radius * sin(angle)))
                }
            }
            if pieces.isEmpty { (path, corners) = polygon(&points, person: person, overshoot: overshoot) }
        }
        // Any rotation; stretched along a random axis (ellipses up to 2.6:1, rectangles to 3.2:1, triangles to 8:1,
        // stars to 1.7:1) and slightly sheared; any size and place.
        let size = logUniform(40, 320)
        let aspect: Double
        switch label {
        case "circle": aspect = chance(0.5) ? logUniform(0.8, 1.25) : logUniform(1 / 2.6, 2.6)
        case "star": aspect = logUniform(0.6, 1.7)
        case "square": aspect = chance(0.4) ? logUniform(0.85, 1.18) : logUniform(1 / 3.2, 3.2)
        default:
            // Triangles of any proportions: a fifth of them flat or tall, up to 8:1.
            let flat = logUniform(3.2, 8)
            aspect = chance(0.8) ? logUniform(1 / 3.2, 3.2) : (chance(0.5) ? flat : 1 / flat)
        }
        var drawing: Drawing
        if pieces.isEmpty {
            path = place([path], size: size, aspect: aspect, person: person)[0]
            drawing = timed(path, corners: corners, person: person, size: size, label: label)
        } else {
            // Placed as one path, so that the hand's wobble runs on across the pen lifts instead of bending
            // each short line on its own; then cut back into its pieces.
            let placed = place([Array(pieces.joined())], size: size, aspect: aspect, person: person)[0]
            var rest = placed[...]
            let strokes = pieces.map { piece in
                defer { rest = rest.dropFirst(piece.count) }
                return Array(rest.prefix(piece.count))
            }
            drawing = timed(pieces: strokes, person: person, size: size, label: label)
        }
        if chance(0.05) {
            // A stray mark: a dot or a tick within the shape's box (a circle's centre, a slip of the pen).
            let xs = drawing.strokes.flatMap { $0.map(\.x) }, ys = drawing.strokes.flatMap { $0.map(\.y) }
            if let x0 = xs.min(), let x1 = xs.max(), let y0 = ys.min(), let y1 = ys.max() {
                let (x, y) = (x0 + (x1 - x0) * uniform(0.2, 0.8), y0 + (y1 - y0) * uniform(0.2, 0.8))
                let length = chance(0.5) ? 0.5 : uniform(0.02, 0.08) * max(x1 - x0, y1 - y0)
                let angle = uniform(0, 2 * Double.pi), t = (drawing.strokes.last?.last?.t ?? 0) + uniform(150, 500).rounded()
                drawing.strokes.append([
                    DrawingPoint(x: x, y: y, t: t), DrawingPoint(x: x + length * cos(angle), y: y + length * sin(angle), t: t + 40),
                ])
            }
        }
        return drawing
    }

    /// Unit-square pieces (y down) as pixels: stretched by `aspect` and slightly sheared, turned by a random angle,
    /// scaled to `size` and placed; then the person's low-frequency wobble and tremor.
    mutating func place(_ pieces: [[(Double, Double)]], size: Double, aspect: Double, person: Person) -> [[(Double, Double)]] {
        let rotation = uniform(0, 2 * Double.pi)
        let shear = normal(0.08)
        let (ox, oy) = (uniform(0, 800), uniform(0, 800))
        let (sx, sy) = (size * aspect.squareRoot(), size / aspect.squareRoot())
        let (cosR, sinR) = (cos(rotation), sin(rotation))
        let wobble = person.wobble * size * uniform(0.5, 1.5)
        return pieces.map { piece in
            let phases = (0..<3).map { _ in uniform(0, 2 * Double.pi) }
            let count = Double(max(piece.count - 1, 1))
            return piece.enumerated().map { i, point in
                let (u, v) = ((point.0 - 0.5 + shear * (point.1 - 0.5)) * sx, (point.1 - 0.5) * sy)
                let s = Double(i) / count
                let w = wobble * (sin(2 * .pi * (s * 2.3) + phases[0]) + 0.5 * sin(2 * .pi * (s * 5.1) + phases[1]))
                let w2 = wobble * sin(2 * .pi * (s * 3.7) + phases[2])
                return (
                    ox + u * cosR - v * sinR + w + normal(person.tremor * size),
                    oy + u * sinR + v * cosR + w2 + normal(person.tremor * size)
                )
            }
        }
    }

    /// An ellipse from a random start, either way round, stopping short of or past the start.
    mutating func ellipse(person: Person) -> [(Double, Double)] {
        let start = uniform(0, 2 * Double.pi)
        let direction = (person.clockwise != chance(0.15)) ? 1.0 : -1.0
        // Circles often run past the start (fast ones by a third of a turn) and curl in or out as they do.
        let overrun = chance(0.45) ? uniform(0, 0.3) : person.closing + normal(0.06)
        let sweep = 2 * Double.pi * (1 + max(-0.1, overrun))  // at most a tenth open: a 280° arc is a "C"
        let drift = normal(overrun > 0.08 ? 0.12 : 0.05)  // the radius creeps in or out: spiral-ish endings
        // People's circles are not ellipses: flattened sides and bulges make them egg-like (3-fold), squarish
        // (4-fold) or bumpy (5-fold). Radial harmonics of a few percent imitate that.
        let harmonics = (3...5).map { k in (k: Double(k), amplitude: abs(normal(k == 4 ? 0.035 : 0.03)), phase: uniform(0, 2 * Double.pi)) }
        let steps = 200
        var path = (0...steps).map { i in
            let s = Double(i) / Double(steps)
            let angle = start + direction * sweep * s
            var radius = 0.5 * (1 + drift * s)
            for h in harmonics { radius += 0.5 * min(h.amplitude, 0.08) * cos(h.k * angle + h.phase) }
            return (0.5 + radius * cos(angle), 0.5 + radius * sin(angle))
        }
        // Three in ten end with a hook as the pen leaves: a short tail turning into the middle (or, a fifth of the
        // time, flicking out), as real circles drawn fast do ($1's s02 circles); without it the reject class took them.
        if chance(0.3) { hook(&path, turning: direction) }
        // One in eight starts with one: the pen lands inside and sweeps out into the circle ($1's s02 again).
        if chance(0.12) {
            path.reverse()
            hook(&path, turning: -direction)
            path.reverse()
        }
        return path
    }

    /// Appends a short curved tail to `path`, turning into the middle (`turning` is the way round the path goes)
    /// four times in five and out otherwise.
    mutating func hook(_ path: inout [(Double, Double)], turning direction: Double) {
        let n = path.count
        guard n > 2 else { return }
        var (x, y) = path[n - 1]
        var heading = atan2(path[n - 1].1 - path[n - 2].1, path[n - 1].0 - path[n - 2].0)
        let turn = (chance(0.8) ? 1.0 : -1.0) * direction * uniform(0.5, 1.8)
        let length = uniform(0.08, 0.3)
        let pieces = 20
        for _ in 0..<pieces {
            heading += turn / Double(pieces)
            x += length / Double(pieces) * cos(heading)
            y += length / Double(pieces) * sin(heading)
            path.append((x, y))
        }
    }

    /// A circle in two strokes: both halves from about the same top point down either side, meeting (or not
    /// quite, or crossing) at the bottom.
    mutating func twoArcs() -> [[(Double, Double)]] {
        let top = -Double.pi / 2 + normal(0.3)
        let squash = 1 + normal(0.05)
        return [1.0, -1.0].map { side in
            let from = top + normal(0.06), sweep = Double.pi * (1 + normal(0.07))
            return (0...100).map { i in
                let angle = from + side * sweep * Double(i) / 100
                return (0.5 + 0.5 * cos(angle), 0.5 + 0.5 * squash * sin(angle))
            }
        }
    }

    /// A five-pointed star as five strokes, one for each line of the pentagram through `points` (in drawing
    /// order); each line stops short of or runs past its ends, and one in four is drawn the other way.
    mutating func separateLines(_ points: [(Double, Double)]) -> [[(Double, Double)]] {
        (0..<points.count).map { k in
            let (p, q) = (points[k], points[(k + 1) % points.count])
            let (early, late) = (uniform(-0.06, 0.04), uniform(-0.04, 0.12))
            let a = (p.0 + (q.0 - p.0) * early, p.1 + (q.1 - p.1) * early)
            let b = (p.0 + (q.0 - p.0) * (1 + late), p.1 + (q.1 - p.1) * (1 + late))
            return chance(0.25) ? polyline([b, a]) : polyline([a, b])
        }
    }

    /// A closed polygon traced from a random vertex, either way round, with rounded or overshot corners and a
    /// closing gap or overlap; a quarter of the corners run on by up to `most` of their edge. Returns the dense path
    /// and the indices of its corners.
    mutating func polygon(_ vertices: inout [(Double, Double)], person: Person, overshoot most: Double = 0.08) -> ([(Double, Double)], [Int]) {
        if person.clockwise == chance(0.2) { vertices.reverse() }
        let first = chance(0.5) ? 0 : generator.nextIndex(below: vertices.count)
        vertices = Array(vertices[first...] + vertices[..<first])
        var loop = vertices + [vertices[0]]
        // Closing: stop short of the start, or run on along the first edge.
        let closing = person.closing + normal(0.04)
        let (a, b) = (loop[0], loop[1])
        if closing > 0 {
            loop.append((a.0 + (b.0 - a.0) * min(closing * 2, 0.4), a.1 + (b.1 - a.1) * min(closing * 2, 0.4)))
        } else {
            let (y, z) = (loop[loop.count - 2], loop[loop.count - 1])
            let keep = max(0.55, 1 + closing * 2)
            loop[loop.count - 1] = (y.0 + (z.0 - y.0) * keep, y.1 + (z.1 - y.1) * keep)
        }
        var path: [(Double, Double)] = []
        var corners: [Int] = []
        let rounding = max(0, person.cornerRounding + normal(0.03))
        // One drawing in sixteen goes over a side again: back along it part of the way, and on once more.
        let retraced = chance(1.0 / 16) ? 1 + generator.nextIndex(below: max(1, loop.count - 3)) : -1
        for i in 0..<(loop.count - 1) {
            let (p, q) = (loop[i], loop[i + 1])
            let length = hypot(q.0 - p.0, q.1 - p.1)
            let cut = i == 0 || i == loop.count - 2 ? 0 : min(rounding, 0.45)
            let overshoot = chance(0.25) ? uniform(0, most) : 0
            let steps = max(4, Int(length * 60))
            // Sides are not ruled: each bulges to one side by a few percent of its length, as the person's hand does.
            let bow = normal(person.bow)
            let side = (-(q.1 - p.1), q.0 - p.0)
            func point(_ f: Double, _ offset: Double = 0) -> (Double, Double) {
                let out = bow * sin(Double.pi * f) + offset
                return (p.0 + (q.0 - p.0) * f + side.0 * out, p.1 + (q.1 - p.1) * f + side.1 * out)
            }
            for s in 0...steps {
                let f = Double(s) / Double(steps)
                if i > 0 && f < cut { continue }
                if f > 1 - cut && i < loop.count - 2 { break }
                path.append(point(f))
            }
            if i == retraced {
                let back = uniform(0.3, 0.9), apart = normal(0.015)
                let end = 1 - cut
                for s in 1...steps { path.append(point(end - back * Double(s) / Double(steps), apart)) }
                for s in 1...steps { path.append(point(end - back + back * Double(s) / Double(steps), apart / 2)) }
            }
            if overshoot > 0 && i < loop.count - 2 {
                path.append((q.0 + (q.0 - p.0) * overshoot, q.1 + (q.1 - p.1) * overshoot))
            }
            if i < loop.count - 2 {
                // A rounded corner: a quadratic curve from the cut point through the corner's neighbourhood.
                let r = loop[i + 2]
                let from = (q.0 + (p.0 - q.0) * cut, q.1 + (p.1 - q.1) * cut)
                let to = (q.0 + (r.0 - q.0) * cut, q.1 + (r.1 - q.1) * cut)
                for s in 1...8 where cut > 0 {
                    let t = Double(s) / 9
                    let x = (1 - t) * (1 - t) * from.0 + 2 * (1 - t) * t * q.0 + t * t * to.0
                    let y = (1 - t) * (1 - t) * from.1 + 2 * (1 - t) * t * q.1 + t * t * to.1
                    path.append((x, y))
                }
                corners.append(path.count - 1)
            }
        }
        return (path, corners)
    }

    /// Samples the dense path as touch points with timestamps: the pen slows into corners and speeds along
    /// edges; the sample rate and speed give the point density. Some drawings lift the pen at corners.
    mutating func timed(_ path: [(Double, Double)], corners: [Int], person: Person, size: Double, label: String) -> Drawing {
        // Arc length, then a speed profile: slower near corners and at the ends.
        var lengths = [0.0]
        for i in 1..<path.count { lengths.append(lengths[i - 1] + hypot(path[i].0 - path[i - 1].0, path[i].1 - path[i - 1].1)) }
        let total = max(lengths.last ?? 1, 1e-9)
        let speed = person.speed * size * uniform(0.6, 1.6)
        let interval = 1 / (person.sampleRate * uniform(0.85, 1.15))
        let cornerLengths = corners.map { lengths[$0] }
        var points: [DrawingPoint] = []
        var distance = 0.0, time = 0.0, index = 0
        while distance <= total {
            while index + 1 < path.count && lengths[index + 1] < distance { index += 1 }
            let span = index + 1 < path.count ? lengths[index + 1] - lengths[index] : 1
            let f = span > 0 ? (distance - lengths[index]) / span : 0
            let next = path[min(index + 1, path.count - 1)]
            points.append(
                DrawingPoint(
                    x: path[index].0 + (next.0 - path[index].0) * f,
                    y: path[index].1 + (next.1 - path[index].1) * f, t: (time * 1000).rounded()))
            let nearCorner = cornerLengths.map { abs($0 - distance) }.min() ?? total
            let slow = 0.35 + 0.65 * min(1, nearCorner / (0.08 * total))
            let ends = min(1, 0.3 + min(distance, total - distance) / (0.05 * total))
            distance += speed * slow * ends * interval
            time += interval
            if chance(0.03) { points.append(points[points.count - 1]) }  // a repeated sample
        }
        if let last = path.last { points.append(DrawingPoint(x: last.0, y: last.1, t: (time * 1000).rounded())) }
        // Several strokes: lift the pen at some corners (polygons) or half way (circles).
        guard label != "circle" ? chance(person.multiStroke) : chance(person.multiStroke * 0.3), points.count > 8 else {
            return Drawing(strokes: [points])
        }
        var cuts = corners.filter { _ in chance(0.6) }.map { Int(Double($0) / Double(max(path.count - 1, 1)) * Double(points.count - 1)) }
        if label == "circle" || cuts.isEmpty { cuts = [points.count / 2] }
        var strokes: [[DrawingPoint]] = []
        var start = 0
        for cut in cuts.sorted() where cut > start + 1 && cut < points.count - 2 {
            strokes.append(Array(points[start...cut]))
            start = cut + (chance(0.5) ? 1 : 0)
        }
        strokes.append(Array(points[start...]))
        return Drawing(strokes: strokes)
    }

    /// Pieces drawn one after another, each timed as its own path (and perhaps lifted again within it), with a
    /// pause between them.
    mutating func timed(pieces: [[(Double, Double)]], person: Person, size: Double, label: String) -> Drawing {
        var strokes: [[DrawingPoint]] = []
        var offset = 0.0
        for piece in pieces where piece.count >= 2 {
            for stroke in timed(piece, corners: [], person: person, size: size, label: label).strokes {
                strokes.append(stroke.map { DrawingPoint(x: $0.x, y: $0.y, t: ($0.t ?? 0) + offset) })
            }
            offset = (strokes.last?.last?.t ?? offset) + uniform(150, 500).rounded()
        }
        return Drawing(strokes: strokes)
    }
}
