import CKernels

extension Kernels {
    /// The weight and bias gradients of a 2-D convolution over a batch; see `odml_conv2d_weight_gradient_f32_args`
    /// in TrainKernels.h for every field. (The training kernels' door, beside Kernels.swift's for inference.)
    static func conv2DWeightGradient(_ arguments: odml_conv2d_weight_gradient_f32_args, level: Level) {
        withUnsafePointer(to: arguments) { odml_conv2d_weight_gradient_f32($0, Int32(level.rawValue)) }
    }
}
