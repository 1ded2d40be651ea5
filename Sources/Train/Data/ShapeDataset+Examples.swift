import DataFiles
import Datasets
import Foundation
import Models
import Tensor

extension ShapeDataset {
    /// The class names for a set of drawings: the standard four in their order when the labels are among them,
    /// otherwise every label in order of first appearance.
    package static func classNames(for drawings: [LabeledDrawing]) -> [String] {
        Train.classNames(for: drawings.map(\.label), standard: standardLabels)
    }

    /// The drawings as examples: one rasterized image per drawing, plus `augment` copies of each turned by a
    /// random angle, stretched 1–1.8× along a random axis, slightly sheared and mirrored half of the time (seeded
    /// by `seed`); copies keep their drawing's group, so a split by group never separates them. A label outside
    /// `classNames` is an error naming its line.
    package static func examples(
        _ drawings: [LabeledDrawing], classNames: [String], rasterizer: ShapeRasterizer, file: String,
        augment: Int = 0, seed: UInt64 = 1
    ) throws(DataError) -> Examples {
        precondition(augment >= 0, "examples: augment \(augment) < 0")
        var values: [Float] = []
        values.reserveCapacity(drawings.count * (1 + augment) * rasterizer.size * rasterizer.size)
        var labels: [Int] = [], groups: [Int] = []
        var generator = SeededGenerator(seed: seed ^ 0x5348_4150_4541_5547)
        for (index, drawing) in drawings.enumerated() {
            guard let label = classNames.firstIndex(of: drawing.label) else {
                throw DataError(
                    file: file, line: drawing.lines.lowerBound,
                    message: "drawing '\(drawing.id)' has label '\(drawing.label)', which the model does not know "
                        + "(it knows \(classNames.joined(separator: ", ")))")
            }
            values += rasterizer.rasterize(drawing.drawing).scalars
            for _ in 0..<augment {
                values += rasterizer.rasterize(randomlyDistorted(drawing.drawing, generator: &generator)).scalars
            }
            labels += Array(repeating: label, count: 1 + augment)
            groups += Array(repeating: index, count: 1 + augment)
        }
        return Examples(
            inputs: Tensor(shape: [labels.count, rasterizer.size, rasterizer.size, 1], scalars: values),
            labels: labels, groups: groups, classNames: classNames)
    }

    /// `drawing` turned by a random angle, stretched 1–1.8× along a random axis, sheared by up to ±0.15 and
    /// mirrored half of the time: what changes nothing about which shape it is.
    static func randomlyDistorted(_ drawing: Drawing, generator: inout SeededGenerator) -> Drawing {
        let turn = generator.nextUniform(in: 0..<(2 * Double.pi)), axis = generator.nextUniform(in: 0..<Double.pi)
        let stretch = generator.nextUniform(in: 1..<1.8), shear = generator.nextUniform(in: -0.15..<0.15)
        let mirror = generator.nextUnitDouble() < 0.5 ? -1.0 : 1.0
        let (ca, sa, ct, st) = (cos(axis), sin(axis), cos(turn), sin(turn))
        return Drawing(
            strokes: drawing.strokes.map { stroke in
                stroke.map { point in
                    // Along the axis: stretch and shear; then mirror and turn.
                    var u = point.x * ca + point.y * sa, v = -point.x * sa + point.y * ca
                    u = (u + shear * v) * stretch
                    let x = (u * ca - v * sa) * mirror, y = u * sa + v * ca
                    return DrawingPoint(x: x * ct - y * st, y: x * st + y * ct, t: point.t)
                }
            })
    }
}
