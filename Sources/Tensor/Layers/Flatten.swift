/// Collapses every axis after the batch into one.
///
/// - input: `[N, d1, d2, …]` → output: `[N, d1 · d2 · …]` (a reshape: no copy)
public struct Flatten: Layer {
    /// Creates the layer.
    public init() {}

    /// `[N, …]` → `[N, product of the rest]`.
    public func outputShape(for inputShape: [Int]) -> [Int] {
        shapePrecondition(inputShape.count >= 1, "Flatten needs a batch axis, got \(describeShape(inputShape))")
        return [inputShape[0], elementCount(Array(inputShape.dropFirst()))]
    }

    /// The same elements as `[N, features]`.
    public func forward(_ input: Tensor) -> Tensor {
        input.reshaped(outputShape(for: input.shape))
    }
}
