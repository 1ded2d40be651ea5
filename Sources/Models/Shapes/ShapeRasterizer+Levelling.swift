import Foundation

// The allocation-free twin of `ShapeRasterizer.minimumRectangleDirection(of:bounds:)`: the same points in the
// same units, sorted into the same order, the same monotone chain (so the same hull, vertex for vertex) and the
// same rotating calipers — only kept in stack scratch as indices instead of in arrays. The direction it returns
// is therefore the reference's, bit for bit; `ShapeRasterizerSpeedTests` holds the two together.

extension ShapeRasterizer {
    /// The most points the levelling sorts by `UInt16` index; longer drawings take the reference's arrays.
    static let largestIndexedDrawing = Int(UInt16.max)

    /// The direction of a side of the smallest rectangle around the drawing's `count` points, or `nil` when they
    /// have no area: `minimumRectangleDirection(of:bounds:)` without its arrays. `bounds` and `extent` (their
    /// larger side) are as `placement` computes them, `extent` > 0 and finite.
    func levelDirection(of drawing: Drawing, count: Int, bounds: (minX: Double, minY: Double, maxX: Double, maxY: Double),
                        extent: Double) -> (Double, Double)? {
        guard count <= Self.largestIndexedDrawing else {
            // 65,536 points and more: far beyond a hand-drawn shape; the reference's arrays are as good.
            return minimumRectangleDirection(of: drawing, bounds: bounds)
        }
        let (minX, minY) = (bounds.minX, bounds.minY)
        return withHullScratch(count: count) { scratch in
            // The points in units of the drawing's size from its corner, exactly as the reference computes them.
            // Two lanes, each the reference's subtraction and division.
            let corner = SIMD2(minX, minY), extents = SIMD2(repeating: extent)
            var i = 0
            for stroke in drawing.strokes {
                stroke.withUnsafeBufferPointer { points in
                    for point in points {
                        let unit = (SIMD2(point.x, point.y) - corner) / extents
                        scratch.xs[i] = unit.x
                        scratch.ys[i] = unit.y
                        i &+= 1
                    }
                }
            }
            let hullCount = scratch.sortAndWrapHull(count: count)
            let hull = IndexedPoints(xs: scratch.xs, ys: scratch.ys, order: scratch.stack, count: hullCount)
            guard hullCount >= 3 else {
                guard let first = hull.first, let last = hull.last else { return nil }
                let length = hypot(last.x - first.x, last.y - first.y)
                return length > 0 ? ((last.x - first.x) / length, (last.y - first.y) / length) : nil
            }
            return minimumRectangle(hull).direction
        }
    }
}

/// Points `(xs[order[i]], ys[order[i]])` for `i` in `0..<count`: a hull kept as indices, as a collection.
struct IndexedPoints: RandomAccessCollection {
    let xs: UnsafeMutablePointer<Double>, ys: UnsafeMutablePointer<Double>, order: UnsafeMutablePointer<UInt16>
    let count: Int
    var startIndex: Int { 0 }
    var endIndex: Int { count }

    @inline(__always)
    subscript(position: Int) -> (x: Double, y: Double) {
        let k = Int(order[position])
        return (xs[k], ys[k])
    }
}

/// Stack scratch for the hull of `n` points: their coordinates, their sorted order (`n` indices) and a stack of
/// `2n` indices that ends as the hull (and serves the sort before that).
struct HullScratch {
    let xs: UnsafeMutablePointer<Double>, ys: UnsafeMutablePointer<Double>
    let order: UnsafeMutablePointer<UInt16>, stack: UnsafeMutablePointer<UInt16>

    /// Sorts the points by x, then y (the reference's `sorted` order), and leaves their convex hull in `stack`
    /// as Andrew's monotone chain in `convexHull` finds it: the same comparisons in the same order. Returns the
    /// hull's vertex count; with fewer than 3 points, the hull is the points in sorted order, as there.
    func sortAndWrapHull(count n: Int) -> Int {
        sort(count: n)
        guard n >= 3 else {
            stack.update(from: order, count: n)
            return n
        }
        // The lower chain, left to right, in stack[0..<lower]; then the upper chain, right to left, from the
        // lower chain's last point (the same point, sorted last), so that the reference's
        // `lower.dropLast() + upper.dropLast()` is stack[0..<lower − 1 + upper − 1].
        let lower = wrap(from: 0, to: n, by: 1, into: stack)
        let upper = wrap(from: n - 1, to: -1, by: -1, into: stack + (lower - 1))
        return lower - 1 + upper - 1
    }

    /// One half of Andrew's monotone chain over `order[first]`, `order[first + step]`, … (not `end`): `convexHull`'s
    /// loop, with its test `cross(stack[top − 2], stack[top − 1], p) <= 0` operand for operand, the two top points
    /// kept in registers. Returns the chain's length.
    @inline(__always)
    private func wrap(from first: Int, to end: Int, by step: Int, into chain: UnsafeMutablePointer<UInt16>) -> Int {
        var top = 0
        // o = stack[top − 2] and a − o, when there are two points; a = stack[top − 1] when there is one.
        var (ox, oy, ax, ay) = (0.0, 0.0, 0.0, 0.0)
        var i = first
        while i != end {
            let p = order[i]
            let (px, py) = (xs[Int(p)], ys[Int(p)])
            while top >= 2 && (ax - ox) * (py - oy) - (ay - oy) * (px - ox) <= 0 {
                top &-= 1
                (ax, ay) = (ox, oy)
                if top >= 2 {
                    let k = Int(chain[top &- 2])
                    (ox, oy) = (xs[k], ys[k])
                }
            }
            chain[top] = p
            top &+= 1
            (ox, oy, ax, ay) = (ax, ay, px, py)
            i &+= step
        }
        return top
    }

    /// `convexHull`'s turn test, operand for operand.
    @inline(__always)
    func cross(_ o: Int, _ a: Int, _ b: Int) -> Double {
        (xs[a] - xs[o]) * (ys[b] - ys[o]) - (ys[a] - ys[o]) * (xs[b] - xs[o])
    }

    /// Whether point `a` sorts before point `b`: the reference's `sorted` predicate.
    @inline(__always)
    func precedes(_ a: UInt16, _ b: UInt16) -> Bool {
        let (i, j) = (Int(a), Int(b))
        return xs[i] < xs[j] || (xs[i] == xs[j] && ys[i] < ys[j])
    }

    /// Sorts `order` (0..<n) by `precedes`, stably like the reference's `sorted`: a counting sort into `n − 1`
    /// buckets of x (x is in [0, 1]), then each bucket by insertion, or by merging when it is large (a vertical
    /// side drawn upwards). Hand-drawn outlines spread over the buckets, so this is about linear.
    func sort(count n: Int) {
        guard n >= 3 else {
            for i in 0..<n { order[i] = UInt16(truncatingIfNeeded: i) }
            if n == 2 && precedes(1, 0) { (order[0], order[1]) = (1, 0) }
            return
        }
        let buckets = n - 1
        let scale = Double(buckets)
        // Bucket starts in stack[n...n + buckets] (n + 1 ≤ 2n entries); each point's bucket in stack[0..<n] until
        // they are placed, which then serves the merge as scratch.
        let keys = stack, starts = stack + n
        starts.update(repeating: 0, count: buckets + 1)
        for i in 0..<n {
            // x in [0, 1]; anything else (a NaN from a drawing `problem(with:)` rejects) goes to an end.
            let v = xs[i] * scale
            let key = v < scale ? (v > 0 ? Int(v) : 0) : buckets - 1
            keys[i] = UInt16(truncatingIfNeeded: key)
            starts[key &+ 1] &+= 1
        }
        for b in 1...buckets { starts[b] &+= starts[b - 1] }
        for i in 0..<n {
            let key = Int(keys[i])
            order[Int(starts[key])] = UInt16(truncatingIfNeeded: i)
            starts[key] &+= 1
        }
        // Points are now in order of bucket; only those within a bucket can be out of order, so one insertion
        // pass over all of them finishes the sort (nothing moves past a smaller bucket). A large bucket in
        // reverse order (a vertical side drawn upwards) would make it quadratic: past a budget, merge instead.
        var budget = 8 &* n &+ 64
        for i in 1..<n {
            let item = order[i]
            var j = i
            while j > 0 && precedes(item, order[j &- 1]) {
                order[j] = order[j &- 1]
                j &-= 1
            }
            order[j] = item
            budget &-= i &- j
            if budget < 0 {
                mergeSort(order, count: n, scratch: stack)
                return
            }
        }
    }

    /// Stable insertion sort of `count` indices.
    @inline(__always)
    func insertionSort(_ items: UnsafeMutablePointer<UInt16>, count: Int) {
        guard count >= 2 else { return }
        for i in 1..<count {
            let item = items[i]
            var j = i
            while j > 0 && precedes(item, items[j - 1]) {
                items[j] = items[j - 1]
                j -= 1
            }
            items[j] = item
        }
    }

    /// Stable bottom-up merge sort of `count` indices, with `scratch` of as many.
    func mergeSort(_ items: UnsafeMutablePointer<UInt16>, count: Int, scratch: UnsafeMutablePointer<UInt16>) {
        let run = 8
        for start in stride(from: 0, to: count, by: run) { insertionSort(items + start, count: min(run, count - start)) }
        var (source, target) = (items, scratch)
        var width = run
        while width < count {
            for start in stride(from: 0, to: count, by: 2 * width) {
                let middle = min(start + width, count), end = min(start + 2 * width, count)
                var (i, j, k) = (start, middle, start)
                while i < middle && j < end {
                    // Equal keys keep their order: the left run's first.
                    if precedes(source[j], source[i]) { target[k] = source[j]; j += 1 } else { target[k] = source[i]; i += 1 }
                    k += 1
                }
                while i < middle { target[k] = source[i]; i += 1; k += 1 }
                while j < end { target[k] = source[j]; j += 1; k += 1 }
            }
            swap(&source, &target)
            width *= 2
        }
        if source != items { items.update(from: source, count: count) }
    }
}

/// Runs `body` with scratch for the hull of `n` (≤ 65,535) points, on the stack up to 2,048 points: in blocks of
/// at most 1,024 bytes up to 128 points (`withUnsafeTemporaryAllocation` keeps those on the stack on every
/// platform, uncleared), else in the smallest of four fixed stack frames that holds them (5.5 to 44 KiB, cleared
/// first, as Swift requires). Longer drawings get a temporary allocation of their size: the heap on Linux.
func withHullScratch<R>(count n: Int, _ body: (HullScratch) -> R) -> R {
    if n <= 128 {
        return withUnsafeTemporaryAllocation(of: Double.self, capacity: n) { xs in
            withUnsafeTemporaryAllocation(of: Double.self, capacity: n) { ys in
                withUnsafeTemporaryAllocation(of: UInt16.self, capacity: 3 * n) { indices in
                    guard let xs = xs.baseAddress, let ys = ys.baseAddress, let indices = indices.baseAddress else {
                        preconditionFailure("HullScratch: no memory for \(n) points")
                    }
                    return body(HullScratch(xs: xs, ys: ys, order: indices, stack: indices + n))
                }
            }
        }
    }
    if n <= 256 { return withStackFrame(InlineArray<352, SIMD2<Double>>.self, count: n, body) }
    if n <= 512 { return withStackFrame(InlineArray<704, SIMD2<Double>>.self, count: n, body) }
    if n <= 1024 { return withStackFrame(InlineArray<1408, SIMD2<Double>>.self, count: n, body) }
    if n <= 2048 { return withStackFrame(InlineArray<2816, SIMD2<Double>>.self, count: n, body) }
    return withUnsafeTemporaryAllocation(byteCount: HullScratch.bytes(count: n), alignment: 16) { body(HullScratch(carving: $0, count: n)) }
}

/// `body` with a cleared `Frame` on the stack as scratch for `n` points (22 bytes each, 16 per `SIMD2<Double>`).
@inline(never)
private func withStackFrame<let chunks: Int, R>(_ frame: InlineArray<chunks, SIMD2<Double>>.Type, count n: Int,
                                               _ body: (HullScratch) -> R) -> R {
    var storage = InlineArray<chunks, SIMD2<Double>>(repeating: .zero)
    return withUnsafeMutableBytes(of: &storage) { body(HullScratch(carving: $0, count: n)) }
}

extension HullScratch {
    /// Bytes for `n` points: two `Double`s and three `UInt16`s each.
    static func bytes(count n: Int) -> Int { 22 * n }

    /// The scratch for `n` points laid out in `raw` (16-byte aligned).
    init(carving raw: UnsafeMutableRawBufferPointer, count n: Int) {
        guard let base = raw.baseAddress, raw.count >= Self.bytes(count: n) else {
            preconditionFailure("HullScratch: \(raw.count) bytes for \(n) points, need \(Self.bytes(count: n))")
        }
        let indices = (base + 16 * n).bindMemory(to: UInt16.self, capacity: 3 * n)
        self.init(xs: base.bindMemory(to: Double.self, capacity: n), ys: (base + 8 * n).bindMemory(to: Double.self, capacity: n),
                  order: indices, stack: indices + n)
    }
}
