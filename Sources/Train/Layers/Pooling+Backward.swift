import Tensor

/// The gradient of pooling over `image [N, H, W, C]`: a max window passes its gradient to the first cell holding
/// the maximum, an average window shares it equally among the real (non-padding) cells it covers.
func poolBackward(image: Tensor, dOutput: Tensor, kind: PoolingKind, window: SlidingWindow2D) -> Tensor {
    let (channels, outHeight, outWidth) = (window.channels, window.rows.outputLength, window.columns.outputLength)
    if kind == .max, let dImage = ActivationGradients.maxPool(input: image, dOutput: dOutput, window: window) {
        return dImage
    }
    var dImage = Tensor(zeros: image.shape)
    dImage.withUnsafeMutableBufferPointer { dX in
        image.withUnsafeBufferPointer { x in
            dOutput.withUnsafeBufferPointer { dY in
                for n in 0..<window.batch {
                    for oy in 0..<outHeight {
                        let rowStart = oy * window.strideHeight - window.rows.padBefore
                        let rows = max(rowStart, 0)..<min(rowStart + window.windowHeight, window.height)
                        for ox in 0..<outWidth {
                            let span = window.columnSpan(ox)
                            let columns = span.first..<max(span.end, span.first)
                            let outBase = ((n * outHeight + oy) * outWidth + ox) * channels
                            for c in 0..<channels {
                                let gradient = dY[outBase + c]
                                switch kind {
                                case .max:
                                    var best = -Float.infinity, bestIndex = -1
                                    for iy in rows {
                                        for ix in columns {
                                            let index = ((n * window.height + iy) * window.width + ix) * channels + c
                                            if x[index] > best { best = x[index]; bestIndex = index }
                                        }
                                    }
                                    if bestIndex >= 0 { dX[bestIndex] += gradient }
                                case .average:
                                    let cells = rows.count * columns.count
                                    guard cells > 0 else { continue }
                                    let share = gradient / Float(cells)
                                    for iy in rows {
                                        for ix in columns {
                                            dX[((n * window.height + iy) * window.width + ix) * channels + c] += share
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    return dImage
}

extension Pool2D: TrainableLayer {
    /// None.
    public var parameters: [Tensor] {
        get { [] }
        set {}
    }

    /// See `poolBackward`.
    public func backward(_ dOutput: Tensor, record: ForwardRecord) -> (dInput: Tensor, gradients: [Tensor]) {
        let window = SlidingWindow2D(
            inputShape: record.input.shape, windowHeight: size.height, windowWidth: size.width,
            strideHeight: stride.height, strideWidth: stride.width, padding: padding)
        return (poolBackward(image: record.input, dOutput: dOutput, kind: kind, window: window), [])
    }
}

extension Pool1D: TrainableLayer {
    /// None.
    public var parameters: [Tensor] {
        get { [] }
        set {}
    }

    /// The 2-D backward pass over an image of height 1.
    public func backward(_ dOutput: Tensor, record: ForwardRecord) -> (dInput: Tensor, gradients: [Tensor]) {
        let input = record.input
        let image = input.reshaped([input.shape[0], 1, input.shape[1], input.shape[2]])
        let window = SlidingWindow2D(
            inputShape: image.shape, windowHeight: 1, windowWidth: size, strideHeight: 1, strideWidth: stride,
            padding: padding)
        return (poolBackward(image: image, dOutput: dOutput, kind: kind, window: window).reshaped(input.shape), [])
    }
}

extension GlobalAveragePool: TrainableLayer {
    /// None.
    public var parameters: [Tensor] {
        get { [] }
        set {}
    }

    /// Each position receives `dY[n, c] / positions`.
    public func backward(_ dOutput: Tensor, record: ForwardRecord) -> (dInput: Tensor, gradients: [Tensor]) {
        let shape = record.input.shape
        let (batch, channels) = (shape[0], shape[shape.count - 1])
        let positions = record.input.count / max(batch * channels, 1)
        let scale = 1 / Float(max(positions, 1))
        let dX = Tensor(uninitializedShape: shape) { out in
            dOutput.withUnsafeBufferPointer { dY in
                for n in 0..<batch {
                    for p in 0..<positions {
                        for c in 0..<channels { out[(n * positions + p) * channels + c] = dY[n * channels + c] * scale }
                    }
                }
            }
        }
        return (dX, [])
    }
}

extension Flatten: TrainableLayer {
    /// None.
    public var parameters: [Tensor] {
        get { [] }
        set {}
    }

    /// The gradient reshaped back to the input's shape.
    public func backward(_ dOutput: Tensor, record: ForwardRecord) -> (dInput: Tensor, gradients: [Tensor]) {
        (dOutput.reshaped(record.input.shape), [])
    }
}
