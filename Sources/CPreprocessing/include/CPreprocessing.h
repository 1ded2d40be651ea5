// The preprocessing kernels of the two recognizers: the shape rasterizer's drawing pass, its convex hull and
// smallest rectangle (in double), and the motion windows' signals and autocorrelation. Compiled per instruction set
// with the engine's target attributes (ODMLCommon.h, from CKernels) and chosen at run time by the `level` the
// caller passes (`Kernels.level`); only `Models` imports it, through Sources/Models/PreprocessingKernels.swift.
#ifndef CPREPROCESSING_H
#define CPREPROCESSING_H

#include <stddef.h>
#include <stdint.h>

/// One stroke of a drawing lowered into a shape rasterizer's distance map: each point goes through the affine
/// map `(x, y) ↦ (a u + b v + e, c u + d v + f)`, `u = (x − originX) · inverseUnit` and `v` alike, and each
/// segment between mapped points (a point closer than ½ pixel to the previous kept one is skipped unless it is
/// the stroke's last; a one-point stroke is a segment of length 0) lowers `nearest[py * size + px]` (row-major,
/// `size × size`, size ≥ 1) to the pixel centre's squared distance from the segment, for the pixels within
/// `reach` of the segment's bounding box. In double, with the arithmetic (and order) of the Swift reference
/// `ShapeRasterizer.rasterizeReference`, so the results are bit-identical to it.
///
/// Point i's x is the double at `points + i · pointStride` bytes, its y `yOffset` bytes after it.
typedef struct {
    const void *points;
    ptrdiff_t pointStride, yOffset;
    int count;
    double originX, originY, inverseUnit, a, b, c, d, e, f;
    double reach;
    int size;
    double *nearest;
} odml_raster_stroke_args;

void odml_raster_stroke(const odml_raster_stroke_args *args, int level);

/// The image from `count` smallest squared distances: `image[i] = (float)min(1, reach − √nearest[i])` where
/// `nearest[i] < reachSquared` and that is above 0, else +0.
void odml_raster_coverage(const double *nearest, int count, double reach, double reachSquared, float *image,
                          int level);

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

/// One window's normalized autocorrelation: `signal` (`window` floats) less its mean, in double, is written to
/// `scratch` (`window + ODML_AUTOCORRELATION_PAD` doubles; NULL for windows up to
/// ODML_AUTOCORRELATION_STACK_WINDOW: then the kernel's own stack), with zeros after it; `output[l − 1]` for
/// l = 1…lags (lags < window) receives Σ_{t < window − l} c_t·c_{t+l} / Σ c_t² (zeros when Σ c_t² ≤
/// `noiseEnergy`); `mean` and `energy` receive the mean and Σ c_t². The lag sums are double fused multiply-adds in
/// a fixed order (even and odd t apart): every `level` gives the same bits.
void odml_window_autocorrelation(const float *signal, int window, int lags, double noiseEnergy, double *scratch,
                                 float *output, double *mean, double *energy, int level);

/// The convex hull of `n` points (1 ≤ n ≤ 65,535) as the Swift reference `convexHull` finds it — sorted by x
/// then y, the points split by the side of the line from the first to the last they lie on, Andrew's monotone
/// chain over each side with its test operand for operand — as indices: returns the vertex count h and
/// leaves the vertices in `stack[0..<h]`. `order` (n) and `stack` (2n) are scratch; fewer than 3 points come back
/// sorted, as there.
int odml_convex_hull(const double *xs, const double *ys, int n, uint16_t *order, uint16_t *stack);

/// The smallest rectangle around a convex polygon of n ≥ 3 vertices (`xs[hull[k]]`, `ys[hull[k]]`), as the Swift
/// `minimumRectangle` finds it (rotating calipers, operand for operand, bit for bit): returns its area and writes
/// the direction of its side along a hull edge (a unit vector; (1, 0) when no edge has a length).
double odml_minimum_rectangle(const double *xs, const double *ys, const uint16_t *hull, int n, double *directionX,
                              double *directionY);

#endif
