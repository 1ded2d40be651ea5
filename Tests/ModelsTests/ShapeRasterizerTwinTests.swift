import Foundation
import Tensor
import Testing

@testable import Models

/// The allocation-free `ShapeRasterizer.rasterize(_:into:)` (one C kernel, at every instruction-set level this CPU
/// runs) against its plain twin, `rasterizeReference`, and the twin's levelling against what a levelling must do.
///
/// The kernel does each value's arithmetic as the twin does, in float, in the same order, so the twins agree bit
/// for bit: `pixelTolerance` is zero, and pixels are compared by bit pattern (a −0 for a +0 would fail too).
@Suite("Shape rasterizer: the fast path against its twin")
struct ShapeRasterizerTwinTests {
    /// How far a fast-path pixel may be from its twin's: not at all.
    static let pixelTolerance: Float = 0

    /// The rasterizers under test: the shipped one, the plain one, and a canonical one with other parameters.
    static let rasterizers = [
        ShapeRasterizer.shipped,
        ShapeRasterizer(size: 16, canonical: false, maxStretch: 1),
        ShapeRasterizer(size: 28, lineWidth: 2.5, margin: 1.5, canonical: true, maxStretch: 2),
    ]

    /// Checks the fast path's image (and the tensor wrapper's) against the reference's, reporting the largest
    /// difference and the first pixel that differs.
    func expectTwins(
        _ rasterizer: ShapeRasterizer, _ drawing: Drawing, _ what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let reference = rasterizer.rasterizeReference(drawing)
        let size = rasterizer.size
        // NaN everywhere first, so that a pixel the fast path forgets to write shows.
        var fast = [Float](repeating: .nan, count: size * size)
        fast.withUnsafeMutableBufferPointer { rasterizer.rasterize(drawing, into: $0) }
        let wrapped = rasterizer.rasterize(drawing)
        guard reference.shape == [size, size, 1], wrapped.shape == reference.shape else {
            Issue.record("\(what): shapes \(wrapped.shape) and \(reference.shape), expected [\(size), \(size), 1]", sourceLocation: sourceLocation)
            return
        }
        // And the drawing kernels compiled for every instruction-set level this CPU runs.
        let levels = Kernels.availableLevels.map { level in
            var image = [Float](repeating: .nan, count: size * size)
            image.withUnsafeMutableBufferPointer { rasterizer.rasterize(drawing, into: $0, level: level) }
            return ("rasterize(_:into:level: \(level))", image)
        }
        for (name, image) in [("rasterize(_:into:)", fast), ("rasterize(_:)", wrapped.scalars)] + levels {
            var worst: Float = 0
            var firstBad: Int?
            for (index, (a, b)) in zip(image, reference.scalars).enumerated() where a.bitPattern != b.bitPattern {
                let difference = abs(a - b)
                worst = difference.isNaN ? .nan : max(worst, difference)
                if firstBad == nil { firstBad = index }
            }
            guard let index = firstBad else { continue }
            #expect(
                worst <= Self.pixelTolerance,
                """
                \(what), \(name), \(size)×\(size) (canonical \(rasterizer.canonical)): max difference \(worst); first at \
                row \(index / size), column \(index % size): \(image[index]) against the reference's \(reference.scalars[index])
                """, sourceLocation: sourceLocation)
        }
    }

    // MARK: - Drawings

    func points(_ coordinates: [(Double, Double)]) -> [DrawingPoint] { coordinates.map { DrawingPoint(x: $0.0, y: $0.1) } }

    /// `count` points evenly around a circle, the first repeated at the end.
    func circle(_ count: Int, radius: Double = 50, centre: (Double, Double) = (50, 50)) -> Drawing {
        Drawing(strokes: [
            (0...count).map { i in
                let angle = 2 * Double.pi * Double(i % count) / Double(count)
                return DrawingPoint(x: centre.0 + radius * cos(angle), y: centre.1 + radius * sin(angle))
            }
        ])
    }

    /// A seeded random walk of `count` points, rounded to whole units when `whole` (like touch screens give).
    func walk(_ count: Int, seed: UInt64, whole: Bool = false) -> Drawing {
        var generator = SeededGenerator(seed: seed)
        var (x, y) = (0.0, 0.0)
        var stroke: [DrawingPoint] = []
        for _ in 0..<count {
            x += generator.nextNormal(standardDeviation: 3)
            y += generator.nextNormal(standardDeviation: 3)
            stroke.append(whole ? DrawingPoint(x: x.rounded(), y: y.rounded()) : DrawingPoint(x: x, y: y))
        }
        return Drawing(strokes: [stroke])
    }

    /// The same drawing moved and scaled.
    func moved(_ drawing: Drawing, scale: Double, offset: Double) -> Drawing {
        Drawing(strokes: drawing.strokes.map { $0.map { DrawingPoint(x: $0.x * scale + offset, y: $0.y * scale - offset) } })
    }

    /// Awkward drawings `problem(with:)` accepts, by name.
    func awkwardDrawings() -> [(String, Drawing)] {
        var result: [(String, Drawing)] = []
        func add(_ name: String, _ strokes: [[DrawingPoint]]) { result.append((name, Drawing(strokes: strokes))) }
        let square: [DrawingPoint] = points([(0, 0), (100, 0), (100, 100), (0, 100), (0, 0)])
        add("two points", [points([(0, 0), (3, 4)])])
        add("two points, vertical", [points([(1, 1), (1, 5)])])
        add("two points in two strokes", [points([(2, 7)]), points([(9, -3)])])
        add("one point and a stroke", [points([(50, 50)]), points([(0, 0), (10, 80), (90, 20)])])
        add("empty strokes between", [[], points([(0, 0), (5, 5)]), [], points([(5, 0), (0, 5)]), []])
        add("collinear", [points((0..<50).map { i -> (Double, Double) in (Double(i), 2 * Double(i) + 1) })])
        add(
            "collinear, back and forth",
            [
                points(
                    (0..<60).map { i -> (Double, Double) in
                        let k = Double(i < 30 ? i : 60 - i)
                        return (k * 0.7, k * 1.3)
                    })
            ])
        add("collinear in thirds", [points((0..<40).map { i -> (Double, Double) in (Double(i), 3 * Double(i)) })])
        add("upright square", [square])
        add(
            "upright square, whole units, many points",
            [
                points(
                    (0..<400).map { i -> (Double, Double) in
                        let t = Double(i % 100)
                        let corners: [(Double, Double)] = [(t, 0), (100, t), (100 - t, 100), (0, 100 - t)]
                        return corners[i / 100]
                    })
            ])
        let turn = 30 * Double.pi / 180
        add(
            "square turned 30°",
            [
                square.map { p in
                    DrawingPoint(x: p.x * cos(turn) - p.y * sin(turn), y: p.x * sin(turn) + p.y * cos(turn))
                }
            ])
        add("2:1 rectangle", [points([(0, 0), (200, 0), (200, 100), (0, 100), (0, 0)])])
        add("tall thin rectangle", [points([(0, 0), (1, 0), (1, 300), (0, 300), (0, 0)])])
        add("every point three times", [square.flatMap { [$0, $0, $0] }])
        add("all but two points in one place", [points(Array(repeating: (5, 5), count: 40) + [(0, 0), (9, 2)])])
        add("a vertical side drawn upwards", [points((0..<300).map { i -> (Double, Double) in (Double(i % 3), 300 - Double(i)) })])
        add("three columns of points", [points((0..<900).map { i -> (Double, Double) in (Double(i % 3) * 40, Double((i * 7919) % 900)) })])
        var strokes: [[DrawingPoint]] = []
        for s in 0..<200 {
            let (left, top) = (Double(s % 20) * 5, Double(s / 20) * 9)
            var stroke: [DrawingPoint] = []
            for k in 0..<(2 + s % 4) { stroke.append(DrawingPoint(x: left + Double(k), y: top + Double(k * k))) }
            strokes.append(stroke)
        }
        add("many strokes", strokes)
        let squareDrawing = Drawing(strokes: [square])
        result.append(("tiny", moved(squareDrawing, scale: 1e-150, offset: 0)))
        result.append(("tiny and far out", moved(squareDrawing, scale: 1e-3, offset: 1e5)))
        result.append(("huge", moved(squareDrawing, scale: 1e150, offset: 0)))
        add("near the largest numbers", [points([(-8e307, -8e307), (8e307, -7e307), (7e307, 8e307), (-8e307, 6e307)])])
        add("negative zeros", [points([(0, -0.0), (-0.0, 0), (-0.0, 3), (4, -0.0), (2, 5), (0, 0)])])
        for count in [3, 12, 100, 1000, 5000] { result.append(("\(count) points on a circle", circle(count))) }
        let rounded = circle(500, radius: 300).strokes.map { $0.map { DrawingPoint(x: $0.x.rounded(), y: $0.y.rounded()) } }
        add("a circle in whole units", rounded)
        // Both sides of every scratch size the levelling steps through.
        for count in [127, 128, 129, 256, 257, 512, 513, 1024, 1025, 2048, 2049, 5000] {
            result.append(("a walk of \(count) points", walk(count, seed: UInt64(count))))
            result.append(("a walk of \(count) points in whole units", walk(count, seed: UInt64(count) + 1, whole: true)))
        }
        return result
    }

    // MARK: - Tests

    /// The first 2,000 real drawings of the bundled training set, every class.
    @Test func realDrawingsAreTheSameBitForBit() throws {
        let drawings = try bundledDrawings("train", count: 2000)
        #expect(drawings.count == 2000)
        for rasterizer in Self.rasterizers {
            for (index, drawing) in drawings.enumerated() {
                expectTwins(rasterizer, drawing, "real drawing \(index)")
            }
        }
        // Far from the origin and at extreme scales (the rasterizer works in the drawing's own units).
        for (index, drawing) in drawings.prefix(200).enumerated() {
            expectTwins(.shipped, moved(drawing, scale: 1e-120, offset: 0), "real drawing \(index), tiny")
            expectTwins(.shipped, moved(drawing, scale: 1e120, offset: -1e121), "real drawing \(index), huge")
            expectTwins(.shipped, moved(drawing, scale: 0.01, offset: 1e6), "real drawing \(index), far out")
        }
    }

    @Test func awkwardDrawingsAreTheSameBitForBit() {
        let drawings = awkwardDrawings()
        // Beyond `Drawing.largestCoordinate` a drawing is refused, yet the twins still agree on it.
        let outOfRange: Set = ["huge", "near the largest numbers"]
        for (name, drawing) in drawings {
            let problem = ShapeRasterizer.shipped.problem(with: drawing)
            #expect(
                outOfRange.contains(name) ? problem?.hasPrefix("a point is outside the coordinate range") == true : problem == nil,
                "\(name): \(problem ?? "accepted")")
        }
        var rasterizers = Self.rasterizers
        rasterizers.append(ShapeRasterizer(size: 16, lineWidth: 3.7, margin: 0.3, canonical: true, maxStretch: 4))
        rasterizers.append(ShapeRasterizer(size: 12, lineWidth: 1, margin: 0, canonical: true, maxStretch: 100))
        for rasterizer in rasterizers {
            for (name, drawing) in drawings { expectTwins(rasterizer, drawing, name) }
        }
    }

    /// More points than the stack frames hold: the scratch is a temporary allocation, the image the same.
    @Test func drawingsBeyondTheStackScratchAreTheSame() {
        expectTwins(.shipped, walk(8_000, seed: 65), "a walk of 8,000 points")
        expectTwins(.shipped, circle(70_000), "70,000 points on a circle")
        expectTwins(ShapeRasterizer(size: 80, canonical: true), circle(300), "an 80×80 image")
    }

    /// Image sizes that are not multiples of the 16 lanes of a row, and both sides of each stack frame for the
    /// distances (16, 32 and 64 pixels a side); 1, 2 and 3 pixels only by setting `size` (the initializer
    /// asks for 4 or more), with no margin.
    @Test func otherImageSizesAreTheSameBitForBit() throws {
        let drawings = try bundledDrawings(count: 40) + awkwardDrawings().prefix(12).map(\.1)
        for size in [1, 2, 3, 4, 5, 7, 11, 12, 16, 17, 32, 33, 64, 65] {
            for canonical in [false, true] {
                var rasterizer = ShapeRasterizer(
                    size: max(size, 4), margin: size < 7 ? 0 : 2, canonical: canonical,
                    maxStretch: canonical ? 4 : 1)
                rasterizer.size = size
                for (index, drawing) in drawings.enumerated() {
                    expectTwins(rasterizer, drawing, "drawing \(index) at \(size)×\(size)")
                }
            }
        }
    }

    /// The levelling on its own (the twin's, which the kernel matches bit for bit): the polygon's vertices are
    /// input points, it turns one way (convex), every point lies inside it or within 3% of the cloud's size of it
    /// (it skips only hull vertices whose turn lies between two of its directions), and a rectangle and a flat
    /// triangle turned by any angle are turned back level to within a degree.
    @Test func theLevellingFindsTheSmallestRectanglesSide() {
        let rasterizer = ShapeRasterizer.shipped
        var generator = SeededGenerator(seed: 31)
        for count in [1, 2, 3, 5, 17, 129, 2049] {
            let cloud = (0..<count).map { _ in (x: Float(generator.nextUniform(in: 0..<1)), y: Float(generator.nextUniform(in: 0..<0.6))) }
            let hull = rasterizer.referenceHull(cloud)
            #expect(hull.allSatisfy { vertex in cloud.contains { $0 == vertex } }, "\(count) points: a vertex that is no input point")
            guard hull.count >= 3 else { continue }
            for i in hull.indices {
                let (a, b) = (hull[i], hull[(i + 1) % hull.count])
                let length = ((b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y)).squareRoot()
                guard length > 0 else { continue }
                let (ex, ey) = (b.x - a.x, b.y - a.y)
                let c = hull[(i + 2) % hull.count]
                #expect(ex * (c.y - a.y) - ey * (c.x - a.x) >= 0, "\(count) points: the polygon turns back at vertex \((i + 1) % hull.count)")
                let outside =
                    cloud.map { (point: (x: Float, y: Float)) -> Float in (ex * (point.y - a.y) - ey * (point.x - a.x)) / length }.min() ?? 0
                #expect(outside >= -0.03, "\(count) points: a point \(-outside) outside edge \(i) of \(hull.count)")
            }
        }
        // Outlines whose smallest rectangle lies along a known side: a 3:1 rectangle, and a flat isosceles triangle
        // (base 4, height 1: along its base the rectangle is 4 × 1, along either other side 3.58 × 1.79).
        let rectangle = (0..<80).map { k -> (Double, Double) in
            let t = Double(k) / 80 * 8
            switch Int(t / 2) {
            case 0: return (t / 2 * 3, 0)
            case 1: return (3, t / 2 - 1)
            case 2: return (3 - (t / 2 - 2) * 3, 1)
            default: return (0, 1 - (t / 2 - 3))
            }
        }
        let triangle = (0..<60).map { k -> (Double, Double) in
            let t = Double(k) / 20
            return t < 1 ? (t * 4, 0) : t < 2 ? (4 - (t - 1) * 2, t - 1) : (2 - (t - 2) * 2, 1 - (t - 2))
        }
        for (name, outline) in [("rectangle", rectangle), ("triangle", triangle)] {
            for degrees in stride(from: 0.0, to: 360, by: 13) {
                let angle = degrees * .pi / 180
                let (c, s) = (cos(angle), sin(angle))
                let turned = outline.map { (p: (Double, Double)) -> (x: Float, y: Float) in
                    let x = p.0 * c - p.1 * s, y = p.0 * s + p.1 * c
                    return (x: Float((x + 5) / 10), y: Float((y + 5) / 10))
                }
                let (ux, uy) = rasterizer.referenceAxis(rasterizer.referenceHull(turned))
                // The axis lies along the long side or the base: a multiple of 90° from the turn.
                var found = Double(atan2(uy, ux)) * 180 / .pi - degrees
                found = found.truncatingRemainder(dividingBy: 90)
                if found < 0 { found += 90 }
                #expect(min(found, 90 - found) < 1, "\(name) turned \(degrees)°: axis off by \(min(found, 90 - found))°")
            }
        }
    }

    /// The reference hull is the convex hull: on whole-number points (every cross product exact in Double) its
    /// vertices are input points, each turn is strictly to the left, and no point lies outside any edge. Ties in x,
    /// collinear runs, duplicates, a vertical or a horizontal line, and points only above or only below the line
    /// from the first sorted point to the last.
    @Test func theReferenceHullIsConvexAndHoldsEveryPoint() {
        var clouds: [[(x: Double, y: Double)]] = []
        var generator = SeededGenerator(seed: 32)
        for count in [3, 4, 6, 10, 50, 300] {
            for range in [3.0, 12, 1000] {
                clouds.append(
                    (0..<count).map { _ in (x: generator.nextUniform(in: 0..<range).rounded(), y: generator.nextUniform(in: 0..<range).rounded()) })
            }
        }
        clouds.append((0..<9).map { (x: 4.0, y: Double($0 % 4)) })
        clouds.append((0..<9).map { (x: Double($0 % 5), y: 7.0) })
        clouds.append([(0, 0), (10, 0), (5, 3), (2, 1), (8, 1), (5, 1)])
        clouds.append([(0, 0), (10, 0), (5, -3), (2, -1), (8, -1), (5, -1)])
        clouds.append(Array(repeating: (x: 2.0, y: 2.0), count: 5))
        func cross(_ o: (x: Double, y: Double), _ a: (x: Double, y: Double), _ b: (x: Double, y: Double)) -> Double {
            (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x)
        }
        for (number, cloud) in clouds.enumerated() {
            let hull = convexHull(cloud)
            #expect(hull.allSatisfy { vertex in cloud.contains { $0 == vertex } }, "cloud \(number): a vertex that is no input point")
            let distinct = Set(cloud.map { "\($0.x),\($0.y)" }).count
            guard hull.count >= 3 else {
                // No area: the two ends of the line (or the one point, twice or once).
                #expect(
                    cloud.allSatisfy { cross(cloud[0], cloud[cloud.count - 1], $0) == 0 } || distinct <= 2,
                    "cloud \(number): \(hull.count) vertices for points with an area")
                continue
            }
            for i in hull.indices {
                let (a, b, c) = (hull[i], hull[(i + 1) % hull.count], hull[(i + 2) % hull.count])
                #expect(cross(a, b, c) > 0, "cloud \(number): no strict left turn at vertex \((i + 1) % hull.count) of \(hull.count)")
                #expect(cloud.allSatisfy { cross(a, b, $0) >= 0 }, "cloud \(number): a point outside edge \(i) of \(hull.count)")
            }
        }
    }

    /// Drawings `problem(with:)` rejects: the fast path promises no image, but no crash, no write outside the
    /// output and no NaN either.
    @Test func rejectedDrawingsDoNotCrash() {
        let rejected = [
            Drawing(strokes: []),
            Drawing(strokes: [[], []]),
            Drawing(strokes: [points([(1, 1)])]),
            Drawing(strokes: [points(Array(repeating: (3, 3), count: 50))]),
            Drawing(strokes: [points([(1, 1), (.nan, 2), (4, 4)])]),
            Drawing(strokes: [points([(.infinity, 1), (2, 2), (4, 9)])]),
            Drawing(strokes: [points([(-1.5e308, 0), (1.5e308, 1)])]),
            Drawing(strokes: [points([(1e6, 1e6), (1e6 + 1e-6, 1e6)])]),
        ]
        for (index, drawing) in rejected.enumerated() {
            #expect(ShapeRasterizer.shipped.problem(with: drawing) != nil)
            for rasterizer in Self.rasterizers {
                // One guard value past each end, which must survive.
                let count = rasterizer.size * rasterizer.size
                var buffer = [Float](repeating: -7, count: count + 2)
                buffer.withUnsafeMutableBufferPointer { all in
                    rasterizer.rasterize(drawing, into: UnsafeMutableBufferPointer(rebasing: all[1...count]))
                }
                #expect(buffer.first == -7 && buffer.last == -7, "rejected drawing \(index): wrote outside its output")
                #expect(buffer[1...count].allSatisfy { $0 >= 0 && $0 <= 1 }, "rejected drawing \(index): a value outside 0…1")
            }
        }
    }

    @Test func anOutputOfTheWrongSizeNamesBothSizes() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var output = [Float](repeating: 0, count: 255)
            let drawing = Drawing(strokes: [[DrawingPoint(x: 0, y: 0), DrawingPoint(x: 1, y: 1)]])
            output.withUnsafeMutableBufferPointer { ShapeRasterizer.shipped.rasterize(drawing, into: $0) }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("255") && message.contains("16×16") && message.contains("256"), "stderr: \(message)")
    }
}
