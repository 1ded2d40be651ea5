// Training kernels (see TrainKernels.h for the contracts).
#include "ODMLCommon.h"
#include "TrainKernels.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

int odml_keep_freed_memory(int mmapThreshold, int trimThreshold) {
#if defined(__GLIBC__)
    return mallopt(M_MMAP_THRESHOLD, mmapThreshold) == 1 && mallopt(M_TRIM_THRESHOLD, trimThreshold) == 1;
#else
    (void)mmapThreshold;
    (void)trimThreshold;
    return 0;
#endif
}

/// The most output-channel blocks of 8 one tile holds.
#define DW_MAX_BLOCKS 4
/// The most accumulators and reduction elements of one tile.
#define DW_MAX_ACCUMULATORS 24
#define DW_MAX_ELEMENTS 16

/// One tile of the weight gradient: `K` reduction elements (input offsets `offsets[0..<K]` within a window) by
/// `B` blocks of 8 output channels from `o0`, summed over every pixel of every image in `acc[i * B + j]`, then
/// written transposed into dWeight for the `valid` elements and the real channels.
ODML_INLINE void dw_tile(const odml_conv2d_weight_gradient_f32_args *a, const ptrdiff_t *offsets, int k0, int valid,
                         int o0, const int K, const int B) {
    odml_v8f acc[DW_MAX_ACCUMULATORS];
#pragma clang loop unroll(full)
    for (int i = 0; i < K * B; i++) acc[i] = (odml_v8f)0;
    const ptrdiff_t inDown = (ptrdiff_t)a->strideHeight * a->inRowStride, inRight = (ptrdiff_t)a->strideWidth * a->inPixelStride;
    for (int n = 0; n < a->images; n++) {
        for (int oy = 0; oy < a->outHeight; oy++) {
            const float *x = a->input + n * a->inImageStride + oy * inDown;
            const float *g = a->dOutput + n * a->dOutImageStride + oy * a->dOutRowStride + o0;
            for (int ox = 0; ox < a->outWidth; ox++) {
                odml_v8f gv[DW_MAX_BLOCKS];
#pragma clang loop unroll(full)
                for (int j = 0; j < B; j++) gv[j] = odml_load8f(g + 8 * j);
#pragma clang loop unroll(full)
                for (int i = 0; i < K; i++) {
                    const float xv = x[offsets[i]];
#pragma clang loop unroll(full)
                    for (int j = 0; j < B; j++) acc[i * B + j] += xv * gv[j];
                }
                x += inRight;
                g += a->dOutPixelStride;
            }
        }
    }
    const int patch = a->kernelHeight * a->kernelWidth * a->inChannels;
#pragma clang loop unroll(full)
    for (int j = 0; j < B; j++) {
        float lanes[DW_MAX_ELEMENTS][8];
#pragma clang loop unroll(full)
        for (int i = 0; i < K; i++) odml_store8f(lanes[i], acc[i * B + j]);
        for (int lane = 0; lane < 8 && o0 + 8 * j + lane < a->outChannels; lane++) {
            float *row = a->dWeight + (ptrdiff_t)(o0 + 8 * j + lane) * patch + k0;
            for (int i = 0; i < valid; i++) row[i] = lanes[i][lane];
        }
    }
}

/// Every reduction tile for output channels o0 ..< o0 + 8·B: `K` elements at a time (the last tile repeats offset 0
/// for the elements past the patch and drops their sums).
ODML_INLINE void dw_blocks(const odml_conv2d_weight_gradient_f32_args *a, int o0, const int K, const int B) {
    const int patch = a->kernelHeight * a->kernelWidth * a->inChannels;
    for (int k0 = 0; k0 < patch; k0 += K) {
        ptrdiff_t offsets[DW_MAX_ELEMENTS];
        const int valid = patch - k0 < K ? patch - k0 : K;
        for (int i = 0; i < K; i++) {
            const int k = k0 + (i < valid ? i : 0);
            const int c = k % a->inChannels, kx = (k / a->inChannels) % a->kernelWidth, ky = k / (a->inChannels * a->kernelWidth);
            offsets[i] = i < valid ? (ptrdiff_t)ky * a->inRowStride + (ptrdiff_t)kx * a->inPixelStride + c : 0;
        }
        dw_tile(a, offsets, k0, valid, o0, K, B);
    }
}

ODML_INLINE void conv2d_weight_gradient_f32_impl(const odml_conv2d_weight_gradient_f32_args *a) {
    // Up to 4 blocks of 8 output channels at once; fewer reduction elements the more blocks, so that the
    // accumulators (K · B of them) stay near 24 registers.
    int o0 = 0;
    for (; o0 + 32 <= a->outChannels; o0 += 32) dw_blocks(a, o0, 6, 4);
    const int left = (a->outChannels - o0 + 7) / 8;
    if (left == 3) dw_blocks(a, o0, 8, 3);
    else if (left == 2) dw_blocks(a, o0, 12, 2);
    else if (left == 1) dw_blocks(a, o0, 16, 1);
    if (!a->dBias) return;
    for (int o = 0; o < a->outChannels; o++) a->dBias[o] = 0;
    for (int n = 0; n < a->images; n++) {
        for (int oy = 0; oy < a->outHeight; oy++) {
            const float *g = a->dOutput + n * a->dOutImageStride + oy * a->dOutRowStride;
            for (int ox = 0; ox < a->outWidth; ox++, g += a->dOutPixelStride) {
                for (int o = 0; o < a->outChannels; o++) a->dBias[o] += g[o];
            }
        }
    }
}

ODML_DISPATCH(conv2d_weight_gradient_f32, conv2d_weight_gradient_f32_impl, const odml_conv2d_weight_gradient_f32_args *)

void odml_conv2d_weight_gradient_f32(const odml_conv2d_weight_gradient_f32_args *args, int level) {
    conv2d_weight_gradient_f32_dispatch(args, level);
}

typedef struct {
    const float *dOutput, *output;
    float *dInput;
    ptrdiff_t count;
} relu_backward_args;

ODML_INLINE void relu_backward_impl(const relu_backward_args *a) {
    ptrdiff_t i = 0;
    for (; i + 8 <= a->count; i += 8) {
        const odml_v8f y = odml_load8f(a->output + i), g = odml_load8f(a->dOutput + i);
        const odml_v8i positive = y > (odml_v8f)0;
        odml_store8f(a->dInput + i, (odml_v8f)(positive & (odml_v8i)g));
    }
    for (; i < a->count; i++) a->dInput[i] = a->output[i] > 0 ? a->dOutput[i] : 0;
}

ODML_DISPATCH(relu_backward, relu_backward_impl, const relu_backward_args *)

void odml_relu_backward_f32(const float *dOutput, const float *output, float *dInput, ptrdiff_t count, int level) {
    const relu_backward_args args = {dOutput, output, dInput, count};
    relu_backward_dispatch(&args, level);
}

/// The most cells of one pooling window the vector path tracks.
#define POOL_MAX_CELLS 64

ODML_INLINE void max_pool_backward_impl(const odml_max_pool_backward_f32_args *a) {
    const int C = a->channels, W = a->width, cells = a->windowHeight * a->windowWidth;
    const ptrdiff_t imageSize = (ptrdiff_t)a->height * W * C;
    for (ptrdiff_t i = 0; i < (ptrdiff_t)a->images * imageSize; i++) a->dInput[i] = 0;
    ptrdiff_t offsets[POOL_MAX_CELLS];
    if (cells > POOL_MAX_CELLS) __builtin_trap();
    for (int k = 0; k < cells; k++) offsets[k] = ((ptrdiff_t)(k / a->windowWidth) * W + k % a->windowWidth) * C;
    const float *g = a->dOutput;
    for (int n = 0; n < a->images; n++) {
        for (int py = 0; py < a->outHeight; py++) {
            for (int px = 0; px < a->outWidth; px++, g += C) {
                const ptrdiff_t corner = n * imageSize + ((ptrdiff_t)py * a->windowHeight * W + (ptrdiff_t)px * a->windowWidth) * C;
                const float *x = a->input + corner;
                float *dx = a->dInput + corner;
                int c = 0;
                for (; c + 8 <= C; c += 8) {
                    // Per lane: the largest value so far and the cell it is in (strictly larger replaces, so the first
                    // cell of a tie stays; −1 while every cell was NaN).
                    odml_v8f best = (odml_v8f)(-__builtin_inff());
                    odml_v8i where = (odml_v8i)(-1);
                    for (int k = 0; k < cells; k++) {
                        const odml_v8f v = odml_load8f(x + offsets[k] + c);
                        const odml_v8i larger = v > best;
                        best = (odml_v8f)((larger & (odml_v8i)v) | (~larger & (odml_v8i)best));
                        where = (larger & (odml_v8i)k) | (~larger & where);
                    }
                    const odml_v8f gv = odml_load8f(g + c);
                    for (int k = 0; k < cells; k++) {
                        odml_store8f(dx + offsets[k] + c, (odml_v8f)((where == (odml_v8i)k) & (odml_v8i)gv));
                    }
                }
                for (; c < C; c++) {
                    float best = -__builtin_inff();
                    int where = -1;
                    for (int k = 0; k < cells; k++) {
                        if (x[offsets[k] + c] > best) { best = x[offsets[k] + c]; where = k; }
                    }
                    if (where >= 0) dx[offsets[where] + c] = g[c];
                }
            }
        }
    }
}

ODML_DISPATCH(max_pool_backward, max_pool_backward_impl, const odml_max_pool_backward_f32_args *)

void odml_max_pool_backward_f32(const odml_max_pool_backward_f32_args *args, int level) {
    max_pool_backward_dispatch(args, level);
}
