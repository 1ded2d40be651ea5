// Motion window kernel: the two orientation-free signals of each sample (see CPreprocessing.h for the contract).
// The windows' autocorrelations are in Swift, in one implementation (Sources/Models/Motion/SharedAutocorrelation.swift).
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
