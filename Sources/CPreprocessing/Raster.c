// Shape rasterizer kernels: each pixel's smallest squared distance to a stroke's segments, and the image from
// those distances (see CKernels.h for the contracts).
//
// Every value must come out bit for bit as the Swift reference (ShapeRasterizer.rasterizeReference) computes it,
// so the arithmetic is in double, in the Swift code's order, and never contracted into fused multiply-adds.
#include "ODMLCommon.h"
#include "CPreprocessing.h"

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

// ---- Convex hull (the levelling's): the Swift reference `convexHull`'s sort and monotone chain on indices ----

/// Whether point `a` sorts before point `b`: by x, then y (the reference's `sorted` predicate).
ODML_INLINE int odml_precedes(const double *xs, const double *ys, uint16_t a, uint16_t b) {
    return xs[a] < xs[b] || (xs[a] == xs[b] && ys[a] < ys[b]);
}

/// Stable insertion sort of `count` indices, giving up (returning 0, the indices still a permutation) once it
/// has moved them `budget` places in all; 1 when sorted.
static int odml_insertion_sort(const double *xs, const double *ys, uint16_t *items, int count, long budget) {
    for (int i = 1; i < count; i++) {
        const uint16_t item = items[i];
        int j = i;
        while (j > 0 && odml_precedes(xs, ys, item, items[j - 1])) {
            items[j] = items[j - 1];
            j--;
        }
        items[j] = item;
        budget -= i - j;
        if (budget < 0) return 0;
    }
    return 1;
}

/// Stable bottom-up merge sort of `count` indices, with `scratch` of as many.
static void odml_merge_sort(const double *xs, const double *ys, uint16_t *items, int count, uint16_t *scratch) {
    const int run = 8;
    for (int start = 0; start < count; start += run) {
        odml_insertion_sort(xs, ys, items + start, count - start < run ? count - start : run, run * run);
    }
    uint16_t *source = items, *target = scratch;
    for (int width = run; width < count; width *= 2) {
        for (int start = 0; start < count; start += 2 * width) {
            const int middle = start + width < count ? start + width : count;
            const int end = start + 2 * width < count ? start + 2 * width : count;
            int i = start, j = middle, k = start;
            while (i < middle && j < end) target[k++] = odml_precedes(xs, ys, source[j], source[i]) ? source[j++] : source[i++];
            while (i < middle) target[k++] = source[i++];
            while (j < end) target[k++] = source[j++];
        }
        uint16_t *swap = source;
        source = target;
        target = swap;
    }
    if (source != items) __builtin_memcpy(items, source, (size_t)count * sizeof *items);
}

/// Sorts `order` (0..<n, n ≥ 3) by `odml_precedes`: a counting sort into n − 1 buckets of x (x is in [0, 1]),
/// then one insertion pass (only points within a bucket can be out of order), or a merge sort past a budget of
/// moves (a large bucket in reverse order, as a vertical side drawn upwards gives). `stack` (2n) is scratch.
static void odml_sort_points(const double *xs, const double *ys, int n, uint16_t *order, uint16_t *stack) {
    const int buckets = n - 1;
    const double scale = (double)buckets;
    uint16_t *keys = stack, *starts = stack + n;
    __builtin_memset(starts, 0, (size_t)(buckets + 1) * sizeof *starts);
    for (int i = 0; i < n; i++) {
        // x in [0, 1]; anything else (a NaN from a drawing the checks reject) goes to an end.
        const double v = xs[i] * scale;
        const int key = v < scale ? (v > 0 ? (int)v : 0) : buckets - 1;
        keys[i] = (uint16_t)key;
        starts[key + 1]++;
    }
    for (int b = 1; b <= buckets; b++) starts[b] = (uint16_t)(starts[b] + starts[b - 1]);
    for (int i = 0; i < n; i++) order[starts[keys[i]]++] = (uint16_t)i;
    if (!odml_insertion_sort(xs, ys, order, n, 8L * n + 64)) odml_merge_sort(xs, ys, order, n, stack);
}

/// Which side of the line from the first sorted point f to the last r point p lies on: the reference's
/// `cross(f, r, p)`, operand for operand (< 0 below: a candidate for the lower chain only; > 0 above: the upper
/// chain only; 0 on the line: neither, as a point on the segment between the chains' ends is no vertex).
ODML_INLINE double odml_side(double fx, double fy, double rx, double ry, double px, double py) {
    return (rx - fx) * (py - fy) - (ry - fy) * (px - fx);
}

/// The monotone chains through the sorted indices (drawings too long for the gathered arrays): the same tests,
/// the points of the other side skipped as they come.
static int odml_hull_indexed(const double *xs, const double *ys, int n, const uint16_t *order, uint16_t *stack) {
    int lengths[2] = {0, 0};
    const double fx = xs[order[0]], fy = ys[order[0]], rx = xs[order[n - 1]], ry = ys[order[n - 1]];
    for (int pass = 0; pass < 2; pass++) {
        const int first = pass == 0 ? 0 : n - 1, end = pass == 0 ? n : -1, step = pass == 0 ? 1 : -1;
        uint16_t *chain = stack + (pass == 0 ? 0 : lengths[0] - 1);
        int top = 0;
        double ox = 0, oy = 0, ax = 0, ay = 0;
        for (int i = first; i != end; i += step) {
            const uint16_t p = order[i];
            const double px = xs[p], py = ys[p];
            if (i != 0 && i != n - 1) {
                const double side = odml_side(fx, fy, rx, ry, px, py);
                if (pass == 0 ? !(side < 0) : !(side > 0)) continue;
            }
            while (top >= 2 && (ax - ox) * (py - oy) - (ay - oy) * (px - ox) <= 0) {
                top--;
                ax = ox;
                ay = oy;
                if (top >= 2) {
                    const uint16_t k = chain[top - 2];
                    ox = xs[k];
                    oy = ys[k];
                }
            }
            chain[top++] = p;
            ox = ax;
            oy = ay;
            ax = px;
            ay = py;
        }
        lengths[pass] = top;
    }
    return lengths[0] - 1 + lengths[1] - 1;
}

/// One half of Andrew's monotone chain over the sorted points (sx[i], sy[i]) for i = first, first + step, … (not
/// `end`): the reference's loop, its test `cross(chain[top − 2], chain[top − 1], p) <= 0` operand for operand.
/// The chain keeps each point's coordinates beside its index (cx, cy), so a pop reloads the new second-from-top
/// point with one load, and the two top points stay in registers. Returns the chain's length.
ODML_INLINE int odml_chain(const double *sx, const double *sy, const uint16_t *order, int first, int end, int step,
                           uint16_t *chain, double *cx, double *cy) {
    int top = 0;
    double ox = 0, oy = 0, ax = 0, ay = 0;
    for (int i = first; i != end; i += step) {
        const double px = sx[i], py = sy[i];
        while (top >= 2 && (ax - ox) * (py - oy) - (ay - oy) * (px - ox) <= 0) {
            top--;
            ax = ox;
            ay = oy;
            if (top >= 2) {
                ox = cx[top - 2];
                oy = cy[top - 2];
            }
        }
        chain[top] = order[i];
        cx[top] = px;
        cy[top] = py;
        top++;
        ox = ax;
        oy = ay;
        ax = px;
        ay = py;
    }
    return top;
}

/// The most points the hull gathers into its own stack arrays (32 KiB each); longer drawings read through the
/// sorted indices.
#define ODML_HULL_GATHERED 1024

int odml_convex_hull(const double *xs, const double *ys, int n, uint16_t *order, uint16_t *stack) {
    if (n <= 0) return 0;
    if (n < 3) {
        order[0] = 0;
        if (n == 2) {
            const int swapped = odml_precedes(xs, ys, 1, 0);
            order[0] = (uint16_t)swapped;
            order[1] = (uint16_t)!swapped;
        }
        __builtin_memcpy(stack, order, (size_t)n * sizeof *stack);
        return n;
    }
    odml_sort_points(xs, ys, n, order, stack);
    // The lower chain left to right in stack[0..<lower]; then the upper chain right to left from the lower
    // chain's last point, so that the reference's `lower.dropLast() + upper.dropLast()` is
    // stack[0..<lower − 1 + upper − 1]. Points in sorted order in sx, sy; the chain's coordinates in cx, cy.
    if (n <= ODML_HULL_GATHERED) {
        // The points below the line from the first sorted point to the last go to the lower chain (compacted in
        // place in sx, sy, order), the ones above it to the upper chain (ux, uy, upperOrder), both keeping the
        // ends and the sorted order, without a branch: each chain then sees mostly its own side's vertices.
        double sx[ODML_HULL_GATHERED], sy[ODML_HULL_GATHERED], cx[ODML_HULL_GATHERED], cy[ODML_HULL_GATHERED];
        double ux[ODML_HULL_GATHERED], uy[ODML_HULL_GATHERED];
        uint16_t upperOrder[ODML_HULL_GATHERED];
        for (int i = 0; i < n; i++) {
            sx[i] = xs[order[i]];
            sy[i] = ys[order[i]];
        }
        const double fx = sx[0], fy = sy[0], rx = sx[n - 1], ry = sy[n - 1];
        const uint16_t last = order[n - 1];
        int lowerCount = 1, upperCount = 1;
        ux[0] = fx;
        uy[0] = fy;
        upperOrder[0] = order[0];
        for (int i = 1; i < n - 1; i++) {
            const double px = sx[i], py = sy[i];
            const uint16_t index = order[i];
            const double side = odml_side(fx, fy, rx, ry, px, py);
            sx[lowerCount] = px;
            sy[lowerCount] = py;
            order[lowerCount] = index;
            lowerCount += side < 0;
            ux[upperCount] = px;
            uy[upperCount] = py;
            upperOrder[upperCount] = index;
            upperCount += side > 0;
        }
        sx[lowerCount] = rx;
        sy[lowerCount] = ry;
        order[lowerCount++] = last;
        ux[upperCount] = rx;
        uy[upperCount] = ry;
        upperOrder[upperCount++] = last;
        const int lower = odml_chain(sx, sy, order, 0, lowerCount, 1, stack, cx, cy);
        const int upper = odml_chain(ux, uy, upperOrder, upperCount - 1, -1, -1, stack + (lower - 1), cx, cy);
        return lower - 1 + upper - 1;
    }
    return odml_hull_indexed(xs, ys, n, order, stack);
}

// ---- The smallest rectangle around the hull (the levelling's): the Swift `minimumRectangle`, operand for operand ----

#include <math.h>

/// The calipers over hull vertex k at (ODML_HX(k), ODML_HY(k)): through `hull` into xs, ys, or (`gathered`) at
/// xs[k], ys[k] directly. Each extreme's value is kept as it moves, so a step computes one new value, not two.
ODML_INLINE double odml_calipers(const double *xs, const double *ys, const uint16_t *hull, int n, const int gathered,
                                 double *directionX, double *directionY) {
#define ODML_HX(k) (gathered ? xs[k] : xs[hull[k]])
#define ODML_HY(k) (gathered ? ys[k] : ys[hull[k]])
    double best = __builtin_inf(), bestX = 1, bestY = 0;
    int ahead = 0, behind = 0, out = 0, first = 1;
#define ODML_NEXT(k) ((k) + 1 == n ? 0 : (k) + 1)
    for (int i = 0; i < n; i++) {
        const int j = ODML_NEXT(i);
        const double axp = ODML_HX(i), ayp = ODML_HY(i);
        const double ex = ODML_HX(j) - axp, ey = ODML_HY(j) - ayp;
        const double length = hypot(ex, ey);
        if (!(length > 0)) continue;
        const double ux = ex / length, uy = ey / length;
#define ODML_ALONG(k) (ODML_HX(k) * ux + ODML_HY(k) * uy)
#define ODML_ACROSS(k) fabs((ODML_HX(k) - axp) * uy - (ODML_HY(k) - ayp) * ux)
        double most, least, widest;
        if (first) {
            // The first edge: whole scans, keeping the first extreme (as Swift's `max(by:)` and `min(by:)`).
            most = ODML_ALONG(0);
            least = most;
            widest = ODML_ACROSS(0);
            ahead = behind = out = 0;
            for (int k = 1; k < n; k++) {
                const double along = ODML_ALONG(k), across = ODML_ACROSS(k);
                if (most < along) { most = along; ahead = k; }
                if (along < least) { least = along; behind = k; }
                if (widest < across) { widest = across; out = k; }
            }
            first = 0;
        } else {
            most = ODML_ALONG(ahead);
            for (int steps = 0; steps < n; steps++) {
                const double next = ODML_ALONG(ODML_NEXT(ahead));
                if (!(next >= most)) break;
                ahead = ODML_NEXT(ahead);
                most = next;
            }
            widest = ODML_ACROSS(out);
            for (int steps = 0; steps < n; steps++) {
                const double next = ODML_ACROSS(ODML_NEXT(out));
                if (!(next >= widest)) break;
                out = ODML_NEXT(out);
                widest = next;
            }
            least = ODML_ALONG(behind);
            for (int steps = 0; steps < n; steps++) {
                const double next = ODML_ALONG(ODML_NEXT(behind));
                if (!(next <= least)) break;
                behind = ODML_NEXT(behind);
                least = next;
            }
        }
        const double area = (most - least) * widest;
        if (area < best) {
            best = area;
            bestX = ux;
            bestY = uy;
        }
#undef ODML_ALONG
#undef ODML_ACROSS
    }
#undef ODML_NEXT
#undef ODML_HX
#undef ODML_HY
    *directionX = bestX;
    *directionY = bestY;
    return best;
}

double odml_minimum_rectangle(const double *xs, const double *ys, const uint16_t *hull, int n, double *directionX,
                              double *directionY) {
    if (n <= ODML_HULL_GATHERED) {
        double hx[ODML_HULL_GATHERED], hy[ODML_HULL_GATHERED];
        for (int k = 0; k < n; k++) {
            hx[k] = xs[hull[k]];
            hy[k] = ys[hull[k]];
        }
        return odml_calipers(hx, hy, hull, n, 1, directionX, directionY);
    }
    return odml_calipers(xs, ys, hull, n, 0, directionX, directionY);
}
