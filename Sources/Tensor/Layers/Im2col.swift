/// The geometry of a 2-D sliding window over a channels-last batch `[N, H, W, C]`.
///
/// 1-D layers use it with `H = 1` and a window height of 1, so one implementation serves both.
struct SlidingWindow2D: Sendable {
    let batch: Int, height: Int, width: Int, channels: Int
    let windowHeight: Int, windowWidth: Int
    let strideHeight: Int, strideWidth: Int
    let rows: WindowGeometry, columns: WindowGeometry

    init(inputShape: [Int], windowHeight: Int, windowWidth: Int, strideHeight: Int, strideWidth: Int,
         padding: Padding) {
        batch = inputShape[0]; height = inputShape[1]; width = inputShape[2]; channels = inputShape[3]
        self.windowHeight = windowHeight; self.windowWidth = windowWidth
        self.strideHeight = strideHeight; self.strideWidth = strideWidth
        rows = WindowGeometry(inputLength: height, window: windowHeight, stride: strideHeight, padding: padding)
        columns = WindowGeometry(inputLength: width, window: windowWidth, stride: strideWidth, padding: padding)
    }

    /// Output positions per sample.
    var outputPositions: Int { rows.outputLength * columns.outputLength }

    /// Elements of one unrolled patch: window height × window width × channels.
    var patchLength: Int { windowHeight * windowWidth * channels }

    /// Whether patches are the input pixels themselves (1×1 window, stride 1), so no unrolling is needed.
    var isIdentityUnroll: Bool {
        windowHeight == 1 && windowWidth == 1 && strideHeight == 1 && strideWidth == 1
    }

    /// The input cells (x range, clamped to the image) under the window at output column `ox`, and the window
    /// offset of the first of them.
    @inline(__always)
    func columnSpan(_ ox: Int) -> (first: Int, end: Int, windowOffset: Int) {
        let start = ox * strideWidth - columns.padBefore
        let first = Swift.max(start, 0)
        let end = Swift.min(start + windowWidth, width)
        return (first, end, first - start)
    }

    /// Unrolls every window into one row: `cols[(n·OH + oy)·OW + ox, (ky·KW + kx)·C + c]`, zero where the window
    /// hangs over the padding. Convolution then becomes one matrix product with the `[Cout, KH·KW·C]` weight.
    func im2col(_ input: Tensor) -> Tensor {
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

/// Convolution of a channels-last batch `[N, H, W, Cin]` with `weight [Cout, KH, KW, Cin]` and `bias [Cout]`,
/// by im2col and one `sgemm`: the kernel shared by `Conv1D` and `Conv2D`.
func convolve(
    _ input: Tensor, weight: Tensor, bias: Tensor, strideHeight: Int, strideWidth: Int, padding: Padding
) -> Tensor {
    let window = SlidingWindow2D(
        inputShape: input.shape, windowHeight: weight.shape[1], windowWidth: weight.shape[2],
        strideHeight: strideHeight, strideWidth: strideWidth, padding: padding)
    let outputShape = [window.batch, window.rows.outputLength, window.columns.outputLength, weight.shape[0]]
    let rows = window.isIdentityUnroll ? input : window.im2col(input)
    return affineProduct(rows: rows, columnsWeight: weight, bias: bias, outputShape: outputShape)
}
