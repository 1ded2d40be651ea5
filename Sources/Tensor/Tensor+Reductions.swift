/// Reductions over one axis. The reduced axis is removed from the shape (`[2, 3]` summed over axis 1 is `[2]`).
extension Tensor {
    /// The shape split around `axis`: elements before it, its length, elements after it.
    func split(around axis: Int) -> (outer: Int, length: Int, inner: Int) {
        let resolved = normalizedAxis(axis, rank: rank)
        return (
            elementCount(Array(shape[..<resolved])), shape[resolved],
            elementCount(Array(shape[(resolved + 1)...]))
        )
    }

    func shapeRemoving(axis: Int) -> [Int] {
        var reduced = shape
        reduced.remove(at: normalizedAxis(axis, rank: rank))
        return reduced
    }

    /// Folds each line along `axis` with `combine`, starting from `initial`, in one pass over the storage.
    private func reduce(axis: Int, initial: Float, _ combine: (Float, Float) -> Float) -> Tensor {
        let (outer, length, inner) = split(around: axis)
        var result = [Float](repeating: initial, count: outer * inner)
        withUnsafeBufferPointer { input in
            for o in 0..<outer {
                for l in 0..<length {
                    let base = (o * length + l) * inner
                    for i in 0..<inner {
                        result[o * inner + i] = combine(result[o * inner + i], input[base + i])
                    }
                }
            }
        }
        return Tensor(shape: shapeRemoving(axis: axis), scalars: result)
    }

    /// The sum along `axis` (negative counts from the end).
    public func sum(axis: Int) -> Tensor { reduce(axis: axis, initial: 0, +) }

    /// The mean along `axis`; the axis must not be empty.
    public func mean(axis: Int) -> Tensor {
        let length = split(around: axis).length
        shapePrecondition(length > 0, "mean over the empty axis \(axis) of \(describeShape(shape))")
        return sum(axis: axis) * (1 / Float(length))
    }

    /// The maximum along `axis`; the axis must not be empty.
    public func max(axis: Int) -> Tensor {
        shapePrecondition(split(around: axis).length > 0, "max over the empty axis \(axis) of \(describeShape(shape))")
        return reduce(axis: axis, initial: -.infinity) { Swift.max($0, $1) }
    }

    /// The position of the maximum along `axis`, for every other position, in row-major order of the remaining
    /// axes (the first position wins a tie). `[2, 3]` over axis 1 gives 2 indices, each in `0..<3`.
    public func argmax(axis: Int) -> [Int] {
        let (outer, length, inner) = split(around: axis)
        shapePrecondition(length > 0, "argmax over the empty axis \(axis) of \(describeShape(shape))")
        var best = [Int](repeating: 0, count: outer * inner)
        withUnsafeBufferPointer { input in
            for o in 0..<outer {
                for i in 0..<inner {
                    var bestIndex = 0
                    var bestValue = input[o * length * inner + i]
                    for l in 1..<Swift.max(length, 1) {
                        let value = input[(o * length + l) * inner + i]
                        if value > bestValue { bestValue = value; bestIndex = l }
                    }
                    best[o * inner + i] = bestIndex
                }
            }
        }
        return best
    }

    /// The sum of all elements, accumulated in `Double`.
    public func sum() -> Float {
        withUnsafeBufferPointer { Float($0.reduce(0.0) { $0 + Double($1) }) }
    }
}
