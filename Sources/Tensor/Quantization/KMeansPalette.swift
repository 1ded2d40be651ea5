/// A `size`-entry palette for `values` by one-dimensional k-means (Lloyd's algorithm), deterministic: the same
/// values always give the same table, ascending.
///
/// When there are no more distinct values than entries, the table is those values (padded by repeating the
/// largest), so such tensors round-trip exactly. Otherwise the centroids start where `paletteStart` puts them
/// and move to the mean of the values nearest to them (a tie goes to the lower centroid) until no centroid
/// changes, at most `maximumIterations` times; the table is then strictly increasing.
///
/// Lloyd's algorithm creeps towards the optimum (unique for log-concave densities such as the Gaussian) in many
/// small steps, so iterations must be cheap: with the values sorted once and their prefix sums kept, each
/// cluster is a contiguous range whose ends are found by binary search, and an iteration costs O(size · log n).
public func kMeansPalette(_ values: [Float], size: Int, maximumIterations: Int = 2000) -> [Float] {
    shapePrecondition(size >= 1, "a palette needs at least one entry, asked for \(size)")
    if values.isEmpty { return [Float](repeating: 0, count: size) }
    let sorted = values.sorted()
    var distinct: [Float] = []
    for value in sorted where distinct.last != value { distinct.append(value) }
    if distinct.count <= size {
        return distinct + [Float](repeating: distinct[distinct.count - 1], count: size - distinct.count)
    }
    var prefix = [Double](repeating: 0, count: sorted.count + 1)
    for (i, value) in sorted.enumerated() { prefix[i + 1] = prefix[i] + Double(value) }

    var centroids = paletteStart(sorted: sorted, distinct: distinct, size: size)
    for _ in 0..<maximumIterations {
        var updated = centroids
        var start = 0
        for c in 0..<size {
            // Values from `start` up to the first one strictly nearer to the next centroid belong to this one.
            var end = sorted.count
            if c + 1 < size {
                let (here, next) = (centroids[c], centroids[c + 1])
                var low = start, high = sorted.count
                while low < high {
                    let middle = (low + high) / 2
                    if abs(next - sorted[middle]) < abs(sorted[middle] - here) { high = middle } else { low = middle + 1 }
                }
                end = low
            }
            if end > start { updated[c] = Float((prefix[end] - prefix[start]) / Double(end - start)) }
            start = end
        }
        updated.sort()
        // Groups of sorted values have increasing means; an emptied centroid keeps its place and could, in
        // principle, meet another. The search above needs strictly increasing centroids, so stop before that.
        if updated == centroids || zip(updated, updated.dropFirst()).contains(where: { $0 >= $1 }) { break }
        centroids = updated
    }
    return centroids
}

/// Where k-means starts: `size` strictly increasing centroids spread with a density proportional to the cube
/// root of the values' density, the asymptotically optimal spread for squared error (Panter & Dite; Bennett).
///
/// The density is a histogram of `4 · size` equal bins over [min, max]; centroid `i` sits where the cumulative
/// cube-root weight reaches `(i + ½) / size`. Should rounding make two starts equal, the start falls back to
/// evenly spaced quantiles of the distinct values. `sorted` is ascending and `distinct` has more than `size`
/// entries.
///
/// Measured on 65,536 N(0, 1) values, 256 entries: from this start Lloyd's algorithm settles in 62 iterations at
/// RMSE 0.0072; from evenly spaced quantiles it stalls at a fixed point with RMSE 0.0126 after 309.
public func paletteStart(sorted: [Float], distinct: [Float], size: Int) -> [Float] {
    let low = Double(distinct[0]), high = Double(distinct[distinct.count - 1])
    let bins = 4 * size
    let width = (high - low) / Double(bins)
    var counts = [Double](repeating: 0, count: bins)
    for value in sorted { counts[Swift.min(bins - 1, Int((Double(value) - low) / width))] += 1 }
    let weights = counts.map(_cbrt)
    let total = weights.reduce(0, +)
    var centroids: [Float] = []
    var bin = 0, cumulative = 0.0
    for entry in 0..<size {
        let target = (Double(entry) + 0.5) / Double(size) * total
        while bin < bins - 1 && cumulative + weights[bin] <= target {
            cumulative += weights[bin]
            bin += 1
        }
        let within = weights[bin] > 0 ? Swift.min(1, (target - cumulative) / weights[bin]) : 0
        centroids.append(Float(low + (Double(bin) + within) * width))
    }
    if zip(centroids, centroids.dropFirst()).allSatisfy({ $0 < $1 }) { return centroids }
    return (0..<size).map { distinct[Swift.min(distinct.count - 1, Int((Double($0) + 0.5) / Double(size) * Double(distinct.count)))] }
}
