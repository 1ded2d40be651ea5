import CKernels

// A batch of a plan whose every step works on one vector per sample (dense layers, their activations, flatten
// copies: a motion window's model) runs a block of rows at a time, each 8-bit layer one matrix product over the
// block: an 8-bit dense layer is the 1×1 convolution kernel over a one-row image of the block's samples (the same
// values as sample by sample: integer sums, the same scaling). A float dense layer's rows keep the single-sample
// kernel's sums (`odml_dense_f32_rows`, four narrow rows at once), so that its sums keep one order whatever the block (a stream's window, one row, must answer as the
// same window in a recording). Other plans run sample by sample.

/// Where a row-wise plan's block of rows lives: each activation `rows × count` floats, and the 8-bit inputs.
struct RowBlockLayout: Sendable {
    /// The floats of activation i start at `offsets[i]` (activations 0 and the last are the caller's input and output).
    let offsets: [Int]
    /// The floats in all.
    let floats: Int
    /// Bytes for the 8-bit inputs of the widest integer layer.
    let bytes: Int

    /// Samples in one block.
    static let rows = 64

    /// The layout for `steps` over `activations`, or `nil` when a step does not work on vectors (or there is none:
    /// the sample by sample path copies the input to the output).
    init?(steps: [Step], activations: [ActivationLayout]) {
        guard !steps.isEmpty, activations.allSatisfy({ $0.height == 1 && $0.width == 1 && !$0.isBytes && $0.storedCount == $0.count }) else {
            return nil
        }
        var widestBytes = 0
        for step in steps {
            switch step {
            case .dense:
                break
            case let .integerDense(_, _, step, _):
                widestBytes = max(widestBytes, step.inChannels)
            case .activation, .copy:
                break
            default:
                return nil
            }
        }
        var offsets: [Int] = [], total = 0
        for layout in activations {
            offsets.append(total)
            total += Self.rows * layout.count
        }
        offsets[0] = -1
        offsets[offsets.count - 1] = -1
        floats = total
        bytes = Self.rows * widestBytes
        self.offsets = offsets
    }
}

extension InferencePlan {
    /// `run(rows:_:into:workspace:)` for a row-wise plan: block by block of `RowBlockLayout.rows`.
    func runBlocks(
        _ layout: RowBlockLayout, rows: Int, _ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>,
        workspace: InferenceWorkspace
    ) {
        guard rows > 0, let inputBase = input.baseAddress, let outputBase = output.baseAddress else { return }
        let (floats, bytes) = workspace.blockStorage(floats: layout.floats, bytes: layout.bytes)
        let last = activations.count - 1
        var start = 0
        while start < rows {
            let count = min(RowBlockLayout.rows, rows - start)
            func place(_ index: Int) -> UnsafeMutablePointer<Float> {
                if index == 0 { return UnsafeMutablePointer(mutating: inputBase + start * inputCount) }
                if index == last { return outputBase + start * outputCount }
                return floats + layout.offsets[index]
            }
            for step in steps {
                switch step {
                case let .integerDense(input, output, step, quantization):
                    let features = activations[input].count
                    Kernels.quantize(
                        place(input), pixels: count, channels: features, pixelStride: features, into: bytes,
                        outChannels: step.inChannels, quantization: quantization, level: level)
                    _ = step.withPointers { weights, correction, scale, bias in
                        Kernels.integerConv2D(
                            odml_conv2d_i8_args(
                                input: bytes, inRowStride: count * step.inChannels, inChannels: Int32(step.inChannels),
                                kernelHeight: 1, kernelWidth: 1, strideHeight: 1, strideWidth: 1, outHeight: 1,
                                outWidth: Int32(count), outChannels: Int32(step.outChannels), weights: weights,
                                correction: correction, scale: scale, bias: bias, output: place(output), output8: nil,
                                outRowStride: count * step.outChannels, outPixelStride: step.outChannels, outInverseScale: 1,
                                outZeroPoint: 0, relu: step.relu ? 1 : 0, maxPool2x2: 0, narrowWeights: step.numbers.narrow ? 1 : 0),
                            level: level)
                    }
                case let .dense(input, output, numbers, outFeatures, relu):
                    // Each row's sums in the single sample's order whatever the block, so that a window answers the
                    // same in a stream (one row) as in a recording.
                    _ = numbers.withPointers { weights, bias in
                        Kernels.dense(
                            rows: count, input: place(input), inFeatures: activations[input].count, weights: weights,
                            bias: bias, outFeatures: outFeatures, output: place(output), relu: relu, level: level)
                    }
                case let .activation(input, output, function):
                    let width = activations[input].count
                    let (from, to) = (place(input), place(output))
                    for row in 0..<count {
                        let (a, b) = (from + row * width, to + row * width)
                        switch function {
                        case .softmax, .logSoftmax: softmax(a, b, count: width, logarithmic: function == .logSoftmax)
                        case .relu: for i in 0..<width { b[i] = Swift.max(a[i], 0) }
                        default: for i in 0..<width { b[i] = apply(function, a[i]) }
                        }
                    }
                case let .copy(input, output):
                    place(output).update(from: place(input), count: count * activations[input].count)
                default:
                    preconditionFailure("InferencePlan.runBlocks: step \(step) is not row-wise")
                }
            }
            start += count
        }
    }
}
