// Motion window kernels: the two orientation-free signals of each sample, and one window's autocorrelation; see
// CPreprocessing.h for the contracts.
//
// The signals must come out bit for bit as the Swift reference (`MotionWindowing.features(of:)`) computes them, so
// they are in double, in the Swift code's order, and never contracted into fused multiply-adds; square roots and
// divisions are correctly rounded in every lane, so eight samples at a time give the same bits as one.
#include "ODMLCommon.h"
#include "CPreprocessing.h"

#pragma clang fp contract(off)

typedef double odml_v8d __attribute__((ext_vector_type(8)));
typedef float odml_v16f __attribute__((ext_vector_type(16)));
/// What comparing two `odml_v8d` gives: 64-bit lanes, all ones where true.
typedef __typeof__((odml_v8d)0 < (odml_v8d)0) odml_v8l;

/// `mask ? a : b` per lane.
ODML_INLINE odml_v8d odml_select8d(odml_v8l mask, odml_v8d a, odml_v8d b) {
    return (odml_v8d)((mask & (odml_v8l)a) | (~mask & (odml_v8l)b));
}

typedef struct {
    const char *samples;
    ptrdiff_t stride, gravity, acceleration;
    int count;
    float *vertical, *horizontal;
} signals_args;

ODML_INLINE void motion_signals_impl(const signals_args *a) {
    int i = 0;
    for (; i + 8 <= a->count; i += 8) {
        odml_v8d gx, gy, gz, ax, ay, az;
#pragma clang loop unroll(full)
        for (int k = 0; k < 8; k++) {
            const char *sample = a->samples + (ptrdiff_t)(i + k) * a->stride;
            double g[3], u[3];
            __builtin_memcpy(g, sample + a->gravity, sizeof g);
            __builtin_memcpy(u, sample + a->acceleration, sizeof u);
            gx[k] = g[0]; gy[k] = g[1]; gz[k] = g[2];
            ax[k] = u[0]; ay[k] = u[1]; az[k] = u[2];
        }
        const odml_v8d norm = __builtin_elementwise_sqrt(gx * gx + gy * gy + gz * gz);
        const odml_v8d up = odml_select8d(norm > 0, (ax * gx + ay * gy + az * gz) / norm, (odml_v8d)0);
        const odml_v8d rest = ax * ax + ay * ay + az * az - up * up;
        // Swift's max(0, rest): rest when rest ≥ 0 (−0 included), else 0 (NaN included).
        const odml_v8d across = __builtin_elementwise_sqrt(odml_select8d(rest >= 0, rest, (odml_v8d)0));
        const odml_v8f v = __builtin_convertvector(up, odml_v8f), h = __builtin_convertvector(across, odml_v8f);
        __builtin_memcpy(a->vertical + i, &v, sizeof v);
        __builtin_memcpy(a->horizontal + i, &h, sizeof h);
    }
    for (; i < a->count; i++) {
        const char *sample = a->samples + (ptrdiff_t)i * a->stride;
        double g[3], u[3];
        __builtin_memcpy(g, sample + a->gravity, sizeof g);
        __builtin_memcpy(u, sample + a->acceleration, sizeof u);
        const double norm = __builtin_sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
        const double up = norm > 0 ? (u[0] * g[0] + u[1] * g[1] + u[2] * g[2]) / norm : 0;
        const double rest = u[0] * u[0] + u[1] * u[1] + u[2] * u[2] - up * up;
        a->vertical[i] = (float)up;
        a->horizontal[i] = (float)__builtin_sqrt(rest >= 0 ? rest : 0);
    }
}

ODML_DISPATCH(motion_signals, motion_signals_impl, const signals_args *)

void odml_motion_signals(const void *samples, int count, ptrdiff_t stride, ptrdiff_t gravityOffset,
                         ptrdiff_t accelerationOffset, float *vertical, float *horizontal, int level) {
    const signals_args args = {samples, stride, gravityOffset, accelerationOffset, count, vertical, horizontal};
    motion_signals_dispatch(&args, level);
}

// One window's autocorrelation (MotionWindowing+Autocorrelation.swift): the mean and energy in double, the centred
// window rounded to float, and the lag sums in float. The lag sums are explicit fused multiply-adds (at every level:
// plain C calls fmaf per lane) and nothing else is contracted; each lag is one vector lane whose sum runs over t in
// an order this code fixes (even and odd t apart), not the vector width, so every level gives the same bits.
typedef struct {
    const float *signal;
    int window, lags, smoothing;
    double noiseEnergy;
    double *scratch;
    float *output;
    double *mean, *energy;
} autocorrelation_args;

ODML_INLINE odml_v16f odml_load16f(const float *p) { odml_v16f v; __builtin_memcpy(&v, p, sizeof v); return v; }

/// Tiles of 16 lags a pass over t (one broadcast of c_t feeds them all): ODML_AUTOCORRELATION_PAD must cover
/// 16 · ODML_LAG_TILES + 1 zeros past the window.
#define ODML_LAG_TILES 3
_Static_assert(ODML_AUTOCORRELATION_PAD >= 16 * ODML_LAG_TILES + 1, "the lag tiles read past the window's padding");

/// Lags l0 … l0 + 16·tiles − 1 of the centred window `c` (zeros from `window` on): Σ_{t < window − l0} c_t · c_{t+l}
/// in float, scaled by `inverse`, into `out` (only the lags up to `last`). Each lag's sum is two chains of fused
/// multiply-adds, even and odd t, added at the end.
ODML_INLINE void lag_tiles(const float *c, int window, int l0, int tiles, int last, float inverse, float *out) {
    odml_v16f s[ODML_LAG_TILES] = {0}, o[ODML_LAG_TILES] = {0};
    const int end = window - l0;
    int t = 0;
    for (; t + 2 <= end; t += 2) {
        const odml_v16f x0 = c[t], x1 = c[t + 1];
        const float *p = c + t + l0;
        for (int j = 0; j < tiles; j++) {
            s[j] = __builtin_elementwise_fma(x0, odml_load16f(p + 16 * j), s[j]);
            o[j] = __builtin_elementwise_fma(x1, odml_load16f(p + 1 + 16 * j), o[j]);
        }
    }
    if (t < end) {
        const odml_v16f x = c[t];
        for (int j = 0; j < tiles; j++) s[j] = __builtin_elementwise_fma(x, odml_load16f(c + t + l0 + 16 * j), s[j]);
    }
    for (int j = 0; j < tiles; j++) {
        const odml_v16f scaled = (s[j] + o[j]) * inverse;
        const int first = l0 + 16 * j;
        odml_store8f_partial(out + 16 * j, __builtin_shufflevector(scaled, scaled, 0, 1, 2, 3, 4, 5, 6, 7), last - first + 1);
        odml_store8f_partial(out + 16 * j + 8, __builtin_shufflevector(scaled, scaled, 8, 9, 10, 11, 12, 13, 14, 15),
                             last - first - 7);
    }
}

ODML_INLINE odml_v8d odml_load8d(const double *p) { odml_v8d v; __builtin_memcpy(&v, p, sizeof v); return v; }

/// Replaces `lags` values by their means over `k` lags (odd; fewer at the ends): each summed in double from the left,
/// starting from 0, and divided by how many there are; `base` holds `lags` doubles. Interior lags go eight at a
/// time, each lane adding its own neighbours in the same order, so every lag gets the same bits either way.
/// Lag `i`'s mean over the lags within `half` of it that exist, summed from the left.
ODML_INLINE float smoothed_lag(const double *base, int lags, int half, int i) {
    const int lo = i - half < 0 ? 0 : i - half, hi = i + half > lags - 1 ? lags - 1 : i + half;
    double sum = 0;
    for (int j = lo; j <= hi; j++) sum += base[j];
    return (float)(sum / (hi - lo + 1));
}

ODML_INLINE void smooth_lags(float *values, int lags, int k, double *base) {
    for (int i = 0; i < lags; i++) base[i] = values[i];
    const int half = k / 2;
    int i = 0;
    for (; i < lags && !(i >= half && i + 8 <= lags - half); i++) values[i] = smoothed_lag(base, lags, half, i);
    for (; i + 8 <= lags - half; i += 8) {
        odml_v8d sum = 0;
        for (int j = i - half; j <= i + half; j++) sum += odml_load8d(base + j);
        odml_store8f(values + i, __builtin_convertvector(sum / (double)k, odml_v8f));
    }
    for (; i < lags; i++) values[i] = smoothed_lag(base, lags, half, i);
}

ODML_INLINE void autocorrelation_impl(const autocorrelation_args *a, float *c, double *base) {
    const int window = a->window, lags = a->lags;
    const float *x = a->signal;
    odml_v8d lanes = 0;
    int t = 0;
    for (; t + 8 <= window; t += 8) lanes += __builtin_convertvector(odml_load8f(x + t), odml_v8d);
    double sum = 0;
    for (int k = 0; k < 8; k++) sum += lanes[k];
    for (; t < window; t++) sum += (double)x[t];
    const double mean = sum / window;
    // Centre in double (where the horizontal signal's mean would cancel), then round to float.
    odml_v8d energies = 0;
    for (t = 0; t + 8 <= window; t += 8) {
        const odml_v8d centred = __builtin_convertvector(odml_load8f(x + t), odml_v8d) - mean;
        energies += centred * centred;
        odml_store8f(c + t, __builtin_convertvector(centred, odml_v8f));
    }
    double energy = 0;
    for (int k = 0; k < 8; k++) energy += energies[k];
    for (; t < window; t++) {
        const double centred = (double)x[t] - mean;
        energy += centred * centred;
        c[t] = (float)centred;
    }
    for (int i = window; i < window + ODML_AUTOCORRELATION_PAD; i++) c[i] = 0;
    const float inverse = energy > a->noiseEnergy ? (float)(1 / energy) : 0;
    int l0 = 1;
    for (; l0 + 16 * ODML_LAG_TILES - 1 <= lags; l0 += 16 * ODML_LAG_TILES) {
        lag_tiles(c, window, l0, ODML_LAG_TILES, lags, inverse, a->output + l0 - 1);
    }
    const int rest = lags - l0 + 1;
    if (rest > 32) lag_tiles(c, window, l0, 3, lags, inverse, a->output + l0 - 1);
    else if (rest > 16) lag_tiles(c, window, l0, 2, lags, inverse, a->output + l0 - 1);
    else if (rest > 0) lag_tiles(c, window, l0, 1, lags, inverse, a->output + l0 - 1);
    if (a->smoothing > 1) smooth_lags(a->output, lags, a->smoothing, base);
    *a->mean = mean;
    *a->energy = energy;
}

/// The kernel with the scratch the caller gave, or (none given, a window up to ODML_AUTOCORRELATION_STACK_WINDOW) an
/// uninitialized one on this stack: nothing to zero beforehand, nothing on the heap.
ODML_INLINE void autocorrelation_scratch_impl(const autocorrelation_args *a) {
    if (a->scratch) {
        // The caller's doubles: the smoothing's copy of the lags first, then the centred window as floats.
        autocorrelation_impl(a, (float *)(void *)(a->scratch + a->lags), a->scratch);
    } else if (a->window <= ODML_AUTOCORRELATION_STACK_WINDOW) {
        float scratch[a->window + ODML_AUTOCORRELATION_PAD];
        double base[a->smoothing > 1 ? a->lags : 1];
        autocorrelation_impl(a, scratch, base);
    }
}

ODML_DISPATCH(autocorrelation, autocorrelation_scratch_impl, const autocorrelation_args *)

void odml_window_autocorrelation(const float *signal, int window, int lags, int smoothing, double noiseEnergy,
                                 double *scratch, float *output, double *mean, double *energy, int level) {
    const autocorrelation_args args = {signal, window, lags, smoothing, noiseEnergy, scratch, output, mean, energy};
    autocorrelation_dispatch(&args, level);
}
