import Foundation

// The stages a motion sample goes through before the windows read it, in the one implementation that a recording
// read whole (`MotionRecordingReader.assemble`) and a live stream (`MotionStream`) share: a recording is the stream
// run to its end. In order:
//
//   1. units      `MotionUnits`: g or m/s², from the median magnitude of gravity (Core Motion) or of the whole
//                 acceleration (raw); a file decides from all its samples, a stream from its first second.
//   2. gravity    `GravityFilter`: a raw accelerometer's gravity by a 0.3 Hz first-order low-pass, started from
//                 the mean of the first second; user acceleration is the rest. Core Motion gives both.
//   3. grid       `MotionGrid`: linear interpolation onto the model's rate, laid from each stretch's first sample;
//                 a gap longer than a window ends the stretch (a new segment), a shorter one over
//                 `MotionRecordingReader.maximumBridge` is bridged and flagged.
//   4. windows    `MotionWindowing.windows`: the orientation-free signals and their autocorrelations, each window
//                 a function of its own samples only (MotionWindowing+Autocorrelation.swift).
//
// So the features of a window are the same bits whether its samples came from a file or one at a time
// (MotionStreamTests says so with no tolerance).

/// Stage 1: the unit of accelerations. Core Motion and accelerometers report g; a median magnitude near 9.8 (above
/// 4) means m/s².
package enum MotionUnits {
    /// The factor that turns the accelerations into g, and the note saying so (`nil` when they are in g already),
    /// from the magnitudes of the accelerations that decide (gravity for Core Motion, the raw acceleration else).
    package static func decide(magnitudes: [Double], coreMotion: Bool) -> (scale: Double, note: String?) {
        let median = MotionRecordingReader.middle(magnitudes) ?? 0
        guard median > 4 else { return (1, nil) }
        return (1 / MotionRecordingReader.standardGravity, MotionRecordingReader.unitsNote(medianMagnitude: median, coreMotion: coreMotion))
    }

    /// The magnitude of one acceleration, as `decide` reads it.
    package static func magnitude(_ x: Double, _ y: Double, _ z: Double) -> Double { (x * x + y * y + z * z).squareRoot() }
}

/// Stage 2: a raw accelerometer's gravity, by a first-order low-pass filter (0.3 Hz); user acceleration is the
/// rest. The filter runs across gaps and pauses, with the time since the last sample.
package struct GravityFilter: Sendable {
    /// Samples whose mean starts the filter (so it does not begin far from the truth): the first second at 50 Hz.
    package static let startSamples = 50
    /// The cut-off frequency (Hz).
    static let cutoff = 0.3

    private var gravity: (Double, Double, Double)
    private var lastTime: Double?

    /// A filter started from the mean of `start` (the first `startSamples` accelerations in g, or all there are).
    package init(start: some Collection<(Double, Double, Double)>) {
        let n = Double(max(start.count, 1))
        gravity = (
            start.map(\.0).reduce(0, +) / n, start.map(\.1).reduce(0, +) / n, start.map(\.2).reduce(0, +) / n
        )
    }

    /// The sample of acceleration `raw` (g, gravity included) taken at `time`, with gravity apart.
    package mutating func split(_ raw: (Double, Double, Double), rotationRate: (Double, Double, Double), at time: Double) -> MotionSample {
        let dt = lastTime.map { max(time - $0, 1e-4) } ?? 0.02
        lastTime = time
        let alpha = dt / (dt + 1 / (2 * Double.pi * Self.cutoff))
        var g = gravity
        g = (g.0 + alpha * (raw.0 - g.0), g.1 + alpha * (raw.1 - g.1), g.2 + alpha * (raw.2 - g.2))
        gravity = g
        return MotionSample(gravity: g, rotationRate: rotationRate, userAcceleration: (raw.0 - g.0, raw.1 - g.1, raw.2 - g.2))
    }
}

/// Stage 3: samples at any times onto a uniform grid at `rate`, by linear interpolation, one stretch at a time.
///
/// A grid point at time t is interpolated between the two samples around it: the last one before t and the first
/// at or after it. It is made when that second sample arrives; the stretch's last point may lie a hair past its
/// last sample (5.1 s · 50 Hz is 254.99999999999997 in floating point, and must give 256 points), so `finish()`
/// makes it from the last two samples.
package struct MotionGrid: Sendable {
    /// Grid points per second.
    package let rate: Double
    /// The first sample's time of the current stretch: the grid is laid from it.
    package private(set) var start: Double?
    /// The last two samples of the stretch (the newest last).
    private var last: (time: Double, sample: MotionSample)?
    private var beforeLast: (time: Double, sample: MotionSample)?
    /// Grid points made in the current stretch.
    package private(set) var count = 0

    /// A grid at `rate` points a second.
    package init(rate: Double) { self.rate = rate }

    /// The time of the current stretch's grid point `index`.
    package func pointTime(_ index: Int) -> Double { (start ?? 0) + Double(index) / rate }

    /// Takes the sample at `time` (after the last one) and appends the grid points it completes to `points`.
    package mutating func add(_ sample: MotionSample, at time: Double, to points: inout [MotionSample]) {
        guard let previous = last else {
            // The stretch's first sample is its first grid point.
            start = time
            last = (time, sample)
            count = 1
            points.append(sample)
            return
        }
        beforeLast = previous
        last = (time, sample)
        // Points up to this sample, no more than the stretch's span holds (`through`, as `finish` and
        // `MotionRecordingReader.resampledCount` count them: with large timestamps, such as seconds since 1970,
        // a point can round to at or before a sample that the span does not reach yet).
        let through = self.through(time)
        while count <= through && pointTime(count) <= time { points.append(point(count, between: previous, and: (time, sample))) }
    }

    /// Appends the stretch's last grid point when it lies a hair past its last sample, and ends the stretch: the
    /// next sample starts a new one.
    package mutating func finish(to points: inout [MotionSample]) {
        if let a = beforeLast, let b = last {
            let through = self.through(b.time)
            while count <= through { points.append(point(count, between: a, and: b)) }
        }
        (start, last, beforeLast, count) = (nil, nil, nil, 0)
    }

    /// The last grid point index a stretch from `start` to `time` holds (with a hair of slack).
    private func through(_ time: Double) -> Int { Int((((time - (start ?? time)) * rate) + 1e-6).rounded(.down)) }

    /// Grid point `index`, between samples `a` and `b` (the fraction clamped to 0…1); counts it.
    private mutating func point(_ index: Int, between a: (time: Double, sample: MotionSample), and b: (time: Double, sample: MotionSample))
        -> MotionSample
    {
        let span = b.time - a.time, t = pointTime(index)
        let f = span > 0 ? min(1, max(0, (t - a.time) / span)) : 0
        count += 1
        return MotionRecordingReader.interpolate(a.sample, b.sample, f)
    }

    /// Whether a pause of `gap` seconds between two samples ends a stretch: longer than a window of `window` points.
    package func splits(gap: Double, window: Int) -> Bool { gap > Double(window) / rate }

    /// Whether a gap of `gap` seconds inside a stretch is bridged by a straight line long enough to flag the
    /// windows across it (`MotionRecordingReader.maximumBridge`).
    package static func flags(gap: Double) -> Bool { gap > MotionRecordingReader.maximumBridge }
}

/// How fast a window's samples arrived, which says whether it can resolve a stride
/// (`MotionRecordingReader.resolvesStride`): the one measure both drivers use, a recording read whole
/// (`MotionClassifier.classify`, from its sample times) and a stream (`MotionWindowStream`, from the times it still
/// holds), so a file and the same samples streamed label the same windows uncertain for it.
///
/// A window's samples are those from its first grid point to its last (a hair either side): all of them have
/// arrived by the time a stream completes the window, whatever comes after.
package struct MotionArrivals: Sendable {
    /// Every sample's time, on the samples' own clock, in order.
    package var times: [Double]
    /// The index in `times` of each segment's first sample.
    package var segmentFirstSample: [Int]

    /// Samples per second that arrived over the window whose first grid point is at `from` (seconds, on the samples'
    /// clock), of `window` points at `rate` a second, counted in `times` (increasing; only the window's own
    /// samples need be there).
    package static func rate(_ times: some RandomAccessCollection<Double>, from: Double, window: Int, rate: Double) -> Double {
        precondition(window >= 2, "MotionArrivals.rate: a window of \(window) points")
        let last = from + Double(window - 1) / rate
        let low = times.partitioningIndex { $0 >= from - 1e-9 }, high = times.partitioningIndex { $0 > last + 1e-9 }
        return Double(times.distance(from: low, to: high)) / (last - from)
    }

    /// The arrival rate of window `index` of segment `segment`, laid as `windowing` lays windows from the segment's
    /// first sample.
    /// `nil` when the segment is not one these times know (segments an app changed after reading).
    package func rate(segment: Int, window index: Int, windowing: MotionWindowing) -> Double? {
        guard segmentFirstSample.indices.contains(segment), times.indices.contains(segmentFirstSample[segment]) else { return nil }
        let from = times[segmentFirstSample[segment]] + Double(index * windowing.hop) / windowing.rate
        return Self.rate(times, from: from, window: windowing.window, rate: windowing.rate)
    }
}

extension RandomAccessCollection {
    /// The first index whose element satisfies `belongs`, for a collection in which every element that does comes
    /// after every one that does not (`endIndex` when none does): a binary search.
    fileprivate func partitioningIndex(where belongs: (Element) -> Bool) -> Index {
        var (low, count) = (startIndex, self.count)
        while count > 0 {
            let half = count / 2, middle = index(low, offsetBy: half)
            if belongs(self[middle]) {
                count = half
            } else {
                low = index(after: middle)
                count -= half + 1
            }
        }
        return low
    }
}

/// What every motion sample must be, wherever it comes from — a recording's row, a dataset's, samples given in code,
/// a stream's, a live session's JSON: its time finite and after the last one's, its values finite and within any
/// phone sensor's range, one kind of sample throughout. The checks and their words are written here once; each
/// reader says where the sample is (file, line and column; `sample 12`; `samples[3] acc.x`).
package struct MotionSampleRules: Sendable {
    /// The last sample taken's time and kind (`take`).
    package private(set) var lastTime: Double?, coreMotion: Bool?

    /// No sample taken yet.
    package init() {}

    /// Why `time` cannot come after `previous` (the last sample's time, if any): it is not a finite number, or it
    /// does not come after; `nil` when it can. `word` names a time as the input does (`time`, `timestamp`).
    package static func timeProblem(_ time: Double, after previous: Double?, word: String = "time") -> String? {
        guard time.isFinite else { return "\(word) \(time) is not a finite number" }
        guard let previous, !(time > previous) else { return nil }
        return "\(word) \(time) does not come after \(previous); \(word)s must increase"
    }

    /// Why `value` cannot be a sensor value: it is not finite, or beyond `MotionRecordingReader.maximumSensorMagnitude`
    /// (1000 g, m/s² or rad/s: far beyond any phone's sensors, and it keeps the features' arithmetic finite); `nil`
    /// when it can.
    @inline(__always)
    package static func valueProblem(_ value: Double) -> String? {
        let limit = MotionRecordingReader.maximumSensorMagnitude
        guard !(abs(value) <= limit) else { return nil }
        return value.isFinite
            ? "\(value) is beyond any phone sensor's range (at most \(Int(limit)) in magnitude)"
            : "\(value) is not a finite value within a phone sensor's range (at most \(Int(limit)) in magnitude)"
    }

    /// Why `sample` cannot come next — its time, its kind against the samples before, a value (in that order) — or
    /// `nil`, and then it is the last sample taken.
    package mutating func take(_ sample: MotionStreamSample) -> String? {
        if let problem = Self.timeProblem(sample.time, after: lastTime) { return problem }
        if let coreMotion, coreMotion != sample.isCoreMotion {
            return coreMotion
                ? "a raw accelerometer sample after Core Motion ones; give samples of one kind"
                : "a Core Motion sample after raw accelerometer ones; give samples of one kind"
        }
        for value in sample.row { if let problem = Self.valueProblem(value) { return problem } }
        (lastTime, coreMotion) = (sample.time, sample.isCoreMotion)
        return nil
    }
}
