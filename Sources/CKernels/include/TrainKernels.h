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

/// ReLU's backward pass: `dInput[i] = output[i] > 0 ? dOutput[i] : 0` for i < count (`output` is the ReLU's output, or
/// its input: both are positive at the same places).
void odml_relu_backward_f32(const float *dOutput, const float *output, float *dInput, ptrdiff_t count, int level);

/// Max pooling's backward pass over a batch of channels-last images whose windows tile them without overlap or padding
/// (stride = window): each window passes `dOutput` of each channel to the first cell (row by row) holding the
/// window's maximum — none when every cell is NaN — and every other input cell, in a window or not, gets 0.
/// `input` and `dInput` are `[images][height][width][channels]`, `dOutput` `[images][outHeight][outWidth][channels]`
/// with outHeight · windowHeight ≤ height and outWidth · windowWidth ≤ width.
typedef struct {
    const float *input;
    const float *dOutput;
    float *dInput;
    int images, height, width, channels;
    int windowHeight, windowWidth, outHeight, outWidth;
} odml_max_pool_backward_f32_args;

void odml_max_pool_backward_f32(const odml_max_pool_backward_f32_args *args, int level);

/// Asks glibc's allocator (mallopt) to serve allocations below `mmapThreshold` bytes from the heap and to keep up to
/// `trimThreshold` bytes of free heap top instead of handing it back to the kernel. Process-wide. Returns 1 when
/// both took effect, 0 otherwise (and elsewhere than glibc, where it does nothing).
int odml_keep_freed_memory(int mmapThreshold, int trimThreshold);

#endif
