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
/// (Freeman & Shapira 1975), so a polygon lies on one of its edges and a star on an edge of its pentagon. The
/// hull is the polygon of the drawing's extreme points in 32 directions about 11° apart, found in one pass: every
/// vertex is a hull vertex and a straight side of the hull is one of its edges; only hull vertices whose turn lies
/// between two of the directions are left out.
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
    /// `segmentStep` pixels to the last point drawn are skipped (a stroke's last point never is), so dense or
    /// repeated samples cost nothing and move the line by less than that.
    ///
    /// The pixels come from `rasterize(_:into:)` (no allocation for drawings of up to 4,096 points and images up to
    /// 64×64); this only wraps them in a tensor.
    public func rasterize(_ drawing: Drawing) -> Tensor {
        let count = size * size
        let pixels = [Float](unsafeUninitializedCapacity: count) { buffer, initialized in
            rasterize(drawing, into: UnsafeMutableBufferPointer(rebasing: buffer[0..<count]))
            initialized = count
        }
        return Tensor(shape: [size, size, 1], scalars: pixels)
    }
}
