import Datasets
import Models
import Testing

@testable import Train

@Suite("Shape generator")
struct GeneratorTests {
    @Test func theSameSeedWritesTheSameBytesAndAnotherSeedDoesNot() {
        var a = ShapeGenerator(seed: 9), b = ShapeGenerator(seed: 9), c = ShapeGenerator(seed: 10)
        let first = ShapeDatasetWriter.csv(a.samples(people: 3, perPerson: 8), prefix: "d")
        #expect(first == ShapeDatasetWriter.csv(b.samples(people: 3, perPerson: 8), prefix: "d"))
        #expect(first != ShapeDatasetWriter.csv(c.samples(people: 3, perPerson: 8), prefix: "d"))
    }

    @Test func everyDrawingIsUsableAndTheClassesAreBalanced() {
        var generator = ShapeGenerator(seed: 11)
        let samples = generator.samples(people: 10, perPerson: 20)
        let rasterizer = ShapeRasterizer(size: 16, canonical: false, maxStretch: 1)
        #expect(samples.allSatisfy { rasterizer.problem(with: $0.drawing) == nil })
        #expect(ShapeGenerator.labels == ["circle", "triangle", "square", "star", "other"])
        for label in ShapeGenerator.labels { #expect(samples.filter { $0.label == label }.count == 40) }
        #expect(Set(samples.map(\.person)).count == 10)
        #expect(samples.contains { $0.drawing.strokes.count > 1 }, "some drawings take several strokes")
        // A quick short line is a handful of touch samples (of 3,000 drawings of `classify generate shape`,
        // seeds 1–7, the fewest has 5 points); every drawing has a few, and none is absurdly long.
        let points = samples.map(\.drawing.pointCount)
        #expect(points.min() ?? 0 >= 4 && points.max() ?? 0 <= 2000, "\(points.min() ?? 0)…\(points.max() ?? 0) points")
    }
}
