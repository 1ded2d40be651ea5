/// Naive loop-only twins of the engine's fast paths, accumulating in `Double`.
///
/// They share no code with the kernels they check (no im2col, no BLAS, no shared window helper): each is the
/// textbook definition written as nested loops, so a test that compares a kernel with its twin compares two
/// independent computations. They are slow on purpose; `bench engine` times them as the `naive` baseline.
public enum Reference {
    /// `op(a) · op(b)` for 2-D tensors; see `Tensor.matmul`.
    public static func gemm(_ a: Tensor, _ b: Tensor, transposeA: Bool = false, transposeB: Bool = false) -> Tensor {
        let m = transposeA ? a.shape[1] : a.shape[0]
        let k = transposeA ? a.shape[0] : a.shape[1]
        let n = transposeB ? b.shape[0] : b.shape[1]
        let bK = transposeB ? b.shape[1] : b.shape[0]
        shapePrecondition(k == bK, "Reference.gemm: \(describeShape(a.shape)) × \(describeShape(b.shape))")
        var out = [Float](repeating: 0, count: m * n)
        for i in 0..<m {
            for j in 0..<n {
                var total = 0.0
                for p in 0..<k {
                    let x = transposeA ? a.scalars[p * m + i] : a.scalars[i * k + p]
                    let y = transposeB ? b.scalars[j * k + p] : b.scalars[p * n + j]
                    total += Double(x) * Double(y)
                }
                out[i * n + j] = Float(total)
            }
        }
        return Tensor(shape: [m, n], scalars: out)
    }

    /// `x · Wᵀ + b` for `x [N, in]`, `weight [out, in]`, `bias [out]`.
    public static func dense(_ input: Tensor, weight: Tensor, bias: Tensor) -> Tensor {
        let (rows, outFeatures, inFeatures) = (input.shape[0], weight.shape[0], weight.shape[1])
        var out = [Float](repeating: 0, count: rows * outFeatures)
        for r in 0..<rows {
            for o in 0..<outFeatures {
                var total = Double(bias.scalars[o])
                for i in 0..<inFeatures {
                    total += Double(input.scalars[r * inFeatures + i]) * Double(weight.scalars[o * inFeatures + i])
                }
                out[r * outFeatures + o] = Float(total)
            }
        }
        return Tensor(shape: [rows, outFeatures], scalars: out)
    }

    /// Output length and padding before, by the definitions of `Padding`.
    public static func windowPlacement(input: Int, window: Int, stride: Int, padding: Padding) -> (output: Int, before: Int) {
        switch padding {
        case .valid:
            return ((input - window) / stride + 1, 0)
        case .same:
            let output = (input + stride - 1) / stride
            let needed = (output - 1) * stride + window - input
            return (output, needed > 0 ? needed / 2 : 0)
        }
    }

    /// 2-D convolution of `input [N, H, W, Cin]` with `weight [Cout, KH, KW, Cin]`, `bias [Cout]`.
    public static func conv2d(
        _ input: Tensor, weight: Tensor, bias: Tensor, stride: (height: Int, width: Int), padding: Padding
    ) -> Tensor {
        let (batch, height, width, inChannels) = (input.shape[0], input.shape[1], input.shape[2], input.shape[3])
        let (outChannels, kernelHeight, kernelWidth) = (weight.shape[0], weight.shape[1], weight.shape[2])
        let rows = windowPlacement(input: height, window: kernelHeight, stride: stride.height, padding: padding)
        let columns = windowPlacement(input: width, window: kernelWidth, stride: stride.width, padding: padding)
        var out = [Float](repeating: 0, count: batch * rows.output * columns.output * outChannels)
        for n in 0..<batch {
            for oy in 0..<rows.output {
                for ox in 0..<columns.output {
                    for o in 0..<outChannels {
                        var total = Double(bias.scalars[o])
                        for ky in 0..<kernelHeight {
                            for kx in 0..<kernelWidth {
                                let iy = oy * stride.height - rows.before + ky
                                let ix = ox * stride.width - columns.before + kx
                                if iy < 0 || iy >= height || ix < 0 || ix >= width { continue }
                                for c in 0..<inChannels {
                                    let x = input.scalars[((n * height + iy) * width + ix) * inChannels + c]
                                    let w = weight.scalars[((o * kernelHeight + ky) * kernelWidth + kx) * inChannels + c]
                                    total += Double(x) * Double(w)
                                }
                            }
                        }
                        out[((n * rows.output + oy) * columns.output + ox) * outChannels + o] = Float(total)
                    }
                }
            }
        }
        return Tensor(shape: [batch, rows.output, columns.output, outChannels], scalars: out)
    }

    /// 1-D convolution of `input [N, L, Cin]` with `weight [Cout, K, Cin]`, `bias [Cout]`.
    public static func conv1d(_ input: Tensor, weight: Tensor, bias: Tensor, stride: Int, padding: Padding) -> Tensor {
        let (batch, length, inChannels) = (input.shape[0], input.shape[1], input.shape[2])
        let (outChannels, kernelSize) = (weight.shape[0], weight.shape[1])
        let placement = windowPlacement(input: length, window: kernelSize, stride: stride, padding: padding)
        var out = [Float](repeating: 0, count: batch * placement.output * outChannels)
        for n in 0..<batch {
            for t in 0..<placement.output {
                for o in 0..<outChannels {
                    var total = Double(bias.scalars[o])
                    for k in 0..<kernelSize {
                        let position = t * stride - placement.before + k
                        if position < 0 || position >= length { continue }
                        for c in 0..<inChannels {
                            total +=
                                Double(input.scalars[(n * length + position) * inChannels + c])
                                * Double(weight.scalars[(o * kernelSize + k) * inChannels + c])
                        }
                    }
                    out[(n * placement.output + t) * outChannels + o] = Float(total)
                }
            }
        }
        return Tensor(shape: [batch, placement.output, outChannels], scalars: out)
    }

    /// 2-D pooling of `input [N, H, W, C]`; padding cells never take part.
    public static func pool2d(
        _ input: Tensor, kind: PoolingKind, size: (height: Int, width: Int), stride: (height: Int, width: Int),
        padding: Padding
    ) -> Tensor {
        let (batch, height, width, channels) = (input.shape[0], input.shape[1], input.shape[2], input.shape[3])
        let rows = windowPlacement(input: height, window: size.height, stride: stride.height, padding: padding)
        let columns = windowPlacement(input: width, window: size.width, stride: stride.width, padding: padding)
        var out = [Float](repeating: 0, count: batch * rows.output * columns.output * channels)
        for n in 0..<batch {
            for oy in 0..<rows.output {
                for ox in 0..<columns.output {
                    for c in 0..<channels {
                        var best = -Double.infinity, total = 0.0, cells = 0
                        for ky in 0..<size.height {
                            for kx in 0..<size.width {
                                let iy = oy * stride.height - rows.before + ky
                                let ix = ox * stride.width - columns.before + kx
                                if iy < 0 || iy >= height || ix < 0 || ix >= width { continue }
                                let x = Double(input.scalars[((n * height + iy) * width + ix) * channels + c])
                                best = max(best, x)
                                total += x
                                cells += 1
                            }
                        }
                        let value = kind == .max ? best : (cells > 0 ? total / Double(cells) : 0)
                        out[((n * rows.output + oy) * columns.output + ox) * channels + c] = Float(value)
                    }
                }
            }
        }
        return Tensor(shape: [batch, rows.output, columns.output, channels], scalars: out)
    }

    /// 1-D pooling of `input [N, L, C]`; padding cells never take part.
    public static func pool1d(_ input: Tensor, kind: PoolingKind, size: Int, stride: Int, padding: Padding) -> Tensor {
        let (batch, length, channels) = (input.shape[0], input.shape[1], input.shape[2])
        let placement = windowPlacement(input: length, window: size, stride: stride, padding: padding)
        var out = [Float](repeating: 0, count: batch * placement.output * channels)
        for n in 0..<batch {
            for t in 0..<placement.output {
                for c in 0..<channels {
                    var best = -Double.infinity, total = 0.0, cells = 0
                    for k in 0..<size {
                        let position = t * stride - placement.before + k
                        if position < 0 || position >= length { continue }
                        let x = Double(input.scalars[(n * length + position) * channels + c])
                        best = max(best, x)
                        total += x
                        cells += 1
                    }
                    let value = kind == .max ? best : (cells > 0 ? total / Double(cells) : 0)
                    out[(n * placement.output + t) * channels + c] = Float(value)
                }
            }
        }
        return Tensor(shape: [batch, placement.output, channels], scalars: out)
    }

    /// Softmax (or log-softmax) over the last axis, in `Double`.
    public static func softmax(_ input: Tensor, logarithmic: Bool = false) -> Tensor {
        let width = input.shape[input.rank - 1]
        var out = [Float](repeating: 0, count: input.count)
        for start in stride(from: 0, to: input.count, by: max(width, 1)) {
            let row = input.scalars[start..<(start + width)].map(Double.init)
            let maximum = row.max() ?? 0
            let total = row.reduce(0.0) { $0 + _exp($1 - maximum) }
            for (j, x) in row.enumerated() {
                out[start + j] = Float(logarithmic ? x - maximum - _log(total) : _exp(x - maximum) / total)
            }
        }
        return Tensor(shape: input.shape, scalars: out)
    }
}
