/// Layers applied one after another.
///
/// - input: what the first layer takes → output: what the last layer gives
public struct Sequential: Layer {
    /// The layers, first to last.
    public var layers: [any Layer]

    /// Creates the container from its layers, first to last.
    public init(_ layers: [any Layer]) { self.layers = layers }

    /// The parameters of every layer.
    public var parameterCount: Int { layers.reduce(0) { $0 + $1.parameterCount } }

    /// The shape after every layer; stops with the first mismatching layer's message when shapes do not chain.
    public func outputShape(for inputShape: [Int]) -> [Int] {
        layers.reduce(inputShape) { shape, layer in layer.outputShape(for: shape) }
    }

    /// Runs every layer in order.
    public func forward(_ input: Tensor) -> Tensor {
        layers.reduce(input) { x, layer in layer.forward(x) }
    }
}
