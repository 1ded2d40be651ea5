// Training kernels: the parts of a backward pass that the inference kernels (CKernels.h) do not already cover.
// Compiled per instruction-set level like the others; only the Tensor module calls them, through
// Sources/Tensor/Layers/Kernels+Training.swift. Each has a naive twin in Tests/TensorTests.
#ifndef ODML_TRAIN_KERNELS_H
#define ODML_TRAIN_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/// The weight and bias gradients of a 2-D convolution over a batch of channels-last images:
///
///     dWeight[o][ky][kx][c] = Σ_(n, oy, ox) dOutput(n, oy, ox, o) · input(n, oy·strideHeight + ky, ox·strideWidth + kx, c)
///     dBias[o]              = Σ_(n, oy, ox) dOutput(n, oy, ox, o)
///
/// `input` is the (already padded) input of image 0: cell (y, x) channel c of image n is
/// `input[n * inImageStride + y * inRowStride + x * inPixelStride + c]`, and every cell a window touches exists.
/// `dOutput(n, oy, ox, o)` is `dOutput[n * dOutImageStride + oy * dOutRowStride + ox * dOutPixelStride + o]`; each
/// pixel's channels are read in blocks of 8, so the floats up to outChannels rounded up to 8 must be readable (the
/// extra lanes are read, never used). `dWeight` (outChannels · kernelHeight · kernelWidth · inChannels floats) and
/// `dBias` (outChannels, or NULL) are overwritten. Each sum runs in float, pixel by pixel in (n, oy, ox) order.
typedef struct {
    const float *input;
    ptrdiff_t inImageStride, inRowStride, inPixelStride;
    int inChannels, kernelHeight, kernelWidth, strideHeight, strideWidth;
    const float *dOutput;
    ptrdiff_t dOutImageStride, dOutRowStride, dOutPixelStride;
    int images, outHeight, outWidth, outChannels;
    float *dWeight;
    float *dBias;
} odml_conv2d_weight_gradient_f32_args;

void odml_conv2d_weight_gradient_f32(const odml_conv2d_weight_gradient_f32_args *args, int level);

/// Asks glibc's allocator (mallopt) to serve allocations below `mmapThreshold` bytes from the heap and to keep up to
/// `trimThreshold` bytes of free heap top instead of handing it back to the kernel. Process-wide. Returns 1 when
/// both took effect, 0 otherwise (and elsewhere than glibc, where it does nothing).
int odml_keep_freed_memory(int mmapThreshold, int trimThreshold);

#endif
