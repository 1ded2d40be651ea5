/// A fully connected layer: `y = x · Wᵀ + b`.
///
/// - input: `[N, inFeatures]` → output: `[N, outFeatures]`
/// - weight: `[outFeatures, inFeatures]`
/// - bias: `[outFeatures]`
public struct Dense: Layer {
    /// `[outFeatures, inFeatures]`
    public var weight: Tensor
    /// `[outFeatures]`
    public var bias: Tensor

    /// Creates the layer from its weight `[out, in]` and bias `[out]`.
    public init(weight: Tensor, bias: Tensor) {
        shapePrecondition(
            weight.rank == 2 && bias.shape == [weight.shape[0]],
            "Dense needs weight [out, in] and bias [out], got weight \(describeShape(weight.shape)) "
                + "and bias \(describeShape(bias.shape))")
        self.weight = weight
        self.bias = bias
    }

    /// Creates a layer with He-normal weights (`std = √(2 / in)`) and zero bias.
    public init(inFeatures: Int, outFeatures: Int, generator: inout SeededGenerator) {
        let weight = Tensor(
            randomNormal: [outFeatures, inFeatures],
            standardDeviation: (2 / Float(Swift.max(inFeatures, 1))).squareRoot(), generator: &generator)
        self.init(weight: weight, bias: Tensor(zeros: [outFeatures]))
    }

    /// Input features.
    public var inFeatures: Int { weight.shape[1] }
    /// Output features.
    public var outFeatures: Int { weight.shape[0] }
    /// Weights and biases.
    public var parameterCount: Int { weight.count + bias.count }

    /// `[N, in]` → `[N, out]`.
    public func outputShape(for inputShape: [Int]) -> [Int] {
        shapePrecondition(
            inputShape.count == 2 && inputShape[1] == inFeatures,
            "Dense \(inFeatures)→\(outFeatures) needs input [N, \(inFeatures)], got \(describeShape(inputShape)) "
                + "(weight \(describeShape(weight.shape)))")
        return [inputShape[0], outFeatures]
    }

    /// `x · Wᵀ + b` in one `sgemm`: the output starts as bias rows and the product is added with `beta = 1`.
    public func forward(_ input: Tensor) -> Tensor {
        let outputShape = outputShape(for: input.shape)
        return affineProduct(rows: input, columnsWeight: weight, bias: bias, outputShape: outputShape)
    }
}

/// `rows · weightᵀ + bias` for `rows` viewed as `[r, k]` and `weight` as `[n, k]`, written into a tensor of
/// `outputShape` (`r · n` elements): the shared kernel of Dense and the convolutions (after im2col).
func affineProduct(rows: Tensor, columnsWeight weight: Tensor, bias: Tensor, outputShape: [Int]) -> Tensor {
    let n = weight.shape[0]
    let k = weight.count / Swift.max(n, 1)
    let r = rows.count / Swift.max(k, 1)
    shapePrecondition(
        rows.count == r * k && elementCount(outputShape) == r * n && bias.count == n,
        "affine product of \(describeShape(rows.shape)) with weight \(describeShape(weight.shape)) and bias "
            + "\(describeShape(bias.shape)) cannot fill \(describeShape(outputShape))")
    return Tensor(uninitializedShape: outputShape) { out in
        guard let outBase = out.baseAddress else { return }
        bias.withUnsafeBufferPointer { biasBuffer in
            for row in 0..<r {
                for j in 0..<n { out[row * n + j] = biasBuffer[j] }
            }
        }
        if k == 0 { return }
        rows.withUnsafeBufferPointer { a in
            weight.withUnsafeBufferPointer { w in
                guard let aBase = a.baseAddress, let wBase = w.baseAddress else { return }
                BLAS.gemm(
                    transposeA: false, transposeB: true, m: r, n: n, k: k,
                    alpha: 1, a: aBase, lda: k, b: wBase, ldb: k,
                    beta: 1, c: outBase, ldc: n)
            }
        }
    }
}
