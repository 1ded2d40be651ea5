// Float kernels: direct convolution, matrix-vector product, pooling (see CKernels.h for the contracts).
#include "Common.h"

ODML_INLINE odml_v8f odml_relu8(odml_v8f v, int relu) {
    return relu ? __builtin_elementwise_max(v, (odml_v8f)0) : v;
}

/// The fields of a convolution call, copied into locals so the compiler knows stores to the output cannot
/// change them.
typedef struct {
    const float *input, *weights, *bias;
    float *output;
    ptrdiff_t inRow, step, outRow, outPixel;
    int run, kernelHeight, strideHeight, strideWidth, inPixel, outChannels, padded, relu;
} conv_plan;

/// The convolution at `P` output pixels — pixel i reads the input from `x + offsets[i]` — for `B` blocks of 8
/// output channels from `cb`, into `acc[i * B + j]`: P·B independent accumulators (8 keep both FMA units busy
/// through the FMA latency).
///
/// With pixels `inPixel` floats apart, the input a window reads in one kernel row is one contiguous run of
/// kernelWidth · inChannels floats, in the order the weights are packed, so the reduction is a single loop.
ODML_INLINE void conv_tile(const conv_plan *p, const float *x, const ptrdiff_t *offsets, int cb, const int P, const int B,
                           odml_v8f *acc) {
#pragma clang loop unroll(full)
    for (int i = 0; i < P; i++) {
#pragma clang loop unroll(full)
        for (int j = 0; j < B; j++) acc[i * B + j] = odml_load8f(p->bias + cb + 8 * j);
    }
    const ptrdiff_t padded = p->padded;
    for (int ky = 0; ky < p->kernelHeight; ky++) {
        const float *row = x + (ptrdiff_t)ky * p->inRow;
        const float *w = p->weights + (ptrdiff_t)ky * p->run * padded + cb;
        for (int r = 0; r < p->run; r++) {
            odml_v8f wv[2];
#pragma clang loop unroll(full)
            for (int j = 0; j < B; j++) wv[j] = odml_load8f(w + (ptrdiff_t)r * padded + 8 * j);
#pragma clang loop unroll(full)
            for (int i = 0; i < P; i++) {
                const float xv = row[offsets[i] + r];
#pragma clang loop unroll(full)
                for (int j = 0; j < B; j++) acc[i * B + j] += xv * wv[j];
            }
        }
    }
}

/// Stores `B` blocks of one output pixel, ReLU applied when asked.
ODML_INLINE void conv_store(const conv_plan *p, float *o, int cb, const odml_v8f *blocks, const int B) {
#pragma clang loop unroll(full)
    for (int j = 0; j < B; j++) odml_store8f_partial(o + 8 * j, odml_relu8(blocks[j], p->relu), p->outChannels - cb - 8 * j);
}

/// Pixels ox ..< ox + P of row oy (P = 1 or 4): pairs of channel blocks, then a last single block (with 8
/// pixels when the row has them, for enough accumulators).
ODML_INLINE void conv_row_pixels(const conv_plan *p, int oy, int ox, int outWidth, const int P) {
    const float *x = p->input + (ptrdiff_t)oy * p->strideHeight * p->inRow + (ptrdiff_t)ox * p->step;
    const ptrdiff_t offsets[8] = {0, p->step, 2 * p->step, 3 * p->step, 4 * p->step, 5 * p->step, 6 * p->step, 7 * p->step};
    float *o = p->output + (ptrdiff_t)oy * p->outRow + (ptrdiff_t)ox * p->outPixel;
    odml_v8f acc[8];
    int cb = 0;
    for (; cb + 16 <= p->padded; cb += 16) {
        conv_tile(p, x, offsets, cb, P, 2, acc);
#pragma clang loop unroll(full)
        for (int i = 0; i < P; i++) conv_store(p, o + i * p->outPixel + cb, cb, acc + 2 * i, 2);
    }
    if (cb < p->padded) {
        conv_tile(p, x, offsets, cb, P, 1, acc);
#pragma clang loop unroll(full)
        for (int i = 0; i < P; i++) conv_store(p, o + i * p->outPixel + cb, cb, acc + i, 1);
    }
    (void)outWidth;
}

/// Pooled pixels px ..< px + Q (Q = 1 or 2) of pooled row py: the 2×2 convolution outputs under each, reduced
/// by max in registers.
ODML_INLINE void conv_pooled_pixels(const conv_plan *p, int py, int px, const int Q) {
    const ptrdiff_t down = (ptrdiff_t)p->strideHeight * p->inRow, right = p->step;
    const float *x = p->input + (ptrdiff_t)(2 * py) * down + (ptrdiff_t)(2 * px) * right;
    // Quad q's four pixels: (0,0), (0,1), (1,0), (1,1), then the next quad two columns on.
    const ptrdiff_t offsets[8] = {0, right, down, down + right, 2 * right, 3 * right, down + 2 * right, down + 3 * right};
    float *o = p->output + (ptrdiff_t)py * p->outRow + (ptrdiff_t)px * p->outPixel;
    odml_v8f acc[8];
    int cb = 0;
    for (; cb + 16 <= p->padded; cb += 16) {
#pragma clang loop unroll(full)
        for (int q = 0; q < Q; q++) {
            conv_tile(p, x + q * 2 * right, offsets, cb, 4, 2, acc);
            odml_v8f pooled[2];
#pragma clang loop unroll(full)
            for (int j = 0; j < 2; j++) {
                pooled[j] = __builtin_elementwise_max(__builtin_elementwise_max(acc[j], acc[2 + j]),
                                                      __builtin_elementwise_max(acc[4 + j], acc[6 + j]));
            }
            conv_store(p, o + q * p->outPixel + cb, cb, pooled, 2);
        }
    }
    if (cb < p->padded) {
        conv_tile(p, x, offsets, cb, 4 * Q, 1, acc);
#pragma clang loop unroll(full)
        for (int q = 0; q < Q; q++) {
            const odml_v8f pooled = __builtin_elementwise_max(__builtin_elementwise_max(acc[4 * q], acc[4 * q + 1]),
                                                              __builtin_elementwise_max(acc[4 * q + 2], acc[4 * q + 3]));
            conv_store(p, o + q * p->outPixel + cb, cb, &pooled, 1);
        }
    }
}

ODML_INLINE void conv2d_f32_impl(const odml_conv2d_f32_args *a) {
    const conv_plan p = {
        a->input, a->weights, a->bias, a->output,
        a->inRowStride, (ptrdiff_t)a->strideWidth * a->inPixelStride, a->outRowStride, a->outPixelStride,
        a->kernelWidth * a->inChannels, a->kernelHeight, a->strideHeight, a->strideWidth, (int)a->inPixelStride,
        a->outChannels, (a->outChannels + 7) & ~7, a->relu,
    };
    // The contiguous run needs pixels to be exactly inChannels floats apart.
    if (a->inPixelStride != a->inChannels) __builtin_trap();
    if (a->maxPool2x2) {
        const int pooledHeight = a->outHeight / 2, pooledWidth = a->outWidth / 2;
        for (int py = 0; py < pooledHeight; py++) {
            int px = 0;
            for (; px + 2 <= pooledWidth; px += 2) conv_pooled_pixels(&p, py, px, 2);
            for (; px < pooledWidth; px++) conv_pooled_pixels(&p, py, px, 1);
        }
        return;
    }
    const int outHeight = a->outHeight, outWidth = a->outWidth;
    for (int oy = 0; oy < outHeight; oy++) {
        int ox = 0;
        for (; ox + 4 <= outWidth; ox += 4) conv_row_pixels(&p, oy, ox, outWidth, 4);
        for (; ox < outWidth; ox++) conv_row_pixels(&p, oy, ox, outWidth, 1);
    }
}

ODML_DISPATCH(conv2d_f32, conv2d_f32_impl, const odml_conv2d_f32_args *)

void odml_conv2d_f32(const odml_conv2d_f32_args *args, int level) { conv2d_f32_dispatch(args, level); }

typedef struct {
    const float *input;
    int inFeatures;
    const float *weights, *bias;
    int outFeatures;
    float *output;
    int relu;
} dense_args;

ODML_INLINE void dense_f32_impl(const dense_args *a) {
    const int padded = (a->outFeatures + 7) & ~7, in = a->inFeatures;
    int nb = 0;
    // Four blocks (32 outputs) per pass over the input, even and odd inputs in separate sums: 8 chains of
    // FMAs in flight, so the pass is not bound by the FMA latency.
    for (; nb + 32 <= padded; nb += 32) {
        odml_v8f s[8];
        for (int j = 0; j < 4; j++) { s[j] = odml_load8f(a->bias + nb + 8 * j); s[4 + j] = (odml_v8f)0; }
        int k = 0;
        for (; k + 2 <= in; k += 2) {
            const float x0 = a->input[k], x1 = a->input[k + 1];
            const float *w0 = a->weights + (ptrdiff_t)k * padded + nb, *w1 = w0 + padded;
#pragma clang loop unroll(full)
            for (int j = 0; j < 4; j++) {
                s[j] += x0 * odml_load8f(w0 + 8 * j);
                s[4 + j] += x1 * odml_load8f(w1 + 8 * j);
            }
        }
        for (; k < in; k++) {
            const float x = a->input[k];
            const float *w = a->weights + (ptrdiff_t)k * padded + nb;
#pragma clang loop unroll(full)
            for (int j = 0; j < 4; j++) s[j] += x * odml_load8f(w + 8 * j);
        }
#pragma clang loop unroll(full)
        for (int j = 0; j < 4; j++) {
            odml_store8f_partial(a->output + nb + 8 * j, odml_relu8(s[j] + s[4 + j], a->relu), a->outFeatures - nb - 8 * j);
        }
    }
    // Single blocks: the inputs in four interleaved sums.
    for (; nb < padded; nb += 8) {
        odml_v8f s0 = odml_load8f(a->bias + nb), s1 = 0, s2 = 0, s3 = 0;
        int k = 0;
        for (; k + 4 <= in; k += 4) {
            const float *w = a->weights + (ptrdiff_t)k * padded + nb;
            s0 += a->input[k] * odml_load8f(w);
            s1 += a->input[k + 1] * odml_load8f(w + padded);
            s2 += a->input[k + 2] * odml_load8f(w + 2 * padded);
            s3 += a->input[k + 3] * odml_load8f(w + 3 * padded);
        }
        for (; k < in; k++) s0 += a->input[k] * odml_load8f(a->weights + (ptrdiff_t)k * padded + nb);
        odml_store8f_partial(a->output + nb, odml_relu8((s0 + s1) + (s2 + s3), a->relu), a->outFeatures - nb);
    }
}

ODML_DISPATCH(dense_f32, dense_f32_impl, const dense_args *)

void odml_dense_f32(const float *input, int inFeatures, const float *weights, const float *bias, int outFeatures,
                    float *output, int relu, int level) {
    const dense_args args = {input, inFeatures, weights, bias, outFeatures, output, relu};
    dense_f32_dispatch(&args, level);
}

ODML_INLINE void pool2d_f32_impl(const odml_pool2d_f32_args *a) {
    const int channels = a->channels, windowHeight = a->windowHeight, windowWidth = a->windowWidth;
    const int outHeight = a->outHeight, outWidth = a->outWidth, isMax = a->kind == 0;
    const ptrdiff_t inRow = a->inRowStride, inPixel = a->inPixelStride, outRow = a->outRowStride, outPixel = a->outPixelStride;
    const ptrdiff_t rowStep = (ptrdiff_t)a->strideHeight * inRow, columnStep = (ptrdiff_t)a->strideWidth * inPixel;
    const float *input = a->input;
    float *output = a->output;
    const float scale = 1.0f / (float)(windowHeight * windowWidth);
    for (int oy = 0; oy < outHeight; oy++) {
        for (int ox = 0; ox < outWidth; ox++) {
            float *o = output + (ptrdiff_t)oy * outRow + (ptrdiff_t)ox * outPixel;
            const float *corner = input + (ptrdiff_t)oy * rowStep + (ptrdiff_t)ox * columnStep;
            for (int c = 0; c < channels; c += 8) {
                const int lanes = channels - c;
                odml_v8f acc;
                if (lanes >= 8) {
                    acc = odml_load8f(corner + c);
                } else {
                    float first[8] = {0};
                    for (int i = 0; i < lanes; i++) first[i] = corner[c + i];
                    acc = odml_load8f(first);
                }
                for (int ky = 0; ky < windowHeight; ky++) {
                    for (int kx = 0; kx < windowWidth; kx++) {
                        if (ky == 0 && kx == 0) continue;
                        const float *x = corner + (ptrdiff_t)ky * inRow + (ptrdiff_t)kx * inPixel + c;
                        odml_v8f v;
                        if (lanes >= 8) {
                            v = odml_load8f(x);
                        } else {
                            float cell[8] = {0};
                            for (int i = 0; i < lanes; i++) cell[i] = x[i];
                            v = odml_load8f(cell);
                        }
                        acc = isMax ? __builtin_elementwise_max(acc, v) : acc + v;
                    }
                }
                odml_store8f_partial(o + c, isMax ? acc : acc * scale, lanes);
            }
        }
    }
}

ODML_DISPATCH(pool2d_f32, pool2d_f32_impl, const odml_pool2d_f32_args *)

void odml_pool2d_f32(const odml_pool2d_f32_args *args, int level) { pool2d_f32_dispatch(args, level); }
