// Runs every C kernel (Sources/CKernels, Sources/CPreprocessing) on fixed pseudo-random inputs and prints each
// output exactly, one line per case and level: `name level count value…` (floats as C99 hex, bytes as two hex
// digits). scripts/kernels_cross_check.py builds this file for the machine it runs on and for aarch64 (run under
// qemu-user) and compares the two: the ARM64 build against the same cases here, bit for bit where the kernels
// promise the same bits at every level, within a stated bound where they leave the rounding to the compiler.
//
// Usage: kernels_check [all|portable] [LAYERS]   (`all`: every level this CPU runs — on ARM64 under qemu, whose CPU has
// dotprod and i8mm, levels 0, 5 and 6 — else the portable level only;
// LAYERS: the shipped models' 8-bit layers as scripts/kernels_cross_check.py writes them)
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "CKernels.h"
#include "CPreprocessing.h"

// The inputs must be the same bits on every machine: no fused multiply-adds here.
#pragma clang fp contract(off)

static uint64_t state = 0x9E3779B97F4A7C15ull;

/// A uniform value in [0, 1) from a 64-bit xorshift (the same sequence on every machine).
static double next_unit(void) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (double)(state >> 11) / 9007199254740992.0;
}

static float uniform(float low, float high) { return low + (high - low) * (float)next_unit(); }

static void fill(float *p, size_t n, float low, float high) {
    for (size_t i = 0; i < n; i++) p[i] = uniform(low, high);
}

static void print_floats(const char *name, int level, const float *p, size_t n) {
    printf("%s %d %zu", name, level, n);
    for (size_t i = 0; i < n; i++) printf(" %a", (double)p[i]);
    printf("\n");
}

static void print_doubles(const char *name, int level, const double *p, size_t n) {
    printf("%s %d %zu", name, level, n);
    for (size_t i = 0; i < n; i++) printf(" %a", p[i]);
    printf("\n");
}

static void print_bytes(const char *name, int level, const uint8_t *p, size_t n) {
    printf("%s %d %zu", name, level, n);
    for (size_t i = 0; i < n; i++) printf(" %02x", p[i]);
    printf("\n");
}

static void *zeroed(size_t bytes) {
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "kernels_check: out of memory\n");
        exit(2);
    }
    return p;
}

/// Float convolutions: 3×3 over 11×10 pixels of 5 channels into 11 (stride 1 and 2), with ReLU, 2×2 max pooling
/// and an 8-bit output.
static void check_conv_f32(int level) {
    const int h = 11, w = 10, cin = 5, cout = 11, padded = 16, k = 3;
    float *input = zeroed(sizeof(float) * h * w * cin), *weights = zeroed(sizeof(float) * k * k * cin * padded);
    float *bias = zeroed(sizeof(float) * padded);
    fill(input, (size_t)h * w * cin, -1, 1);
    for (int i = 0; i < k * k * cin; i++) fill(weights + i * padded, cout, -0.5f, 0.5f);
    fill(bias, cout, -0.2f, 0.2f);
    for (int variant = 0; variant < 4; variant++) {
        const int stride = variant == 1 ? 2 : 1, pool = variant == 2, eight = variant == 3;
        const int oh = (h - k) / stride + 1, ow = (w - k) / stride + 1;
        const int ph = pool ? oh / 2 : oh, pw = pool ? ow / 2 : ow;
        float *output = zeroed(sizeof(float) * ph * pw * cout);
        uint8_t *output8 = zeroed((size_t)ph * pw * 12);
        odml_conv2d_f32_args a = {0};
        a.input = input, a.inRowStride = w * cin, a.inPixelStride = cin, a.inChannels = cin;
        a.kernelHeight = k, a.kernelWidth = k, a.strideHeight = stride, a.strideWidth = stride;
        a.outHeight = oh, a.outWidth = ow, a.outChannels = cout, a.weights = weights, a.bias = bias;
        a.relu = variant != 0, a.maxPool2x2 = pool;
        if (eight) {
            a.output8 = output8, a.outRowStride = pw * 12, a.outPixelStride = 12, a.outInverseScale = 40, a.outZeroPoint = 7;
        } else {
            a.output = output, a.outRowStride = pw * cout, a.outPixelStride = cout;
        }
        odml_conv2d_f32(&a, level);
        char name[64];
        snprintf(name, sizeof name, "conv2d_f32/%d", variant);
        if (eight) print_bytes(name, level, output8, (size_t)ph * pw * 12);
        else print_floats(name, level, output, (size_t)ph * pw * cout);
        free(output), free(output8);
    }
    free(input), free(weights), free(bias);
}

/// Dense layers: one sample and 5 rows, 37 inputs into 3 and into 20 outputs.
static void check_dense_f32(int level) {
    const int in = 37, rows = 5;
    for (int variant = 0; variant < 2; variant++) {
        const int out = variant ? 20 : 3, padded = (out + 7) & ~7;
        float *input = zeroed(sizeof(float) * rows * in), *weights = zeroed(sizeof(float) * in * padded);
        float *bias = zeroed(sizeof(float) * padded), *output = zeroed(sizeof(float) * rows * out);
        fill(input, (size_t)rows * in, -1, 1);
        for (int i = 0; i < in; i++) fill(weights + i * padded, out, -0.4f, 0.4f);
        fill(bias, out, -0.1f, 0.1f);
        char name[64];
        odml_dense_f32(input, in, weights, bias, out, output, variant, level);
        snprintf(name, sizeof name, "dense_f32/%d", variant);
        print_floats(name, level, output, out);
        odml_dense_f32_rows(input, in, rows, in, weights, bias, out, output, out, variant, level);
        snprintf(name, sizeof name, "dense_f32_rows/%d", variant);
        print_floats(name, level, output, (size_t)rows * out);
        free(input), free(weights), free(bias), free(output);
    }
}

/// Max and average pooling, 2×2 stride 2 and 3×3 stride 1, over 9×8 pixels of 13 channels.
static void check_pool(int level) {
    const int h = 9, w = 8, c = 13;
    float *input = zeroed(sizeof(float) * h * w * c);
    fill(input, (size_t)h * w * c, -3, 3);
    for (int variant = 0; variant < 4; variant++) {
        const int size = variant < 2 ? 2 : 3, stride = variant < 2 ? 2 : 1;
        const int oh = (h - size) / stride + 1, ow = (w - size) / stride + 1;
        float *output = zeroed(sizeof(float) * oh * ow * c);
        odml_pool2d_f32_args a = {input, w * c, c, c, size, size, stride, stride, oh, ow, output, ow * c, c, variant % 2};
        odml_pool2d_f32(&a, level);
        char name[64];
        snprintf(name, sizeof name, "pool2d_f32/%d", variant);
        print_floats(name, level, output, (size_t)oh * ow * c);
        free(output);
    }
    free(input);
}

/// 8-bit convolutions (3×3, 8 channels into 13) with float and 8-bit outputs, ReLU and pooling; quantization;
/// the 8-bit dense layer.
static void check_int8(int level) {
    const int h = 10, w = 9, cin = 8, cout = 13, padded = 16, k = 3;
    uint8_t *input = zeroed((size_t)h * w * cin);
    for (int i = 0; i < h * w * cin; i++) input[i] = (uint8_t)(next_unit() * 256);
    const int groups = k * k * cin / 4;
    int8_t *weights = zeroed((size_t)groups * padded * 4);
    int32_t *correction = zeroed(sizeof(int32_t) * padded);
    float *scale = zeroed(sizeof(float) * padded), *bias = zeroed(sizeof(float) * padded);
    for (int g = 0; g < groups; g++)
        for (int o = 0; o < cout; o++)
            for (int j = 0; j < 4; j++) weights[(g * padded + o) * 4 + j] = (int8_t)(next_unit() * 255 - 127);
    for (int o = 0; o < cout; o++) {
        correction[o] = (int32_t)(next_unit() * 20000) - 10000;
        scale[o] = uniform(1e-4f, 1e-3f);
        bias[o] = uniform(-0.5f, 0.5f);
    }
    // Variants 3–5: the same with weights in −63…63, marked narrow (AVX2's vpmaddubsw path; the sums are the same).
    for (int variant = 0; variant < 6; variant++) {
        if (variant == 3) {
            for (int i = 0; i < groups * padded * 4; i++) weights[i] = (int8_t)(weights[i] / 2);
        }
        const int pool = variant % 3 == 1, eight = variant % 3 == 2;
        const int oh = h - k + 1, ow = w - k + 1, ph = pool ? oh / 2 : oh, pw = pool ? ow / 2 : ow;
        float *output = zeroed(sizeof(float) * ph * pw * cout);
        uint8_t *output8 = zeroed((size_t)ph * pw * 16);
        odml_conv2d_i8_args a = {0};
        a.input = input, a.inRowStride = w * cin, a.inChannels = cin, a.kernelHeight = k, a.kernelWidth = k;
        a.strideHeight = 1, a.strideWidth = 1, a.outHeight = oh, a.outWidth = ow, a.outChannels = cout;
        a.weights = weights, a.correction = correction, a.scale = scale, a.bias = bias;
        a.relu = variant % 3 != 0, a.maxPool2x2 = pool, a.narrowWeights = variant >= 3;
        if (eight) {
            a.output8 = output8, a.outRowStride = pw * 16, a.outPixelStride = 16, a.outInverseScale = 30, a.outZeroPoint = 3;
        } else {
            a.output = output, a.outRowStride = pw * cout, a.outPixelStride = cout;
        }
        odml_conv2d_i8(&a, level);
        char name[64];
        snprintf(name, sizeof name, "conv2d_i8/%d", variant);
        if (eight) print_bytes(name, level, output8, (size_t)ph * pw * 16);
        else print_floats(name, level, output, (size_t)ph * pw * cout);
        free(output), free(output8);
    }
    // The narrow path's edge: activations 255 against weights ±63, every pair at ±32,130 (vpmaddubsw saturates at
    // ±32,767), and a layer of −64 weights (not narrow: the 16-bit path).
    {
        enum { side = 3, channels = 16, outs = 16 };
        uint8_t edge[side * side * channels];
        for (int i = 0; i < side * side * channels; i++) edge[i] = i % 5 == 4 ? 0 : 255;
        int8_t w63[channels / 4 * outs * 4], w64[channels / 4 * outs * 4];
        for (int i = 0; i < channels / 4 * outs * 4; i++) {
            w63[i] = (i / 8) % 2 ? -63 : 63;
            w64[i] = (i / 8) % 3 ? -64 : 63;
        }
        int32_t zeros[outs] = {0};
        float ones[outs], nothing[outs] = {0}, out[side * side * outs];
        for (int o = 0; o < outs; o++) ones[o] = 1;
        for (int variant = 0; variant < 2; variant++) {
            odml_conv2d_i8_args a = {0};
            a.input = edge, a.inRowStride = side * channels, a.inChannels = channels;
            a.kernelHeight = a.kernelWidth = a.strideHeight = a.strideWidth = 1;
            a.outHeight = a.outWidth = side, a.outChannels = outs;
            a.weights = variant ? w64 : w63, a.correction = zeros, a.scale = ones, a.bias = nothing;
            a.output = out, a.outRowStride = side * outs, a.outPixelStride = outs;
            a.narrowWeights = variant == 0;
            odml_conv2d_i8(&a, level);
            print_floats(variant ? "conv2d_i8/edge-64" : "conv2d_i8/edge-63", level, out, side * side * outs);
        }
    }
    // Quantization, halves included (x · 4 lands on .5 for a quarter of these).
    const int pixels = 37, channels = 6, outChannels = 8;
    float *values = zeroed(sizeof(float) * pixels * channels);
    for (int i = 0; i < pixels * channels; i++) values[i] = (float)((int)(next_unit() * 400) - 200) / 8;
    uint8_t *bytes = zeroed((size_t)pixels * outChannels);
    odml_quantize_u8(values, pixels, channels, channels, bytes, outChannels, 4, 100, level);
    print_bytes("quantize_u8", level, bytes, (size_t)pixels * outChannels);
    // The dense layer: 37 inputs (padded to 40) into 13.
    const int in = 37, paddedIn = 40;
    int8_t *dense = zeroed((size_t)(paddedIn / 4) * padded * 4);
    for (int i = 0; i < (paddedIn / 4) * padded * 4; i++) dense[i] = (int8_t)(next_unit() * 255 - 127);
    float *x = zeroed(sizeof(float) * in), *y = zeroed(sizeof(float) * cout);
    fill(x, in, -2, 3);
    odml_dense_i8(x, in, 50, 90, paddedIn, dense, correction, scale, bias, cout, y, 1, 0, level);
    print_floats("dense_i8", level, y, cout);
    free(input), free(weights), free(correction), free(scale), free(bias), free(values), free(bytes), free(dense), free(x),
        free(y);
}

/// The motion signals of 203 samples (9 doubles each: gravity, rotation rate, user acceleration) and the
/// autocorrelations of a 256-sample window at 96 lags, with and without a scratch of the caller's.
static void check_motion(int level) {
    const int count = 203;
    double *samples = zeroed(sizeof(double) * 9 * count);
    for (int i = 0; i < count; i++) {
        double *s = samples + 9 * i;
        s[0] = next_unit() - 0.5, s[1] = next_unit() - 0.5, s[2] = -1 + 0.2 * next_unit();
        for (int j = 3; j < 9; j++) s[j] = 2 * next_unit() - 1;
    }
    samples[9 * 5 + 0] = samples[9 * 5 + 1] = samples[9 * 5 + 2] = 0;  // no gravity: vertical 0
    float *vertical = zeroed(sizeof(float) * count), *horizontal = zeroed(sizeof(float) * count);
    odml_motion_signals(samples, count, 9 * sizeof(double), 0, 6 * sizeof(double), vertical, horizontal, level);
    print_floats("motion_signals/vertical", level, vertical, count);
    print_floats("motion_signals/horizontal", level, horizontal, count);
    const int window = 256, lags = 96, long_window = 700;
    float *signal = zeroed(sizeof(float) * long_window), *out = zeroed(sizeof(float) * 150);
    for (int t = 0; t < long_window; t++) signal[t] = (float)(0.4 * sin(t * 0.37) + 0.3 * next_unit() + 0.05);
    double *scratch = zeroed(sizeof(double) * (150 + long_window + ODML_AUTOCORRELATION_PAD)), stats[2];
    odml_window_autocorrelation(signal, window, lags, 0, 1e-6, scratch, out, &stats[0], &stats[1], level);
    print_floats("autocorrelation/scratch", level, out, lags);
    print_doubles("autocorrelation/mean-energy", level, stats, 2);
    odml_window_autocorrelation(signal, 100, 37, 0, 1e-6, NULL, out, &stats[0], &stats[1], level);
    print_floats("autocorrelation/stack", level, out, 37);
    odml_window_autocorrelation(signal, window, lags, 9, 1e-6, NULL, out, &stats[0], &stats[1], level);
    print_floats("autocorrelation/smoothed", level, out, lags);
    // A longer window, lags past one pass of tiles, smoothing 5 with the caller's scratch.
    odml_window_autocorrelation(signal, long_window, 150, 5, 1e-6, scratch, out, &stats[0], &stats[1], level);
    print_floats("autocorrelation/long", level, out, 150);
    free(samples), free(vertical), free(horizontal), free(signal), free(out), free(scratch);
}

/// A drawing of three strokes (a wobbly circle, a line, a dot) into 16×16 and 28×28 images, levelled and not.
static void check_raster(int level) {
    enum { n = 61 };
    float xs[n], ys[n];
    for (int i = 0; i < 40; i++) {
        const double a = i * 0.16;
        xs[i] = (float)(0.5 + 0.4 * cos(a) + 0.01 * next_unit()), ys[i] = (float)(0.45 + 0.35 * sin(a));
    }
    for (int i = 40; i < 60; i++) xs[i] = 0.1f + 0.04f * (float)(i - 40), ys[i] = 0.9f - 0.01f * (float)(i - 40);
    xs[60] = 0.3f, ys[60] = 0.3f;
    const int32_t ends[3] = {40, 60, 61};
    for (int variant = 0; variant < 2; variant++) {
        const int size = variant ? 28 : 16;
        float *nearest = zeroed(sizeof(float) * size * ((size + 15) / 16) * 16), *image = zeroed(sizeof(float) * size * size);
        odml_raster_args a = {xs, ys, n, ends, 3, size, variant == 0, 2, 4, 1.5f, 0.5f, nearest, image};
        odml_rasterize(&a, level);
        char name[64];
        snprintf(name, sizeof name, "rasterize/%d", variant);
        print_floats(name, level, image, (size_t)size * size);
        free(nearest), free(image);
    }
}

/// The training kernels: a 3×3 convolution's weight and bias gradients over 2 images, ReLU's and 2×2 max
/// pooling's backward passes.
static void check_training(int level) {
    const int images = 2, h = 7, w = 6, cin = 3, cout = 5, k = 3, oh = h - k + 1, ow = w - k + 1;
    float *input = zeroed(sizeof(float) * images * h * w * cin), *dOut = zeroed(sizeof(float) * images * oh * ow * cout);
    float *dWeight = zeroed(sizeof(float) * k * k * cin * cout), *dBias = zeroed(sizeof(float) * cout);
    fill(input, (size_t)images * h * w * cin, -1, 1);
    fill(dOut, (size_t)images * oh * ow * cout, -1, 1);
    odml_conv2d_weight_gradient_f32_args a = {
        input, h * w * cin, w * cin, cin, cin, k, k, 1, 1, dOut, oh * ow * cout, ow * cout, cout, images, oh, ow, cout,
        dWeight, dBias};
    odml_conv2d_weight_gradient_f32(&a, level);
    print_floats("weight_gradient/weights", level, dWeight, (size_t)k * k * cin * cout);
    print_floats("weight_gradient/bias", level, dBias, cout);
    const int count = 77;
    float *out = zeroed(sizeof(float) * count), *dIn = zeroed(sizeof(float) * count);
    fill(out, count, -1, 1);
    for (int i = 0; i < count; i++) out[i] = out[i] < 0 ? 0 : out[i];
    odml_relu_backward_f32(dOut, out, dIn, count, level);
    print_floats("relu_backward", level, dIn, count);
    const int ph = h / 2, pw = w / 2;
    float *dPoolIn = zeroed(sizeof(float) * images * h * w * cin);
    odml_max_pool_backward_f32_args p = {input, dOut, dPoolIn, images, h, w, cin, 2, 2, ph, pw};
    odml_max_pool_backward_f32(&p, level);
    print_floats("max_pool_backward", level, dPoolIn, (size_t)images * h * w * cin);
    free(input), free(dOut), free(dWeight), free(dBias), free(out), free(dIn), free(dPoolIn);
}

/// The shipped models' 8-bit layers with their real weights, from the text file `path` that
/// scripts/kernels_cross_check.py writes: per layer a line `layer NAME KH KW CIN COUT` (CIN a multiple of 4), then
/// its packed weights (`KH · KW · CIN · paddedOut` integers, the plan's `[KH][KW · CIN / 4][paddedOut][4]`) and its
/// `COUT` weight scales (C99 hex floats). Each runs on fixed bytes (zero point 128) over a 5×6 image, to floats and
/// to bytes; narrow when every weight lies in −63…63, as the plan decides.
static void check_real_layers(const char *path, int level) {
    FILE *file = fopen(path, "r");
    if (!file) {
        fprintf(stderr, "kernels_check: %s: cannot open\n", path);
        exit(2);
    }
    char name[64];
    int kh, kw, cin, cout;
    while (fscanf(file, " layer %63s %d %d %d %d", name, &kh, &kw, &cin, &cout) == 5) {
        if (kh < 1 || kw < 1 || cin < 4 || cin % 4 || cout < 1 || kh > 7 || kw > 7 || cin > 4096 || cout > 4096) {
            fprintf(stderr, "kernels_check: %s: layer %s has an unexpected shape\n", path, name);
            exit(2);
        }
        const int padded = (cout + 7) & ~7, count = kh * kw * cin * padded;
        int8_t *weights = zeroed((size_t)count);
        float *scale = zeroed(sizeof(float) * padded), *bias = zeroed(sizeof(float) * padded);
        int32_t *correction = zeroed(sizeof(int32_t) * padded);
        int narrow = 1;
        for (int i = 0; i < count; i++) {
            int value;
            if (fscanf(file, "%d", &value) != 1 || value < -128 || value > 127) {
                fprintf(stderr, "kernels_check: %s: layer %s: weight %d is missing or out of range\n", path, name, i);
                exit(2);
            }
            weights[i] = (int8_t)value;
            narrow &= value >= -63 && value <= 63;
            correction[(i / 4) % padded] -= 128 * value;
        }
        for (int o = 0; o < cout; o++) {
            double value;
            if (fscanf(file, "%la", &value) != 1) {
                fprintf(stderr, "kernels_check: %s: layer %s: scale %d is missing\n", path, name, o);
                exit(2);
            }
            scale[o] = (float)value * 0.02f;
            bias[o] = 0.01f * (float)(o % 7) - 0.03f;
        }
        const int h = kh == 1 && kw == 1 ? 1 : 5, w = kh == 1 && kw == 1 ? 1 : 6, oh = h - kh + 1, ow = w - kw + 1;
        uint8_t *input = zeroed((size_t)h * w * cin), *output8 = zeroed((size_t)oh * ow * padded);
        for (int i = 0; i < h * w * cin; i++) input[i] = (uint8_t)(next_unit() * 256);
        float *output = zeroed(sizeof(float) * oh * ow * cout);
        for (int eight = 0; eight < 2; eight++) {
            odml_conv2d_i8_args a = {0};
            a.input = input, a.inRowStride = w * cin, a.inChannels = cin, a.kernelHeight = kh, a.kernelWidth = kw;
            a.strideHeight = a.strideWidth = 1, a.outHeight = oh, a.outWidth = ow, a.outChannels = cout;
            a.weights = weights, a.correction = correction, a.scale = scale, a.bias = bias, a.relu = 1;
            a.narrowWeights = narrow;
            if (eight) {
                a.output8 = output8, a.outRowStride = ow * padded, a.outPixelStride = padded, a.outInverseScale = 20;
                a.outZeroPoint = 0;
            } else {
                a.output = output, a.outRowStride = ow * cout, a.outPixelStride = cout;
            }
            odml_conv2d_i8(&a, level);
            char label[96];
            snprintf(label, sizeof label, "real/%s/%s", name, eight ? "bytes" : "floats");
            if (eight) print_bytes(label, level, output8, (size_t)oh * ow * padded);
            else print_floats(label, level, output, (size_t)oh * ow * cout);
        }
        free(weights), free(scale), free(bias), free(correction), free(input), free(output8), free(output);
    }
    if (!feof(file)) {
        fprintf(stderr, "kernels_check: %s: cannot read past a layer's header\n", path);
        exit(2);
    }
    fclose(file);
}

int main(int argc, char **argv) {
    const int all = argc > 1 && strcmp(argv[1], "all") == 0;
    const char *layers = argc > 2 ? argv[2] : NULL;
    // Every level this CPU runs (odml_cpu_runs: x86-64 1–4, ARM64 5–6, portable on both), or portable alone.
    for (int level = 0; level < ODML_LEVEL_COUNT; level++) {
        if (all ? !odml_cpu_runs(level) : level != ODML_LEVEL_PORTABLE) continue;
        state = 0x9E3779B97F4A7C15ull;  // every level sees the same inputs
        check_conv_f32(level);
        check_dense_f32(level);
        check_pool(level);
        check_int8(level);
        check_motion(level);
        check_raster(level);
        check_training(level);
        if (layers) check_real_layers(layers, level);
    }
    return 0;
}
