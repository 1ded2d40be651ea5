import DataFiles
import Foundation
import Tensor
import WeightsFormat

/// Turns a drawing into the shape classifier's input: a `size × size` grayscale image of its strokes, drawn as
/// anti-aliased lines of `lineWidth` pixels after the drawing is centred and scaled to fill the image less a
/// margin. Where, how large and how fast a shape was drawn, and how many points or strokes it took, do not change
/// the image.
///
/// With `canonical` set (the shipped model's setting), the drawing is first turned so that the smallest
/// rectangle around it (at any angle) lies level, its long side horizontal, and then stretched so that its short
/// side fills the image too, by at most `maxStretch`. A square tilted 30° and an upright one give the same
/// image, a 2.5:1 ellipse gives a circle's, and what remains for the model to learn is a rectangle's symmetries:
/// a turn by 180° and the two mirror images. The smallest rectangle has one side along an edge of the convex hull
/// (Freeman & Shapira 1975), so a polygon lies on one of its edges and a star on an edge of its pentagon.
public struct ShapeRasterizer: Sendable, Equatable {
    /// Image side in pixels.
    public var size: Int
    /// Stroke width in pixels.
    public var lineWidth: Double
    /// Empty pixels kept on each side.
    public var margin: Double
    /// Whether drawings are turned level and stretched to fill (see the type's description).
    public var canonical: Bool
    /// With `canonical`, the most the short side is stretched (1 keeps the aspect ratio).
    public var maxStretch: Double

    /// The shipped shape model's preprocessing: 16×16, 2-pixel lines, 2 pixels of margin, turned level and
    /// stretched by up to 4× (the defaults).
    public static let shipped = ShapeRasterizer()

    /// Creates a rasterizer; the defaults are the shipped model's preprocessing (`shipped`). `canonical: false,
    /// maxStretch: 1` keeps a drawing as drawn, only centred and scaled.
    public init(size: Int = 16, lineWidth: Double = 2, margin: Double = 2, canonical: Bool = true, maxStretch: Double = 4) {
        precondition(
            size >= 4 && lineWidth > 0 && margin >= 0 && maxStretch >= 1,
            "ShapeRasterizer: size \(size) ≥ 4, lineWidth \(lineWidth) > 0, margin \(margin) ≥ 0, maxStretch \(maxStretch) ≥ 1")
        self.size = size
        self.lineWidth = lineWidth
        self.margin = margin
        self.canonical = canonical
        self.maxStretch = maxStretch
    }

    /// The parameters as a weights file's `preprocessing` header stores them (`canonical` and `maxStretch` only
    /// when set, so files of the plain rasterizer read as before).
    public var parameters: [String: JSONValue] {
        var result: [String: JSONValue] = [
            "kind": .string("raster"), "size": .number(Double(size)), "lineWidth": .number(lineWidth), "margin": .number(margin),
        ]
        if canonical {
            result["orientation"] = .string("minimumRectangle")
            result["maxStretch"] = .number(maxStretch)
        }
        return result
    }

    /// The rasterizer a weights file's `preprocessing` header describes, or why it cannot be built.
    public init(parameters: [String: JSONValue]) throws(DataError) {
        guard case .string("raster")? = parameters["kind"], case .number(let size)? = parameters["size"],
            case .number(let width)? = parameters["lineWidth"], case .number(let margin)? = parameters["margin"],
            size >= 4, size <= 512, size == size.rounded(), width > 0, width < size, margin >= 0, 2 * margin < size - 1
        else {
            throw DataError(file: "weights", message: "the preprocessing parameters \(parameters) do not describe a raster input")
        }
        var canonical = false, maxStretch = 1.0
        switch parameters["orientation"] {
        case nil, .string("asDrawn")?: break
        case .string("minimumRectangle")?: canonical = true
        default:
            throw DataError(
                file: "weights",
                message: "the preprocessing orientation \(parameters["orientation"].map { "\($0)" } ?? "")"
                    + " is not one this build knows (asDrawn, minimumRectangle)")
        }
        if let stretch = parameters["maxStretch"] {
            guard case .number(let value) = stretch, value >= 1, value <= 100 else {
                throw DataError(file: "weights", message: "the preprocessing maxStretch \(stretch) is not a number in 1…100")
            }
            maxStretch = value
        }
        self.init(size: Int(size), lineWidth: width, margin: margin, canonical: canonical, maxStretch: maxStretch)
    }

    /// Why a drawing cannot be rasterized (no points, a NaN, all points in one place, a coordinate beyond
    /// `Drawing.largestCoordinate`, an extent too small for its coordinates' precision), or `nil`.
    public func problem(with drawing: Drawing) -> String? {
        // One pass: count, finiteness and bounds (this runs for every drawing classified).
        var count = 0, finite = true
        var minX = Double.infinity, minY = Double.infinity, maxX = -Double.infinity, maxY = -Double.infinity
        for stroke in drawing.strokes {
            count += stroke.count
            for point in stroke {
                finite = finite && point.x.isFinite && point.y.isFinite
                minX = min(minX, point.x); maxX = max(maxX, point.x)
                minY = min(minY, point.y); maxY = max(maxY, point.y)
            }
        }
        guard count >= 2 else {
            return "a drawing needs at least 2 points, this one has \(count)"
        }
        if !finite {
            return "a point is not a finite number"
        }
        let bounds = (minX: minX, minY: minY, maxX: maxX, maxY: maxY)
        guard bounds.maxX > bounds.minX || bounds.maxY > bounds.minY else {
            return "all \(count) points are at the same place; there is no shape to see"
        }
        let extent = max(bounds.maxX - bounds.minX, bounds.maxY - bounds.minY)
        let largest = max(abs(bounds.minX), abs(bounds.maxX), abs(bounds.minY), abs(bounds.maxY))
        guard largest <= Drawing.largestCoordinate else {
            return "a point is outside the coordinate range ±1e15 (the points run from \(bounds.minX) to \(bounds.maxX) "
                + "and \(bounds.minY) to \(bounds.maxY)); coordinates are screen positions (any unit and offset)"
        }
        guard extent >= Self.smallestExtent, extent >= Self.relativePrecision * largest else {
            return "the drawing is too small to see: it spans \(extent) at coordinates up to \(largest); it must span at least "
                + "\(Self.smallestExtent) and \(Self.relativePrecision) of its coordinates (scale it up or move it nearer 0)"
        }
        return nil
    }

    /// The smallest extent a drawing may have: far below any screen unit, and far enough above the smallest
    /// normal `Double` (2.2e-308) that scaling it to the image cannot overflow.
    public static let smallestExtent = 1e-200
    /// The smallest extent relative to the drawing's largest coordinate: below it, the points' digits no longer
    /// hold the shape (a `Double` keeps about 16 of them).
    public static let relativePrecision = 1e-9

    /// The image `[size, size, 1]` (row 0 at the top), values in [0, 1]. Check `problem(with:)` first: a drawing
    /// without extent is drawn as nothing.
    ///
    /// Each segment lights the pixels whose centres lie within `lineWidth / 2 + 0.5` of it, fading linearly over
    /// the last pixel (anti-aliasing); a pixel keeps the brightest value any segment gives it. Points closer than
    /// half a pixel to the last point drawn are skipped, so dense or repeated samples cost nothing and move the
    /// line by less than half a pixel.
    ///
    /// The pixels come from `rasterize(_:into:)`, which allocates nothing; this only wraps them in a tensor.
    public func rasterize(_ drawing: Drawing) -> Tensor {
        let count = size * size
        let pixels = [Float](unsafeUninitializedCapacity: count) { buffer, initialized in
            rasterize(drawing, into: UnsafeMutableBufferPointer(rebasing: buffer[0..<count]))
            initialized = count
        }
        return Tensor(shape: [size, size, 1], scalars: pixels)
    }

    /// Where a drawing's points go in the image: an affine map, or `nil` for a drawing without points.
    func placement(of drawing: Drawing) -> AffineMap? {
        // Everything in units of the drawing's size from its corner, so that no product overflows or underflows
        // whatever the drawing's scale and place.
        guard let bounds = drawing.bounds else { return nil }
        let unit = max(bounds.maxX - bounds.minX, bounds.maxY - bounds.minY)
        let middle = Double(size - 1) / 2
        guard unit > 0, unit.isFinite else {
            return AffineMap(originX: bounds.minX, originY: bounds.minY, inverseUnit: 0, a: 0, b: 0, c: 0, d: 0, e: middle, f: middle)
        }
        let inverseUnit = 1 / unit
        // The axes the drawing is measured along: x and y, or the smallest enclosing rectangle's.
        var (ux, uy) = (1.0, 0.0)
        if canonical, let direction = minimumRectangleDirection(of: drawing, bounds: bounds) { (ux, uy) = direction }
        var minU = Double.infinity, minV = Double.infinity, maxU = -Double.infinity, maxV = -Double.infinity
        for stroke in drawing.strokes {
            for point in stroke {
                let x = (point.x - bounds.minX) * inverseUnit, y = (point.y - bounds.minY) * inverseUnit
                let u = x * ux + y * uy, v = -x * uy + y * ux
                minU = min(minU, u); maxU = max(maxU, u)
                minV = min(minV, v); maxV = max(maxV, v)
            }
        }
        return affineMap(
            origin: (bounds.minX, bounds.minY), inverseUnit: inverseUnit, axis: (ux, uy),
            extents: (minU, maxU, minV, maxV))
    }

    /// The map that fits a drawing measured along `axis` (`u` along it, `v` across, in units of the drawing's size
    /// from `origin`) into the image: the long side horizontal when levelling, the larger extent filling the image
    /// between the margins, the other stretched by at most `maxStretch`, centred. Shared by `placement(of:)` and
    /// its fast twin, which differ only in how they find the axis and the extents.
    @inline(__always)
    func affineMap(
        origin: (x: Double, y: Double), inverseUnit: Double, axis: (Double, Double),
        extents: (minU: Double, maxU: Double, minV: Double, maxV: Double)
    ) -> AffineMap {
        var (ux, uy) = axis
        var (minU, maxU, minV, maxV) = extents
        let middle = Double(size - 1) / 2
        if canonical && maxV - minV > maxU - minU {
            // The long side horizontal: measure along the other axis.
            (ux, uy) = (-uy, ux)
            (minU, maxU, minV, maxV) = (minV, maxV, -maxU, -minU)
        }
        let fill = Double(size) - 2 * margin - 1
        let extent = max(maxU - minU, maxV - minV)
        guard extent > 0 else {
            return AffineMap(originX: origin.x, originY: origin.y, inverseUnit: 0, a: 0, b: 0, c: 0, d: 0, e: middle, f: middle)
        }
        let scaleU = fill / extent
        let scaleV = canonical ? fill / max(maxV - minV, extent / maxStretch) : scaleU
        let (centreU, centreV) = ((minU + maxU) / 2, (minV + maxV) / 2)
        // px = scaleU (u − centreU) + middle, py = scaleV (v − centreV) + middle, with u = x ux + y uy, v = −x uy + y ux
        // in the drawing's units.
        return AffineMap(
            originX: origin.x, originY: origin.y, inverseUnit: inverseUnit,
            a: scaleU * ux, b: scaleU * uy, c: -scaleV * uy, d: scaleV * ux,
            e: middle - scaleU * centreU, f: middle - scaleV * centreV)
    }

    /// The direction (unit vector) of a side of the smallest rectangle around the drawing, or `nil` when the
    /// points have no area (then the x axis serves).
    func minimumRectangleDirection(
        of drawing: Drawing,
        bounds: (minX: Double, minY: Double, maxX: Double, maxY: Double)
    ) -> (Double, Double)? {
        // In units of the drawing's size from its corner, so that products of coordinates neither underflow nor
        // overflow whatever the scale.
        let extent = max(bounds.maxX - bounds.minX, bounds.maxY - bounds.minY)
        guard extent > 0, extent.isFinite else { return nil }
        var points: [(x: Double, y: Double)] = []
        points.reserveCapacity(drawing.pointCount)
        for stroke in drawing.strokes {
            for point in stroke { points.append((x: (point.x - bounds.minX) / extent, y: (point.y - bounds.minY) / extent)) }
        }
        let hull = convexHull(points)
        guard hull.count >= 3 else {
            guard let first = hull.first, let last = hull.last else { return nil }
            let length = hypot(last.x - first.x, last.y - first.y)
            return length > 0 ? ((last.x - first.x) / length, (last.y - first.y) / length) : nil
        }
        return minimumRectangle(hull).direction
    }
}

/// `(x, y) ↦ (a x′ + b y′ + e, c x′ + d y′ + f)` with `x′ = (x − originX) · inverseUnit` (and `y′` alike): the
/// affine map applied in the drawing's own units, so that it holds at any scale and place.
struct AffineMap {
    let originX: Double, originY: Double, inverseUnit: Double
    let a: Double, b: Double, c: Double, d: Double, e: Double, f: Double

    @inline(__always)
    func apply(_ x: Double, _ y: Double) -> (Double, Double) {
        let (u, v) = ((x - originX) * inverseUnit, (y - originY) * inverseUnit)
        return (a * u + b * v + e, c * u + d * v + f)
    }
}
