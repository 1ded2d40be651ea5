import Tensor

/// A compiled model's plan called directly, with a workspace and an output buffer of its own, as one caller on
/// one thread keeps them: what "inference alone" times and what must not allocate.
final class PlanRunner {
    let compiled: CompiledModel
    /// The compiled model's plan, copied once: reading `compiled.plan` per call would copy (retain and release)
    /// its arrays inside every timed run.
    let plan: InferencePlan
    private let workspace: InferenceWorkspace
    private let output: UnsafeMutableBufferPointer<Float>

    init(_ compiled: CompiledModel) {
        self.compiled = compiled
        plan = compiled.plan
        workspace = compiled.plan.makeWorkspace()
        output = .allocate(capacity: compiled.plan.outputCount)
        output.initialize(repeating: 0)
    }

    deinit { output.deallocate() }

    /// One sample (`plan.inputCount` floats) through the plan into the runner's buffer; returns the first output.
    func run(_ input: UnsafeBufferPointer<Float>) -> Float {
        plan.run(input, into: output, workspace: workspace)
        return output[0]
    }

    /// One sample through the plan; returns every output.
    func outputs(_ input: UnsafeBufferPointer<Float>) -> [Float] {
        plan.run(input, into: output, workspace: workspace)
        return Array(output)
    }

    /// One sample through the plan; returns the first output.
    func run(_ input: Tensor) -> Float { input.withUnsafeBufferPointer { run($0) } }

    /// One sample through `CompiledModel.run` (a workspace borrowed from its pool and given back).
    func runPooled(_ input: Tensor) -> Float {
        input.withUnsafeBufferPointer { compiled.run($0, into: output) }
        return output[0]
    }

    /// A batch `[N] + plan.inputShape` through the plan sample by sample with the runner's workspace (the result
    /// tensor is allocated); returns its first value.
    func run(batch: Tensor) -> Float { plan.run(batch, workspace: workspace).scalars[0] }
}
