// The shape rasterizer in one call (see CPreprocessing.h for the contract): the levelling (the polygon of the
// drawing's extreme points in 32 directions and the smallest rectangle over its edges), the placement, and the strokes drawn as anti-aliased lines into a
// map of squared distances, 16 pixels of a row at a time.
//
// Everything is in float and never contracted into fused multiply-adds, so that the Swift twin in the tests
// (`ShapeRasterizer.rasterizeReference`), doing the same operations in the same order one value at a time, gives
// the same image bit for bit at every instruction-set level. Maxima and minima are taken over sets of values, so
// their order does not matter.
#include "ODMLCommon.h"
#include "CPreprocessing.h"

#pragma clang fp contract(off)

typedef float odml_v16f __attribute__((ext_vector_type(16)));

ODML_INLINE odml_v16f odml_load16f(const float *p) { odml_v16f v; __builtin_memcpy(&v, p, sizeof v); return v; }
ODML_INLINE void odml_store16f(float *p, odml_v16f v) { __builtin_memcpy(p, &v, sizeof v); }

ODML_INLINE float odml_max16(odml_v16f v) {
    float m = v[0];
    for (int k = 1; k < 16; k++) m = v[k] > m ? v[k] : m;
    return m;
}

ODML_INLINE float odml_min16(odml_v16f v) {
    float m = v[0];
    for (int k = 1; k < 16; k++) m = v[k] < m ? v[k] : m;
    return m;
}

typedef int32_t odml_v16i __attribute__((ext_vector_type(16)));

/// `mask ? a : b` per lane (`mask` lanes all ones or all zeros, as vector comparisons give).
ODML_INLINE odml_v16f odml_select16f(odml_v16i mask, odml_v16f a, odml_v16f b) {
    return (odml_v16f)((mask & (odml_v16i)a) | (~mask & (odml_v16i)b));
}
ODML_INLINE odml_v16i odml_select16i(odml_v16i mask, odml_v16i a, odml_v16i b) { return (mask & a) | (~mask & b); }

/// Lane by lane: the larger / smaller of two values (b when they compare unordered: a NaN, from a drawing the
/// caller should have refused, never wins).
ODML_INLINE odml_v16f odml_max16f(odml_v16f a, odml_v16f b) { return odml_select16f(a > b, a, b); }
ODML_INLINE odml_v16f odml_min16f(odml_v16f a, odml_v16f b) { return odml_select16f(a < b, a, b); }

/// The levelling's directions, ODML_RASTER_DIRECTIONS of them at angles 0° to 169° (about 11° apart); each gives
/// its extreme point on both sides, so together they go round the circle.
static const float odml_direction_x[ODML_RASTER_DIRECTIONS] = {1, 5, 5, 3, 1, 2, 2, 1, 0, -1, -2, -2, -1, -3, -5, -5};
static const float odml_direction_y[ODML_RASTER_DIRECTIONS] = {0, 1, 2, 2, 1, 3, 5, 5, 1, 5, 5, 3, 1, 2, 2, 1};

/// The polygon of extreme points: for each direction d of `odml_direction_x`/`_y` in turn, the first point
/// (lowest index) where x·dx + y·dy is largest, then for each in turn the first where it is smallest — the hull
/// vertices met going round — leaving out a point that repeats the one before it, and the last when it is the
/// first (a run of the first point at the end keeps one copy: an edge of length 0, which the rectangle skips). Writes
/// the vertices to hx, hy; returns their count (≤ 2 · ODML_RASTER_DIRECTIONS).
ODML_INLINE int odml_extreme_polygon(const float *xs, const float *ys, int n, float *hx, float *hy) {
    // The directions in the lanes: one pass over the points, keeping each direction's first extreme.
    const odml_v16f dx = odml_load16f(odml_direction_x), dy = odml_load16f(odml_direction_y);
    odml_v16f most = xs[0] * dx + ys[0] * dy, least = most;
    odml_v16i mostAt = 0, leastAt = 0;
    for (int i = 1; i < n; i++) {
        const odml_v16f along = xs[i] * dx + ys[i] * dy;
        const odml_v16i above = along > most, below = along < least;
        most = odml_select16f(above, along, most);
        mostAt = odml_select16i(above, (odml_v16i)i, mostAt);
        least = odml_select16f(below, along, least);
        leastAt = odml_select16i(below, (odml_v16i)i, leastAt);
    }
    int32_t extreme[2 * ODML_RASTER_DIRECTIONS];
    odml_v16i both[2] = {mostAt, leastAt};
    __builtin_memcpy(extreme, both, sizeof extreme);
    int h = 0;
    for (int k = 0; k < 2 * ODML_RASTER_DIRECTIONS; k++) {
        const int32_t index = extreme[k];
        if (k > 0 && index == extreme[k - 1]) continue;
        if (k == 2 * ODML_RASTER_DIRECTIONS - 1 && index == extreme[0]) continue;
        hx[h] = xs[index];
        hy[h++] = ys[index];
    }
    return h;
}

/// The direction of the edge of the polygon (h vertices in hx, hy, padded to a multiple of 16 with copies of the
/// first) along which the rectangle around the vertices is smallest: the first such edge; (1, 0) when no edge has
/// a length.
ODML_INLINE void odml_smallest_rectangle(const float *hx, const float *hy, int h, float *directionX,
                                         float *directionY) {
    float best = __builtin_inff(), bestX = 1, bestY = 0;
    const int padded = (h + 15) / 16 * 16;
    for (int i = 0; i < h; i++) {
        const int j = i + 1 == h ? 0 : i + 1;
        const float ax = hx[i], ay = hy[i];
        const float ex = hx[j] - ax, ey = hy[j] - ay;
        const float lengthSquared = ex * ex + ey * ey;
        if (!(lengthSquared > 0)) continue;
        const float length = __builtin_sqrtf(lengthSquared);
        const float ux = ex / length, uy = ey / length;
        odml_v16f most = -__builtin_inff(), least = __builtin_inff(), widest = 0;
        for (int k = 0; k < padded; k += 16) {
            const odml_v16f x = odml_load16f(hx + k), y = odml_load16f(hy + k);
            const odml_v16f along = x * ux + y * uy;
            const odml_v16f across = __builtin_elementwise_abs((x - ax) * uy - (y - ay) * ux);
            most = odml_max16f(most, along);
            least = odml_min16f(least, along);
            widest = odml_max16f(widest, across);
        }
        const float area = (odml_max16(most) - odml_min16(least)) * odml_max16(widest);
        if (area < best) {
            best = area;
            bestX = ux;
            bestY = uy;
        }
    }
    *directionX = bestX;
    *directionY = bestY;
}

/// Lowers `nearest` (rows of `width` floats) to each pixel's squared distance from the segment (x0, y0)–(x1, y1),
/// for the rows within `reach` of it and the 16-pixel chunks of those rows within `reach` of it; pixels further
/// away are more than `reach` from the segment, which lights nothing.
ODML_INLINE void odml_lower_segment(float *nearest, int size, int width, float reach, float x0, float y0, float x1,
                                    float y1) {
    const float dx = x1 - x0, dy = y1 - y0;
    const float lengthSquared = dx * dx + dy * dy;
    const float inverseLength = lengthSquared > 0 ? 1 / lengthSquared : 0;
    const float limit = (float)size;
    // Held within −1…size before the conversion (a NaN gives −1, so its segment lights nothing).
#define ODML_CLAMP(v) (!((v) >= -1) ? -1 : ((v) > limit ? limit : (v)))
    int firstY = (int)__builtin_ceilf(ODML_CLAMP((y0 < y1 ? y0 : y1) - reach));
    int lastY = (int)__builtin_floorf(ODML_CLAMP((y0 < y1 ? y1 : y0) + reach));
    int firstX = (int)__builtin_ceilf(ODML_CLAMP((x0 < x1 ? x0 : x1) - reach));
    int lastX = (int)__builtin_floorf(ODML_CLAMP((x0 < x1 ? x1 : x0) + reach));
#undef ODML_CLAMP
    if (firstY < 0) firstY = 0;
    if (firstX < 0) firstX = 0;
    if (lastY > size - 1) lastY = size - 1;
    if (lastX > size - 1) lastX = size - 1;
    if (firstY > lastY || firstX > lastX) return;
    const odml_v16f lanes = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    for (int chunk = firstX / 16; chunk <= lastX / 16; chunk++) {
        const odml_v16f qx = ((float)(chunk * 16) + lanes) - x0;
        const odml_v16f qxdx = qx * dx;
        float *row = nearest + (ptrdiff_t)firstY * width + chunk * 16;
        for (int py = firstY; py <= lastY; py++, row += width) {
            const float qy = (float)py - y0;
            odml_v16f along = (qxdx + qy * dy) * inverseLength;
            along = odml_max16f(along, (odml_v16f)0);
            along = odml_min16f(along, (odml_v16f)1);
            const odml_v16f ex = qx - along * dx, ey = qy - along * dy;
            const odml_v16f distanceSquared = ex * ex + ey * ey;
            odml_store16f(row, odml_min16f(distanceSquared, odml_load16f(row)));
        }
    }
}

ODML_INLINE void raster_drawing_impl(const odml_raster_args *a) {
    const int n = a->count, size = a->size, width = (size + 15) / 16 * 16;
    const float *xs = a->xs, *ys = a->ys;
    // The axis: the smallest rectangle's side, or x.
    float ux = 1, uy = 0;
    if (a->canonical) {
        float hx[2 * ODML_RASTER_DIRECTIONS + 16], hy[2 * ODML_RASTER_DIRECTIONS + 16];
        const int h = n > 0 ? odml_extreme_polygon(xs, ys, n, hx, hy) : 0;
        for (int k = h; k < (h + 15) / 16 * 16; k++) {
            hx[k] = hx[0];
            hy[k] = hy[0];
        }
        odml_smallest_rectangle(hx, hy, h, &ux, &uy);
    }
    // The extents along the axis (u) and across it (v).
    odml_v16f lowU = __builtin_inff(), highU = -__builtin_inff(), lowV = __builtin_inff(), highV = -__builtin_inff();
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        const odml_v16f x = odml_load16f(xs + i), y = odml_load16f(ys + i);
        const odml_v16f u = x * ux + y * uy, v = y * ux - x * uy;
        lowU = odml_min16f(lowU, u);
        highU = odml_max16f(highU, u);
        lowV = odml_min16f(lowV, v);
        highV = odml_max16f(highV, v);
    }
    float minU = odml_min16(lowU), maxU = odml_max16(highU), minV = odml_min16(lowV), maxV = odml_max16(highV);
    for (; i < n; i++) {
        const float u = xs[i] * ux + ys[i] * uy, v = ys[i] * ux - xs[i] * uy;
        minU = u < minU ? u : minU;
        maxU = u > maxU ? u : maxU;
        minV = v < minV ? v : minV;
        maxV = v > maxV ? v : maxV;
    }
    // The placement: the long side horizontal when levelling, filling the image between the margins, the other
    // side stretched by at most maxStretch, centred.
    const float middle = (float)(size - 1) / 2;
    if (a->canonical && maxV - minV > maxU - minU) {
        const float t = ux;
        ux = -uy;
        uy = t;
        const float lo = minU, hi = maxU;
        minU = minV;
        maxU = maxV;
        minV = -hi;
        maxV = -lo;
    }
    const float fill = (float)size - 2 * a->margin - 1;
    const float extent = maxU - minU > maxV - minV ? maxU - minU : maxV - minV;
    float ma = 0, mb = 0, mc = 0, md = 0, me = middle, mf = middle;
    if (extent > 0) {
        const float scaleU = fill / extent;
        const float shortSide = maxV - minV > extent / a->maxStretch ? maxV - minV : extent / a->maxStretch;
        const float scaleV = a->canonical ? fill / shortSide : scaleU;
        const float centreU = (minU + maxU) / 2, centreV = (minV + maxV) / 2;
        ma = scaleU * ux;
        mb = scaleU * uy;
        mc = -scaleV * uy;
        md = scaleV * ux;
        me = middle - scaleU * centreU;
        mf = middle - scaleV * centreV;
    }
    // The strokes: a point closer than `step` to the last one kept is skipped unless it ends its stroke.
    float *nearest = a->nearest;
    for (int k = 0; k < size * width; k++) nearest[k] = __builtin_inff();
    const float reach = a->reach, stepSquared = a->step * a->step;
    int start = 0;
    for (int s = 0; s < a->strokes; s++) {
        const int end = a->strokeEnds[s];
        if (end <= start) continue;
        float x0 = ma * xs[start] + mb * ys[start] + me, y0 = mc * xs[start] + md * ys[start] + mf;
        if (end - start == 1) odml_lower_segment(nearest, size, width, reach, x0, y0, x0, y0);
        for (int p = start + 1; p < end; p++) {
            const float x1 = ma * xs[p] + mb * ys[p] + me, y1 = mc * xs[p] + md * ys[p] + mf;
            const float dx = x1 - x0, dy = y1 - y0;
            if (dx * dx + dy * dy < stepSquared && p < end - 1) continue;
            odml_lower_segment(nearest, size, width, reach, x0, y0, x1, y1);
            x0 = x1;
            y0 = y1;
        }
        start = end;
    }
    // The image: min(1, reach − distance) within reach, else 0.
    const float reachSquared = reach * reach;
    float *image = a->image;
    for (int py = 0; py < size; py++) {
        for (int chunk = 0; chunk < width; chunk += 16) {
            const odml_v16f distanceSquared = odml_load16f(nearest + (ptrdiff_t)py * width + chunk);
            odml_v16f value = odml_min16f(reach - __builtin_elementwise_sqrt(distanceSquared), (odml_v16f)1);
            value = odml_select16f(distanceSquared < reachSquared, value, (odml_v16f)0);
            value = odml_select16f(value > 0, value, (odml_v16f)0);
            float *out = image + (ptrdiff_t)py * size + chunk;
            if (chunk + 16 <= size) {
                odml_store16f(out, value);
            } else {
                float lanes[16];
                odml_store16f(lanes, value);
                for (int k = 0; chunk + k < size; k++) out[k] = lanes[k];
            }
        }
    }
}

ODML_DISPATCH(raster_drawing, raster_drawing_impl, const odml_raster_args *)

void odml_rasterize(const odml_raster_args *args, int level) { raster_drawing_dispatch(args, level); }
