/// The geometry of a 2-D sliding window over a channels-last batch `[N, H, W, C]`.
///
/// 1-D layers use it with `H = 1` and a window height of 1, so one implementation serves both. Public so the
/// training module can write the backward passes (col2im, pooling gradients) over the same geometry.
public struct SlidingWindow2D: Sendable {
    /// Input extents: batch, height, width, channels.
    public let batch: Int, height: Int, width: Int, channels: Int
    /// Window extents.
    public let windowHeight: Int, windowWidth: Int
    /// Steps between windows.
    public let strideHeight: Int, strideWidth: Int
    /// Output length and leading padding along rows and columns.
    public let rows: WindowGeometry, columns: WindowGeometry

    /// The geometry of a window over a `[N, H, W, C]` input.
    public init(inputShape: [Int], windowHeight: Int, windowWidth: Int, strideHeight: Int, strideWidth: Int,
         padding: Padding) {
        shapePrecondition(inputShape.count == 4, "a 2-D window needs an input [N, H, W, C], got \(describeShape(inputShape))")
        batch = inputShape[0]; height = inputShape[1]; width = inputShape[2]; channels = inputShape[3]
        self.windowHeight = windowHeight; self.windowWidth = windowWidth
        self.strideHeight = strideHeight; self.strideWidth = strideWidth
        rows = WindowGeometry(inputLength: height, window: windowHeight, stride: strideHeight, padding: padding)
        columns = WindowGeometry(inputLength: width, window: windowWidth, stride: strideWidth, padding: padding)
    }

    /// Output positions per sample.
    public var outputPositions: Int { rows.outputLength * columns.outputLength }

    /// Elements of one unrolled patch: window height × window width × channels.
    public var patchLength: Int { windowHeight * windowWidth * channels }

    /// Whether patches are the input pixels themselves (1×1 window, stride 1), so no unrolling is needed.
    var isIdentityUnroll: Bool {
        windowHeight == 1 && windowWidth == 1 && strideHeight == 1 && strideWidth == 1
    }

    /// The input cells (x range, clamped to the image) under the window at output column `ox`, and the window
    /// offset of the first of them.
    @inline(__always)
    public func columnSpan(_ ox: Int) -> (first: Int, end: Int, windowOffset: Int) {
        let start = ox * strideWidth - columns.padBefore
        let first = Swift.max(start, 0)
        let end = Swift.min(start + windowWidth, width)
        return (first, end, first - start)
    }

    /// Unrolls every window into one row: `cols[(n·OH + oy)·OW + ox, (ky·KW + kx)·C + c]`, zero where the window
    /// hangs over the padding. Convolution then becomes one matrix product with the `[Cout, KH·KW·C]` weight.
    public func im2col(_ input: Tensor) -> Tensor {
        let outputRows = batch * outputPositions
        let patch = patchLength
        return Tensor(uninitializedShape: [outputRows, patch]) { cols in
            guard let colsBase = cols.baseAddress else { return }
            input.withUnsafeBufferPointer { source in
                guard let sourceBase = source.baseAddress else { return }
                for n in 0..<batch {
                    for oy in 0..<rows.outputLength {
                        let rowStart = oy * strideHeight - rows.padBefore
                        for ox in 0..<columns.outputLength {
                            let destinationRow = colsBase + ((n * rows.outputLength + oy) * columns.outputLength + ox) * patch
                            let span = columnSpan(ox)
                            for ky in 0..<windowHeight {
                                let destination = destinationRow + ky * windowWidth * channels
                                let iy = rowStart + ky
                                guard iy >= 0 && iy < height && span.first < span.end else {
                                    destination.initialize(repeating: 0, count: windowWidth * channels)
                                    continue
                                }
                                let before = span.windowOffset * channels
                                let inside = (span.end - span.first) * channels
                                let after = windowWidth * channels - before - inside
                                if before > 0 { destination.initialize(repeating: 0, count: before) }
                                (destination + before).initialize(
                                    from: sourceBase + ((n * height + iy) * width + span.first) * channels,
                                    count: inside)
                                if after > 0 { (destination + before + inside).initialize(repeating: 0, count: after) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The shape side of a convolution — weight layout, stride, padding, input checks, im2col — shared by the float
/// layers (`Conv1D`, `Conv2D`) and their quantized twins, which differ only in how they multiply.
struct ConvolutionGeometry: Sendable {
    let layerName: String
    /// The weight shape as the layer declares it: `[out, kh, kw, in]`, or `[out, k, in]` for 1-D.
    let weightShape: [Int]
    let outChannels: Int, kernelHeight: Int, kernelWidth: Int, inChannels: Int
    let strideHeight: Int, strideWidth: Int
    let padding: Padding
    let isOneDimensional: Bool

    /// A 2-D convolution with weight `[out, kh, kw, in]`.
    init(conv2DWeightShape shape: [Int], stride: (height: Int, width: Int), padding: Padding, layerName: String) {
        shapePrecondition(
            shape.count == 4, "\(layerName) needs a weight [out, kh, kw, in], got \(describeShape(shape))")
        shapePrecondition(stride.height >= 1 && stride.width >= 1, "\(layerName) stride must be ≥ 1, got \(stride)")
        self.layerName = layerName
        weightShape = shape
        (outChannels, kernelHeight, kernelWidth, inChannels) = (shape[0], shape[1], shape[2], shape[3])
        (strideHeight, strideWidth) = stride
        self.padding = padding
        isOneDimensional = false
    }

    /// A 1-D convolution with weight `[out, k, in]`: a 2-D one over images of height 1.
    init(conv1DWeightShape shape: [Int], stride: Int, padding: Padding, layerName: String) {
        shapePrecondition(shape.count == 3, "\(layerName) needs a weight [out, k, in], got \(describeShape(shape))")
        shapePrecondition(stride >= 1, "\(layerName) stride must be ≥ 1, got \(stride)")
        self.layerName = layerName
        weightShape = shape
        (outChannels, kernelHeight, kernelWidth, inChannels) = (shape[0], 1, shape[1], shape[2])
        (strideHeight, strideWidth) = (1, stride)
        self.padding = padding
        isOneDimensional = true
    }

    /// The input as a 2-D batch `[N, H, W, C]`, checked against the weight.
    private func imageShape(of inputShape: [Int]) -> [Int] {
        if isOneDimensional {
            shapePrecondition(
                inputShape.count == 3 && inputShape[2] == inChannels,
                "\(layerName) needs input [N, L, \(inChannels)], got \(describeShape(inputShape)) "
                    + "(weight \(describeShape(weightShape)))")
            return [inputShape[0], 1, inputShape[1], inputShape[2]]
        }
        shapePrecondition(
            inputShape.count == 4 && inputShape[3] == inChannels,
            "\(layerName) needs input [N, H, W, \(inChannels)], got \(describeShape(inputShape)) "
                + "(weight \(describeShape(weightShape)))")
        return inputShape
    }

    private func window(forImage imageShape: [Int]) -> SlidingWindow2D {
        SlidingWindow2D(
            inputShape: imageShape, windowHeight: kernelHeight, windowWidth: kernelWidth,
            strideHeight: strideHeight, strideWidth: strideWidth, padding: padding)
    }

    /// `[N, H, W, in]` → `[N, OH, OW, out]`, or `[N, L, in]` → `[N, OL, out]`.
    func outputShape(for inputShape: [Int]) -> [Int] {
        let window = window(forImage: imageShape(of: inputShape))
        return isOneDimensional
            ? [inputShape[0], window.columns.outputLength, outChannels]
            : [inputShape[0], window.rows.outputLength, window.columns.outputLength, outChannels]
    }

    /// Unrolls `input` into patch rows `[positions, kh·kw·in]` and hands them to `product`, which returns the
    /// `[positions, out]` result laid out as the shape it is given.
    func forward(_ input: Tensor, product: (_ rows: Tensor, _ outputShape: [Int]) -> Tensor) -> Tensor {
        let image = imageShape(of: input.shape)
        let window = window(forImage: image)
        let rows = window.isIdentityUnroll ? input : window.im2col(input.reshaped(image))
        return product(rows, outputShape(for: input.shape))
    }
}
