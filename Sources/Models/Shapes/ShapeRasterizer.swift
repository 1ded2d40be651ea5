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
    ///
    /// Each segment lights the pixels whose centres lie within `lineWidth / 2 + 0.5` of it, fading linearly over
    /// the last pixel (anti-aliasing); a pixel keeps the brightest value any segment gives it. Points closer than
    /// half a pixel to the last point drawn are skipped, so dense or repeated samples cost nothing and move the
    /// line by less than half a pixel.
    public func rasterize(_ drawing: Drawing) -> Tensor {
        var pixels = [Float](repeating: 0, count: size * size)
        var minX = Double.infinity, minY = Double.infinity, maxX = -Double.infinity, maxY = -Double.infinity
        for stroke in drawing.strokes {
            for point in stroke {
                minX = min(minX, point.x); maxX = max(maxX, point.x)
                minY = min(minY, point.y); maxY = max(maxY, point.y)
            }
        }
        guard minX <= maxX else { return Tensor(shape: [size, size, 1], scalars: pixels) }
        let extent = max(maxX - minX, maxY - minY)
        let scale = extent > 0 ? (Double(size) - 2 * margin - 1) / extent : 0
        let middle = Double(size - 1) / 2
        let offsetX = middle - (minX + maxX) / 2 * scale, offsetY = middle - (minY + maxY) / 2 * scale
        let reach = lineWidth / 2 + 0.5
        let skip = 0.5 * 0.5
        pixels.withUnsafeMutableBufferPointer { image in
            for stroke in drawing.strokes {
                guard let first = stroke.first else { continue }
                var x0 = first.x * scale + offsetX, y0 = first.y * scale + offsetY
                if stroke.count == 1 { drawSegment(x0, y0, x0, y0, reach: reach, into: image) }
                for (index, point) in stroke.enumerated().dropFirst() {
                    let x1 = point.x * scale + offsetX, y1 = point.y * scale + offsetY
                    let dx = x1 - x0, dy = y1 - y0
                    if dx * dx + dy * dy < skip && index < stroke.count - 1 { continue }
                    drawSegment(x0, y0, x1, y1, reach: reach, into: image)
                    x0 = x1
                    y0 = y1
                }
            }
        }
        return Tensor(shape: [size, size, 1], scalars: pixels)
    }

    /// Lights the pixels near the segment (x0, y0)–(x1, y1).
    @inline(__always)
    private func drawSegment(_ x0: Double, _ y0: Double, _ x1: Double, _ y1: Double, reach: Double,
                             into image: UnsafeMutableBufferPointer<Float>) {
        let dx = x1 - x0, dy = y1 - y0
        let lengthSquared = dx * dx + dy * dy
        let inverseLength = lengthSquared > 0 ? 1 / lengthSquared : 0
        let reachSquared = reach * reach
        let firstX = max(0, Int((min(x0, x1) - reach).rounded(.up)))
        let lastX = min(size - 1, Int((max(x0, x1) + reach).rounded(.down)))
        let firstY = max(0, Int((min(y0, y1) - reach).rounded(.up)))
        let lastY = min(size - 1, Int((max(y0, y1) + reach).rounded(.down)))
        guard firstX <= lastX, firstY <= lastY else { return }
        for py in firstY...lastY {
            let qy = Double(py) - y0
            for px in firstX...lastX {
                let qx = Double(px) - x0
                let along = min(1, max(0, (qx * dx + qy * dy) * inverseLength))
                let ex = qx - along * dx, ey = qy - along * dy
                let distanceSquared = ex * ex + ey * ey
                guard distanceSquared < reachSquared else { continue }
                let coverage = Float(min(1, reach - distanceSquared.squareRoot()))
                if coverage > image[py * size + px] { image[py * size + px] = coverage }
            }
        }
    }
}
