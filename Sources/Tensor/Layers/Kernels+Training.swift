import CKernels

extension Kernels {
    /// The weight and bias gradients of a 2-D convolution over a batch; see `odml_conv2d_weight_gradient_f32_args`
    /// in TrainKernels.h for every field. (The training kernels' door, beside Kernels.swift's for inference.)
    static func conv2DWeightGradient(_ arguments: odml_conv2d_weight_gradient_f32_args, level: Level) {
        withUnsafePointer(to: arguments) { odml_conv2d_weight_gradient_f32($0, Int32(level.rawValue)) }
    }
}

/// Keeps the memory a training step frees inside the process for the next step.
///
/// A training step allocates and frees a few megabytes of activations and gradients, several hundred kilobytes
/// each. With glibc's defaults, the free heap top beyond about 1 MB goes back to the kernel after each step and the
/// next step faults it in again page by page: about 110,000 page faults and a third of the CPU time of a `bench
/// train` run on one thread. `keepFreedMemory()` raises glibc's mmap and trim thresholds, process-wide, once, so up
/// to `trimThreshold` bytes of freed heap stay for reuse. Elsewhere than glibc it does nothing.
public enum TrainingMemory {
    /// Allocations below this many bytes come from the heap, not their own mapping (glibc's largest dynamic value).
    public static let mmapThreshold = 32 << 20
    /// Bytes of free heap top kept before any is handed back to the kernel.
    public static let trimThreshold = 64 << 20

    private static let applied: Bool = odml_keep_freed_memory(Int32(mmapThreshold), Int32(trimThreshold)) == 1

    /// Applies the thresholds on first call; returns whether the allocator took them.
    @discardableResult
    public static func keepFreedMemory() -> Bool { applied }
}
