/// An element-wise activation, or softmax over the last axis, as a layer.
///
/// - input: any shape → output: same shape
public struct Activation: Layer {
    /// The function applied.
    public enum Function: Sendable, Equatable, Codable {
        /// `max(x, 0)`
        case relu
        /// `x` where positive, `alpha · x` elsewhere
        case leakyRelu(alpha: Float)
        /// `1 / (1 + e^-x)`
        case sigmoid
        /// `tanh(x)`
        case tanh
        /// Probabilities over the last axis
        case softmax
        /// Log-probabilities over the last axis
        case logSoftmax
        /// `x` where positive, `alpha · (e^x − 1)` elsewhere
        case elu(alpha: Float)
        /// `gamma · x` where positive, `gamma · alpha · (e^x − 1)` elsewhere
        case selu(alpha: Float, gamma: Float)
        /// `log(1 + e^x)`
        case softplus
        /// `x / (1 + |x|)`
        case softsign
    }

    /// The function applied.
    public var function: Function

    /// Creates the layer.
    public init(_ function: Function) { self.function = function }

    /// The input's shape.
    public func outputShape(for inputShape: [Int]) -> [Int] { inputShape }

    /// Applies the function.
    public func forward(_ input: Tensor) -> Tensor {
        switch function {
        case .relu: input.relu()
        case .leakyRelu(let alpha): input.leakyRelu(alpha: alpha)
        case .sigmoid: input.sigmoid()
        case .tanh: input.tanh()
        case .softmax: input.softmax()
        case .logSoftmax: input.logSoftmax()
        case .elu, .selu, .softplus, .softsign:
            input.map { [function] in apply(function, $0) }
        }
    }
}
