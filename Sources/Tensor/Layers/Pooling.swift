/// What a pooling window computes.
public enum PoolingKind: String, Sendable, Codable, CaseIterable {
    /// The largest value in the window.
    case max
    /// The mean of the window's cells that lie inside the input (padding cells are not counted).
    case average
}

/// Pools a channels-last batch `[N, H, W, C]` over windows: the kernel shared by the 1-D and 2-D pooling layers.
///
/// Cells of the padding never take part: a max window ignores them and an average window divides by the number
/// of real cells it covers.
func pool(_ input: Tensor, kind: PoolingKind, window: SlidingWindow2D) -> Tensor {
    let (channels, outHeight, outWidth) = (window.channels, window.rows.outputLength, window.columns.outputLength)
    let outputShape = [window.batch, outHeight, outWidth, channels]
    return Tensor(uninitializedShape: outputShape) { out in
        guard let outBase = out.baseAddress else { return }
        input.withUnsafeBufferPointer { source in
            guard let sourceBase = source.baseAddress else { return }
            for n in 0..<window.batch {
                for oy in 0..<outHeight {
                    let rowStart = oy * window.strideHeight - window.rows.padBefore
                    let firstRow = Swift.max(rowStart, 0)
                    let endRow = Swift.min(rowStart + window.windowHeight, window.height)
                    for ox in 0..<outWidth {
                        let span = window.columnSpan(ox)
                        let destination = outBase + ((n * outHeight + oy) * outWidth + ox) * channels
                        destination.initialize(repeating: kind == .max ? -.infinity : 0, count: channels)
                        for iy in firstRow..<Swift.max(endRow, firstRow) {
                            for ix in span.first..<Swift.max(span.end, span.first) {
                                let cell = sourceBase + ((n * window.height + iy) * window.width + ix) * channels
                                switch kind {
                                case .max:
                                    for c in 0..<channels { destination[c] = Swift.max(destination[c], cell[c]) }
                                case .average:
                                    for c in 0..<channels { destination[c] += cell[c] }
                                }
                            }
                        }
                        if kind == .average {
                            let cells = Swift.max(endRow - firstRow, 0) * Swift.max(span.end - span.first, 0)
                            let scale = cells > 0 ? 1 / Float(cells) : 0
                            for c in 0..<channels { destination[c] *= scale }
                        }
                    }
                }
            }
        }
    }
}

/// 2-D max or average pooling over channels-last images.
///
/// - input: `[N, H, W, C]` → output: `[N, OH, OW, C]` (see `Padding` for OH, OW)
public struct Pool2D: Layer {
    /// Max or average.
    public var kind: PoolingKind
    /// Window size: (rows, columns).
    public var size: (height: Int, width: Int)
    /// Steps between windows: (rows, columns).
    public var stride: (height: Int, width: Int)
    /// Border handling.
    public var padding: Padding

    /// Creates a pooling layer; the stride defaults to the window size (non-overlapping windows).
    public init(
        _ kind: PoolingKind, size: (height: Int, width: Int), stride: (height: Int, width: Int)? = nil,
        padding: Padding = .valid
    ) {
        self.kind = kind
        self.size = size
        self.stride = stride ?? size
        self.padding = padding
    }

    private func window(for inputShape: [Int]) -> SlidingWindow2D {
        shapePrecondition(
            inputShape.count == 4, "Pool2D needs input [N, H, W, C], got \(describeShape(inputShape))")
        return SlidingWindow2D(
            inputShape: inputShape, windowHeight: size.height, windowWidth: size.width,
            strideHeight: stride.height, strideWidth: stride.width, padding: padding)
    }

    /// `[N, H, W, C]` → `[N, OH, OW, C]`.
    public func outputShape(for inputShape: [Int]) -> [Int] {
        let window = window(for: inputShape)
        return [inputShape[0], window.rows.outputLength, window.columns.outputLength, inputShape[3]]
    }

    /// Pools `input` `[N, H, W, C]`.
    public func forward(_ input: Tensor) -> Tensor {
        pool(input, kind: kind, window: window(for: input.shape))
    }
}

/// 1-D max or average pooling over channels-last sequences.
///
/// - input: `[N, L, C]` → output: `[N, OL, C]` (see `Padding` for OL)
public struct Pool1D: Layer {
    /// Max or average.
    public var kind: PoolingKind
    /// Window length.
    public var size: Int
    /// Step between windows.
    public var stride: Int
    /// Border handling.
    public var padding: Padding

    /// Creates a pooling layer; the stride defaults to the window size (non-overlapping windows).
    public init(_ kind: PoolingKind, size: Int, stride: Int? = nil, padding: Padding = .valid) {
        self.kind = kind
        self.size = size
        self.stride = stride ?? size
        self.padding = padding
    }

    /// `[N, L, C]` → `[N, OL, C]`.
    public func outputShape(for inputShape: [Int]) -> [Int] {
        shapePrecondition(inputShape.count == 3, "Pool1D needs input [N, L, C], got \(describeShape(inputShape))")
        let geometry = WindowGeometry(inputLength: inputShape[1], window: size, stride: stride, padding: padding)
        return [inputShape[0], geometry.outputLength, inputShape[2]]
    }

    /// Pools `input` `[N, L, C]`: the 2-D kernel over an image of height 1.
    public func forward(_ input: Tensor) -> Tensor {
        let outputShape = outputShape(for: input.shape)
        let image = input.reshaped([input.shape[0], 1, input.shape[1], input.shape[2]])
        let window = SlidingWindow2D(
            inputShape: image.shape, windowHeight: 1, windowWidth: size, strideHeight: 1, strideWidth: stride,
            padding: padding)
        return pool(image, kind: kind, window: window).reshaped(outputShape)
    }
}

/// The mean over every axis between the batch and the channels.
///
/// - input: `[N, …, C]` (rank ≥ 3: `[N, L, C]` or `[N, H, W, C]`) → output: `[N, C]`
public struct GlobalAveragePool: Layer {
    /// Creates the layer.
    public init() {}

    /// `[N, …, C]` → `[N, C]`.
    public func outputShape(for inputShape: [Int]) -> [Int] {
        shapePrecondition(
            inputShape.count >= 3, "GlobalAveragePool needs input [N, …, C] of rank ≥ 3, got \(describeShape(inputShape))")
        return [inputShape[0], inputShape[inputShape.count - 1]]
    }

    /// Averages `input` over its middle axes, in one pass.
    public func forward(_ input: Tensor) -> Tensor {
        let outputShape = outputShape(for: input.shape)
        let (batch, channels) = (outputShape[0], outputShape[1])
        let positions = elementCount(Array(input.shape.dropFirst().dropLast()))
        shapePrecondition(positions > 0, "GlobalAveragePool over no positions: input \(describeShape(input.shape))")
        let scale = 1 / Float(positions)
        return Tensor(uninitializedShape: outputShape) { out in
            guard let outBase = out.baseAddress else { return }
            outBase.initialize(repeating: 0, count: batch * channels)
            input.withUnsafeBufferPointer { source in
                guard var cell = source.baseAddress else { return }
                for n in 0..<batch {
                    let row = outBase + n &* channels
                    for _ in 0..<positions {
                        for c in 0..<channels { row[c] += cell[c] }
                        cell += channels
                    }
                    for c in 0..<channels { row[c] *= scale }
                }
            }
        }
    }
}
