import Tensor

/// One layer of a model's architecture as a weights file records it: its kind and hyperparameters, not its
/// numbers. Encoded in the header as JSON, e.g. `{"dense":{"inFeatures":576,"outFeatures":128}}`.
public enum LayerSpec: Codable, Equatable, Sendable {
    /// `Dense`; tensors `weight [out, in]`, `bias [out]`.
    case dense(inFeatures: Int, outFeatures: Int)
    /// `Conv1D`; tensors `weight [out, k, in]`, `bias [out]`.
    case conv1D(inChannels: Int, outChannels: Int, kernelSize: Int, stride: Int, padding: Padding)
    /// `Conv2D`; tensors `weight [out, kh, kw, in]`, `bias [out]`.
    case conv2D(
        inChannels: Int, outChannels: Int, kernelHeight: Int, kernelWidth: Int, strideHeight: Int, strideWidth: Int,
        padding: Padding)
    /// `Pool1D`.
    case pool1D(kind: PoolingKind, size: Int, stride: Int, padding: Padding)
    /// `Pool2D`.
    case pool2D(kind: PoolingKind, height: Int, width: Int, strideHeight: Int, strideWidth: Int, padding: Padding)
    /// `GlobalAveragePool`.
    case globalAveragePool
    /// `BatchNorm`; tensors `gamma`, `beta`, `mean`, `variance`, each `[channels]`.
    case batchNorm(channels: Int, epsilon: Float)
    /// `Flatten`.
    case flatten
    /// `Activation`.
    case activation(function: Activation.Function)
    /// `Transpose`: the axes of a sample (not the batch) reordered.
    case transpose(permutation: [Int])
    /// `Reshape`: each sample in a new shape.
    case reshape(shape: [Int])
    /// `Pad`: cells added before and after each axis of a sample.
    case pad(before: [Int], after: [Int], mode: PaddingMode, value: Float)
    /// `ConstantOperation`; tensor `operand` of one sample's shape.
    case constantOperation(operation: ConstantOperation.Operation, shape: [Int])
    /// `Reduce`: the sum or mean over axes of a sample, which stay as axes of 1.
    case reduce(kind: Reduce.Kind, axes: [Int])

    /// A short human description: `Conv2D 1→16 3x3 stride 1x1 same`.
    package var summary: String {
        switch self {
        case let .dense(i, o): "Dense \(i)→\(o)"
        case let .conv1D(i, o, k, s, p): "Conv1D \(i)→\(o) k\(k) stride \(s) \(p)"
        case let .conv2D(i, o, kh, kw, sh, sw, p): "Conv2D \(i)→\(o) \(kh)x\(kw) stride \(sh)x\(sw) \(p)"
        case let .pool1D(kind, size, s, p): "\(kind == .max ? "MaxPool1D" : "AvgPool1D") \(size) stride \(s) \(p)"
        case let .pool2D(kind, h, w, sh, sw, p):
            "\(kind == .max ? "MaxPool2D" : "AvgPool2D") \(h)x\(w) stride \(sh)x\(sw) \(p)"
        case .globalAveragePool: "GlobalAveragePool"
        case let .batchNorm(c, e): "BatchNorm \(c) ε=\(e)"
        case .flatten: "Flatten"
        case let .activation(function): "Activation \(function)"
        case let .transpose(permutation): "Transpose \(permutation)"
        case let .reshape(shape): "Reshape \(describeShape(shape))"
        case let .pad(before, after, mode, value): "Pad \(mode)\(mode == .constant ? " \(value)" : "") before \(before) after \(after)"
        case let .constantOperation(operation, shape): "ConstantOperation \(operation) \(describeShape(shape))"
        case let .reduce(kind, axes): "Reduce \(kind) over \(axes)"
        }
    }

    /// The tensors this layer needs, by role (`weight`, `bias`, …), with their shapes.
    package var tensorShapes: [(role: String, shape: [Int])] {
        switch self {
        case let .dense(i, o): [("weight", [o, i]), ("bias", [o])]
        case let .conv1D(i, o, k, _, _): [("weight", [o, k, i]), ("bias", [o])]
        case let .conv2D(i, o, kh, kw, _, _, _): [("weight", [o, kh, kw, i]), ("bias", [o])]
        case let .batchNorm(c, _): [("gamma", [c]), ("beta", [c]), ("mean", [c]), ("variance", [c])]
        case let .constantOperation(_, shape): [("operand", shape)]
        case .pool1D, .pool2D, .globalAveragePool, .flatten, .activation, .transpose, .reshape, .pad, .reduce: []
        }
    }

    /// Why the hyperparameters cannot make a layer (a size below 1, a non-finite constant), or `nil`.
    package var invalidReason: String? {
        let positive: [(String, Int)]
        switch self {
        case let .dense(i, o): positive = [("inFeatures", i), ("outFeatures", o)]
        case let .conv1D(i, o, k, s, _): positive = [("inChannels", i), ("outChannels", o), ("kernelSize", k), ("stride", s)]
        case let .conv2D(i, o, kh, kw, sh, sw, _):
            positive = [
                ("inChannels", i), ("outChannels", o), ("kernelHeight", kh), ("kernelWidth", kw),
                ("strideHeight", sh), ("strideWidth", sw),
            ]
        case let .pool1D(_, size, s, _): positive = [("size", size), ("stride", s)]
        case let .pool2D(_, h, w, sh, sw, _): positive = [("height", h), ("width", w), ("strideHeight", sh), ("strideWidth", sw)]
        case let .batchNorm(c, e):
            if !(e.isFinite && e > 0) { return "BatchNorm epsilon must be finite and > 0, got \(e)" }
            positive = [("channels", c)]
        case let .activation(.leakyRelu(alpha)), let .activation(.elu(alpha)):
            return alpha.isFinite ? nil : "\(summary): alpha must be finite, got \(alpha)"
        case let .activation(.selu(alpha, gamma)):
            return alpha.isFinite && gamma.isFinite ? nil : "\(summary): alpha and gamma must be finite, got \(alpha) and \(gamma)"
        case let .transpose(permutation):
            guard permutation.count <= Self.maximumSampleRank, permutation.sorted() == Array(0..<permutation.count) else {
                return "\(summary): a permutation of 0..<n (n ≤ \(Self.maximumSampleRank)) is needed"
            }
            positive = []
        case let .reshape(shape):
            guard shape.count <= Self.maximumSampleRank else { return "\(summary): at most \(Self.maximumSampleRank) axes" }
            positive = shape.map { ("a size", $0) }
        case let .pad(before, after, _, value):
            guard before.count == after.count, before.count <= Self.maximumSampleRank, value.isFinite else {
                return "\(summary): as many widths before as after (at most \(Self.maximumSampleRank)) and a finite value are needed"
            }
            if let width = (before + after).first(where: { !(-(1 << 24)...(1 << 24)).contains($0) }) {
                return "\(summary): widths must be between \(-(1 << 24)) and \(1 << 24), got \(width)"
            }
            positive = []
        case let .constantOperation(_, shape):
            guard shape.count <= Self.maximumSampleRank else { return "\(summary): at most \(Self.maximumSampleRank) axes" }
            positive = shape.map { ("a size", $0) }
        case let .reduce(_, axes):
            guard !axes.isEmpty, axes == Array(Set(axes)).sorted(), axes.allSatisfy({ $0 >= 0 && $0 < Self.maximumSampleRank }) else {
                return "\(summary): distinct ascending axes below \(Self.maximumSampleRank) are needed"
            }
            positive = []
        case .globalAveragePool, .flatten, .activation: positive = []
        }
        let limit = 1 << 24
        if let (name, value) = positive.first(where: { $0.1 < 1 || $0.1 > limit }) {
            return "\(summary): \(name) must be between 1 and \(limit), got \(value)"
        }
        return nil
    }

    /// The shape this layer gives for `input` (batch axis included), or why `input` does not fit it — the
    /// checks a loaded file needs before any layer is built, since layers stop the program on a mismatch.
    package func outputShape(for input: [Int]) -> Result<[Int], ArchitectureMismatch> {
        func fail(_ expected: String) -> Result<[Int], ArchitectureMismatch> {
            .failure(ArchitectureMismatch(layer: summary, expected: expected, actual: input))
        }
        func windowLength(_ length: Int, _ window: Int, _ stride: Int, _ padding: Padding) -> Int? {
            switch padding {
            case .valid: length >= window ? (length - window) / stride + 1 : nil
            case .same: length >= 1 ? (length + stride - 1) / stride : nil
            }
        }
        if let reason = invalidReason { return .failure(ArchitectureMismatch(layer: reason, expected: "valid hyperparameters", actual: input)) }
        switch self {
        case let .dense(i, o):
            return input.count == 2 && input[1] == i ? .success([input[0], o]) : fail("[N, \(i)]")
        case let .conv1D(i, o, k, s, p):
            guard input.count == 3, input[2] == i, let length = windowLength(input[1], k, s, p) else {
                return fail("[N, L ≥ \(p == .valid ? k : 1), \(i)]")
            }
            return .success([input[0], length, o])
        case let .conv2D(i, o, kh, kw, sh, sw, p):
            guard input.count == 4, input[3] == i, let height = windowLength(input[1], kh, sh, p),
                let width = windowLength(input[2], kw, sw, p)
            else {
                return fail("[N, H ≥ \(p == .valid ? kh : 1), W ≥ \(p == .valid ? kw : 1), \(i)]")
            }
            return .success([input[0], height, width, o])
        case let .pool1D(_, size, s, p):
            guard input.count == 3, let length = windowLength(input[1], size, s, p) else {
                return fail("[N, L ≥ \(p == .valid ? size : 1), C]")
            }
            return .success([input[0], length, input[2]])
        case let .pool2D(_, h, w, sh, sw, p):
            guard input.count == 4, let height = windowLength(input[1], h, sh, p),
                let width = windowLength(input[2], w, sw, p)
            else {
                return fail("[N, H ≥ \(p == .valid ? h : 1), W ≥ \(p == .valid ? w : 1), C]")
            }
            return .success([input[0], height, width, input[3]])
        case .globalAveragePool:
            guard input.count >= 3, input.dropFirst().dropLast().allSatisfy({ $0 >= 1 }) else { return fail("[N, …, C] of rank ≥ 3") }
            return .success([input[0], input[input.count - 1]])
        case let .batchNorm(c, _):
            return input.count >= 2 && input[input.count - 1] == c ? .success(input) : fail("[N, …, \(c)]")
        case .flatten:
            return input.isEmpty ? fail("[N, …]") : .success([input[0], input.dropFirst().reduce(1, *)])
        case .activation:
            return .success(input)
        case let .transpose(permutation):
            guard input.count == permutation.count + 1 else { return fail("[N] + \(permutation.count) axes") }
            return .success([input[0]] + permutation.map { input[$0 + 1] })
        case let .reshape(shape):
            guard !input.isEmpty, checkedElementCount(Array(input.dropFirst())) == checkedElementCount(shape) else {
                return fail("[N, …] of \(checkedElementCount(shape).map(String.init) ?? "more than can be counted") values per sample")
            }
            return .success([input[0]] + shape)
        case let .pad(before, after, mode, _):
            guard input.count == before.count + 1,
                zip(input.dropFirst(), zip(before, after)).allSatisfy({ size, width in
                    size + width.0 + width.1 >= 1 && (mode != .reflect || (width.0 < size && width.1 < size))
                })
            else {
                return fail("[N] + \(before.count) axes, none cropped to nothing" + (mode == .reflect ? ", each longer than its widths" : ""))
            }
            return .success([input[0]] + zip(input.dropFirst(), zip(before, after)).map { $0 + $1.0 + $1.1 })
        case let .constantOperation(_, shape):
            return Array(input.dropFirst()) == shape && !input.isEmpty
                ? .success(input) : fail(describeShape([-1] + shape).replacingOccurrences(of: "-1", with: "N"))
        case let .reduce(_, axes):
            guard let last = axes.last, last + 1 < input.count, axes.allSatisfy({ input[$0 + 1] >= 1 }) else {
                return fail("[N] + at least \((axes.last ?? 0) + 1) axes, none reduced empty")
            }
            var shape = input
            for axis in axes { shape[axis + 1] = 1 }
            return .success(shape)
        }
    }

    /// The most axes a sample has in the layers that name its axes (`transpose`, `reshape`, `pad`,
    /// `constantOperation`, `reduce`).
    package static let maximumSampleRank = 8
}

extension LayerSpec {
    /// What running this layer on one sample takes: the elements it allocates (its output and, for a
    /// convolution, the unrolled patches) and the multiply-adds or comparisons it performs. Saturates instead of
    /// overflowing.
    package func cost(input: [Int], output: [Int]) -> (elements: Int, operations: Int) {
        func product(_ values: [Int]) -> Int {
            values.reduce(1) { total, value in
                let (result, overflow) = total.multipliedReportingOverflow(by: max(value, 0))
                return overflow ? Int.max : result
            }
        }
        let outputElements = product(output)
        switch self {
        case let .dense(i, o):
            return (outputElements, product([i, o]))
        case let .conv1D(i, o, k, _, _):
            let positions = output.count == 3 ? output[1] : 0
            let patches = product([positions, k, i])
            return (max(outputElements, patches), product([patches, o]))
        case let .conv2D(i, o, kh, kw, _, _, _):
            let positions = output.count == 4 ? product([output[1], output[2]]) : 0
            let patches = product([positions, kh, kw, i])
            return (max(outputElements, patches), product([patches, o]))
        case let .pool1D(_, size, _, _):
            return (outputElements, product([outputElements, size]))
        case let .pool2D(_, h, w, _, _, _):
            return (outputElements, product([outputElements, h, w]))
        case .globalAveragePool, .batchNorm, .flatten, .activation, .transpose, .reshape, .pad, .constantOperation, .reduce:
            let (total, overflow) = product(input).addingReportingOverflow(outputElements)
            return (outputElements, overflow ? Int.max : total)
        }
    }
}

extension LayerSpec {
    /// A bound on the magnitude of every value this layer computes — its outputs and the partial sums on the way
    /// — when no input value exceeds `input` in magnitude, from its tensors (already checked against
    /// `tensorShapes`) and its input shape (batch axis included): for Dense and convolutions the largest row sum
    /// of |weight| (over the fan-in) times `input`, plus |bias|; for BatchNorm, with s = |γ| / √(variance + ε),
    /// the larger of s and s · (`input` + |mean|) + |β|; for averaging pools and global average pooling `input`
    /// times the values summed (the sum comes before the division); squashing activations 1; others keep or
    /// double it. Padding adds zeros and max pooling picks, so neither raises it. It is the triangle inequality,
    /// so a bound below the float range proves the layer cannot overflow.
    package func magnitudeBound(input: Double, tensors: [String: QuantizedTensor], inputShape: [Int]) -> Double {
        func values(_ role: String) -> [Float] { tensors[role]?.dequantized().scalars ?? [] }
        func rowSums(_ role: String) -> [Double] {
            guard let weight = tensors[role] else { return [] }
            let columns = max(weight.columns, 1), scalars = weight.dequantized().scalars
            return (0..<weight.rows).map { row in
                scalars[(row * columns)..<((row + 1) * columns)].reduce(0.0) { $0 + Double(abs($1)) }
            }
        }
        switch self {
        case .dense, .conv1D, .conv2D:
            let bias = values("bias")
            return zip(rowSums("weight"), bias).reduce(0.0) { max($0, $1.0 * input + Double(abs($1.1))) }
        case let .batchNorm(channels, epsilon):
            let (gamma, beta, mean, variance) = (values("gamma"), values("beta"), values("mean"), values("variance"))
            guard [gamma, beta, mean, variance].allSatisfy({ $0.count == channels }) else { return .infinity }
            return (0..<channels).reduce(0.0) { bound, c in
                let scale = Double(abs(gamma[c])) / (Double(variance[c]) + Double(epsilon)).squareRoot()
                return max(bound, scale, scale * (input + Double(abs(mean[c]))) + Double(abs(beta[c])))
            }
        case let .pool1D(.average, size, _, _):
            return input * Double(size)
        case let .pool2D(.average, height, width, _, _, _):
            return input * Double(height) * Double(width)
        case .globalAveragePool:
            return input * Double(inputShape.dropFirst().dropLast().reduce(1, *))
        case .activation(.sigmoid), .activation(.tanh), .activation(.softmax):
            return 1
        case let .activation(.leakyRelu(alpha)):
            return max(1, Double(abs(alpha))) * input
        case let .activation(.elu(alpha)):
            return max(input, Double(abs(alpha)))
        case let .activation(.selu(alpha, gamma)):
            return Double(abs(gamma)) * max(input, Double(abs(alpha)))
        case .activation(.softplus):
            // log(1 + eˣ) ≤ max(x, 0) + log 2.
            return input + 1
        case .activation(.softsign):
            return 1
        case let .constantOperation(operation, _):
            let operand = values("operand").reduce(0.0) { max($0, Double(abs($1))) }
            switch operation {
            case .add, .subtract, .subtractFrom, .maximum, .minimum: return input + operand
            case .multiply, .preluSlope: return max(1, operand) * input
            case .divide:
                let smallest = values("operand").reduce(Double.infinity) { min($0, Double(abs($1))) }
                return smallest > 0 ? input / smallest : .infinity
            // c / x has no bound: x can be as near 0 as it likes.
            case .divideInto: return .infinity
            }
        case let .reduce(_, axes):
            return input * Double(axes.reduce(1) { $0 * (inputShape.indices.contains($1 + 1) ? inputShape[$1 + 1] : 1) })
        case let .pad(before, after, mode, value):
            // Reflected and repeated cells are cells of the input.
            // Only a constant pad that adds cells adds its value.
            return mode == .constant && (before + after).contains(where: { $0 > 0 }) ? max(input, Double(abs(value))) : input
        case .transpose, .reshape:
            return input
        case .activation(.logSoftmax):
            // x − max − log Σ exp(x − max): at most 2·input + log(count) below zero; log(count) < 40 for any count.
            return 2 * input + 40
        case .activation, .pool1D, .pool2D, .flatten:
            return input
        }
    }
}

/// A layer that cannot take the shape the layer before it gives.
package struct ArchitectureMismatch: Error, Equatable, Sendable {
    /// The layer (or the reason its hyperparameters are invalid).
    package let layer: String
    /// The input it needs.
    package let expected: String
    /// The input it would get.
    package let actual: [Int]
}

extension LayerSpec {
    /// The spec and named tensors of an engine layer, or `nil` for a layer type the file format does not know.
    /// Quantized layers give their stored tensors as they are.
    static func describe(_ layer: any Layer) -> (spec: LayerSpec, tensors: [String: QuantizedTensor])? {
        func float(_ tensors: [String: Tensor]) -> [String: QuantizedTensor] {
            tensors.mapValues { QuantizedTensor(quantizing: $0, as: .f32) }
        }
        switch layer {
        case let dense as Dense:
            return (
                .dense(inFeatures: dense.inFeatures, outFeatures: dense.outFeatures),
                float(["weight": dense.weight, "bias": dense.bias])
            )
        case let dense as QuantizedDense:
            return (
                .dense(inFeatures: dense.weight.shape[1], outFeatures: dense.weight.shape[0]),
                ["weight": dense.weight, "bias": QuantizedTensor(quantizing: dense.bias, as: .f32)]
            )
        case let conv as Conv1D:
            let s = conv.weight.shape
            return (
                .conv1D(inChannels: s[2], outChannels: s[0], kernelSize: s[1], stride: conv.stride, padding: conv.padding),
                float(["weight": conv.weight, "bias": conv.bias])
            )
        case let conv as QuantizedConv1D:
            let s = conv.weight.shape
            return (
                .conv1D(inChannels: s[2], outChannels: s[0], kernelSize: s[1], stride: conv.stride, padding: conv.padding),
                ["weight": conv.weight, "bias": QuantizedTensor(quantizing: conv.bias, as: .f32)]
            )
        case let conv as Conv2D:
            let s = conv.weight.shape
            return (
                .conv2D(
                    inChannels: s[3], outChannels: s[0], kernelHeight: s[1], kernelWidth: s[2],
                    strideHeight: conv.stride.height, strideWidth: conv.stride.width, padding: conv.padding),
                float(["weight": conv.weight, "bias": conv.bias])
            )
        case let conv as QuantizedConv2D:
            let s = conv.weight.shape
            return (
                .conv2D(
                    inChannels: s[3], outChannels: s[0], kernelHeight: s[1], kernelWidth: s[2],
                    strideHeight: conv.stride.height, strideWidth: conv.stride.width, padding: conv.padding),
                ["weight": conv.weight, "bias": QuantizedTensor(quantizing: conv.bias, as: .f32)]
            )
        case let pool as Pool1D:
            return (.pool1D(kind: pool.kind, size: pool.size, stride: pool.stride, padding: pool.padding), [:])
        case let pool as Pool2D:
            return (
                .pool2D(
                    kind: pool.kind, height: pool.size.height, width: pool.size.width,
                    strideHeight: pool.stride.height, strideWidth: pool.stride.width, padding: pool.padding), [:]
            )
        case is GlobalAveragePool:
            return (.globalAveragePool, [:])
        case let norm as BatchNorm:
            return (
                .batchNorm(channels: norm.channels, epsilon: norm.epsilon),
                float(["gamma": norm.gamma, "beta": norm.beta, "mean": norm.mean, "variance": norm.variance])
            )
        case is Flatten:
            return (.flatten, [:])
        case let layer as Transpose:
            return (.transpose(permutation: layer.permutation), [:])
        case let layer as Reshape:
            return (.reshape(shape: layer.shape), [:])
        case let layer as Pad:
            return (.pad(before: layer.before, after: layer.after, mode: layer.mode, value: layer.value), [:])
        case let layer as ConstantOperation:
            return (.constantOperation(operation: layer.operation, shape: layer.operand.shape), float(["operand": layer.operand]))
        case let layer as Reduce:
            return (.reduce(kind: layer.kind, axes: layer.axes), [:])
        case let activation as Activation:
            return (.activation(function: activation.function), [:])
        default:
            return nil
        }
    }

    /// Builds the layer from its tensors (already checked against `tensorShapes`). In compact mode, weights
    /// stored quantized stay quantized; otherwise every tensor is dequantized once, here.
    func makeLayer(_ tensors: [String: QuantizedTensor], compact: Bool) -> any Layer {
        func tensor(_ role: String) -> Tensor { tensors[role].map { $0.dequantized() } ?? Tensor(zeros: [0]) }
        let weight = tensors["weight"]
        let keepQuantized = compact && (weight?.format.isQuantized ?? false)
        switch self {
        case .dense:
            if keepQuantized, let weight { return QuantizedDense(weight: weight, bias: tensor("bias")) }
            return Dense(weight: tensor("weight"), bias: tensor("bias"))
        case let .conv1D(_, _, _, stride, padding):
            if keepQuantized, let weight {
                return QuantizedConv1D(weight: weight, bias: tensor("bias"), stride: stride, padding: padding)
            }
            return Conv1D(weight: tensor("weight"), bias: tensor("bias"), stride: stride, padding: padding)
        case let .conv2D(_, _, _, _, sh, sw, padding):
            if keepQuantized, let weight {
                return QuantizedConv2D(weight: weight, bias: tensor("bias"), stride: (sh, sw), padding: padding)
            }
            return Conv2D(weight: tensor("weight"), bias: tensor("bias"), stride: (sh, sw), padding: padding)
        case let .pool1D(kind, size, stride, padding):
            return Pool1D(kind, size: size, stride: stride, padding: padding)
        case let .pool2D(kind, h, w, sh, sw, padding):
            return Pool2D(kind, size: (h, w), stride: (sh, sw), padding: padding)
        case .globalAveragePool:
            return GlobalAveragePool()
        case let .batchNorm(_, epsilon):
            return BatchNorm(
                gamma: tensor("gamma"), beta: tensor("beta"), mean: tensor("mean"),
                variance: tensor("variance"), epsilon: epsilon)
        case .flatten:
            return Flatten()
        case let .activation(function):
            return Activation(function)
        case let .transpose(permutation):
            return Transpose(permutation: permutation)
        case let .reshape(shape):
            return Reshape(shape: shape)
        case let .pad(before, after, mode, value):
            return Pad(before: before, after: after, mode: mode, value: value)
        case let .constantOperation(operation, _):
            return ConstantOperation(operation, operand: tensor("operand"))
        case let .reduce(kind, axes):
            return Reduce(kind, axes: axes)
        }
    }
}
