// Layers that move values, or combine them with a constant, on any shape: what imported models use around the
// convolutions (ONNXImport maps `Transpose`, `Reshape`, `Pad`, arithmetic with constants and reductions to them).
// Their parameters name the axes of one sample: axis 0 is the first axis after the batch.

/// The axes of each sample reordered.
///
/// - input: `[N, d0, d1, …]` → output: `[N, d[permutation[0]], d[permutation[1]], …]`
public struct Transpose: Layer {
    /// Axis `i` of each output sample is axis `permutation[i]` of the input sample.
    public let permutation: [Int]

    /// Creates the layer; `permutation` must hold each of `0..<rank` once.
    public init(permutation: [Int]) {
        shapePrecondition(
            permutation.sorted() == Array(0..<permutation.count), "Transpose needs a permutation of 0..<\(permutation.count), got \(permutation)")
        self.permutation = permutation
    }

    /// The sample's axes reordered.
    public func outputShape(for inputShape: [Int]) -> [Int] {
        shapePrecondition(
            inputShape.count == permutation.count + 1,
            "Transpose \(permutation) needs input [N] + \(permutation.count) axes, got \(describeShape(inputShape))")
        return [inputShape[0]] + permutation.map { inputShape[$0 + 1] }
    }

    /// The values in the new order.
    public func forward(_ input: Tensor) -> Tensor {
        _ = outputShape(for: input.shape)
        return input.permuted([0] + permutation.map { $0 + 1 })
    }
}

/// The same values with each sample in a new shape (no copy).
///
/// - input: `[N, …]` of `shape`'s element count per sample → output: `[N] + shape`
public struct Reshape: Layer {
    /// Each output sample's shape.
    public let shape: [Int]

    /// Creates the layer.
    public init(shape: [Int]) {
        shapePrecondition(shape.allSatisfy { $0 >= 1 }, "Reshape needs sizes of at least 1, got \(describeShape(shape))")
        self.shape = shape
    }

    /// `[N] + shape`.
    public func outputShape(for inputShape: [Int]) -> [Int] {
        shapePrecondition(
            !inputShape.isEmpty && elementCount(Array(inputShape.dropFirst())) == elementCount(shape),
            "Reshape to \(describeShape(shape)) needs \(elementCount(shape)) values per sample, got \(describeShape(inputShape))")
        return [inputShape[0]] + shape
    }

    /// The values in the new shape.
    public func forward(_ input: Tensor) -> Tensor { input.reshaped(outputShape(for: input.shape)) }
}

/// Cells added before and after each axis of every sample, or taken away (a negative width crops).
///
/// - input: `[N, d0, d1, …]` → output: `[N, d0 + before[0] + after[0], …]`
public struct Pad: Layer {
    /// Cells added before each axis of a sample (taken away, when negative).
    public let before: [Int]
    /// Cells added after each axis of a sample (taken away, when negative).
    public let after: [Int]
    /// How they are filled.
    public let mode: PaddingMode
    /// The value of `.constant` cells.
    public let value: Float

    /// Creates the layer: one width before and one after per axis of a sample.
    public init(before: [Int], after: [Int], mode: PaddingMode, value: Float = 0) {
        shapePrecondition(before.count == after.count, "Pad needs as many widths before as after, got \(before) and \(after)")
        (self.before, self.after, self.mode, self.value) = (before, after, mode, value)
    }

    /// Each axis lengthened (or shortened) by its widths; none may end empty.
    public func outputShape(for inputShape: [Int]) -> [Int] {
        shapePrecondition(
            inputShape.count == before.count + 1
                && zip(inputShape.dropFirst(), zip(before, after)).allSatisfy { size, width in
                    size + width.0 + width.1 >= 1 && (mode != .reflect || (width.0 < size && width.1 < size))
                },
            "Pad \(mode) by \(before), \(after) needs input [N] + \(before.count) axes, none cropped to nothing"
                + (mode == .reflect ? ", each longer than its widths" : "") + ", got \(describeShape(inputShape))")
        return [inputShape[0]] + zip(inputShape.dropFirst(), zip(before, after)).map { $0 + $1.0 + $1.1 }
    }

    /// The padded values.
    public func forward(_ input: Tensor) -> Tensor {
        _ = outputShape(for: input.shape)
        return input.padded([(0, 0)] + zip(before, after).map { ($0, $1) }, mode: mode, value: value)
    }
}

/// Each value of a sample combined with the value of a constant at the same place.
///
/// - input: `[N] + operand.shape` → output: the same shape
public struct ConstantOperation: Layer {
    /// How a value `x` and the constant's `c` combine.
    public enum Operation: String, Sendable, Codable, CaseIterable {
        /// `x + c`
        case add
        /// `x − c`
        case subtract
        /// `c − x`
        case subtractFrom
        /// `x · c`
        case multiply
        /// `x / c`
        case divide
        /// `c / x`
        case divideInto
        /// `x` where positive, `c · x` elsewhere (ONNX's `PRelu`)
        case preluSlope
        /// `max(x, c)`
        case maximum
        /// `min(x, c)`
        case minimum

        /// `x` combined with `c`.
        @inline(__always)
        public func apply(_ x: Float, _ c: Float) -> Float {
            switch self {
            case .add: x + c
            case .subtract: x - c
            case .subtractFrom: c - x
            case .multiply: x * c
            case .divide: x / c
            case .divideInto: c / x
            case .preluSlope: x > 0 ? x : c * x
            case .maximum: Swift.max(x, c)
            case .minimum: Swift.min(x, c)
            }
        }
    }

    /// The combination.
    public let operation: Operation
    /// The constant: one sample's shape.
    public let operand: Tensor

    /// Creates the layer.
    public init(_ operation: Operation, operand: Tensor) { (self.operation, self.operand) = (operation, operand) }

    /// The constant's values.
    public var parameterCount: Int { operand.count }

    /// The input's shape, whose samples must be the constant's shape.
    public func outputShape(for inputShape: [Int]) -> [Int] {
        shapePrecondition(
            Array(inputShape.dropFirst()) == operand.shape && !inputShape.isEmpty,
            "\(operation) with a constant \(describeShape(operand.shape)) needs input [N] + \(describeShape(operand.shape)), got \(describeShape(inputShape))"
        )
        return inputShape
    }

    /// The combined values.
    public func forward(_ input: Tensor) -> Tensor {
        _ = outputShape(for: input.shape)
        let operation = operation
        return Tensor.broadcasting(input, operand, operation.rawValue) { operation.apply($0, $1) }
    }
}

/// The sum or mean of each sample over some of its axes, which stay as axes of 1.
///
/// - input: `[N, d0, d1, …]` → output: the same with the reduced axes 1
public struct Reduce: Layer {
    /// What the values over the axes become.
    public enum Kind: String, Sendable, Codable, CaseIterable {
        /// Their sum.
        case sum
        /// Their mean.
        case mean
    }

    /// Sum or mean.
    public let kind: Kind
    /// The axes of a sample reduced, ascending.
    public let axes: [Int]

    /// Creates the layer.
    public init(_ kind: Kind, axes: [Int]) {
        shapePrecondition(
            !axes.isEmpty && axes.allSatisfy { $0 >= 0 } && Set(axes).count == axes.count, "Reduce needs distinct axes ≥ 0, got \(axes)")
        (self.kind, self.axes) = (kind, axes.sorted())
    }

    /// The input's shape with the reduced axes 1.
    public func outputShape(for inputShape: [Int]) -> [Int] {
        shapePrecondition(
            axes.allSatisfy { $0 + 1 < inputShape.count && inputShape[$0 + 1] >= 1 },
            "Reduce over axes \(axes) of a sample needs them there and not empty, got \(describeShape(inputShape))")
        var shape = inputShape
        for axis in axes { shape[axis + 1] = 1 }
        return shape
    }

    /// The sums or means.
    public func forward(_ input: Tensor) -> Tensor {
        let shape = outputShape(for: input.shape)
        var result = input
        for axis in axes.reversed() { result = result.sum(axis: axis + 1) }
        if kind == .mean { result = result * (1 / Float(elementCount(axes.map { input.shape[$0 + 1] }))) }
        return result.reshaped(shape)
    }
}
