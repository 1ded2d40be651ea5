// The preprocessing kernels of the two recognizers: the shape rasterizer (levelling, placement and
// drawing, in float), and the motion windows' signals and autocorrelation. Compiled per instruction set
// with the engine's target attributes (ODMLCommon.h, from CKernels) and chosen at run time by the `level` the
// caller passes (`Kernels.level`); only `Models` imports it, through Sources/Models/PreprocessingKernels.swift.
#ifndef CPREPROCESSING_H
#define CPREPROCESSING_H

#include <stddef.h>
#include <stdint.h>

/// The number of directions (half a turn, about 11° apart) in which the levelling takes a drawing's extreme points.
#define ODML_RASTER_DIRECTIONS 16

/// A drawing for `odml_rasterize`: its `count` points normalized to 0…1 (x and y apart, in stroke order), the
/// strokes as the index one past each one's last point (`strokeEnds`, ascending, the last one `count`).
///
/// The image (`size × size` floats, row 0 at the top) is made in three steps, all in float:
/// 1. With `canonical`, the axis is the direction of the smallest rectangle around the polygon of the drawing's
///    extreme points: for each of ODML_RASTER_DIRECTIONS integer directions d (Raster.c), the first point where
///    x·dx + y·dy is largest, then for each the first where it is smallest — hull vertices in the order going
///    round, so a straight side of the hull is an edge — each kept once where it repeats in succession. Over each
///    polygon edge of nonzero length (unit vector u = edge / |edge|), the rectangle's area is (max − min of the
///    vertices along u) · (max of their distances from the edge's line), and the first edge with the smallest area
///    wins. Else (or with no edge) x.
/// 2. The points measured along the axis (u = x·ux + y·uy) and across it (v = y·ux − x·uy) give the placement:
///    with `canonical` the longer extent is made horizontal; the larger extent fills `size − 2·margin − 1` pixels,
///    the other is scaled alike or (with `canonical`) stretched to fill by at most `maxStretch`; centred.
/// 3. Each stroke's points, placed, make segments; a point closer than `step` pixels to the last one kept is
///    skipped unless it ends its stroke (a one-point stroke is a segment of length 0). A pixel's value is
///    min(1, reach − d) for its centre's distance d to the nearest segment, when d < reach, else 0.
///
/// `nearest` is scratch of `size · ((size + 15) / 16 · 16)` floats.
typedef struct {
    const float *xs, *ys;
    int count;
    const int32_t *strokeEnds;
    int strokes;
    int size, canonical;
    float margin, maxStretch, reach, step;
    float *nearest, *image;
} odml_raster_args;

void odml_rasterize(const odml_raster_args *args, int level);

/// The motion windows' two signals of `count` device-motion samples: per sample, with gravity g and user
/// acceleration u (three doubles each, at `gravityOffset` and `accelerationOffset` bytes into the sample; samples
/// `stride` bytes apart), `vertical[i] = (float)(|g| > 0 ? u·g / |g| : 0)` and
/// `horizontal[i] = (float)√max(0, |u|² − vertical²)` (the vertical before rounding to float). In double, with
/// the arithmetic (and order) of the Swift reference `MotionWindowing.features(of:)`: bit-identical to it.
void odml_motion_signals(const void *samples, int count, ptrdiff_t stride, ptrdiff_t gravityOffset,
                         ptrdiff_t accelerationOffset, float *vertical, float *horizontal, int level);

/// Zeros `odml_window_autocorrelation` keeps after the window in its scratch.
#define ODML_AUTOCORRELATION_PAD 64

/// The longest window `odml_window_autocorrelation` takes without a scratch of the caller's.
#define ODML_AUTOCORRELATION_STACK_WINDOW 4096

/// One window's normalized autocorrelation: `signal` (`window` floats) less its mean (in double, rounded to float) is
/// written to `scratch` (`lags + window + ODML_AUTOCORRELATION_PAD` doubles, the window's part used as floats; NULL
/// for windows up to ODML_AUTOCORRELATION_STACK_WINDOW: then the kernel's own stack), with zeros after it;
/// `output[l − 1]` for l = 1…lags (lags < window) receives Σ_{t < window − l} c_t·c_{t+l} / Σ c_t² (zeros when
/// Σ c_t² ≤ `noiseEnergy`); `mean` and `energy` receive the mean and Σ c_t², both in double. The lag sums are float
/// fused multiply-adds in an order the code fixes (even and odd t apart), not the vector width. With `smoothing`
/// k > 1 (odd, at most lags), each output is then the mean of those within k / 2 lags of it (fewer at the ends),
/// summed in double from the left and divided by how many. Every `level` gives the same bits.
void odml_window_autocorrelation(const float *signal, int window, int lags, int smoothing, double noiseEnergy,
                                 double *scratch, float *output, double *mean, double *energy, int level);

#endif
