// Shape rasterizer kernels: each pixel's smallest squared distance to a stroke's segments, and the image from
// those distances (see CKernels.h for the contracts).
//
// Every value must come out bit for bit as the Swift reference (ShapeRasterizer.rasterizeReference) computes it,
// so the arithmetic is in double, in the Swift code's order, and never contracted into fused multiply-adds.
#include "Common.h"

#pragma clang fp contract(off)

typedef double odml_v4d __attribute__((ext_vector_type(4)));
/// What comparing two `odml_v4d` gives: 64-bit lanes, all ones where true.
typedef __typeof__((odml_v4d)0 < (odml_v4d)0) odml_v4l;

/// `mask ? a : b` per lane (`mask` lanes all ones or all zeros, as vector comparisons give).
ODML_INLINE odml_v4d odml_select4d(odml_v4l mask, odml_v4d a, odml_v4d b) {
    return (odml_v4d)((mask & (odml_v4l)a) | (~mask & (odml_v4l)b));
}

/// 1.5 · 2⁵²: adding it rounds any double within ±2⁵¹ to a whole number, which the low bits of the sum hold.
static const double odml_rounding_shift = 6755399441055744.0;

/// `value` held within −1…size (a NaN stays NaN).
ODML_INLINE double odml_clamped_to_image(double value, double size) {
    double clamped = value;
    if (clamped < -1) clamped = -1;
    if (clamped > size) clamped = size;
    return clamped;
}

/// A whole number within ±2⁵¹ as an integer: the low bits of its sum with 1.5 · 2⁵² (any other value gives some
/// integer, which the caller clamps).
ODML_INLINE int64_t odml_whole_number(double whole) {
    double sum = whole + odml_rounding_shift, shift = odml_rounding_shift;
    uint64_t bits, shiftBits;
    __builtin_memcpy(&bits, &sum, sizeof bits);
    __builtin_memcpy(&shiftBits, &shift, sizeof shiftBits);
    return (int64_t)(bits - shiftBits);
}

/// `value` rounded up, after clamping to −1…size.
ODML_INLINE int64_t odml_rounded_up(double value, double size) {
    double clamped = odml_clamped_to_image(value, size);
    double nearest = (clamped + odml_rounding_shift) - odml_rounding_shift;
    return odml_whole_number(nearest < clamped ? nearest + 1 : nearest);
}

/// `value` rounded down, after clamping to −1…size.
ODML_INLINE int64_t odml_rounded_down(double value, double size) {
    double clamped = odml_clamped_to_image(value, size);
    double nearest = (clamped + odml_rounding_shift) - odml_rounding_shift;
    return odml_whole_number(nearest > clamped ? nearest - 1 : nearest);
}

/// Lowers `nearest` to each pixel's squared distance from the segment (x0, y0) + t (dx, dy), t in 0…1, for the
/// pixel centres within `reach` of the segment's box (clamped to the image): the pixels the Swift reference's
/// `drawSegment` visits, with its arithmetic, four pixels of a row at a time.
///
/// `drawSegment` skips a segment with a coordinate that is not finite; here its distances come out NaN or ∞,
/// which lower nothing (and the box is clamped to the image), so it lights nothing either.
ODML_INLINE void odml_approach(const odml_raster_stroke_args *a, double x0, double y0, double x1, double y1,
                               double dx, double dy, double lengthSquared) {
    const int64_t size = a->size;
    const double sizeD = (double)size, reach = a->reach;
    double *nearest = a->nearest;
    const double inverseLength = lengthSquared > 0 ? 1 / lengthSquared : 0;
    const double lowX = x1 < x0 ? x1 : x0, highX = x1 < x0 ? x0 : x1;
    const double lowY = y1 < y0 ? y1 : y0, highY = y1 < y0 ? y0 : y1;
    int64_t firstX = odml_rounded_up(lowX - reach, sizeD), lastX = odml_rounded_down(highX + reach, sizeD);
    int64_t firstY = odml_rounded_up(lowY - reach, sizeD), lastY = odml_rounded_down(highY + reach, sizeD);
    if (firstX < 0) firstX = 0;
    if (firstY < 0) firstY = 0;
    if (lastX > size - 1) lastX = size - 1;
    if (lastY > size - 1) lastY = size - 1;
    if (firstX > lastX || firstY > lastY) return;
    if (size < 4) {
        // Rows narrower than the four lanes: one pixel at a time.
        for (int64_t py = firstY; py <= lastY; py++) {
            const double qy = (double)py - y0;
            for (int64_t px = firstX; px <= lastX; px++) {
                const double qx = (double)px - x0;
                double along = (qx * dx + qy * dy) * inverseLength;
                along = along >= 0 ? along : 0;
                along = along < 1 ? along : 1;
                const double ex = qx - along * dx, ey = qy - along * dy;
                const double distanceSquared = ex * ex + ey * ey;
                double *cell = nearest + py * size + px;
                if (distanceSquared < *cell) *cell = distanceSquared;
            }
        }
        return;
    }
    const odml_v4d zero = 0, one = 1, lanes = {0, 1, 2, 3}, infinity = __builtin_inf();
    const double leftmost = (double)firstX, rightmost = (double)lastX;
    for (int64_t column = firstX; column <= lastX;) {
        // Four pixels of the row from `start`, kept inside the row; lanes outside firstX…lastX are held at +∞.
        const int64_t start = column < size - 4 ? column : size - 4;
        const odml_v4d pixelX = (double)start + lanes;
        const odml_v4d outside = odml_select4d((pixelX < leftmost) | (pixelX > rightmost), infinity, zero);
        const odml_v4d qx = pixelX - x0;
        const odml_v4d qxdx = qx * dx;
        double *row = nearest + firstY * size + start;
        double pixelY = (double)firstY;
        for (int64_t py = firstY; py <= lastY; py++) {
            const double qy = pixelY - y0;
            // min(1, max(0, t)) as maxpd and minpd: they choose as Swift's `min` and `max` do except for a −0,
            // which gives +0 here, and a −0 or +0 along the segment gives the same distance.
            odml_v4d along = (qxdx + qy * dy) * inverseLength;
            along = odml_select4d(along > zero, along, zero);
            along = odml_select4d(along < one, along, one);
            const odml_v4d ex = qx - along * dx, ey = qy - along * dy;
            odml_v4d distanceSquared = ex * ex + ey * ey;
            distanceSquared = odml_select4d(distanceSquared < outside, outside, distanceSquared);
            odml_v4d old;
            __builtin_memcpy(&old, row, sizeof old);
            old = odml_select4d(distanceSquared < old, distanceSquared, old);
            __builtin_memcpy(row, &old, sizeof old);
            row += size;
            pixelY += 1;
        }
        column = start + 4;
    }
}

ODML_INLINE void raster_stroke_impl(const odml_raster_stroke_args *a) {
    if (a->count <= 0) return;
    const double originX = a->originX, originY = a->originY, inverseUnit = a->inverseUnit;
    const double ma = a->a, mb = a->b, mc = a->c, md = a->d, me = a->e, mf = a->f;
    const char *point = (const char *)a->points;
    const ptrdiff_t stride = a->pointStride, yOffset = a->yOffset;
    const int count = a->count;
#define ODML_APPLY(p, X, Y)                                                              \
    do {                                                                                 \
        double px_, py_;                                                                 \
        __builtin_memcpy(&px_, (p), sizeof px_);                                         \
        __builtin_memcpy(&py_, (p) + yOffset, sizeof py_);                               \
        const double u_ = (px_ - originX) * inverseUnit, v_ = (py_ - originY) * inverseUnit; \
        X = ma * u_ + mb * v_ + me;                                                      \
        Y = mc * u_ + md * v_ + mf;                                                      \
    } while (0)
    double x0, y0;
    ODML_APPLY(point, x0, y0);
    if (count == 1) odml_approach(a, x0, y0, x0, y0, 0, 0, 0);
    for (int index = 1; index < count; index++) {
        double x1, y1;
        ODML_APPLY(point + (ptrdiff_t)index * stride, x1, y1);
        const double dx = x1 - x0, dy = y1 - y0;
        const double lengthSquared = dx * dx + dy * dy;
        if (lengthSquared < 0.25 && index < count - 1) continue;
        odml_approach(a, x0, y0, x1, y1, dx, dy, lengthSquared);
        x0 = x1;
        y0 = y1;
    }
#undef ODML_APPLY
}

ODML_DISPATCH(raster_stroke, raster_stroke_impl, const odml_raster_stroke_args *)

void odml_raster_stroke(const odml_raster_stroke_args *args, int level) { raster_stroke_dispatch(args, level); }

typedef struct {
    const double *nearest;
    float *image;
    int count;
    double reach, reachSquared;
} coverage_args;

ODML_INLINE void raster_coverage_impl(const coverage_args *a) {
    const double *nearest = a->nearest;
    float *image = a->image;
    const int count = a->count;
    const double reach = a->reach, reachSquared = a->reachSquared;
    const odml_v4d zero = 0, one = 1;
    int i = 0;
    for (; i + 4 <= count; i += 4) {
        odml_v4d stored;
        __builtin_memcpy(&stored, nearest + i, sizeof stored);
        // Sums of squares are ≥ +0, so the magnitude changes none; it keeps the square root a plain sqrtpd.
        const odml_v4d distanceSquared = __builtin_elementwise_abs(stored);
        odml_v4d value = reach - __builtin_elementwise_sqrt(distanceSquared);
        value = odml_select4d(value < one, value, one);
        value = odml_select4d(distanceSquared < reachSquared, value, zero);
        float lanes[4] = {(float)value.x, (float)value.y, (float)value.z, (float)value.w};
        for (int j = 0; j < 4; j++) image[i + j] = lanes[j] > 0 ? lanes[j] : 0;
    }
    for (; i < count; i++) {
        const double distanceSquared = __builtin_fabs(nearest[i]);
        float value = 0;
        if (distanceSquared < reachSquared) {
            double v = reach - __builtin_sqrt(distanceSquared);
            value = (float)(v < 1 ? v : 1);
        }
        image[i] = value > 0 ? value : 0;
    }
}

ODML_DISPATCH(raster_coverage, raster_coverage_impl, const coverage_args *)

void odml_raster_coverage(const double *nearest, int count, double reach, double reachSquared, float *image, int level) {
    const coverage_args args = {nearest, image, count, reach, reachSquared};
    raster_coverage_dispatch(&args, level);
}
