import Datasets
import Foundation
import Models

/// Drawings that are none of the four shapes, labelled `other`: what people draw when they are not drawing a
/// circle, triangle, square or star — strokes (lines, zigzags, squiggles, spirals, lightning), open curves (arcs,
/// moons), closed outlines that are not our shapes (hearts, clouds, pentagons and hexagons, figure eights),
/// letters, arrows, crosses, check marks and scribbles. Each goes through the same person's hand as the shapes
/// (rotation, stretch, wobble, tremor, speed, pen lifts), so only the outline tells them apart.
extension ShapeGenerator {
    /// The kinds of non-shape drawn, in the order `drawOther` numbers them.
    static let otherKinds = [
        "line", "zigzag", "spiral", "squiggle", "arrow", "heart", "letter", "lightning",
        "cloud", "moon", "arc", "polygon", "cross", "check", "eight", "scribble",
        "gesture", "object", "object", "object", "stem and bowl",
    ]

    mutating func drawOther(by person: Person) -> Drawing {
        var pieces: [[(Double, Double)]]
        var aspect = logUniform(0.6, 1.6)
        switch Self.otherKinds[generator.nextIndex(below: Self.otherKinds.count)] {
        case "line":
            let bow = normal(0.06)
            pieces = [
                (0...40).map { i in
                    let s = Double(i) / 40; return (s, 0.5 + bow * sin(.pi * s))
                }
            ]
            aspect = 1
        case "zigzag":
            let turns = 3 + generator.nextIndex(below: 6)
            let corners = (0...turns).map { k in (Double(k) / Double(turns) + normal(0.02), k % 2 == 0 ? 0.0 : 1.0 + normal(0.05)) }
            pieces = [polyline(corners)]
            aspect = logUniform(1.2, 5)
        case "spiral":
            let turns = uniform(1.6, 3.5), start = uniform(0, 2 * Double.pi), direction = chance(0.5) ? 1.0 : -1.0
            pieces = [
                (0...240).map { i in
                    let s = Double(i) / 240, angle = start + direction * 2 * .pi * turns * s, radius = 0.05 + 0.45 * s
                    return (0.5 + radius * cos(angle), 0.5 + radius * sin(angle))
                }
            ]
        case "squiggle":
            let waves = (0..<3).map { _ in (frequency: uniform(1, 4.5), amplitude: uniform(0.05, 0.3), phase: uniform(0, 2 * Double.pi)) }
            pieces = [
                (0...120).map { i in
                    let s = Double(i) / 120
                    return (s, 0.5 + waves.reduce(0) { $0 + $1.amplitude * sin(2 * .pi * $1.frequency * s + $1.phase) })
                }
            ]
            aspect = logUniform(1, 4)
        case "arrow":
            let head = uniform(0.15, 0.35), spread = uniform(0.1, 0.25)
            let shaft = [(0.0, 0.5), (1.0, 0.5)]
            let tip = [(1 - head, 0.5 - spread), (1.0, 0.5), (1 - head, 0.5 + spread)]
            pieces = chance(0.5) ? [polyline(shaft), polyline(tip)] : [polyline(shaft + tip)]
            aspect = logUniform(1.5, 4)
        case "heart":
            pieces = [
                (0...120).map { i in
                    let t = 2 * Double.pi * Double(i) / 120
                    let x = 16 * pow(sin(t), 3), y = 13 * cos(t) - 5 * cos(2 * t) - 2 * cos(3 * t) - cos(4 * t)
                    return (0.5 + x / 34, 0.5 - y / 34)
                }
            ]
            aspect = logUniform(0.8, 1.25)
        case "letter":
            pieces = letter()
        case "stem and bowl":
            pieces = stemAndBowl()
            aspect = logUniform(0.5, 1.1)
        case "lightning":
            let w = uniform(0.15, 0.35)
            pieces = [polyline([(0.7, 0.0), (0.5 - w, 0.55), (0.5 + w, 0.45), (0.3, 1.0)])]
            aspect = logUniform(0.3, 0.7)
        case "cloud":
            // Round bumps along some or all of the outline (often only the top), the rest smooth or flat.
            let bumps = 3 + generator.nextIndex(below: 6), depth = uniform(0.1, 0.3), start = uniform(0, 2 * Double.pi)
            let bumpy = chance(0.5) ? 1.0 : uniform(0.45, 0.8), flat = chance(0.5) ? uniform(0.25, 0.45) : 1.0
            pieces = [
                (0...220).map { i in
                    let s = Double(i) / 220, angle = start + 2 * .pi * s
                    let radius = s < bumpy ? 0.5 - depth + depth * abs(sin(Double(bumps) * .pi * s / bumpy)) : 0.5 - depth
                    return (0.5 + radius * cos(angle), min(0.5 + flat, 0.5 + radius * sin(angle)))
                }
            ]
            aspect = logUniform(0.45, 1.2)
        case "moon":
            // The outer arc round the left side between two tips, and a shallower inner arc back between them.
            let tip = uniform(0.25, 0.65), depth = uniform(0.25, 0.7)
            let outer = (0...60).map { i -> (Double, Double) in
                let angle = tip + (2 * .pi - 2 * tip) * Double(i) / 60
                return (0.5 + 0.5 * cos(angle), 0.5 + 0.5 * sin(angle))
            }
            let (tipX, halfHeight) = (0.5 + 0.5 * cos(tip), 0.5 * sin(tip))
            let inner = (1...40).map { i -> (Double, Double) in
                let s = Double(i) / 40
                return (tipX - depth * tipX * sin(.pi * s), 0.5 - halfHeight + 2 * halfHeight * s)
            }
            pieces = [outer + inner]
        case "arc":
            let sweep = uniform(0.6, 1.6) * Double.pi, start = uniform(0, 2 * Double.pi)  // up to 288°: an open "C"
            pieces = [
                (0...80).map { i in
                    let angle = start + sweep * Double(i) / 80
                    return (0.5 + 0.5 * cos(angle), 0.5 + 0.5 * sin(angle))
                }
            ]
        case "polygon":
            let sides = chance(0.6) ? 5 : 6
            var vertices = (0..<sides).map { k -> (Double, Double) in
                let angle = -Double.pi / 2 + 2 * .pi * Double(k) / Double(sides) + normal(0.04)
                return (0.5 + 0.5 * cos(angle), 0.5 + 0.5 * sin(angle))
            }
            let sharp = Person(
                cornerRounding: min(person.cornerRounding, 0.05), tremor: person.tremor, wobble: person.wobble,
                speed: person.speed, sampleRate: person.sampleRate, clockwise: person.clockwise,
                multiStroke: person.multiStroke, closing: person.closing, bow: person.bow)
            pieces = [polygon(&vertices, person: sharp).0]
            aspect = logUniform(0.8, 1.25)
        case "cross":
            let tilt = chance(0.5)
            pieces =
                tilt
                ? [polyline([(0, 0), (1, 1)]), polyline([(1, 0), (0, 1)])]
                : [polyline([(0.5, 0), (0.5, 1)]), polyline([(0, 0.5), (1, 0.5)])]
        case "check":
            let corner = uniform(0.25, 0.45)
            pieces = [polyline([(0, 0.55), (corner, 1), (1, 0)])]
        case "eight":
            pieces = [
                (0...160).map { i in
                    let t = 2 * Double.pi * Double(i) / 160
                    return (0.5 + 0.5 * sin(t), 0.5 + 0.5 * sin(t) * cos(t) * 2 * 0.5)
                }
            ]
            aspect = logUniform(1, 2.5)
        case "gesture":
            pieces = [gesture()]
            aspect = logUniform(0.5, 2)
        case "object":
            let elongated = chance(0.3)
            pieces = object()
            aspect = elongated ? logUniform(2.2, 5) : logUniform(0.5, 2)
        default:  // scribble: a smooth random walk
            var (x, y, heading) = (0.5, 0.5, uniform(0, 2 * Double.pi))
            var walk: [(Double, Double)] = []
            for _ in 0..<(60 + generator.nextIndex(below: 120)) {
                heading += normal(0.5)
                x += 0.03 * cos(heading)
                y += 0.03 * sin(heading)
                walk.append((x, y))
            }
            pieces = [walk]
        }
        let size = logUniform(40, 320)
        return timed(pieces: place(pieces, size: size, aspect: aspect, person: person), person: person, size: size, label: ShapeDataset.otherLabel)
    }

    /// One-stroke marks that people draw as commands or symbols and that run close to a shape's outline: an "x"
    /// or a delete mark in one stroke (two diagonals joined by a side), a caret, a square bracket. (Question marks
    /// and pigtails were tried: they taught the model that a fast circle running on past its start is none of the
    /// shapes.)
    mutating func gesture() -> [(Double, Double)] {
        switch generator.nextIndex(below: 4) {
        case 0: return polyline([(0, 0), (1, 1), (1, 0), (0, 1)])  // x in one stroke
        case 1: return polyline([(0, 0), (1, 1), (0, 1), (1, 0)])  // delete mark
        case 2: return polyline([(0, 1), (0.5 + normal(0.05), 0), (1, 1)])  // caret
        default: return polyline([(1, 0), (0, 0), (0, 1), (1, 1)])  // a square bracket
        }
    }

    /// A doodle of a thing, not a shape: a box, a blob or a disc as its body (the caller stretches some long and
    /// thin: a canoe, a crocodile, a plane) with 1–6 details inside or stuck on — lines across, small boxes and circles,
    /// dots, legs, handles, spikes, a roof, a scribble — each its own stroke, as people draw a dishwasher, a cooler,
    /// a cake, a cat or a skyscraper. A body with one detail is never a body and a dot (that is a shape with a
    /// stray mark, which the shapes themselves sometimes have).
    mutating func object() -> [[(Double, Double)]] {
        var pieces: [[(Double, Double)]] = []
        let body = generator.nextIndex(below: 3)
        switch body {
        case 0:
            pieces.append(
                polyline([
                    (0 + normal(0.03), 0 + normal(0.03)), (1 + normal(0.03), 0 + normal(0.03)), (1 + normal(0.03), 1 + normal(0.03)),
                    (0 + normal(0.03), 1 + normal(0.03)), (0, 0),
                ]))
        case 1:
            let bumps = (2...4).map { k in (k: Double(k), amplitude: uniform(0, 0.08), phase: uniform(0, 2 * Double.pi)) }
            pieces.append(
                (0...120).map { i in
                    let angle = 2 * Double.pi * Double(i) / 120
                    let radius = 0.5 + bumps.reduce(0) { $0 + $1.amplitude * cos($1.k * angle + $1.phase) }
                    return (0.5 + radius * cos(angle), 0.5 + radius * sin(angle))
                })
        default:
            pieces.append(
                (0...100).map { i in
                    let angle = 2 * Double.pi * Double(i) / 100
                    return (0.5 + 0.5 * cos(angle), 0.5 + 0.5 * sin(angle))
                })
        }
        let details = 1 + generator.nextIndex(below: 6)
        for _ in 0..<details {
            // A lone detail is never a dot (see above): the kinds after the dot stand in for it.
            let drawn = generator.nextIndex(below: details == 1 ? 8 : 9)
            let kind = details == 1 && drawn >= 3 ? drawn + 1 : drawn
            let (x, y) = (uniform(0.15, 0.85), uniform(0.15, 0.85))
            switch kind {
            case 0:  // a line across, as a lid or a shelf
                pieces.append(
                    chance(0.5)
                        ? polyline([(uniform(0, 0.1), y), (uniform(0.9, 1), y + normal(0.03))])
                        : polyline([(x, uniform(0, 0.1)), (x + normal(0.03), uniform(0.9, 1))]))
            case 1:  // a small box: a button, a window
                let w = uniform(0.08, 0.3), h = uniform(0.08, 0.3)
                pieces.append(polyline([(x, y), (x + w, y), (x + w, y + h), (x, y + h), (x, y)]))
            case 2:  // a small circle: a knob, an eye, a wheel
                let r = uniform(0.04, 0.14)
                pieces.append(
                    (0...24).map { i in
                        let angle = 2 * Double.pi * Double(i) / 24
                        return (x + r * cos(angle), y + r * sin(angle))
                    })
            case 3:  // a dot
                pieces.append([(x, y), (x + 0.01, y + 0.01)])
            case 4, 5:  // a leg, a handle, an antenna, a candle: from the edge outward
                let angle = uniform(0, 2 * Double.pi), length = uniform(0.15, 0.5)
                let (ex, ey) = (0.5 + 0.5 * cos(angle), 0.5 + 0.5 * sin(angle))
                pieces.append(polyline([(ex, ey), (ex + length * cos(angle + normal(0.4)), ey + length * sin(angle + normal(0.4)))]))
            case 6:  // spikes along the top: teeth, a crown, fins
                let count = 2 + generator.nextIndex(below: 4), height = uniform(0.1, 0.3)
                var spikes: [(Double, Double)] = []
                for k in 0...(2 * count) { spikes.append((0.1 + 0.8 * Double(k) / Double(2 * count), k % 2 == 0 ? 0 : -height)) }
                pieces.append(polyline(spikes))
            case 7:  // a roof or a lid on top
                let h = uniform(0.2, 0.5)
                pieces.append(polyline([(0, 0), (uniform(0.3, 0.7), -h), (1, 0)]))
            default:  // a scribble or zigzag inside: a flame, a pattern, writing
                let turns = 2 + generator.nextIndex(below: 5), w = uniform(0.2, 0.5), h = uniform(0.05, 0.2)
                pieces.append(polyline((0...turns).map { k in (x - w / 2 + w * Double(k) / Double(turns), y + (k % 2 == 0 ? 0 : h)) }))
            }
        }
        return pieces
    }

    /// A straight-edged path through `corners`, 30 points per unit of length.
    func polyline(_ corners: [(Double, Double)]) -> [(Double, Double)] {
        var path: [(Double, Double)] = []
        for (p, q) in zip(corners, corners.dropFirst()) {
            let steps = max(4, Int(hypot(q.0 - p.0, q.1 - p.1) * 30))
            for s in 0..<steps {
                let f = Double(s) / Double(steps)
                path.append((p.0 + (q.0 - p.0) * f, p.1 + (q.1 - p.1) * f))
            }
        }
        if let last = corners.last { path.append(last) }
        return path
    }

    /// A letter of a stem and bowls — D, P, B, R or b — as people write them: the stem down, then each bowl from
    /// the stem out and back, round, squarish or pointed (a superellipse of exponent 1 to 5), starting a little
    /// off the stem and often ending short of it; three in ten in one stroke, up the stem and round. A D whose
    /// bowl is round is half a circle with a side, and a pointed one is a triangle with a curved side: without
    /// them the reject class took a hurried D or P for a circle or a triangle.
    mutating func stemAndBowl() -> [[(Double, Double)]] {
        let width = uniform(0.45, 0.95), exponent = logUniform(1, 5)
        func bowl(_ top: Double, _ bottom: Double) -> [(Double, Double)] {
            let (middle, half) = ((top + bottom) / 2, (bottom - top) / 2)
            let (start, end) = (normal(0.03), uniform(-0.02, 0.25) * width)
            return (0...40).map { i in
                let angle = -Double.pi / 2 + Double.pi * Double(i) / 40
                let (c, s) = (cos(angle), sin(angle))
                let x = width * pow(abs(c), 2 / exponent), y = half * (s < 0 ? -1 : 1) * pow(abs(s), 2 / exponent)
                let lead = i < 20 ? start * (1 - Double(i) / 20) : end * (Double(i) - 20) / 20
                return (x + lead, middle + y)
            }
        }
        let waist = 0.5 + normal(0.05)
        var bowls: [[(Double, Double)]]
        switch generator.nextIndex(below: 5) {
        case 0, 1: bowls = [bowl(0, 1)]  // D
        case 2: bowls = [bowl(0, waist)]  // P
        case 3: bowls = [bowl(0, waist), bowl(waist, 1)]  // B
        default: bowls = [bowl(0, waist) + polyline([(0.1, waist), (width, 1)]).dropFirst()]  // R
        }
        if chance(0.15) { bowls = [bowl(waist, 1)] }  // b
        let stem = polyline([(0, 0), (0, 1)])
        if chance(0.3) { return [Array(stem.reversed()) + bowls[0]] + bowls.dropFirst() }
        return [stem] + bowls
    }

    /// One of a few capital letters and digits, as strokes in the unit square.
    mutating func letter() -> [[(Double, Double)]] {
        switch generator.nextIndex(below: 12) {
        case 9:
            return [
                polyline([(0, 0), (0, 0.6)]).dropLast()
                    + (0...30).map { i in  // U
                        let angle = Double.pi - Double.pi * Double(i) / 30
                        return (0.5 + 0.5 * cos(angle), 0.6 + 0.4 * sin(angle))
                    } + polyline([(1, 0.6), (1, 0)]).dropFirst()
            ]
        case 10:
            return [
                polyline([(0.1, 1), (0.1, 0)])
                    + (1...30).map { i in  // D
                        let angle = -Double.pi / 2 + Double.pi * Double(i) / 30
                        return (0.1 + 0.8 * cos(angle), 0.5 + 0.5 * sin(angle))
                    }
            ]
        case 11: return [polyline([(0, 1), (0, 0.4), (0.5, 0), (1, 0.4), (1, 1), (0, 1)])]  // a house
        case 0: return [polyline([(1, 0), (0, 0), (0, 0.5), (0.8, 0.5)]), polyline([(0, 0.5), (0, 1)])]  // F-ish
        case 1: return [polyline([(0, 0), (1, 0), (0, 1), (1, 1)])]  // Z
        case 2: return [polyline([(0, 1), (0, 0), (1, 1), (1, 0)])]  // N
        case 3: return [polyline([(0, 1), (0.1, 0), (0.5, 0.7), (0.9, 0), (1, 1)])]  // M
        case 4: return [polyline([(0, 0), (0.25, 1), (0.5, 0.3), (0.75, 1), (1, 0)])]  // W
        case 5: return [polyline([(0, 0), (0, 1), (0.7, 1)])]  // L
        case 6: return [polyline([(0, 0), (0.5, 1), (1, 0)])]  // V
        case 7:  // S: two half circles
            return [
                (0...60).map { i in
                    let s = Double(i) / 60
                    let angle = s < 0.5 ? -0.1 * .pi - 1.4 * .pi * (s / 0.5) : -0.5 * .pi + 1.4 * .pi * ((s - 0.5) / 0.5)
                    let cy = s < 0.5 ? 0.25 : 0.75
                    return (0.5 + 0.45 * cos(angle) * (s < 0.5 ? 1 : -1), cy + 0.25 * sin(angle) * (s < 0.5 ? 1 : -1))
                }
            ]
        default:  // 2
            return [
                (0...30).map { i in
                    let angle = -Double.pi + 1.2 * .pi * Double(i) / 30
                    return (0.5 + 0.45 * cos(angle), 0.3 + 0.3 * sin(angle))
                } + polyline([(0.9, 0.4), (0, 1), (1, 1)])
            ]
        }
    }
}
