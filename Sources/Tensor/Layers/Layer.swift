/// A layer's inference forward pass: a small value type that maps a batch to a batch.
///
/// Batches are channels-last: `[N, features]`, `[N, L, C]` for sequences, `[N, H, W, C]` for images.
public protocol Layer: Sendable {
    /// Runs the layer on a batch. Stops with a message naming both shapes when `input` does not fit.
    func forward(_ input: Tensor) -> Tensor

    /// The shape `forward` returns for an input of `inputShape`, without computing it.
    func outputShape(for inputShape: [Int]) -> [Int]

    /// How many learned numbers (weights, biases, statistics) the layer holds.
    var parameterCount: Int { get }
}

extension Layer {
    /// Layers without parameters hold none.
    public var parameterCount: Int { 0 }

    /// `forward(input)`, so a layer reads like a function.
    public func callAsFunction(_ input: Tensor) -> Tensor { forward(input) }
}

/// How a sliding window (convolution, pooling) treats the borders.
public enum Padding: String, Sendable, Codable, CaseIterable {
    /// No padding: only windows that lie wholly inside the input; output = ⌊(in − window) / stride⌋ + 1.
    case valid
    /// Zero padding split evenly (the extra cell after) so that output = ⌈in / stride⌉.
    case same
}

/// Where a sliding window along one axis starts and how many positions it takes.
public struct WindowGeometry: Sendable, Equatable {
    /// Output positions along the axis.
    public let outputLength: Int
    /// Padding cells before the first input cell.
    public let padBefore: Int

    /// The geometry of a window of `window` cells moving by `stride` over `inputLength` cells.
    public init(inputLength: Int, window: Int, stride: Int, padding: Padding) {
        shapePrecondition(
            window >= 1 && stride >= 1, "window \(window) and stride \(stride) must both be at least 1")
        switch padding {
        case .valid:
            shapePrecondition(
                inputLength >= window,
                "valid padding needs an input of at least the window's \(window) cells, got \(inputLength)")
            outputLength = (inputLength - window) / stride + 1
            padBefore = 0
        case .same:
            outputLength = (inputLength + stride - 1) / stride
            let total = Swift.max((outputLength - 1) * stride + window - inputLength, 0)
            padBefore = total / 2
        }
    }
}
