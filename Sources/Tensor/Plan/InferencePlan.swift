/// A model compiled for inference on one sample at a time: layer kernels chosen for the actual shapes, weights
/// packed for them, and every intermediate result given a fixed place in one workspace, so that running a
/// sample allocates nothing on the heap.
///
/// Compiling maps each layer to a step:
/// - `Conv2D` and `Conv1D` → a direct convolution kernel (vectorized over output channels, four output pixels
///   at a time), with the following ReLU fused into it; "same" padding becomes a zero border around the input's
///   place in the workspace, written once when the workspace is made and never touched again;
/// - `Dense` → a matrix-vector kernel, ReLU fused;
/// - `Pool2D` / `Pool1D` without padding, `GlobalAveragePool`, `Flatten` and activations → small loops;
/// - `QuantizedConv2D`, `QuantizedConv1D`, `QuantizedDense` → 8-bit integer steps when their input has a scale
///   (see `init`), else their float layers, dequantized once;
/// - anything else (batch normalization, padded pooling) → the layer's own `forward`,
///   which allocates (`isAllocationFree` tells).
///
/// `Sequential.forward` is the reference: a plan's outputs equal it up to float rounding (tests check every
/// step kind at every instruction-set level this CPU runs).
public struct InferencePlan: Sendable {
    /// One sample's input shape (no batch axis): `[H, W, C]`, `[L, C]` or `[features]`.
    public let inputShape: [Int]
    /// One sample's output shape.
    public let outputShape: [Int]
    /// The instruction-set level the kernels run at.
    public let level: Kernels.Level
    /// Floats one workspace holds.
    public let workspaceCount: Int
    let activations: [ActivationLayout]
    let steps: [Step]
    /// For a plan whose steps all work on one vector per sample: where a block of rows lives (see
    /// InferencePlan+Rows.swift); `nil` for others.
    let rowBlocks: RowBlockLayout?

    /// Compiles `model` for samples of `inputShape` (no batch axis), running kernels at `level`.
    ///
    /// A `QuantizedConv2D`, `QuantizedConv1D` or `QuantizedDense` layer with `int8` weights whose input has an
    /// entry in `quantization` (by layer index) runs in 8-bit integers; other quantized layers run dequantized
    /// in float. Stops with the first layer's shape message when
    /// `inputShape` does not fit the model.
    public init(
        _ model: Sequential, inputShape: [Int], quantization: [ActivationQuantization] = [], level: Kernels.Level = Kernels.level
    ) {
        precondition(
            Kernels.availableLevels.contains(level),
            "InferencePlan: kernel level \(level) is not one this CPU runs (\(Kernels.availableLevels.map(\.description)))")
        _ = model.outputShape(for: [1] + inputShape)  // the layers' own shape checks, with their messages
        var compiler = PlanCompiler(inputShape: inputShape)
        let scales = Dictionary(quantization.map { ($0.layer, $0) }, uniquingKeysWith: { first, _ in first })
        for (index, layer) in model.layers.enumerated() { compiler.append(layer, quantization: scales[index]) }
        let (activations, total) = compiler.placedActivations()
        self.inputShape = inputShape
        outputShape = Array(model.outputShape(for: [1] + inputShape).dropFirst())
        self.level = level
        self.activations = activations
        steps = compiler.steps
        workspaceCount = total
        rowBlocks = RowBlockLayout(steps: compiler.steps, activations: activations)
    }

    /// Elements of one sample's input.
    public var inputCount: Int { elementCount(inputShape) }
    /// Elements of one sample's output.
    public var outputCount: Int { elementCount(outputShape) }

    /// Whether every step runs without heap allocation (no layer fell back to its own `forward`).
    public var isAllocationFree: Bool { steps.allSatisfy { !$0.isFallback } }

    /// How many steps run in 8-bit integers.
    public var integerSteps: Int { steps.filter(\.isInteger).count }
    /// How many of the 8-bit steps have weights within −63…63 (every one, for weights `int8` writes since issue 49).
    var narrowIntegerSteps: Int { steps.filter(\.isNarrowInteger).count }

    /// One line per step: what runs, e.g. `conv 3x3 12→24 + relu (direct)`.
    public var stepDescriptions: [String] { steps.map(\.description) }

    /// A workspace for this plan (zeroed; its borders stay zero).
    public func makeWorkspace() -> InferenceWorkspace {
        let workspace = InferenceWorkspace(count: workspaceCount)
        // 8-bit images are bordered by their zero point (the byte that stands for 0.0).
        for layout in activations where layout.isBytes && layout.fill != 0 {
            layout.bytes(workspace.storage).update(repeating: layout.fill, count: layout.storedCount)
        }
        return workspace
    }

    /// Runs one sample: `input` holds `inputCount` floats, `output` receives `outputCount`.
    public func run(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>, workspace: InferenceWorkspace) {
        shapePrecondition(
            input.count == inputCount && output.count == outputCount && workspace.count == workspaceCount,
            "InferencePlan.run: input \(input.count), output \(output.count), workspace \(workspace.count) floats; the plan for "
                + "\(describeShape(inputShape)) → \(describeShape(outputShape)) needs \(inputCount), \(outputCount), \(workspaceCount)")
        let base = workspace.storage
        activations[0].store(input, base: base)
        // Through the buffer, so that each step is borrowed in place: indexing the array hands `run` a copy of the
        // step, whose arrays are retained and released every run (a third of a small plan's time).
        steps.withUnsafeBufferPointer { steps in
            for index in steps.indices { steps[index].run(base: base, activations: activations, level: level) }
        }
        activations[activations.count - 1].load(into: output, base: base)
    }

    /// Runs `rows` samples: `input` holds `rows · inputCount` floats, `output` receives `rows · outputCount`, one
    /// workspace for all. The one way a batch runs (`run(_:workspace:)` and `CompiledModel.run(rows:_:into:)` call it):
    /// a plan of dense layers a block of rows at a time (each 8-bit layer one matrix product over the block; every
    /// row's values the same bits as sample by sample); others sample by sample.
    public func run(
        rows: Int, _ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>, workspace: InferenceWorkspace
    ) {
        shapePrecondition(
            rows >= 0 && input.count == rows * inputCount && output.count == rows * outputCount && workspace.count == workspaceCount,
            "InferencePlan.run(rows:): \(rows) rows of \(describeShape(inputShape)) → \(describeShape(outputShape)) need \(rows * inputCount) "
                + "and \(rows * outputCount) floats and a workspace of \(workspaceCount), got \(input.count), \(output.count) and "
                + "\(workspace.count)")
        if let rowBlocks {
            runBlocks(rowBlocks, rows: rows, input, into: output, workspace: workspace)
            return
        }
        let (inputCount, outputCount) = (self.inputCount, self.outputCount)
        for n in 0..<rows {
            run(
                UnsafeBufferPointer(rebasing: input[(n * inputCount)..<((n + 1) * inputCount)]),
                into: UnsafeMutableBufferPointer(rebasing: output[(n * outputCount)..<((n + 1) * outputCount)]),
                workspace: workspace)
        }
    }

    /// Runs a batch `[N] + inputShape` with one workspace (`run(rows:_:into:workspace:)`); returns `[N] + outputShape`.
    public func run(_ batch: Tensor, workspace: InferenceWorkspace? = nil) -> Tensor {
        shapePrecondition(
            batch.rank == inputShape.count + 1 && Array(batch.shape.dropFirst()) == inputShape,
            "InferencePlan for samples \(describeShape(inputShape)) got a batch \(describeShape(batch.shape))")
        let samples = batch.shape[0]
        let workspace = workspace ?? makeWorkspace()
        return Tensor(uninitializedShape: [samples] + outputShape) { out in
            batch.withUnsafeBufferPointer { source in run(rows: samples, source, into: out, workspace: workspace) }
        }
    }
}

/// The memory one plan runs in: a zeroed block of floats holding every intermediate result of one sample.
///
/// A workspace is used by one thread at a time (`InferencePlan.run` writes into it); `WorkspacePool` hands them
/// out to concurrent callers.
public final class InferenceWorkspace: @unchecked Sendable {
    /// Floats in the block.
    public let count: Int
    let storage: UnsafeMutablePointer<Float>

    /// A row-wise plan's block of rows (floats and bytes, with how many of each), made on the first batch.
    private var block: (floats: UnsafeMutablePointer<Float>, bytes: UnsafeMutablePointer<UInt8>, floatCount: Int, byteCount: Int)?

    init(count: Int) {
        self.count = count
        storage = UnsafeMutablePointer<Float>.allocate(capacity: Swift.max(count, 1))
        storage.initialize(repeating: 0, count: Swift.max(count, 1))
    }

    /// The block storage of a row-wise plan: at least `floats` floats and `bytes` bytes, made larger when a plan of
    /// wider layers (with a workspace of the same size) asks for more than the one before.
    func blockStorage(floats: Int, bytes: Int) -> (floats: UnsafeMutablePointer<Float>, bytes: UnsafeMutablePointer<UInt8>) {
        if let block, block.floatCount >= floats, block.byteCount >= bytes { return (block.floats, block.bytes) }
        let (floatCount, byteCount) = (Swift.max(floats, block?.floatCount ?? 1, 1), Swift.max(bytes, block?.byteCount ?? 1, 1))
        block?.floats.deallocate()
        block?.bytes.deallocate()
        let made = (
            floats: UnsafeMutablePointer<Float>.allocate(capacity: floatCount),
            bytes: UnsafeMutablePointer<UInt8>.allocate(capacity: byteCount), floatCount: floatCount, byteCount: byteCount
        )
        made.floats.initialize(repeating: 0, count: floatCount)
        made.bytes.initialize(repeating: 0, count: byteCount)
        block = made
        return (made.floats, made.bytes)
    }

    deinit {
        storage.deallocate()
        block?.floats.deallocate()
        block?.bytes.deallocate()
    }
}

/// Where one intermediate result lives in the workspace: `height × width × channels`, channels-last, inside a
/// zero border of `padTop`… cells (what the consuming convolution's "same" padding reads).
struct ActivationLayout: Sendable {
    var height: Int, width: Int, channels: Int
    var padTop = 0, padBottom = 0, padLeft = 0, padRight = 0
    /// Where it starts in the workspace, in floats.
    var offset = 0
    /// Whether it holds bytes (an 8-bit image; strides and counts are then in bytes) rather than floats.
    var isBytes = false
    /// The byte its border holds (an 8-bit image's zero point).
    var fill: UInt8 = 0

    /// Floats between vertically neighbouring cells.
    var rowStride: Int { (padLeft + width + padRight) * channels }
    /// Floats the result takes with its border.
    var storedCount: Int { (padTop + height + padBottom) * rowStride }
    /// Where cell (0, 0) is.
    var interior: Int { offset + padTop * rowStride + padLeft * channels }
    /// Where the padded top-left corner is.
    var corner: Int { offset }
    var count: Int { height * width * channels }
    /// Floats the result takes in the workspace with its border.
    var storedFloats: Int { isBytes ? (storedCount + 3) / 4 : storedCount }

    /// The start (padded corner) of an 8-bit image in the workspace at `base`.
    func bytes(_ base: UnsafeMutablePointer<Float>) -> UnsafeMutablePointer<UInt8> {
        UnsafeMutableRawPointer(base + offset).bindMemory(to: UInt8.self, capacity: storedCount)
    }

    /// Cell (0, 0) of an 8-bit image in the workspace at `base`.
    func interiorBytes(_ base: UnsafeMutablePointer<Float>) -> UnsafeMutablePointer<UInt8> {
        bytes(base) + padTop * rowStride + padLeft * channels
    }

    /// Copies a dense `count` floats into the interior.
    func store(_ values: UnsafeBufferPointer<Float>, base: UnsafeMutablePointer<Float>) {
        guard let source = values.baseAddress else { return }
        let row = width * channels
        for y in 0..<height { (base + interior + y * rowStride).update(from: source + y * row, count: row) }
    }

    /// Copies the interior out as a dense `count` floats.
    func load(into values: UnsafeMutableBufferPointer<Float>, base: UnsafeMutablePointer<Float>) {
        guard let destination = values.baseAddress else { return }
        let row = width * channels
        for y in 0..<height { (destination + y * row).update(from: base + interior + y * rowStride, count: row) }
    }

    /// Calls `body` with each interior row (`width · channels` floats).
    @inline(__always)
    func forEachRow(base: UnsafeMutablePointer<Float>, _ body: (UnsafeMutablePointer<Float>) -> Void) {
        for y in 0..<height { body(base + interior + y * rowStride) }
    }
}
