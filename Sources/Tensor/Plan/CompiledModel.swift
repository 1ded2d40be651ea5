/// A plan together with workspaces for any number of concurrent callers: what a classifier keeps after loading.
///
/// Each call borrows a workspace and gives it back, so after the first call on each thread nothing is allocated
/// (up to `spareLimit` workspaces are kept for reuse).
public final class CompiledModel: Sendable {
    /// The compiled steps.
    public let plan: InferencePlan
    /// Workspaces waiting for the next call.
    private let spare = ReusePool<InferenceWorkspace>(limit: spareLimit)
    /// Workspaces kept at most; more concurrent callers than this allocate their own.
    public static let spareLimit = 64

    /// Compiles `model` for samples of `inputShape` at the CPU's best kernel level (see `InferencePlan.init` for
    /// `quantization`).
    public init(
        _ model: Sequential, inputShape: [Int], quantization: [ActivationQuantization] = [], level: Kernels.Level = Kernels.level
    ) {
        plan = InferencePlan(model, inputShape: inputShape, quantization: quantization, level: level)
    }

    /// Runs `body` with a workspace of its own.
    @inline(__always)
    private func withWorkspace<R>(_ body: (InferenceWorkspace) -> R) -> R {
        spare.with(make: plan.makeWorkspace(), body)
    }

    /// Runs one sample: `input` holds `plan.inputCount` floats, `output` receives `plan.outputCount`.
    public func run(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>) {
        withWorkspace { plan.run(input, into: output, workspace: $0) }
    }

    /// Runs `rows` samples: `input` holds `rows · plan.inputCount` floats, `output` receives `rows ·
    /// plan.outputCount` (see `InferencePlan.run(rows:_:into:workspace:)`).
    public func run(rows: Int, _ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>) {
        withWorkspace { plan.run(rows: rows, input, into: output, workspace: $0) }
    }

    /// Runs a batch `[N] + plan.inputShape`; returns `[N] + plan.outputShape`.
    public func callAsFunction(_ batch: Tensor) -> Tensor {
        withWorkspace { plan.run(batch, workspace: $0) }
    }
}
