import DataFiles
import Foundation
import Tensor
import Testing

@testable import Models

/// A closed polygon through `corners`, `perSide` points per side, as one stroke.
func outline(_ corners: [(Double, Double)], perSide: Int = 10) -> [DrawingPoint] {
    var points: [DrawingPoint] = []
    for (a, b) in zip(corners, corners.dropFirst() + [corners[0]]) {
        for s in 0..<perSide {
            let f = Double(s) / Double(perSide)
            points.append(DrawingPoint(x: a.0 + (b.0 - a.0) * f, y: a.1 + (b.1 - a.1) * f))
        }
    }
    points.append(DrawingPoint(x: corners[0].0, y: corners[0].1))
    return points
}

let squareCorners = [(0.0, 0.0), (100.0, 0.0), (100.0, 100.0), (0.0, 100.0)]
let triangleCorners = [(50.0, 0.0), (100.0, 90.0), (0.0, 90.0)]
/// A pentagram: every second vertex of a regular pentagon of radius 50.
let pentagram: [(Double, Double)] = (0..<5).map { k in
    let angle: Double = -Double.pi / 2 + Double(k * 2 % 5) * 2 * Double.pi / 5
    return (50 + 50 * cos(angle), 50 + 50 * sin(angle))
}
let circlePoints: [DrawingPoint] = (0...64).map { i in
    let angle: Double = Double(i) * Double.pi / 32
    return DrawingPoint(x: 50 + 50 * cos(angle), y: 50 + 50 * sin(angle))
}

@Suite("Shape preprocessing and the geometric recognizer")
struct ShapeTests {
    let rasterizer = ShapeRasterizer(size: 16, canonical: false, maxStretch: 1)

    @Test func theImageDoesNotDependOnWhereHowLargeOrWhichWayAShapeWasDrawn() {
        let square = Drawing(strokes: [outline(squareCorners)])
        let image = rasterizer.rasterize(square)
        let moved = Drawing(strokes: [square.strokes[0].map { DrawingPoint(x: $0.x * 3.7 + 512, y: $0.y * 3.7 - 90) }])
        expectSameImage(rasterizer.rasterize(moved), image, "moved and scaled")
        expectSameImage(rasterizer.rasterize(Drawing(strokes: [square.strokes[0].reversed()])), image, "drawn the other way")
        // Starting at another corner traces the same segments.
        let fromCorner = Drawing(strokes: [outline(Array(squareCorners[2...] + squareCorners[..<2]))])
        expectSameImage(rasterizer.rasterize(fromCorner), image, "started elsewhere")
        // Four strokes, one per side.
        let sides = (0..<4).map { side in Array(square.strokes[0][(side * 10)...(side * 10 + 10)]) }
        expectSameImage(rasterizer.rasterize(Drawing(strokes: sides)), image, "four strokes")
        // Every point repeated.
        let doubled = Drawing(strokes: [square.strokes[0].flatMap { [$0, $0] }])
        expectSameImage(rasterizer.rasterize(doubled), image, "repeated points")
    }

    func expectSameImage(_ a: Tensor, _ b: Tensor, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let worst = zip(a.scalars, b.scalars).map { abs($0 - $1) }.max() ?? 1
        #expect(a.shape == b.shape && worst < 1e-4, "\(what): max pixel difference \(worst)", sourceLocation: sourceLocation)
    }

    @Test func denserSamplingChangesTheImageByLessThanHalfAPixelsWorth() {
        let coarse = rasterizer.rasterize(Drawing(strokes: [outline(squareCorners, perSide: 4)]))
        let fine = rasterizer.rasterize(Drawing(strokes: [outline(squareCorners, perSide: 200)]))
        let worst = zip(coarse.scalars, fine.scalars).map { abs($0 - $1) }.max() ?? 1
        #expect(worst <= 0.5, "max pixel difference \(worst)")
    }

    @Test func drawingsWithoutAShapeAreNamed() {
        #expect(rasterizer.problem(with: Drawing(strokes: [[DrawingPoint(x: 1, y: 1)]])) == "a drawing needs at least 2 points, this one has 1")
        #expect(
            rasterizer.problem(with: Drawing(strokes: [Array(repeating: DrawingPoint(x: 3, y: 3), count: 50)]))
                == "all 50 points are at the same place; there is no shape to see")
        #expect(
            rasterizer.problem(with: Drawing(strokes: [[DrawingPoint(x: 1, y: 1), DrawingPoint(x: .nan, y: 2)]]))
                == "a point is not a finite number")
        #expect(rasterizer.problem(with: Drawing(strokes: [outline(squareCorners)])) == nil)
    }

    @Test func theGeometricRecognizerKnowsIdealShapes() throws {
        let recognizer = GeometricRecognizer()
        #expect(try recognizer.classify(Drawing(strokes: [circlePoints])).label == "circle")
        #expect(try recognizer.classify(Drawing(strokes: [outline(squareCorners)])).label == "square")
        #expect(try recognizer.classify(Drawing(strokes: [outline([(0, 0), (200, 0), (200, 90), (0, 90)])])).label == "square", "a 2:1 rectangle")
        #expect(try recognizer.classify(Drawing(strokes: [outline(triangleCorners)])).label == "triangle")
        #expect(try recognizer.classify(Drawing(strokes: [outline(pentagram)])).label == "star")
        let (ratio, rectangularity, _) = try recognizer.measure(Drawing(strokes: [outline(pentagram, perSide: 20)]))
        #expect(abs(ratio - 1.618) < 0.01, "a pentagram's path is 1.618 times its hull's perimeter, got \(ratio)")
        #expect(rectangularity > 0.6 && rectangularity < 0.8)
        // A star's outline (ten corners, the notches at 0.4 of the points' radius) traces about 1.2 times its hull,
        // like a sloppy convex outline, but encloses about half of the hull's area: its solidity tells it apart.
        let starOutline = (0..<10).map { k -> (Double, Double) in
            let angle = -Double.pi / 2 + Double(k) * .pi / 5, radius = k % 2 == 0 ? 100.0 : 40
            return (radius * cos(angle), radius * sin(angle))
        }
        let star = try recognizer.measure(Drawing(strokes: [outline(starOutline, perSide: 20)]))
        #expect(abs(star.solidity - 0.5) < 0.05 && star.pathOverHull < 1.3, "\(star)")
        #expect(try recognizer.classify(Drawing(strokes: [outline(starOutline)])).label == "star")
        #expect(try recognizer.measure(Drawing(strokes: [outline(squareCorners)])).solidity > 0.99)
        #expect(throws: DataError.self) {
            try recognizer.classify(Drawing(strokes: [[DrawingPoint(x: 0, y: 0), DrawingPoint(x: 5, y: 5), DrawingPoint(x: 10, y: 10)]]))
        }
    }

    @Test func theClosingGapSeparatesOutlinesFromScribbles() {
        #expect(ShapeUncertainty.closingGap(Drawing(strokes: [outline(squareCorners)])) == 0)
        let zigzag = Drawing(strokes: [(0..<20).map { DrawingPoint(x: Double($0) * 5, y: $0 % 2 == 0 ? 0 : 30) }])
        #expect(ShapeUncertainty.closingGap(zigzag) > ShapeUncertainty.closingGapThreshold)
    }

    @Test func theDrawingReaderTakesStrokesAndNamesBadFields() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("drawing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let good = folder.appendingPathComponent("good.csv")
        try "t,y,x,stroke,pressure\n0,1,2,1,0.5\n10,3,4,1,0.5\n20,5,6,0,0.5\n".write(to: good, atomically: true, encoding: .utf8)
        let drawing = try DrawingReader.read(good.path)
        #expect(drawing.strokes.map(\.count) == [1, 2], "strokes ordered by index, points in file order")
        #expect(drawing.strokes[1][1] == DrawingPoint(x: 4, y: 3, t: 10))
        let bad = folder.appendingPathComponent("bad.csv")
        try "x,y\n1,2\n3,oops\n".write(to: bad, atomically: true, encoding: .utf8)
        #expect(throws: DataError(file: bad.path, line: 3, column: (2, "y"), message: "'oops' is not a number")) { try DrawingReader.read(bad.path) }
        try "drawing,label,stroke,x,y\nd,circle,0,1,2\n".write(to: bad, atomically: true, encoding: .utf8)
        #expect(throws: DataError.self) { try DrawingReader.read(bad.path) }
    }
}
