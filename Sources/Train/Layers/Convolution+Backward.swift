import Tensor

/// Scatters unrolled patch gradients `[N·OH·OW, KH·KW·C]` back onto the input `[N, H, W, C]` they came from,
/// adding where windows overlap: the transpose of `SlidingWindow2D.im2col`.
func col2im(_ dColumns: Tensor, window: SlidingWindow2D) -> Tensor {
    let (channels, outHeight, outWidth) = (window.channels, window.rows.outputLength, window.columns.outputLength)
    let patch = window.patchLength
    var dInput = Tensor(zeros: [window.batch, window.height, window.width, channels])
    dInput.withUnsafeMutableBufferPointer { out in
        dColumns.withUnsafeBufferPointer { columns in
            for n in 0..<window.batch {
                for oy in 0..<outHeight {
                    for ox in 0..<outWidth {
                        let row = ((n * outHeight + oy) * outWidth + ox) * patch
                        for ky in 0..<window.windowHeight {
                            let iy = oy * window.strideHeight - window.rows.padBefore + ky
                            guard iy >= 0 && iy < window.height else { continue }
                            for kx in 0..<window.windowWidth {
                                let ix = ox * window.strideWidth - window.columns.padBefore + kx
                                guard ix >= 0 && ix < window.width else { continue }
                                let source = row + (ky * window.windowWidth + kx) * channels
                                let destination = ((n * window.height + iy) * window.width + ix) * channels
                                for c in 0..<channels { out[destination + c] += columns[source + c] }
                            }
                        }
                    }
                }
            }
        }
    }
    return dInput
}

/// The gradients of a convolution computed as `im2col(X) · Wᵀ + b` over an image batch `[N, H, W, C]`:
/// `dW = dYᵀ · cols`, `db = Σ dY`, `dX = col2im(dY · W)`. The path of strides other than 1 (stride 1 takes
/// `DirectConvolution2D`); public so that `bench train --layers` can time both on each layer's shape.
public func convolutionBackward(
    image: Tensor, weight: Tensor, dOutput: Tensor, window: SlidingWindow2D
) -> (dImage: Tensor, dWeight: Tensor, dBias: Tensor) {
    let outChannels = weight.shape[0]
    let positions = dOutput.count / outChannels
    let dY = dOutput.reshaped([positions, outChannels])
    let columns = window.im2col(image)
    let flatWeight = weight.reshaped([outChannels, window.patchLength])
    let dWeight = Tensor.matmul(dY, columns, transposeA: true).reshaped(weight.shape)
    let dColumns = Tensor.matmul(dY, flatWeight)
    return (col2im(dColumns, window: window), dWeight, dY.sum(axis: 0))
}

extension Conv2D: TrainableLayer {
    /// `[weight, bias]`.
    public var parameters: [Tensor] {
        get { [weight, bias] }
        set { assign(newValue, to: &weight, &bias, layer: "Conv2D") }
    }

    /// The direct kernels when the stride is 1 (the bordered input recorded for the weight gradient); im2col and
    /// `sgemm` otherwise.
    public func trainingForward(_ input: Tensor, mode: Mode, generator: inout SeededGenerator) -> ForwardRecord {
        guard let direct = direct(for: input.shape) else { return ForwardRecord(input: input, output: forward(input)) }
        let bordered = direct.bordered(input)
        return ForwardRecord(input: input, output: direct.forward(bordered: bordered, weight: weight, bias: bias), saved: .borderedInput(bordered))
    }

    /// `dX`, `dW` and `db` by the direct kernels when the stride is 1; by col2im and the unrolled input otherwise.
    public func backward(_ dOutput: Tensor, record: ForwardRecord) -> (dInput: Tensor, gradients: [Tensor]) {
        let (dX, gradients) = backward(dOutput, record: record, inputGradient: true)
        return (dX ?? Tensor(zeros: record.input.shape), gradients)
    }

    /// The weight and bias gradients alone: the first layer's input gradient is never used.
    public func parameterGradients(_ dOutput: Tensor, record: ForwardRecord) -> [Tensor] {
        backward(dOutput, record: record, inputGradient: false).gradients
    }

    private func backward(_ dOutput: Tensor, record: ForwardRecord, inputGradient: Bool) -> (dInput: Tensor?, gradients: [Tensor]) {
        if let direct = direct(for: record.input.shape) {
            let bordered: Tensor
            if case let .borderedInput(kept) = record.saved { bordered = kept } else { bordered = direct.bordered(record.input) }
            let (dX, dW, dB) = direct.gradients(bordered: bordered, weight: weight, dOutput: dOutput, inputGradient: inputGradient)
            return (dX, [dW, dB])
        }
        let window = SlidingWindow2D(
            inputShape: record.input.shape, windowHeight: weight.shape[1], windowWidth: weight.shape[2],
            strideHeight: stride.height, strideWidth: stride.width, padding: padding)
        let (dX, dW, dB) = convolutionBackward(image: record.input, weight: weight, dOutput: dOutput, window: window)
        return (dX, [dW, dB])
    }

    private func direct(for inputShape: [Int]) -> DirectConvolution2D? {
        DirectConvolution2D(inputShape: inputShape, weightShape: weight.shape, stride: stride, padding: padding)
    }
}

extension Conv1D: TrainableLayer {
    /// `[weight, bias]`.
    public var parameters: [Tensor] {
        get { [weight, bias] }
        set { assign(newValue, to: &weight, &bias, layer: "Conv1D") }
    }

    /// The 2-D backward pass over an image of height 1.
    public func backward(_ dOutput: Tensor, record: ForwardRecord) -> (dInput: Tensor, gradients: [Tensor]) {
        let input = record.input
        let image = input.reshaped([input.shape[0], 1, input.shape[1], input.shape[2]])
        let window = SlidingWindow2D(
            inputShape: image.shape, windowHeight: 1, windowWidth: weight.shape[1], strideHeight: 1,
            strideWidth: stride, padding: padding)
        let (dImage, dW, dB) = convolutionBackward(
            image: image, weight: weight.reshaped([weight.shape[0], 1, weight.shape[1], weight.shape[2]]),
            dOutput: dOutput, window: window)
        return (dImage.reshaped(input.shape), [dW.reshaped(weight.shape), dB])
    }
}
