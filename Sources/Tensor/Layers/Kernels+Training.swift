import CKernels

extension Kernels {
    /// The weight and bias gradients of a 2-D convolution over a batch; see `odml_conv2d_weight_gradient_f32_args`
    /// in TrainKernels.h for every field. (The training kernels' door, beside Kernels.swift's for inference.)
    static func conv2DWeightGradient(_ arguments: odml_conv2d_weight_gradient_f32_args, level: Level) {
        withUnsafePointer(to: arguments) { odml_conv2d_weight_gradient_f32($0, Int32(level.rawValue)) }
    }
}

/// The backward passes of ReLU and of non-overlapping max pooling by the training kernels (`odml_relu_backward_f32`,
/// `odml_max_pool_backward_f32`), for the training module.
public enum ActivationGradients {
    /// `dY` where the ReLU's `output` (or its input) is positive, 0 elsewhere.
    public static func relu(_ dOutput: Tensor, output: Tensor, level: Kernels.Level = Kernels.level) -> Tensor {
        shapePrecondition(
            dOutput.shape == output.shape,
            "ReLU backward: gradient \(describeShape(dOutput.shape)) and output \(describeShape(output.shape)) differ")
        return Tensor(uninitializedShape: output.shape) { dX in
            dOutput.withUnsafeBufferPointer { dY in
                output.withUnsafeBufferPointer { y in
                    guard let dX = dX.baseAddress, let dY = dY.baseAddress, let y = y.baseAddress else { return }
                    odml_relu_backward_f32(dY, y, dX, dX.distance(to: dX + output.count), Int32(level.rawValue))
                }
            }
        }
    }

    /// Max pooling's input gradient `[N, H, W, C]` when its `window` tiles the input without overlap or padding
    /// (stride = window, windows inside the image); `nil` for any other window.
    public static func maxPool(
        input: Tensor, dOutput: Tensor, window: SlidingWindow2D, level: Kernels.Level = Kernels.level
    ) -> Tensor? {
        let (outHeight, outWidth) = (window.rows.outputLength, window.columns.outputLength)
        guard window.strideHeight == window.windowHeight, window.strideWidth == window.windowWidth,
            window.rows.padBefore == 0, window.columns.padBefore == 0, window.windowHeight * window.windowWidth <= 64,
            outHeight * window.windowHeight <= window.height, outWidth * window.windowWidth <= window.width
        else { return nil }
        shapePrecondition(
            input.shape == [window.batch, window.height, window.width, window.channels]
                && dOutput.shape == [window.batch, outHeight, outWidth, window.channels],
            "max pool backward: input \(describeShape(input.shape)) and gradient \(describeShape(dOutput.shape)) do not fit "
                + "a \(window.windowHeight)x\(window.windowWidth) window over \(describeShape([window.batch, window.height, window.width, window.channels]))"
        )
        return Tensor(uninitializedShape: input.shape) { dX in
            input.withUnsafeBufferPointer { x in
                dOutput.withUnsafeBufferPointer { dY in
                    guard let dX = dX.baseAddress, let x = x.baseAddress, let dY = dY.baseAddress else { return }
                    var arguments = odml_max_pool_backward_f32_args(
                        input: x, dOutput: dY, dInput: dX, images: Int32(window.batch), height: Int32(window.height),
                        width: Int32(window.width), channels: Int32(window.channels), windowHeight: Int32(window.windowHeight),
                        windowWidth: Int32(window.windowWidth), outHeight: Int32(outHeight), outWidth: Int32(outWidth))
                    withUnsafePointer(to: &arguments) { odml_max_pool_backward_f32($0, Int32(level.rawValue)) }
                }
            }
        }
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
