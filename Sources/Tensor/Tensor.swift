/// An N-dimensional tensor of `Float`, stored contiguously in row-major order, with value semantics.
///
/// Copies share storage until one of them is mutated (copy-on-write, inherited from `Array`), so passing a
/// tensor around or reshaping it costs no copy. Layouts are channels-last throughout the engine:
/// a batch of images is `[N, H, W, C]`, a batch of sequences `[N, L, C]`.
public struct Tensor: Sendable, Equatable, CustomStringConvertible {
    /// The extent of each axis; `[]` is a scalar.
    public private(set) var shape: [Int]
    /// The elements in row-major order; `scalars.count == shape.reduce(1, *)`.
    public private(set) var scalars: [Float]

    /// Creates a tensor of `shape` holding `scalars` in row-major order.
    public init(shape: [Int], scalars: [Float]) {
        shapePrecondition(shape.allSatisfy { $0 >= 0 }, "tensor shape \(describeShape(shape)) has a negative axis")
        shapePrecondition(
            elementCount(shape) == scalars.count,
            "tensor shape \(describeShape(shape)) needs \(elementCount(shape)) scalars, got \(scalars.count)")
        self.shape = shape
        self.scalars = scalars
    }

    /// Creates a 2-D tensor from equally long rows.
    public init(_ rows: [[Float]]) {
        let columns = rows.first?.count ?? 0
        shapePrecondition(
            rows.allSatisfy { $0.count == columns },
            "rows of a 2-D tensor must have equal lengths, got \(rows.map(\.count))")
        self.init(shape: [rows.count, columns], scalars: rows.flatMap { $0 })
    }

    /// Creates a tensor of `shape` filled with `value`.
    public init(repeating value: Float, shape: [Int]) {
        shapePrecondition(shape.allSatisfy { $0 >= 0 }, "tensor shape \(describeShape(shape)) has a negative axis")
        self.init(shape: shape, scalars: [Float](repeating: value, count: elementCount(shape)))
    }

    /// Creates a tensor of `shape` filled with zeros.
    public init(zeros shape: [Int]) {
        self.init(repeating: 0, shape: shape)
    }

    /// Creates a tensor of `shape` with elements drawn from N(`mean`, `standardDeviation`²).
    public init(
        randomNormal shape: [Int], mean: Float = 0, standardDeviation: Float = 1,
        generator: inout SeededGenerator
    ) {
        let count = elementCount(shape)
        var values = [Float]()
        values.reserveCapacity(count)
        for _ in 0..<count {
            values.append(Float(generator.nextNormal(mean: Double(mean), standardDeviation: Double(standardDeviation))))
        }
        self.init(shape: shape, scalars: values)
    }

    /// Creates a tensor of `shape` with elements drawn uniformly from `range`.
    public init(randomUniform shape: [Int], in range: Range<Float>, generator: inout SeededGenerator) {
        let count = elementCount(shape)
        let doubleRange = Double(range.lowerBound)..<Double(range.upperBound)
        var values = [Float]()
        values.reserveCapacity(count)
        for _ in 0..<count {
            values.append(Float(generator.nextUniform(in: doubleRange)))
        }
        self.init(shape: shape, scalars: values)
    }

    /// Creates a tensor of `shape` whose storage is filled by `initializer`, without zeroing it first.
    ///
    /// `initializer` must write every one of the `elementCount(shape)` elements.
    @inlinable
    public init(
        uninitializedShape shape: [Int],
        initializingWith initializer: (inout UnsafeMutableBufferPointer<Float>) throws -> Void
    ) rethrows {
        let count = elementCount(shape)
        let values = try [Float](unsafeUninitializedCapacity: count) { buffer, initializedCount in
            try initializer(&buffer)
            initializedCount = count
        }
        self.init(shape: shape, scalars: values)
    }

    /// The number of axes.
    public var rank: Int { shape.count }

    /// The number of elements.
    public var count: Int { scalars.count }

    /// The element at a full multi-index, one index per axis.
    public subscript(indices: Int...) -> Float {
        get { scalars[flatIndex(indices)] }
        set { scalars[flatIndex(indices)] = newValue }
    }

    /// The row-major position of a multi-index.
    public func flatIndex(_ indices: [Int]) -> Int {
        shapePrecondition(
            indices.count == shape.count,
            "index \(indices) has \(indices.count) components for a tensor of shape \(describeShape(shape))")
        var flat = 0
        for (axis, index) in indices.enumerated() {
            shapePrecondition(
                index >= 0 && index < shape[axis],
                "index \(indices) is out of bounds for a tensor of shape \(describeShape(shape))")
            flat = flat * shape[axis] + index
        }
        return flat
    }

    /// The same elements viewed with another shape, sharing storage (no copy). One axis may be `-1`: it is
    /// inferred from the element count.
    public func reshaped(_ newShape: [Int]) -> Tensor {
        var resolved = newShape
        let inferred = newShape.indices.filter { newShape[$0] == -1 }
        shapePrecondition(
            inferred.count <= 1, "cannot reshape \(describeShape(shape)) to \(describeShape(newShape)): more than one -1")
        if let axis = inferred.first {
            let known = newShape.enumerated().filter { $0.offset != axis }.map(\.element).reduce(1, *)
            shapePrecondition(
                known > 0 && count % known == 0,
                "cannot reshape \(describeShape(shape)) (\(count) elements) to \(describeShape(newShape))")
            resolved[axis] = count / known
        }
        shapePrecondition(
            resolved.allSatisfy { $0 >= 0 } && elementCount(resolved) == count,
            "cannot reshape \(describeShape(shape)) (\(count) elements) to \(describeShape(newShape))")
        var copy = self
        copy.shape = resolved
        return copy
    }

    /// Calls `body` with the elements' contiguous storage.
    public func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<Float>) throws -> R) rethrows -> R {
        try scalars.withUnsafeBufferPointer(body)
    }

    /// Calls `body` with the elements' contiguous storage for writing (copies first if the storage is shared).
    public mutating func withUnsafeMutableBufferPointer<R>(
        _ body: (inout UnsafeMutableBufferPointer<Float>) throws -> R
    ) rethrows -> R {
        try scalars.withUnsafeMutableBufferPointer(body)
    }

    /// A short summary: the shape and the first few elements.
    public var description: String {
        let shown = scalars.prefix(8).map { "\($0)" }.joined(separator: ", ")
        let more = scalars.count > 8 ? ", … (\(scalars.count) in all)" : ""
        return "Tensor\(describeShape(shape))(\(shown)\(more))"
    }
}
