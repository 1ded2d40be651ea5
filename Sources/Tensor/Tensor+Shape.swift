/// Operations that move elements: transpose, concatenation, padding.
extension Tensor {
    /// The transpose of a 2-D tensor: `[m, n]` becomes `[n, m]`.
    public func transposed() -> Tensor {
        shapePrecondition(rank == 2, "transposed() needs a 2-D tensor, got \(describeShape(shape))")
        let rows = shape[0], columns = shape[1]
        let block = 32
        return Tensor(uninitializedShape: [columns, rows]) { out in
            withUnsafeBufferPointer { input in
                for rowStart in stride(from: 0, to: rows, by: block) {
                    for columnStart in stride(from: 0, to: columns, by: block) {
                        for r in rowStart..<Swift.min(rowStart + block, rows) {
                            for c in columnStart..<Swift.min(columnStart + block, columns) {
                                out[c * rows + r] = input[r * columns + c]
                            }
                        }
                    }
                }
            }
        }
    }

    /// Joins `tensors` along `axis`; every other axis must agree.
    public static func concatenate(_ tensors: [Tensor], axis: Int) -> Tensor {
        shapePrecondition(!tensors.isEmpty, "concatenate needs at least one tensor")
        let first = tensors[0]
        let resolved = normalizedAxis(axis, rank: first.rank)
        for tensor in tensors {
            var expected = first.shape, actual = tensor.shape
            if actual.count == expected.count {
                expected[resolved] = 0
                actual[resolved] = 0
            }
            shapePrecondition(
                actual == expected,
                "concatenate along axis \(axis): shapes \(tensors.map { describeShape($0.shape) }.joined(separator: ", ")) "
                    + "differ outside that axis")
        }
        let outer = elementCount(Array(first.shape[..<resolved]))
        let chunks = tensors.map { $0.count / Swift.max(outer, 1) }
        var outputShape = first.shape
        outputShape[resolved] = tensors.reduce(0) { $0 + $1.shape[resolved] }
        var result = [Float]()
        result.reserveCapacity(elementCount(outputShape))
        for o in 0..<outer {
            for (tensor, chunk) in zip(tensors, chunks) {
                result.append(contentsOf: tensor.scalars[(o * chunk)..<((o + 1) * chunk)])
            }
        }
        return Tensor(shape: outputShape, scalars: result)
    }

    /// A copy with `widths[axis].before` and `.after` elements of `value` added on each side of every axis.
    public func padded(_ widths: [(before: Int, after: Int)], value: Float = 0) -> Tensor {
        shapePrecondition(
            widths.count == rank && widths.allSatisfy { $0.before >= 0 && $0.after >= 0 },
            "padded needs one non-negative (before, after) pair per axis of \(describeShape(shape)), "
                + "got \(widths.map { "(\($0.before), \($0.after))" })")
        let outputShape = zip(shape, widths).map { $0 + $1.before + $1.after }
        var result = Tensor(repeating: value, shape: outputShape)
        if count == 0 || rank == 0 { return rank == 0 ? self : result }
        let rowLength = shape[rank - 1]
        let rows = count / rowLength
        var outputStrides = [Int](repeating: 1, count: rank)
        for axis in stride(from: rank - 2, through: 0, by: -1) {
            outputStrides[axis] = outputStrides[axis + 1] * outputShape[axis + 1]
        }
        // The index over the leading axes: each step moves one row of the last axis.
        let leading = Array(shape.dropLast())
        var index = [Int](repeating: 0, count: rank - 1)
        result.withUnsafeMutableBufferPointer { out in
            withUnsafeBufferPointer { input in
                for row in 0..<rows {
                    var destination = widths[rank - 1].before
                    for axis in 0..<(rank - 1) { destination += (index[axis] + widths[axis].before) * outputStrides[axis] }
                    for j in 0..<rowLength { out[destination + j] = input[row * rowLength + j] }
                    advanceIndex(&index, in: leading)
                }
            }
        }
        return result
    }
}

/// Moves a row-major multi-index over `shape` on by one, the last axis fastest; after the last index it is all zeros
/// again. The walk every gather over a shape takes.
@inlinable
public func advanceIndex(_ index: inout [Int], in shape: [Int]) {
    var axis = shape.count - 1
    while axis >= 0 {
        index[axis] += 1
        if index[axis] < shape[axis] { return }
        index[axis] = 0
        axis -= 1
    }
}

/// `values` of `shape` with their axes in `permutation`'s order (`result.shape[i] == shape[permutation[i]]`).
public func permute<Element>(_ values: [Element], shape: [Int], _ permutation: [Int]) -> [Element] {
    shapePrecondition(
        permutation.sorted() == Array(shape.indices) && values.count == elementCount(shape),
        "permute: \(permutation) is not a permutation of the axes of \(describeShape(shape)), or \(values.count) values do not fill it")
    let newShape = permutation.map { shape[$0] }
    var strides = [Int](repeating: 1, count: shape.count)
    for axis in stride(from: shape.count - 2, through: 0, by: -1) { strides[axis] = strides[axis + 1] * shape[axis + 1] }
    let movedStrides = permutation.map { strides[$0] }
    var result: [Element] = []
    result.reserveCapacity(values.count)
    var index = [Int](repeating: 0, count: shape.count)
    for _ in 0..<values.count {
        var source = 0
        for axis in index.indices { source += index[axis] * movedStrides[axis] }
        result.append(values[source])
        advanceIndex(&index, in: newShape)
    }
    return result
}

/// How `padded(_:mode:value:)` fills the cells it adds.
public enum PaddingMode: String, Sendable, Codable, CaseIterable {
    /// A constant value.
    case constant
    /// The input mirrored at its edge, the edge cell not repeated: `[a, b, c]` padded by 2 before is `[c, b, a, b, c]`.
    case reflect
    /// The edge cell repeated: `[a, b, c]` padded by 2 before is `[a, a, a, b, c]`.
    case edge
}

extension Tensor {
    /// The tensor with its axes reordered: axis `i` of the result is axis `axes[i]` of this one.
    public func permuted(_ axes: [Int]) -> Tensor {
        shapePrecondition(
            axes.sorted() == Array(0..<rank), "permuted(\(axes)) needs a permutation of the \(rank) axes of \(describeShape(shape))")
        if axes == Array(0..<rank) { return self }
        return Tensor(shape: axes.map { shape[$0] }, scalars: permute(scalars, shape: shape, axes))
    }

    /// A copy with `widths[axis].before` and `.after` cells added on each side of every axis, filled as `mode`
    /// says (`value` for `.constant`); a negative width takes cells away instead (a crop). Reflecting needs each
    /// positive width below its axis's length; repeating the edge needs a non-empty axis where it adds cells; no axis
    /// may end with fewer than 0 cells.
    public func padded(_ widths: [(before: Int, after: Int)], mode: PaddingMode, value: Float = 0) -> Tensor {
        if mode == .constant && widths.allSatisfy({ $0.before >= 0 && $0.after >= 0 }) { return padded(widths, value: value) }
        shapePrecondition(
            widths.count == rank
                && zip(shape, widths).allSatisfy { size, width in
                    size + width.before + width.after >= 0
                        && (mode != .reflect || (width.before < size && width.after < size))
                        && (mode != .edge || size > 0 || Swift.max(width.before, 0) + Swift.max(width.after, 0) == 0)
                },
            "padded(mode: \(mode)) of \(describeShape(shape)) by \(widths.map { "(\($0.before), \($0.after))" }): "
                + (mode == .reflect ? "each width must be below its axis's length" : "an axis would be empty, or an empty axis repeated"))
        let outputShape = zip(shape, widths).map { $0 + $1.before + $1.after }
        var strides = [Int](repeating: 1, count: rank)
        for axis in stride(from: rank - 2, through: 0, by: -1) { strides[axis] = strides[axis + 1] * shape[axis + 1] }
        // Along each axis, the source cell of every output cell; −1 for a cell of `value`.
        let sources = (0..<rank).map { axis in
            let size = shape[axis]
            return (0..<outputShape[axis]).map { cell -> Int in
                let position = cell - widths[axis].before
                if position >= 0 && position < size { return position }
                switch mode {
                case .constant: return -1
                case .edge: return Swift.min(Swift.max(position, 0), size - 1)
                case .reflect:
                    guard size > 1 else { return 0 }
                    let period = 2 * (size - 1)
                    let folded = ((position % period) + period) % period
                    return folded < size ? folded : period - folded
                }
            }
        }
        let total = elementCount(outputShape)
        var index = [Int](repeating: 0, count: rank)
        return Tensor(uninitializedShape: outputShape) { out in
            withUnsafeBufferPointer { input in
                for flat in 0..<total {
                    var source = 0
                    for axis in 0..<rank {
                        let cell = sources[axis][index[axis]]
                        guard cell >= 0 else {
                            source = -1
                            break
                        }
                        source += cell * strides[axis]
                    }
                    out[flat] = source >= 0 ? input[source] : value
                    advanceIndex(&index, in: outputShape)
                }
            }
        }
    }
}
