import Tensor

/// Turns a drawing into the shape classifier's input: a `size × size` grayscale image of its strokes, drawn as
/// anti-aliased lines of `lineWidth` pixels after the drawing is centred and scaled (keeping its aspect ratio)
/// to fill the image less a margin. Where, how large and how fast a shape was drawn, and how many points or
/// strokes it took, do not change the image.
public struct ShapeRasterizer: Sendable, Equatable {
    /// Image side in pixels.
    public var size: Int
    /// Stroke width in pixels.
    public var lineWidth: Double
    /// Empty pixels kept on each side.
    public var margin: Double

    /// Creates a rasterizer.
    public init(size: Int = 28, lineWidth: Double = 2, margin: Double = 2) {
        self.size = size
        self.lineWidth = lineWidth
        self.margin = margin
    }

    /// The parameters as a weights file's `preprocessing` header stores them.
    public var parameters: [String: JSONValue] {
        ["kind": .string("raster"), "size": .number(Double(size)), "lineWidth": .number(lineWidth), "margin": .number(margin)]
    }

    /// The rasterizer a weights file's `preprocessing` header describes, or why it cannot be built.
    public init(parameters: [String: JSONValue]) throws(DataError) {
        guard case .string("raster")? = parameters["kind"], case .number(let size)? = parameters["size"],
              case .number(let width)? = parameters["lineWidth"], case .number(let margin)? = parameters["margin"],
              size >= 4, size <= 512, size == size.rounded(), width > 0, width < size, margin >= 0, 2 * margin < size - 1
        else {
            throw DataError(file: "weights", message: "the preprocessing parameters \(parameters) do not describe a raster input")
        }
        self.init(size: Int(size), lineWidth: width, margin: margin)
    }

    /// Why a drawing cannot be rasterized (no points, a NaN, all points in one place), or `nil`.
    public func problem(with drawing: Drawing) -> String? {
        guard drawing.pointCount >= 2 else {
            return "a drawing needs at least 2 points, this one has \(drawing.pointCount)"
        }
        if drawing.strokes.joined().contains(where: { !$0.x.isFinite || !$0.y.isFinite }) {
            return "a point is not a finite number"
        }
        guard let bounds = drawing.bounds, bounds.maxX > bounds.minX || bounds.maxY > bounds.minY else {
            return "all \(drawing.pointCount) points are at the same place; there is no shape to see"
        }
        return nil
    }

    /// The image `[size, size, 1]` (row 0 at the top), values in [0, 1]. Check `problem(with:)` first: a drawing
    /// without extent is drawn as nothing.
    public func rasterize(_ drawing: Drawing) -> Tensor {
        var pixels = [Float](repeating: 0, count: size * size)
        guard let bounds = drawing.bounds else { return Tensor(shape: [size, size, 1], scalars: pixels) }
        let extent = max(bounds.maxX - bounds.minX, bounds.maxY - bounds.minY)
        let available = Double(size) - 2 * margin - 1
        let scale = extent > 0 ? available / extent : 0
        let centerX = (bounds.minX + bounds.maxX) / 2, centerY = (bounds.minY + bounds.maxY) / 2
        let middle = Double(size - 1) / 2
        let half = lineWidth / 2
        func place(_ p: DrawingPoint) -> (Double, Double) { (middle + (p.x - centerX) * scale, middle + (p.y - centerY) * scale) }

        for stroke in drawing.strokes {
            let points = stroke.map(place)
            let segments = points.count == 1 ? [(points[0], points[0])] : Array(zip(points, points.dropFirst()))
            for ((x0, y0), (x1, y1)) in segments {
                let dx = x1 - x0, dy = y1 - y0
                let lengthSquared = dx * dx + dy * dy
                let minX = max(0, Int((min(x0, x1) - half - 1).rounded(.down)))
                let maxX = min(size - 1, Int((max(x0, x1) + half + 1).rounded(.up)))
                let minY = max(0, Int((min(y0, y1) - half - 1).rounded(.down)))
                let maxY = min(size - 1, Int((max(y0, y1) + half + 1).rounded(.up)))
                guard minX <= maxX, minY <= maxY else { continue }
                for py in minY...maxY {
                    for px in minX...maxX {
                        // Distance from the pixel centre to the segment; coverage falls off over one pixel.
                        let (qx, qy) = (Double(px), Double(py))
                        let along = lengthSquared > 0 ? max(0, min(1, ((qx - x0) * dx + (qy - y0) * dy) / lengthSquared)) : 0
                        let ex = qx - (x0 + along * dx), ey = qy - (y0 + along * dy)
                        let distance = (ex * ex + ey * ey).squareRoot()
                        let coverage = Float(max(0, min(1, half + 0.5 - distance)))
                        if coverage > pixels[py * size + px] { pixels[py * size + px] = coverage }
                    }
                }
            }
        }
        return Tensor(shape: [size, size, 1], scalars: pixels)
    }
}
