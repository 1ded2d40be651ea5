/// Element-wise arithmetic with broadcasting over leading axes, and scalar arithmetic.
///
/// Two shapes combine when they are equal, or when one is a suffix of the other: `[n, f] + [f]` adds a bias row to
/// every row, `[n, h, w, c] * [c]` scales every channel. The result has the longer shape.
extension Tensor {
    /// Applies `operation` element-wise to `lhs` and `rhs`, broadcasting the shorter shape over leading axes.
    public static func broadcasting(
        _ lhs: Tensor, _ rhs: Tensor, _ name: String = "element-wise op",
        _ operation: (Float, Float) -> Float
    ) -> Tensor {
        let lhsIsLonger = lhs.rank >= rhs.rank
        let long = lhsIsLonger ? lhs : rhs
        let short = lhsIsLonger ? rhs : lhs
        shapePrecondition(
            Array(long.shape.suffix(short.rank)) == short.shape,
            "\(name): shapes \(describeShape(lhs.shape)) and \(describeShape(rhs.shape)) do not broadcast "
                + "(one must equal the other's trailing axes)")
        let period = short.count
        if period == 0 || long.count == 0 { return Tensor(zeros: long.shape) }
        return Tensor(uninitializedShape: long.shape) { out in
            long.withUnsafeBufferPointer { longBuffer in
                short.withUnsafeBufferPointer { shortBuffer in
                    var offset = 0
                    while offset < longBuffer.count {
                        for j in 0..<period {
                            let x = longBuffer[offset + j], y = shortBuffer[j]
                            out[offset + j] = lhsIsLonger ? operation(x, y) : operation(y, x)
                        }
                        offset += period
                    }
                }
            }
        }
    }

    /// Applies `transform` to every element.
    public func map(_ transform: (Float) -> Float) -> Tensor {
        Tensor(uninitializedShape: shape) { out in
            withUnsafeBufferPointer { input in
                for i in input.indices { out[i] = transform(input[i]) }
            }
        }
    }

    /// Element-wise sum, broadcasting over leading axes.
    public static func + (lhs: Tensor, rhs: Tensor) -> Tensor { broadcasting(lhs, rhs, "add", +) }
    /// Element-wise difference, broadcasting over leading axes.
    public static func - (lhs: Tensor, rhs: Tensor) -> Tensor { broadcasting(lhs, rhs, "subtract", -) }
    /// Element-wise product, broadcasting over leading axes.
    public static func * (lhs: Tensor, rhs: Tensor) -> Tensor { broadcasting(lhs, rhs, "multiply", *) }
    /// Element-wise quotient, broadcasting over leading axes.
    public static func / (lhs: Tensor, rhs: Tensor) -> Tensor { broadcasting(lhs, rhs, "divide", /) }

    /// Adds `rhs` to every element.
    public static func + (lhs: Tensor, rhs: Float) -> Tensor { lhs.map { $0 + rhs } }
    /// Subtracts `rhs` from every element.
    public static func - (lhs: Tensor, rhs: Float) -> Tensor { lhs.map { $0 - rhs } }
    /// Multiplies every element by `rhs`.
    public static func * (lhs: Tensor, rhs: Float) -> Tensor { lhs.map { $0 * rhs } }
    /// Divides every element by `rhs`.
    public static func / (lhs: Tensor, rhs: Float) -> Tensor { lhs.map { $0 / rhs } }
    /// Adds `lhs` to every element.
    public static func + (lhs: Float, rhs: Tensor) -> Tensor { rhs.map { lhs + $0 } }
    /// Subtracts every element from `lhs`.
    public static func - (lhs: Float, rhs: Tensor) -> Tensor { rhs.map { lhs - $0 } }
    /// Multiplies every element by `lhs`.
    public static func * (lhs: Float, rhs: Tensor) -> Tensor { rhs.map { lhs * $0 } }
    /// Divides `lhs` by every element.
    public static func / (lhs: Float, rhs: Tensor) -> Tensor { rhs.map { lhs / $0 } }
    /// Negates every element.
    public static prefix func - (operand: Tensor) -> Tensor { operand.map { -$0 } }
}
