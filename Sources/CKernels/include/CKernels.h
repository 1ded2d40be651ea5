// The engine's hand-written tensor kernels: direct convolution, pooling and matrix-vector products for small
// networks, in float and in 8-bit integers, the training kernels, and the matrix product of builds with no BLAS
// library. Only the Tensor module imports this; every
// call is in Sources/Tensor/Plan/Kernels.swift. (The recognizers' preprocessing kernels are CPreprocessing's.)
//
// Each kernel is compiled several times, for a portable baseline and for wider instruction sets (AVX2 with FMA,
// AVX-VNNI, AVX-512, AVX-512 VNNI, NEON dot products) through per-function target attributes, and the caller picks the level at run time
// (odml_cpu_level) — no compiler flags, so the package builds anywhere. Every kernel has a naive twin in the
// tests.
#ifndef ODML_CKERNELS_H
#define ODML_CKERNELS_H

#include <stddef.h>
#include <stdint.h>

/// Instruction-set levels. On x86-64, AVX2 (1) is the base of every level above it; AVX-VNNI (2) adds the 256-bit
/// 8-bit dot product to it without AVX-512 (Alder Lake and later client CPUs, Zen 5; a CPU may have it, AVX-512, or
/// both), AVX-512 (3) includes AVX2, and AVX-512 VNNI (4) includes AVX-512; neither includes AVX-VNNI. On ARM64, dotprod (5) and i8mm (6) build
/// on NEON. Portable runs on both. `odml_cpu_runs` says which ones this CPU runs.
enum {
    ODML_LEVEL_PORTABLE = 0,      // plain C (the compiler's baseline target)
    ODML_LEVEL_AVX2 = 1,          // AVX2 + FMA
    ODML_LEVEL_AVX_VNNI = 2,      // AVX2 + FMA + AVX-VNNI (VEX vpdpbusd on 256 bits), no AVX-512
    ODML_LEVEL_AVX512 = 3,        // AVX-512 F, BW, VL
    ODML_LEVEL_AVX512_VNNI = 4,   // plus AVX-512 VNNI (8-bit dot products)
    ODML_LEVEL_NEON_DOTPROD = 5,  // ARM64: NEON (every ARM64 CPU) with the dot product instructions (sdot)
    ODML_LEVEL_NEON_I8MM = 6,     // ARM64: plus the 8-bit matrix multiply ones (usdot, unsigned by signed)
    ODML_LEVEL_COUNT = 7
};

/// The level this CPU runs best: AVX-512 VNNI, AVX-512, AVX-VNNI, AVX2 or portable on x86-64; i8mm, dotprod or
/// portable on ARM64.
int odml_cpu_level(void);

/// Whether this CPU runs `level` (1 or 0): any level of its own architecture whose instructions it has.
int odml_cpu_runs(int level);

/// A direct 2-D convolution over one channels-last image, float.
///
/// `input` points at the top-left cell of the (already padded) input: cell (y, x) channel c is
/// `input[y * inRowStride + x * inPixelStride + c]`, and every cell a window touches must exist (the caller pads).
/// Output (oy, ox) reads input rows oy*strideHeight … + kernelHeight − 1 and columns likewise.
/// `weights` are packed `[kernelHeight][kernelWidth][inChannels][paddedOut]`, `paddedOut` = outChannels rounded
/// up to a multiple of 8, the extra columns zero; `bias` has `paddedOut` entries. The result (plus bias, then
/// ReLU when `relu` is set) goes to `output[oy * outRowStride + ox * outPixelStride + o]` for o < outChannels.
/// With `maxPool2x2` set, the convolution is followed by 2×2 max pooling with stride 2 (no padding): output
/// (py, px) is the max over convolution outputs (2py…2py+1, 2px…2px+1), written at
/// `output[py * outRowStride + px * outPixelStride + o]`; `outHeight`/`outWidth` are still the convolution's.
/// With `output8` set instead of `output`, each result is written there as the byte `odml_quantize_u8` makes of it
/// with `outInverseScale` and `outZeroPoint` for an image of `outChannels` channels (its rounding, block and tail
/// alike), so the next 8-bit layer reads it without a quantize pass; strides are then in bytes.
typedef struct {
    const float *input;
    ptrdiff_t inRowStride, inPixelStride;
    int inChannels;
    int kernelHeight, kernelWidth, strideHeight, strideWidth;
    int outHeight, outWidth, outChannels;
    const float *weights;
    const float *bias;
    float *output;
    ptrdiff_t outRowStride, outPixelStride;
    int relu;
    int maxPool2x2;
    uint8_t *output8;
    float outInverseScale;
    int outZeroPoint;
} odml_conv2d_f32_args;

void odml_conv2d_f32(const odml_conv2d_f32_args *args, int level);

/// `output[n] = bias[n] + Σ_k input[k] · weights[k * paddedOut + n]` for n < outFeatures, then ReLU when `relu` is
/// set; `weights` packed `[inFeatures][paddedOut]` (paddedOut a multiple of 8, extra columns zero), `bias`
/// `paddedOut` entries.
void odml_dense_f32(const float *input, int inFeatures, const float *weights, const float *bias, int outFeatures,
                    float *output, int relu, int level);

/// `odml_dense_f32` for `rows` inputs (`inStride` floats apart) into `rows` outputs (`outStride` apart): each row's
/// values exactly as `odml_dense_f32` gives them (a layer of at most eight outputs runs four rows at once).
void odml_dense_f32_rows(const float *input, ptrdiff_t inStride, int rows, int inFeatures, const float *weights,
                         const float *bias, int outFeatures, float *output, ptrdiff_t outStride, int relu, int level);

/// The blocks of the built-in matrix product (`odml_sgemm`): rows of C, columns of C, and the reduction's slice.
enum { ODML_GEMM_MC = 64, ODML_GEMM_NC = 512, ODML_GEMM_KC = 256 };

/// The floats of work space an `odml_sgemm` call of these sizes needs (its packed slices of A and B): at most
/// KC · NC + MC · KC, and 1 for a one-row product, which packs nothing.
ptrdiff_t odml_sgemm_work_floats(int m, int n, int k);

/// The engine's own matrix product, for builds with no BLAS library: BLAS's row-major `sgemm`,
/// `C = alpha · op(A) · op(B) + beta · C`, `op(X)` being `Xᵀ` when its flag is set, `op(A)` m × k, `op(B)` k × n,
/// C m × n, rows `lda`, `ldb` and `ldc` floats apart. Beta 0 sets C without reading it, as BLAS does. `work` holds
/// `odml_sgemm_work_floats(m, n, k)` floats. One thread; the caller splits rows across threads.
void odml_sgemm(int transA, int transB, int m, int n, int k, float alpha, const float *a, ptrdiff_t lda,
                const float *b, ptrdiff_t ldb, float beta, float *c, ptrdiff_t ldc, float *work, int level);

/// `Σ x[i] · y[i]` over `count` contiguous floats: BLAS's `sdot` for builds with no BLAS library.
float odml_sdot(const float *x, const float *y, int count, int level);

/// Max or average pooling over one channels-last image without padding: output (oy, ox) channel c is the max
/// (kind 0) or mean (kind 1) of the window at (oy*strideHeight, ox*strideWidth).
typedef struct {
    const float *input;
    ptrdiff_t inRowStride, inPixelStride;
    int channels;
    int windowHeight, windowWidth, strideHeight, strideWidth;
    int outHeight, outWidth;
    float *output;
    ptrdiff_t outRowStride, outPixelStride;
    int kind;
} odml_pool2d_f32_args;

void odml_pool2d_f32(const odml_pool2d_f32_args *args, int level);

/// A direct 2-D convolution in 8-bit integers: unsigned 8-bit activations times signed 8-bit weights, summed in
/// 32-bit integers, then scaled to float.
///
/// `input` is a quantized image (`q = round(x / inputScale) + zeroPoint`, 0…255), laid out like the float one
/// with `inChannels` a multiple of 4 (extra channels hold the zero point) and pixels exactly `inChannels` bytes
/// apart; its border holds the zero point. `weights` are packed `[kernelHeight][kernelWidth · inChannels / 4]
/// [paddedOut][4]` (groups of 4 consecutive reduction elements per output channel, the layout of an 8-bit dot
/// product instruction), `paddedOut` = outChannels rounded up to 8. Per output channel o:
/// `y = (Σ q·w + correction[o]) · scale[o] + bias[o]`, where `correction[o] = −zeroPoint · Σ w` and `scale[o] =
/// inputScale · weightScale[o]`; then ReLU and 2×2 max pooling as in the float kernel. The result is written as
/// float to `output` or, when `output8` is set, requantized to `output8` as
/// `clamp(round(y · outInverseScale) + outZeroPoint, 0, 255)`. `narrowWeights` set promises that every weight lies
/// in −63…63 (the caller checks): AVX2 then sums with vpmaddubsw, exact for such weights; the results are the same.
typedef struct {
    const uint8_t *input;
    ptrdiff_t inRowStride;
    int inChannels;
    int kernelHeight, kernelWidth, strideHeight, strideWidth;
    int outHeight, outWidth, outChannels;
    const int8_t *weights;
    const int32_t *correction;
    const float *scale;
    const float *bias;
    float *output;
    uint8_t *output8;
    ptrdiff_t outRowStride, outPixelStride;
    float outInverseScale;
    int outZeroPoint;
    int relu;
    int maxPool2x2;
    int narrowWeights;
} odml_conv2d_i8_args;

void odml_conv2d_i8(const odml_conv2d_i8_args *args, int level);

/// Quantizes `pixels` pixels of `channels` floats (`inPixelStride` floats apart) to pixels of `outChannels`
/// bytes (≥ channels; the extra bytes get the zero point): `clamp(round(x · inverseScale) + zeroPoint, 0, 255)`,
/// rounding halves away from zero.
void odml_quantize_u8(const float *input, int pixels, int channels, ptrdiff_t inPixelStride, uint8_t *output,
                      int outChannels, float inverseScale, int zeroPoint, int level);

/// The most (padded) inputs `odml_dense_i8` takes: its bytes live on the stack.
#define ODML_DENSE_I8_MAX_INPUT 4096

/// An 8-bit dense layer of one sample with a float input: `input` (`inFeatures` floats) quantized as
/// `odml_quantize_u8` does (padded to `paddedIn` bytes, a multiple of 4, ≤ ODML_DENSE_I8_MAX_INPUT, with the zero
/// point), then `odml_conv2d_i8` as a 1×1 convolution of a one-pixel image (weights `[paddedIn / 4][paddedOut][4]`)
/// writing `outFeatures` floats to `output`. The same values as those two calls.
void odml_dense_i8(const float *input, int inFeatures, float inverseScale, int zeroPoint, int paddedIn,
                   const int8_t *weights, const int32_t *correction, const float *scale, const float *bias,
                   int outFeatures, float *output, int relu, int narrowWeights, int level);

// The training kernels (weight gradients), in their own header.
#include "TrainKernels.h"

#endif
