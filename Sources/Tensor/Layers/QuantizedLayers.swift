/// Dense and convolution layers whose weights stay quantized in memory (the compact way to run a quantized
/// model). Each call dequantizes a tile of weight rows at a time into a scratch buffer and multiplies it with
/// `sgemm`, so the float weights never exist in full.
///
/// Each keeps its float layer's interface and shapes; `dequantized()` gives the float layer, and
/// `QuantizedDense(x) ≈ Dense(dequantize(W))(x)` up to summation order.

/// Scratch elements per tile: at most this many dequantized weights exist at once (64 KiB).
public let quantizedTileElements = 16_384

/// `rows · dequantize(weight)ᵀ + bias` for `rows` viewed as `[r, k]` and `weight` as `[n, k]`, tile by tile.
func quantizedAffineProduct(rows: Tensor, weight: QuantizedTensor, bias: Tensor, outputShape: [Int]) -> Tensor {
    let (n, k) = (weight.rows, weight.columns)
    let r = rows.count / Swift.max(k, 1)
    shapePrecondition(
        rows.count == r * k && elementCount(outputShape) == r * n && bias.count == n,
        "quantized product of \(describeShape(rows.shape)) with weight \(describeShape(weight.shape)) and bias "
            + "\(describeShape(bias.shape)) cannot fill \(describeShape(outputShape))")
    let tileRows = Swift.max(1, Swift.min(n, quantizedTileElements / Swift.max(k, 1)))
    return Tensor(uninitializedShape: outputShape) { out in
        guard let outBase = out.baseAddress else { return }
        bias.withUnsafeBufferPointer { biasBuffer in
            for row in 0..<r { for j in 0..<n { out[row * n + j] = biasBuffer[j] } }
        }
        if k == 0 || n == 0 { return }
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: tileRows * k)
        defer { scratch.deallocate() }
        rows.withUnsafeBufferPointer { a in
            guard let aBase = a.baseAddress else { return }
            for first in stride(from: 0, to: n, by: tileRows) {
                let count = Swift.min(tileRows, n - first)
                weight.dequantizeRows(first..<(first + count), into: scratch)
                BLAS.gemm(
                    transposeA: false, transposeB: true, m: r, n: count, k: k,
                    alpha: 1, a: aBase, lda: k, b: scratch, ldb: k,
                    beta: 1, c: outBase + first, ldc: n)
            }
        }
    }
}

/// A Dense layer with a quantized weight.
///
/// - input: `[N, inFeatures]` → output: `[N, outFeatures]`
/// - weight: quantized `[outFeatures, inFeatures]`; bias: `[outFeatures]` in float
public struct QuantizedDense: Layer {
    /// Quantized `[outFeatures, inFeatures]`.
    public let weight: QuantizedTensor
    /// `[outFeatures]`
    public let bias: Tensor

    /// Creates the layer from a quantized weight `[out, in]` and a float bias `[out]`.
    public init(weight: QuantizedTensor, bias: Tensor) {
        shapePrecondition(
            weight.shape.count == 2 && bias.shape == [weight.shape[0]],
            "QuantizedDense needs weight [out, in] and bias [out], got weight \(describeShape(weight.shape)) "
                + "and bias \(describeShape(bias.shape))")
        self.weight = weight
        self.bias = bias
    }

    /// Quantizes the weight of `dense` into `format`; the bias stays float.
    public init(quantizing dense: Dense, as format: StorageFormat) {
        self.init(weight: QuantizedTensor(quantizing: dense.weight, as: format), bias: dense.bias)
    }

    /// The float layer with the dequantized weight.
    public func dequantized() -> Dense { Dense(weight: weight.dequantized(), bias: bias) }

    /// Weights and biases.
    public var parameterCount: Int { elementCount(weight.shape) + bias.count }

    /// `[N, in]` → `[N, out]`.
    public func outputShape(for inputShape: [Int]) -> [Int] {
        shapePrecondition(
            inputShape.count == 2 && inputShape[1] == weight.shape[1],
            "QuantizedDense \(weight.shape[1])→\(weight.shape[0]) needs input [N, \(weight.shape[1])], got "
                + "\(describeShape(inputShape)) (weight \(describeShape(weight.shape)))")
        return [inputShape[0], weight.shape[0]]
    }

    /// `x · dequantize(W)ᵀ + b`, a tile of weight rows at a time.
    public func forward(_ input: Tensor) -> Tensor {
        quantizedAffineProduct(rows: input, weight: weight, bias: bias, outputShape: outputShape(for: input.shape))
    }
}

/// A Conv2D layer with a quantized weight.
///
/// - input: `[N, H, W, inChannels]` → output: `[N, OH, OW, outChannels]`
/// - weight: quantized `[outChannels, kernelHeight, kernelWidth, inChannels]`; bias: `[outChannels]` in float
public struct QuantizedConv2D: Layer {
    /// Quantized `[outChannels, kernelHeight, kernelWidth, inChannels]`.
    public let weight: QuantizedTensor
    /// `[outChannels]`
    public let bias: Tensor
    /// Steps between windows: (rows, columns).
    public let stride: (height: Int, width: Int)
    /// Border handling.
    public let padding: Padding

    /// Quantizes the weight of `conv` into `format`; the bias stays float.
    public init(quantizing conv: Conv2D, as format: StorageFormat) {
        self.init(
            weight: QuantizedTensor(quantizing: conv.weight, as: format), bias: conv.bias, stride: conv.stride,
            padding: conv.padding)
    }

    /// Creates the layer from a quantized weight, a float bias, stride and padding.
    public init(weight: QuantizedTensor, bias: Tensor, stride: (height: Int, width: Int), padding: Padding) {
        _ = ConvolutionGeometry(conv2DWeightShape: weight.shape, stride: stride, padding: padding, layerName: "QuantizedConv2D")
        shapePrecondition(
            bias.shape == [weight.shape[0]],
            "QuantizedConv2D needs bias [\(weight.shape[0])], got \(describeShape(bias.shape))")
        self.weight = weight
        self.bias = bias
        self.stride = stride
        self.padding = padding
    }

    /// The float layer with the dequantized weight.
    public func dequantized() -> Conv2D {
        Conv2D(weight: weight.dequantized(), bias: bias, stride: stride, padding: padding)
    }

    /// Weights and biases.
    public var parameterCount: Int { elementCount(weight.shape) + bias.count }

    private var geometry: ConvolutionGeometry {
        ConvolutionGeometry(conv2DWeightShape: weight.shape, stride: stride, padding: padding, layerName: "QuantizedConv2D")
    }

    /// `[N, H, W, in]` → `[N, OH, OW, out]`.
    public func outputShape(for inputShape: [Int]) -> [Int] { geometry.outputShape(for: inputShape) }

    /// The convolution, a tile of weight rows at a time.
    public func forward(_ input: Tensor) -> Tensor {
        geometry.forward(input) { rows, outputShape in
            quantizedAffineProduct(rows: rows, weight: weight, bias: bias, outputShape: outputShape)
        }
    }
}

/// A Conv1D layer with a quantized weight.
///
/// - input: `[N, L, inChannels]` → output: `[N, OL, outChannels]`
/// - weight: quantized `[outChannels, kernelSize, inChannels]`; bias: `[outChannels]` in float
public struct QuantizedConv1D: Layer {
    /// Quantized `[outChannels, kernelSize, inChannels]`.
    public let weight: QuantizedTensor
    /// `[outChannels]`
    public let bias: Tensor
    /// Step between windows.
    public let stride: Int
    /// Border handling.
    public let padding: Padding

    /// Quantizes the weight of `conv` into `format`; the bias stays float.
    public init(quantizing conv: Conv1D, as format: StorageFormat) {
        self.init(
            weight: QuantizedTensor(quantizing: conv.weight, as: format), bias: conv.bias, stride: conv.stride,
            padding: conv.padding)
    }

    /// Creates the layer from a quantized weight, a float bias, stride and padding.
    public init(weight: QuantizedTensor, bias: Tensor, stride: Int, padding: Padding) {
        _ = ConvolutionGeometry(conv1DWeightShape: weight.shape, stride: stride, padding: padding, layerName: "QuantizedConv1D")
        shapePrecondition(
            bias.shape == [weight.shape[0]],
            "QuantizedConv1D needs bias [\(weight.shape[0])], got \(describeShape(bias.shape))")
        self.weight = weight
        self.bias = bias
        self.stride = stride
        self.padding = padding
    }

    /// The float layer with the dequantized weight.
    public func dequantized() -> Conv1D {
        Conv1D(weight: weight.dequantized(), bias: bias, stride: stride, padding: padding)
    }

    /// Weights and biases.
    public var parameterCount: Int { elementCount(weight.shape) + bias.count }

    private var geometry: ConvolutionGeometry {
        ConvolutionGeometry(conv1DWeightShape: weight.shape, stride: stride, padding: padding, layerName: "QuantizedConv1D")
    }

    /// `[N, L, in]` → `[N, OL, out]`.
    public func outputShape(for inputShape: [Int]) -> [Int] { geometry.outputShape(for: inputShape) }

    /// The convolution, a tile of weight rows at a time.
    public func forward(_ input: Tensor) -> Tensor {
        geometry.forward(input) { rows, outputShape in
            quantizedAffineProduct(rows: rows, weight: weight, bias: bias, outputShape: outputShape)
        }
    }
}
