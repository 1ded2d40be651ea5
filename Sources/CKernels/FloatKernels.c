// Float kernels: direct convolution, matrix-vector product, pooling (see CKernels.h for the contracts).
#include "ODMLCommon.h"

ODML_INLINE odml_v8f odml_relu8(odml_v8f v, int relu) {
    return relu ? __builtin_elementwise_max(v, (odml_v8f)0) : v;
}

/// `mask ? a : b` per lane (`mask` lanes all ones or all zeros, as vector comparisons give).
ODML_INLINE odml_v8f odml_select8f(odml_v8i mask, odml_v8f a, odml_v8f b) {
    return (odml_v8f)((mask & (odml_v8i)a) | (~mask & (odml_v8i)b));
}

/// The fields of a convolution call, copied into locals so the compiler knows stores to the output cannot
/// change them.
typedef struct {
    const float *input, *weights, *bias;
    float *output;
    uint8_t *output8;
    ptrdiff_t inRow, step, outRow, outPixel;
    int run, kernelHeight, strideHeight, strideWidth, inPixel, outChannels, padded, relu;
    float outInverseScale, outZeroPoint;
    int outBlockChannels;
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

/// `y` as bytes, as `odml_quantize_u8` quantizes channels c … c+7 of an image of `p->outChannels` channels:
/// `round(y · inverseScale) + zeroPoint` clamped to 0…255 after clamping the product to ±512 (a NaN to −512),
/// with its rounding — halves away from zero in its blocks of eight channels (c < outBlockChannels), +½ or −½
/// then truncation in the channels after them — so the bytes are the ones it writes.
ODML_INLINE void conv_requantize8(const conv_plan *p, odml_v8f y, int c, uint8_t *o, int count) {
    odml_v8f scaled = y * p->outInverseScale;
    scaled = __builtin_elementwise_min(__builtin_elementwise_max(scaled, (odml_v8f)-512.0f), (odml_v8f)512.0f);
    const odml_v8f blockRounded = __builtin_elementwise_round(scaled);
    const odml_v8f half = odml_select8f(scaled < (odml_v8f)0, (odml_v8f)-0.5f, (odml_v8f)0.5f);
    const odml_v8f tailRounded = __builtin_convertvector(__builtin_convertvector(scaled + half, odml_v8i), odml_v8f);
    const odml_v8i lane = {0, 1, 2, 3, 4, 5, 6, 7};
    odml_v8f q = odml_select8f(lane + c < p->outBlockChannels, blockRounded, tailRounded) + p->outZeroPoint;
    q = __builtin_elementwise_min(__builtin_elementwise_max(q, (odml_v8f)0), (odml_v8f)255);
    uint8_t bytes[8];
#pragma clang loop unroll(full)
    for (int i = 0; i < 8; i++) bytes[i] = (uint8_t)q[i];
    if (count >= 8) { __builtin_memcpy(o, bytes, 8); return; }
#pragma clang loop vectorize(disable) unroll(disable)
    for (int i = 0; i < count; i++) o[i] = bytes[i];
}

/// Stores `B` blocks of one output pixel at element `at` (channel `cb` of it), ReLU applied when asked: floats,
/// or bytes requantized when `output8` is set.
ODML_INLINE void conv_store(const conv_plan *p, ptrdiff_t at, int cb, const odml_v8f *blocks, const int B) {
#pragma clang loop unroll(full)
    for (int j = 0; j < B; j++) {
        const odml_v8f y = odml_relu8(blocks[j], p->relu);
        const int count = p->outChannels - cb - 8 * j;
        if (p->output8) {
            if (count > 0) conv_requantize8(p, y, cb + 8 * j, p->output8 + at + 8 * j, count);
        } else {
            odml_store8f_partial(p->output + at + 8 * j, y, count);
        }
    }
}

/// Pixels ox ..< ox + P of row oy (P = 1 or 4): pairs of channel blocks, then a last single block (with 8
/// pixels when the row has them, for enough accumulators).
ODML_INLINE void conv_row_pixels(const conv_plan *p, int oy, int ox, int outWidth, const int P) {
    const float *x = p->input + (ptrdiff_t)oy * p->strideHeight * p->inRow + (ptrdiff_t)ox * p->step;
    const ptrdiff_t offsets[8] = {0, p->step, 2 * p->step, 3 * p->step, 4 * p->step, 5 * p->step, 6 * p->step, 7 * p->step};
    const ptrdiff_t o = (ptrdiff_t)oy * p->outRow + (ptrdiff_t)ox * p->outPixel;
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
    const ptrdiff_t o = (ptrdiff_t)py * p->outRow + (ptrdiff_t)px * p->outPixel;
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

typedef float odml_v16f __attribute__((ext_vector_type(16)));

/// The 8×8 transpose of `rows` (row r, lane c → row c, lane r).
ODML_INLINE void odml_transpose8x8(odml_v8f rows[8]) {
    odml_v8f t[8], u[8];
#pragma clang loop unroll(full)
    for (int i = 0; i < 8; i += 2) {
        t[i] = __builtin_shufflevector(rows[i], rows[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
        t[i + 1] = __builtin_shufflevector(rows[i], rows[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
    }
#pragma clang loop unroll(full)
    for (int i = 0; i < 8; i += 4) {
        u[i] = __builtin_shufflevector(t[i], t[i + 2], 0, 1, 8, 9, 4, 5, 12, 13);
        u[i + 1] = __builtin_shufflevector(t[i], t[i + 2], 2, 3, 10, 11, 6, 7, 14, 15);
        u[i + 2] = __builtin_shufflevector(t[i + 1], t[i + 3], 0, 1, 8, 9, 4, 5, 12, 13);
        u[i + 3] = __builtin_shufflevector(t[i + 1], t[i + 3], 2, 3, 10, 11, 6, 7, 14, 15);
    }
#pragma clang loop unroll(full)
    for (int i = 0; i < 4; i++) {
        rows[i] = __builtin_shufflevector(u[i], u[i + 4], 0, 1, 2, 3, 8, 9, 10, 11);
        rows[i + 4] = __builtin_shufflevector(u[i], u[i + 4], 4, 5, 6, 7, 12, 13, 14, 15);
    }
}

/// One output row `oy`, columns x0 … x0+15, channels cb … cb+7 of a one-channel, stride-1 convolution, one vector
/// of 16 pixels per channel: `acc[c] = bias + Σ_(ky, kx) input · weight` in the order `conv_tile` sums them (the
/// bias, then kernel row by kernel row, column by column), so each value is the one the generic path computes.
///
/// `CH` (8, or 4 for a last block of at most 4 real channels) is how many channels it computes; the others are 0.
ODML_INLINE void conv_single_channel_row(const conv_plan *p, int kernelWidth, int oy, int x0, int cb, odml_v16f acc[8],
                                         const int CH) {
#pragma clang loop unroll(full)
    for (int c = 0; c < 8; c++) acc[c] = c < CH ? p->bias[cb + c] : 0;
    for (int ky = 0; ky < p->kernelHeight; ky++) {
        const float *row = p->input + (ptrdiff_t)(oy + ky) * p->inRow + x0;
        const float *w = p->weights + (ptrdiff_t)ky * kernelWidth * p->padded + cb;
        for (int kx = 0; kx < kernelWidth; kx++) {
            odml_v16f x;
            __builtin_memcpy(&x, row + kx, sizeof x);
#pragma clang loop unroll(full)
            for (int c = 0; c < CH; c++) acc[c] += x * w[(ptrdiff_t)kx * p->padded + c];
        }
    }
}

/// A one-channel, stride-1 convolution over columns 0 ..< 16·⌊outWidth/16⌋ (pooled: the pooled columns over
/// them), sixteen pixels a vector instead of one pixel's channels: a single input channel gives the channel
/// vectors of `conv_tile` only one product per kernel tap. Returns the first output column (pooled: pooled
/// column) left for the generic path.
ODML_INLINE int conv_single_channel(const conv_plan *p, const odml_conv2d_f32_args *a) {
    const int chunks = a->outWidth / 16, kernelWidth = a->kernelWidth;
    if (a->maxPool2x2) {
        const int pooledHeight = a->outHeight / 2;
        for (int py = 0; py < pooledHeight; py++) {
            for (int chunk = 0; chunk < chunks; chunk++) {
                for (int cb = 0; cb < p->padded; cb += 8) {
                    odml_v16f top[8], bottom[8];
                    if (p->outChannels - cb > 4) {
                        conv_single_channel_row(p, kernelWidth, 2 * py, 16 * chunk, cb, top, 8);
                        conv_single_channel_row(p, kernelWidth, 2 * py + 1, 16 * chunk, cb, bottom, 8);
                    } else {
                        conv_single_channel_row(p, kernelWidth, 2 * py, 16 * chunk, cb, top, 4);
                        conv_single_channel_row(p, kernelWidth, 2 * py + 1, 16 * chunk, cb, bottom, 4);
                    }
                    // Channel c's 8 pooled pixels, then pixel-major for the store: max over each 2×2 quad.
                    odml_v8f pooled[8];
#pragma clang loop unroll(full)
                    for (int c = 0; c < 8; c++) {
                        const odml_v16f v = __builtin_elementwise_max(top[c], bottom[c]);
                        pooled[c] = __builtin_elementwise_max(__builtin_shufflevector(v, v, 0, 2, 4, 6, 8, 10, 12, 14),
                                                              __builtin_shufflevector(v, v, 1, 3, 5, 7, 9, 11, 13, 15));
                    }
                    odml_transpose8x8(pooled);
                    const ptrdiff_t o = (ptrdiff_t)py * p->outRow + (ptrdiff_t)(8 * chunk) * p->outPixel + cb;
#pragma clang loop unroll(full)
                    for (int i = 0; i < 8; i++) conv_store(p, o + i * p->outPixel, cb, &pooled[i], 1);
                }
            }
        }
        return 8 * chunks;
    }
    for (int oy = 0; oy < a->outHeight; oy++) {
        for (int chunk = 0; chunk < chunks; chunk++) {
            for (int cb = 0; cb < p->padded; cb += 8) {
                odml_v16f acc[8];
                if (p->outChannels - cb > 4) conv_single_channel_row(p, kernelWidth, oy, 16 * chunk, cb, acc, 8);
                else conv_single_channel_row(p, kernelWidth, oy, 16 * chunk, cb, acc, 4);
#pragma clang loop unroll(full)
                for (int half = 0; half < 2; half++) {
                    odml_v8f pixels[8];
#pragma clang loop unroll(full)
                    for (int c = 0; c < 8; c++) {
                        pixels[c] = half == 0 ? __builtin_shufflevector(acc[c], acc[c], 0, 1, 2, 3, 4, 5, 6, 7)
                                              : __builtin_shufflevector(acc[c], acc[c], 8, 9, 10, 11, 12, 13, 14, 15);
                    }
                    odml_transpose8x8(pixels);
                    const ptrdiff_t o = (ptrdiff_t)oy * p->outRow + (ptrdiff_t)(16 * chunk + 8 * half) * p->outPixel + cb;
#pragma clang loop unroll(full)
                    for (int i = 0; i < 8; i++) conv_store(p, o + i * p->outPixel, cb, &pixels[i], 1);
                }
            }
        }
    }
    return 16 * chunks;
}

ODML_INLINE void conv2d_f32_impl(const odml_conv2d_f32_args *a) {
    const conv_plan p = {
        a->input, a->weights, a->bias, a->output, a->output8,
        a->inRowStride, (ptrdiff_t)a->strideWidth * a->inPixelStride, a->outRowStride, a->outPixelStride,
        a->kernelWidth * a->inChannels, a->kernelHeight, a->strideHeight, a->strideWidth, (int)a->inPixelStride,
        a->outChannels, (a->outChannels + 7) & ~7, a->relu,
        a->outInverseScale, (float)a->outZeroPoint, a->outChannels & ~7,
    };
    // The contiguous run needs pixels to be exactly inChannels floats apart.
    if (a->inPixelStride != a->inChannels) __builtin_trap();
    // One input channel at stride 1: rows of 16 pixels at a time first, the generic path for the columns left.
    const int first = a->inChannels == 1 && a->strideHeight == 1 && a->strideWidth == 1 ? conv_single_channel(&p, a) : 0;
    if (a->maxPool2x2) {
        const int pooledHeight = a->outHeight / 2, pooledWidth = a->outWidth / 2;
        for (int py = 0; py < pooledHeight; py++) {
            int px = first;
            for (; px + 2 <= pooledWidth; px += 2) conv_pooled_pixels(&p, py, px, 2);
            for (; px < pooledWidth; px++) conv_pooled_pixels(&p, py, px, 1);
        }
        return;
    }
    const int outHeight = a->outHeight, outWidth = a->outWidth;
    for (int oy = 0; oy < outHeight; oy++) {
        int ox = first;
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

typedef struct {
    const float *input;
    ptrdiff_t inStride;
    int rows, inFeatures;
    const float *weights, *bias;
    int outFeatures;
    float *output;
    ptrdiff_t outStride;
    int relu;
} dense_rows_args;

/// `dense_f32_impl` for `rows` inputs. A layer of at most eight outputs (one block) takes four rows at a time, each
/// with the single row's four sums in the single row's order (so the same bits): sixteen chains of FMAs in flight
/// where one row has four. Wider layers go row by row.
ODML_INLINE void dense_f32_rows_impl(const dense_rows_args *a) {
    const int padded = (a->outFeatures + 7) & ~7, in = a->inFeatures;
    int r = 0;
    if (padded == 8) {
        for (; r + 4 <= a->rows; r += 4) {
            odml_v8f s0[4], s1[4], s2[4], s3[4];
            const float *x[4];
#pragma clang loop unroll(full)
            for (int j = 0; j < 4; j++) {
                s0[j] = odml_load8f(a->bias);
                s1[j] = s2[j] = s3[j] = (odml_v8f)0;
                x[j] = a->input + (ptrdiff_t)(r + j) * a->inStride;
            }
            int k = 0;
            for (; k + 4 <= in; k += 4) {
                const float *w = a->weights + (ptrdiff_t)k * padded;
                const odml_v8f w0 = odml_load8f(w), w1 = odml_load8f(w + padded), w2 = odml_load8f(w + 2 * padded),
                               w3 = odml_load8f(w + 3 * padded);
#pragma clang loop unroll(full)
                for (int j = 0; j < 4; j++) {
                    s0[j] += x[j][k] * w0;
                    s1[j] += x[j][k + 1] * w1;
                    s2[j] += x[j][k + 2] * w2;
                    s3[j] += x[j][k + 3] * w3;
                }
            }
            for (; k < in; k++) {
                const odml_v8f w = odml_load8f(a->weights + (ptrdiff_t)k * padded);
#pragma clang loop unroll(full)
                for (int j = 0; j < 4; j++) s0[j] += x[j][k] * w;
            }
#pragma clang loop unroll(full)
            for (int j = 0; j < 4; j++) {
                odml_store8f_partial(a->output + (ptrdiff_t)(r + j) * a->outStride,
                                     odml_relu8((s0[j] + s1[j]) + (s2[j] + s3[j]), a->relu), a->outFeatures);
            }
        }
    }
    for (; r < a->rows; r++) {
        const dense_args one = {a->input + (ptrdiff_t)r * a->inStride, in, a->weights, a->bias, a->outFeatures,
                                a->output + (ptrdiff_t)r * a->outStride, a->relu};
        dense_f32_impl(&one);
    }
}

ODML_DISPATCH(dense_f32_rows, dense_f32_rows_impl, const dense_rows_args *)

void odml_dense_f32_rows(const float *input, ptrdiff_t inStride, int rows, int inFeatures, const float *weights,
                         const float *bias, int outFeatures, float *output, ptrdiff_t outStride, int relu, int level) {
    const dense_rows_args args = {input, inStride, rows, inFeatures, weights, bias, outFeatures, output, outStride, relu};
    dense_f32_rows_dispatch(&args, level);
}

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
