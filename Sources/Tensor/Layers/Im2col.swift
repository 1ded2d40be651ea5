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
    public init(
        inputShape: [Int], windowHeight: Int, windowWidth: Int, strideHeight: Int, strideWidth: Int,
        padding: Padding
    ) {
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
    ///
    /// The matrix is zeroed in one pass; then, for each output row and kernel cell, the output columns whose
    /// input lies inside the image are found once and filled in a plain strided loop.
    public func im2col(_ input: Tensor) -> Tensor {
        let (batch, height, width, channels) = (self.batch, self.height, self.width, self.channels)
        let (kernelHeight, kernelWidth) = (windowHeight, windowWidth)
        let (strideY, strideX) = (strideHeight, strideWidth)
        let (outHeight, outWidth) = (rows.outputLength, columns.outputLength)
        let (padTop, padLeft) = (rows.padBefore, columns.padBefore)
        let patch = patchLength
        let total = batch * outHeight * outWidth * patch
        return Tensor(uninitializedShape: [batch * outHeight * outWidth, patch]) { cols in
            guard let base = cols.baseAddress else { return }
            base.initialize(repeating: 0, count: total)
            input.withUnsafeBufferPointer { source in
                guard let sourceBase = source.baseAddress else { return }
                // Indices stay below the element counts the tensors already hold, so wrapping arithmetic (no
                // overflow checks) is safe here, and checks would be most of this loop's cost.
                for n in 0..<batch {
                    let image = sourceBase + n &* height &* width &* channels
                    for oy in 0..<outHeight {
                        let rowBase = base + (n &* outHeight &+ oy) &* outWidth &* patch
                        for ky in 0..<kernelHeight {
                            let iy = oy &* strideY &- padTop &+ ky
                            if iy < 0 || iy >= height { continue }
                            let sourceRow = image + iy &* width &* channels
                            for kx in 0..<kernelWidth {
                                // Output columns whose input column ox·sx − padLeft + kx lies in 0..<width.
                                let shift = kx &- padLeft
                                let firstOX = shift >= 0 ? 0 : (0 &- shift &+ strideX &- 1) / strideX
                                let lastOX = Swift.min(outWidth &- 1, (width &- 1 &- shift) / strideX)
                                if lastOX < firstOX || width &- 1 &- shift < 0 { continue }
                                var to = rowBase + (firstOX &* patch &+ (ky &* kernelWidth &+ kx) &* channels)
                                var from = sourceRow + (firstOX &* strideX &+ shift) &* channels
                                let step = strideX &* channels
                                if channels == 1 {
                                    for _ in firstOX...lastOX {
                                        to.pointee = from.pointee
                                        to += patch
                                        from += step
                                    }
                                } else {
                                    for _ in firstOX...lastOX {
                                        var c = 0
                                        while c < channels { to[c] = from[c]; c &+= 1 }
                                        to += patch
                                        from += step
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
