// Motion window kernels: the two orientation-free signals of each sample, and the block sums of the windows' shared
// autocorrelation (Sources/Models/Motion/SharedAutocorrelation.swift assembles the windows from them); see
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

// The shared autocorrelation's block sums (SharedAutocorrelation.swift, `sums(block:)`): in double, never contracted,
// each lane a sum over t in order, so every level (any vector width) gives the same bits.
typedef struct {
    const double *y;
    int start, hop, samples, lags, tiles, cut0;
    const int *zones, *step;
    double *prefix, *whole, *partial, *history;
} block_args;

ODML_INLINE odml_v8d odml_load8d(const double *p) { odml_v8d v; __builtin_memcpy(&v, p, sizeof v); return v; }
ODML_INLINE void odml_store8d(double *p, odml_v8d v) { __builtin_memcpy(p, &v, sizeof v); }

/// Σ y_t² for t in t0..<t1: two pairs of lanes four values at a time, then the rest in order.
ODML_INLINE double block_squares(const double *y, int t0, int t1) {
    double a0 = 0, a1 = 0, b0 = 0, b1 = 0;
    int t = t0;
    for (; t + 4 <= t1; t += 4) {
        a0 = a0 + y[t] * y[t];
        a1 = a1 + y[t + 1] * y[t + 1];
        b0 = b0 + y[t + 2] * y[t + 2];
        b1 = b1 + y[t + 3] * y[t + 3];
    }
    double total = (a0 + b0) + (a1 + b1);
    for (; t < t1; t++) total = total + y[t] * y[t];
    return total;
}

/// `a`, `b` (lags l0…l0+15) += Σ_{t=t0}^{t1−1} y_t · y[t+l0 ..< t+l0+16]; after each t, into `history` when given.
ODML_INLINE void block_accumulate(const double *y, int t0, int t1, int l0, odml_v8d *a, odml_v8d *b, double *history) {
    odml_v8d va = *a, vb = *b;
    for (int t = t0; t < t1; t++) {
        const odml_v8d v = y[t];
        va = va + v * odml_load8d(y + t + l0);
        vb = vb + v * odml_load8d(y + t + l0 + 8);
        if (history) {
            odml_store8d(history, va);
            odml_store8d(history + 8, vb);
            history += 16;
        }
    }
    *a = va;
    *b = vb;
}

ODML_INLINE void autocorrelation_block_impl(const block_args *a) {
    const double *y = a->y;
    const int start = a->start, hop = a->hop;
    double running = 0;
    for (int i = 0; i < hop; i++) {
        running = running + y[start + i];
        a->prefix[i + 1] = running;
    }
    a->partial[0] = block_squares(y, start, start + a->cut0);
    a->whole[0] = a->partial[0] + block_squares(y, start + a->cut0, start + hop);
    for (int tile = 0; tile < a->tiles; tile++) {
        const int l0 = 1 + tile * 16;
        int end = a->samples - start - l0;
        end = end > hop ? hop : end;
        end = end < 0 ? 0 : end;
        const int zoneStart = a->zones[2 * tile] < end ? a->zones[2 * tile] : end;
        const int zoneEnd = a->zones[2 * tile + 1] < end ? a->zones[2 * tile + 1] : end;
        odml_v8d va = 0, vb = 0;
        block_accumulate(y, start, start + zoneStart, l0, &va, &vb, 0);
        // Row 0 of the history: the sums before the zone; row k: after its k-th t.
        odml_store8d(a->history, va);
        odml_store8d(a->history + 8, vb);
        block_accumulate(y, start + zoneStart, start + zoneEnd, l0, &va, &vb, a->history + 16);
        const int rows = zoneEnd - zoneStart, last = l0 + 15 < a->lags ? l0 + 15 : a->lags;
        for (int lag = l0; lag <= last; lag++) {
            const int row = a->step[lag] < rows ? a->step[lag] : rows;
            a->partial[lag] = a->history[row * 16 + lag - l0];
        }
        block_accumulate(y, start + zoneEnd, start + end, l0, &va, &vb, 0);
        odml_store8d(a->whole + l0, va);
        odml_store8d(a->whole + l0 + 8, vb);
    }
}

ODML_DISPATCH(autocorrelation_block, autocorrelation_block_impl, const block_args *)

void odml_autocorrelation_block(const double *y, int start, int hop, int samples, int lags, int tiles, int cut0,
                                const int *zones, const int *step, double *prefix, double *whole, double *partial,
                                double *history, int level) {
    const block_args args = {y, start, hop, samples, lags, tiles, cut0, zones, step, prefix, whole, partial, history};
    autocorrelation_block_dispatch(&args, level);
}
