// 8-bit integer kernels (see CKernels.h for the contracts): the convolution body (Int8Conv.inc) is compiled for
// a portable dot product, twice for AVX2 (exact 16-bit multiply-adds, vpmaddwd, for any weights; vpmaddubsw for
// layers whose weights lie in −63…63, `narrowWeights`), for AVX-VNNI's and AVX-512 VNNI's vpdpbusd, and for ARM64's
// sdot and usdot.
#include "ODMLCommon.h"
#if ODML_X86
#include <immintrin.h>
#endif
#if ODML_ARM64
#include <arm_neon.h>
#endif

typedef int8_t odml_v32c __attribute__((ext_vector_type(32)));
typedef int8_t odml_v8c __attribute__((ext_vector_type(8)));
typedef uint8_t odml_v8u __attribute__((ext_vector_type(8)));

// Helpers are macros, not functions: a function taking or returning an 8-lane vector would need the same
// target attributes as each of its callers, and the body below is compiled for several.

#define ODML_LOAD8I(p) ({ odml_v8i v_; __builtin_memcpy(&v_, (p), sizeof v_); v_; })
#define ODML_LOAD8F(p) ({ odml_v8f v_; __builtin_memcpy(&v_, (p), sizeof v_); v_; })

/// round(y · inverseScale) + zeroPoint, clamped to 0…255 (halves away from zero).
#define ODML_REQUANTIZE8(y, inverseScale, zeroPoint) ({                                                    \
    odml_v8f q_ = __builtin_elementwise_round((y) * (inverseScale)) + (float)(zeroPoint);                  \
    q_ = __builtin_elementwise_min(__builtin_elementwise_max(q_, (odml_v8f)0), (odml_v8f)255);              \
    __builtin_convertvector(q_, odml_v8u);                                                                  \
})

/// Stores the first `count` lanes (all 8 when count ≥ 8) of `v`: fixed-size copies (single stores), never a
/// call to memcpy.
#define ODML_STORE_PARTIAL(p, v, count) do {                                                                \
    __typeof__(v) v_ = (v);                                                                                 \
    const int n_ = (count);                                                                                 \
    if (n_ >= 8) {                                                                                          \
        __builtin_memcpy((p), &v_, sizeof v_);                                                              \
    } else if (n_ > 0) {                                                                                    \
        __typeof__((p)[0]) lanes_[8];                                                                       \
        __builtin_memcpy(lanes_, &v_, sizeof v_);                                                           \
        int i_ = 0;                                                                                         \
        if (n_ >= 4) { __builtin_memcpy((p), lanes_, 4 * sizeof lanes_[0]); i_ = 4; }                       \
        for (; i_ < n_; i_++) (p)[i_] = lanes_[i_];                                                         \
    }                                                                                                       \
} while (0)

/// acc[l] += Σ_k a_k · w[4l + k] for 8 lanes, with a's 4 bytes unsigned and w signed: what vpdpbusd does, in
/// plain vector code.
#define ODML_DOT_PORTABLE(acc, group, w) do {                                                               \
    odml_v32c wv_;                                                                                          \
    __builtin_memcpy(&wv_, (w), 32);                                                                        \
    const uint8_t *a_ = (const uint8_t *)&(group);                                                          \
    (acc) += __builtin_convertvector(__builtin_shufflevector(wv_, wv_, 0, 4, 8, 12, 16, 20, 24, 28), odml_v8i) * (int32_t)a_[0] \
        + __builtin_convertvector(__builtin_shufflevector(wv_, wv_, 1, 5, 9, 13, 17, 21, 25, 29), odml_v8i) * (int32_t)a_[1]     \
        + __builtin_convertvector(__builtin_shufflevector(wv_, wv_, 2, 6, 10, 14, 18, 22, 26, 30), odml_v8i) * (int32_t)a_[2]    \
        + __builtin_convertvector(__builtin_shufflevector(wv_, wv_, 3, 7, 11, 15, 19, 23, 27, 31), odml_v8i) * (int32_t)a_[3];   \
} while (0)

#define ODML_CAT_(a, b) a##_##b
#define ODML_CAT(a, b) ODML_CAT_(a, b)

#define ODML_DOT(acc, group, w) ODML_DOT_PORTABLE(acc, group, w)
#define ODML_I8_TARGET
#define ODML_I8_SUFFIX portable
#include "Int8Conv.inc"
#undef ODML_I8_TARGET
#undef ODML_I8_SUFFIX

#if ODML_X86
#undef ODML_DOT
/// The same sums with AVX2's exact 16-bit multiply-adds (vpmaddwd): the weight block's bytes regrouped per 128-bit
/// half from (lane, k0…k3) to (k0 k1 of lanes 0–3, then k2 k3), its 64-bit quarters to (k0 k1 of all 8 lanes, then
/// k2 k3), each half widened to 16 bits; the activations' 4 bytes widened and broadcast as (a0, a1) and (a2, a3)
/// pairs; two vpmaddwd then give each lane a0·w0 + a1·w1 and a2·w2 + a3·w3 in 32 bits. No sum saturates (unlike
/// vpmaddubsw's 16-bit pairs), so the result is the portable one, bit for bit. Within `tile`, whose loops are
/// unrolled, the weight regrouping depends only on the block and the activation widening only on the pixel.
#define ODML_DOT(acc, group, w) do {                                                                        \
    __m256i w_;                                                                                             \
    __builtin_memcpy(&w_, (w), 32);                                                                         \
    const __m256i pairs_ = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(w_, _mm256_setr_epi8(              \
        0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15, 0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15)), \
        0xD8);                                                                                              \
    const __m256i w01_ = _mm256_cvtepi8_epi16(_mm256_castsi256_si128(pairs_));                              \
    const __m256i w23_ = _mm256_cvtepi8_epi16(_mm256_extracti128_si256(pairs_, 1));                         \
    const __m128i a16_ = _mm_cvtepu8_epi16(_mm_cvtsi32_si128(group));                                       \
    const __m256i a01_ = _mm256_broadcastd_epi32(a16_), a23_ = _mm256_broadcastd_epi32(_mm_srli_si128(a16_, 4)); \
    (acc) = (odml_v8i)_mm256_add_epi32(                                                                     \
        (__m256i)(acc), _mm256_add_epi32(_mm256_madd_epi16(w01_, a01_), _mm256_madd_epi16(w23_, a23_)));    \
} while (0)
#define ODML_I8_TARGET ODML_TARGET_AVX2
#define ODML_I8_SUFFIX avx2
#include "Int8Conv.inc"
#undef ODML_I8_TARGET
#undef ODML_I8_SUFFIX
#undef ODML_DOT

/// For layers whose weights all lie in −63…63 (`narrowWeights`): vpmaddubsw's 16-bit pair sums a0·w0 + a1·w1 stay
/// within ±2 · 255 · 63 = ±32,130, under its saturation at ±32,767, so they are exact; vpmaddwd by ones adds the two
/// pairs of each lane in 32 bits. Three instructions for 32 products, and the same sums as every other level.
#define ODML_DOT(acc, group, w) do {                                                                        \
    __m256i w_;                                                                                             \
    __builtin_memcpy(&w_, (w), 32);                                                                         \
    const __m256i pairs_ = _mm256_maddubs_epi16(_mm256_set1_epi32(group), w_);                              \
    (acc) = (odml_v8i)_mm256_add_epi32((__m256i)(acc), _mm256_madd_epi16(pairs_, _mm256_set1_epi16(1)));    \
} while (0)
#define ODML_I8_TARGET ODML_TARGET_AVX2
#define ODML_I8_SUFFIX avx2narrow
#include "Int8Conv.inc"
#undef ODML_I8_TARGET
#undef ODML_I8_SUFFIX
#undef ODML_DOT

/// vpdpbusd (`DPBUSD`: AVX-VNNI's VEX form or AVX-512 VNNI's) on 256 bits: unsigned activations by signed weights,
/// four products a lane summed in 32 bits without saturation: the portable sums, one instruction for 32 products.
#define ODML_DOT_DPBUSD(acc, group, w, DPBUSD) do {                                                         \
    __m256i w_;                                                                                             \
    __builtin_memcpy(&w_, (w), 32);                                                                         \
    (acc) = (odml_v8i)DPBUSD((__m256i)(acc), _mm256_set1_epi32(group), w_);                                 \
} while (0)

#define ODML_DOT(acc, group, w) ODML_DOT_DPBUSD(acc, group, w, _mm256_dpbusd_avx_epi32)
#define ODML_I8_TARGET ODML_TARGET_AVXVNNI
#define ODML_I8_SUFFIX avxvnni
#include "Int8Conv.inc"
#undef ODML_I8_TARGET
#undef ODML_I8_SUFFIX
#undef ODML_DOT

#define ODML_DOT(acc, group, w) ODML_DOT_DPBUSD(acc, group, w, _mm256_dpbusd_epi32)
#define ODML_I8_TARGET ODML_TARGET_VNNI
#define ODML_I8_SUFFIX vnni
#define ODML_I8_WIDE 1
#include "Int8Conv.inc"
#undef ODML_I8_WIDE
#undef ODML_I8_TARGET
#undef ODML_I8_SUFFIX
#undef ODML_DOT
#endif

#if ODML_ARM64
typedef int32_t odml_v4i __attribute__((ext_vector_type(4)));
/// acc (8 lanes, two NEON registers) += `DOT4(lanes, a, w)` for each half: the 4-byte dot products of the 16 bytes
/// `a` (the broadcast activations) with 16 weight bytes.
#define ODML_DOT_NEON(acc, group, w, DOT4) do {                                                             \
    const uint8x16_t a_ = vreinterpretq_u8_s32(vdupq_n_s32(group));                                        \
    const int32x4_t lo_ = DOT4((int32x4_t)__builtin_shufflevector((acc), (acc), 0, 1, 2, 3), a_, vld1q_s8((w)));       \
    const int32x4_t hi_ = DOT4((int32x4_t)__builtin_shufflevector((acc), (acc), 4, 5, 6, 7), a_, vld1q_s8((w) + 16));  \
    (acc) = __builtin_shufflevector((odml_v4i)lo_, (odml_v4i)hi_, 0, 1, 2, 3, 4, 5, 6, 7);                  \
} while (0)
/// With i8mm: usdot multiplies unsigned activations by signed weights, as vpdpbusd does.
#define ODML_USDOT4(lanes, a, w) vusdotq_s32((lanes), (a), (w))
/// With dotprod only (sdot, signed by signed): Σ a·w = Σ (a − 128)·w + 128·Σ w, the second term as −sdot(−128, w).
/// Exact in 32 bits, so the portable sums bit for bit.
#define ODML_SDOT4(lanes, a, w) ({                                                                          \
    const int8x16_t w_ = (w);                                                                               \
    vsubq_s32(vdotq_s32((lanes), vreinterpretq_s8_u8(veorq_u8((a), vdupq_n_u8(0x80))), w_),                 \
              vdotq_s32(vdupq_n_s32(0), vdupq_n_s8(-128), w_));                                             \
})

#undef ODML_DOT
#define ODML_DOT(acc, group, w) ODML_DOT_NEON(acc, group, w, ODML_SDOT4)
#define ODML_I8_TARGET ODML_TARGET_DOTPROD
#define ODML_I8_SUFFIX dotprod
#include "Int8Conv.inc"
#undef ODML_I8_TARGET
#undef ODML_I8_SUFFIX
#undef ODML_DOT

#define ODML_DOT(acc, group, w) ODML_DOT_NEON(acc, group, w, ODML_USDOT4)
#define ODML_I8_TARGET ODML_TARGET_I8MM
#define ODML_I8_SUFFIX i8mm
#include "Int8Conv.inc"
#undef ODML_I8_TARGET
#undef ODML_I8_SUFFIX
#undef ODML_DOT
#endif

void odml_conv2d_i8(const odml_conv2d_i8_args *args, int level) {
#if ODML_ARM64
    if (level == ODML_LEVEL_NEON_I8MM) { conv2d_i8_i8mm(args); return; }
    if (level == ODML_LEVEL_NEON_DOTPROD) { conv2d_i8_dotprod(args); return; }
#endif
#if ODML_X86
    if (level == ODML_LEVEL_AVX512_VNNI) { conv2d_i8_vnni(args); return; }
    if (level == ODML_LEVEL_AVX_VNNI) { conv2d_i8_avxvnni(args); return; }
    if (odml_level_avx2(level) && args->narrowWeights) { conv2d_i8_avx2narrow(args); return; }
    if (odml_level_avx2(level)) { conv2d_i8_avx2(args); return; }
#endif
    (void)level;
    conv2d_i8_portable(args);
}

typedef struct {
    const float *input;
    int pixels, channels;
    ptrdiff_t inPixelStride;
    uint8_t *output;
    int outChannels;
    float inverseScale;
    int zeroPoint;
} quantize_args;

typedef float odml_v16f_q __attribute__((ext_vector_type(16)));
typedef uint8_t odml_v16u __attribute__((ext_vector_type(16)));

ODML_INLINE void quantize_u8_impl(const quantize_args *a) {
    const float inverseScale = a->inverseScale, zeroPoint = (float)a->zeroPoint;
    // Read once: the output bytes could alias the arguments as far as the compiler knows.
    const int pixels = a->pixels, channels = a->channels, outChannels = a->outChannels;
    const ptrdiff_t inPixelStride = a->inPixelStride;
    for (int p = 0; p < pixels; p++) {
        const float *x = a->input + (ptrdiff_t)p * inPixelStride;
        uint8_t *q = a->output + (ptrdiff_t)p * outChannels;
        int c = 0;
        // Sixteen, then eight at a time: the same clamp (NaN to −512), rounding (halves away from zero) and
        // saturation in every lane.
        for (; c + 16 <= channels; c += 16) {
            odml_v16f_q v;
            __builtin_memcpy(&v, x + c, sizeof v);
            v = v * inverseScale;
            v = __builtin_elementwise_min(__builtin_elementwise_max(v, (odml_v16f_q)-512.0f), (odml_v16f_q)512.0f);
            v = __builtin_elementwise_round(v) + zeroPoint;
            v = __builtin_elementwise_min(__builtin_elementwise_max(v, (odml_v16f_q)0), (odml_v16f_q)255);
            const odml_v16u bytes = __builtin_convertvector(v, odml_v16u);
            __builtin_memcpy(q + c, &bytes, 16);
        }
        for (; c + 8 <= channels; c += 8) {
            odml_v8f v = ODML_LOAD8F(x + c) * inverseScale;
            v = __builtin_elementwise_min(__builtin_elementwise_max(v, (odml_v8f)-512.0f), (odml_v8f)512.0f);
            v = __builtin_elementwise_round(v) + zeroPoint;
            v = __builtin_elementwise_min(__builtin_elementwise_max(v, (odml_v8f)0), (odml_v8f)255);
            const odml_v8u bytes = __builtin_convertvector(v, odml_v8u);
            __builtin_memcpy(q + c, &bytes, 8);
        }
        for (; c < channels; c++) {
            // Clamped first (NaN too) so the conversion to an integer is always defined; halves away from zero,
            // as roundf, without a library call on the baseline target.
            float scaled = x[c] * inverseScale;
            scaled = !(scaled > -512.0f) ? -512.0f : (scaled > 512.0f ? 512.0f : scaled);
            float v = (float)(int32_t)(scaled + (scaled < 0 ? -0.5f : 0.5f)) + zeroPoint;
            v = v < 0 ? 0 : (v > 255 ? 255 : v);
            q[c] = (uint8_t)v;
        }
        for (int c = channels; c < outChannels; c++) q[c] = (uint8_t)a->zeroPoint;
    }
}

ODML_DISPATCH(quantize_u8, quantize_u8_impl, const quantize_args *)

void odml_quantize_u8(const float *input, int pixels, int channels, ptrdiff_t inPixelStride, uint8_t *output,
                      int outChannels, float inverseScale, int zeroPoint, int level) {
    const quantize_args args = {input, pixels, channels, inPixelStride, output, outChannels, inverseScale, zeroPoint};
    quantize_u8_dispatch(&args, level);
}

void odml_dense_i8(const float *input, int inFeatures, float inverseScale, int zeroPoint, int paddedIn,
                   const int8_t *weights, const int32_t *correction, const float *scale, const float *bias,
                   int outFeatures, float *output, int relu, int narrowWeights, int level) {
    // The input quantized on the stack, then the 1×1 convolution of a one-pixel image: one call instead of a
    // quantize step and a convolution step (what a tiny layer's time is made of).
    uint8_t bytes[ODML_DENSE_I8_MAX_INPUT];
    if (paddedIn > ODML_DENSE_I8_MAX_INPUT || paddedIn < inFeatures || (paddedIn & 3)) return;
    const quantize_args quantize = {input, 1, inFeatures, inFeatures, bytes, paddedIn, inverseScale, zeroPoint};
    quantize_u8_dispatch(&quantize, level);
    odml_conv2d_i8_args a = {0};
    a.input = bytes;
    a.inRowStride = paddedIn;
    a.inChannels = paddedIn;
    a.kernelHeight = a.kernelWidth = a.strideHeight = a.strideWidth = 1;
    a.outHeight = a.outWidth = 1;
    a.outChannels = outFeatures;
    a.weights = weights;
    a.correction = correction;
    a.scale = scale;
    a.bias = bias;
    a.output = output;
    a.outRowStride = a.outPixelStride = outFeatures;
    a.outInverseScale = 1;
    a.relu = relu;
    a.narrowWeights = narrowWeights;
    odml_conv2d_i8(&a, level);
}
