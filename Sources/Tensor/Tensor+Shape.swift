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
        var index = [Int](repeating: 0, count: rank)
        result.withUnsafeMutableBufferPointer { out in
            withUnsafeBufferPointer { input in
                for row in 0..<rows {
                    var destination = widths[rank - 1].before
                    for axis in 0..<(rank - 1) { destination += (index[axis] + widths[axis].before) * outputStrides[axis] }
                    for j in 0..<rowLength { out[destination + j] = input[row * rowLength + j] }
                    // Advance the multi-index over the leading axes.
                    var axis = rank - 2
                    while axis >= 0 {
                        index[axis] += 1
                        if index[axis] < shape[axis] { break }
                        index[axis] = 0
                        axis -= 1
                    }
                }
            }
        }
        return result
    }
}
