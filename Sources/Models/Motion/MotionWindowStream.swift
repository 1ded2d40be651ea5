import Foundation
import Tensor

/// Where a `MotionGridFeed` puts what it makes: the grid points of each stretch of samples, and what it met on the
/// way. A recording read whole keeps the points (`MotionRecordingReader.assemble`); a stream makes windows of them
/// as they come (`MotionWindowStream`).
protocol MotionGridSink {
    /// The grid points made and not yet taken.
    var points: [MotionSample] { get set }
    /// A stretch starts with the sample at `time`: the next `sampleAdded` is its first.
    mutating func stretchStarted(at time: Double)
    /// The sample at `time` went onto the grid of the stretch that started at `start`; its points are in `points`.
    mutating func sampleAdded(at time: Double, stretchStart start: Double)
    /// The samples at the bounds of `gap` are further apart than `MotionRecordingReader.maximumBridge`, and the
    /// grid bridges them by interpolation.
    mutating func bridged(_ gap: ClosedRange<Double>)
    /// The stretch that started at `start` ended; its last points are in `points`.
    mutating func stretchEnded(stretchStart start: Double)
    /// A gap of `gap` seconds after the sample at `time`, longer than a window, ended the stretch.
    mutating func split(gap: Double, after time: Double)
}

/// The one way from checked samples to grid points, for a recording read whole and for a stream alike: the units
/// (given, or decided from the first `headSamples` samples), a raw accelerometer's gravity filter (started from the
/// first second of the first stretch), the gaps (bridged by interpolation, or ending the stretch when longer than a
/// window) and the grid (MotionPipeline.swift's stages). The samples' checks are `MotionSampleRules`', made before.
struct MotionGridFeed<Sink: MotionGridSink> {
    /// Samples that decide the units and start a raw accelerometer's gravity filter: the first second at 50 Hz.
    static var headSamples: Int { GravityFilter.startSamples }

    /// The grid's rate (Hz) and a window's length in grid points (a gap longer than a window ends the stretch).
    let rate: Double, window: Int
    /// Whether the last sample was Core Motion's.
    private(set) var coreMotion: Bool?
    /// What was assumed about the input (the units decided, a raw accelerometer's gravity filter).
    private(set) var assumptions: [String] = []
    /// g per given unit, once known.
    private var scale: Double?
    /// Samples held until `headSamples` have arrived (or the stretch ends), to decide the units and the filter's start.
    private var head: [MotionStreamSample] = []
    /// A raw accelerometer's gravity, once started.
    private var gravity: GravityFilter?
    /// The current stretch's grid.
    private var grid: MotionGrid
    /// The time of the last sample that went onto the grid in the current stretch.
    private(set) var lastStretchTime: Double?
    /// Where the points go.
    var sink: Sink

    /// A feed onto a grid at `rate` Hz, accelerations multiplied by `scale` to make g (or, `nil`, the scale decided
    /// from the first `headSamples` samples).
    init(rate: Double, window: Int, scale: Double?, sink: Sink) {
        (self.rate, self.window, self.scale, self.sink) = (rate, window, scale, sink)
        grid = MotionGrid(rate: rate)
    }

    /// The last sample's time, held or on the grid, in the current stretch.
    var lastSampleTime: Double? { head.last?.time ?? lastStretchTime }

    /// Whether a gap of `gap` seconds before the next sample ends the stretch (longer than a window).
    func splits(gap: Double) -> Bool { grid.splits(gap: gap, window: window) }

    /// Takes one checked sample: a gap longer than a window before it ends the stretch first (`sink.split`).
    mutating func take(_ sample: MotionStreamSample) {
        if let last = lastSampleTime, splits(gap: sample.time - last) {
            endStretch()
            sink.split(gap: sample.time - last, after: last)
            lastStretchTime = nil
        }
        coreMotion = sample.isCoreMotion
        guard scale == nil || (!sample.isCoreMotion && gravity == nil) else { return process(sample) }
        head.append(sample)
        if head.count >= Self.headSamples { finishHead() }
    }

    /// Ends the current stretch: runs the held samples through and makes the grid's last point.
    /// `lastStretchTime` stays until `forgetStretch()`.
    mutating func endStretch() {
        finishHead()
        guard let start = grid.start else { return }
        grid.finish(to: &sink.points)
        sink.stretchEnded(stretchStart: start)
    }

    /// Forgets the ended stretch's last time: the next sample starts a new one (the units and a raw filter's state
    /// stay).
    mutating func forgetStretch() { lastStretchTime = nil }

    /// Decides what the head decides (units; a raw accelerometer's filter start) and runs its samples through.
    private mutating func finishHead() {
        guard !head.isEmpty else { return }
        if scale == nil {
            let magnitudes = head.map { MotionUnits.magnitude($0.acceleration.x, $0.acceleration.y, $0.acceleration.z) }
            let (decided, note) = MotionUnits.decide(magnitudes: magnitudes, coreMotion: coreMotion != false)
            scale = decided
            if let note { assumptions.append(note) }
        }
        if coreMotion == false, gravity == nil {
            assumptions.append(MotionRecordingReader.gravityFilterNote)
            let s = scale ?? 1
            gravity = GravityFilter(
                start: head.prefix(GravityFilter.startSamples).map { ($0.acceleration.x * s, $0.acceleration.y * s, $0.acceleration.z * s) })
        }
        let held = head
        head = []
        for sample in held { process(sample) }
    }

    /// The sample in g, gravity apart, then onto the grid.
    private mutating func process(_ sample: MotionStreamSample) {
        let s = scale ?? 1, a = sample.acceleration, r = sample.rotationRate
        let converted: MotionSample
        if let u = sample.userAcceleration {
            converted = MotionSample(
                gravity: (a.x * s, a.y * s, a.z * s), rotationRate: (r.x, r.y, r.z), userAcceleration: (u.x * s, u.y * s, u.z * s))
        } else {
            // Raw samples wait in the head until it starts the filter (`take`).
            guard var filter = gravity else { preconditionFailure("MotionGridFeed: a raw sample before the gravity filter started") }
            converted = filter.split((a.x * s, a.y * s, a.z * s), rotationRate: (r.x, r.y, r.z), at: sample.time)
            gravity = filter
        }
        if let last = lastStretchTime, MotionGrid.flags(gap: sample.time - last) { sink.bridged(last...sample.time) }
        if grid.start == nil { sink.stretchStarted(at: sample.time) }
        lastStretchTime = sample.time
        grid.add(converted, at: sample.time, to: &sink.points)
        if let start = grid.start { sink.sampleAdded(at: sample.time, stretchStart: start) }
    }
}

extension MotionGridFeed: Sendable where Sink: Sendable {}

/// A window a `MotionWindowStream` completed: the model's input and where the window lies.
package struct MotionStreamWindow: Sendable {
    /// The window's input, `[1, inputSize]`: the same bits as its row of `MotionWindowing.windows` of the recording.
    package var input: Tensor
    /// The window's first grid point's time and its end, on the samples' own clock.
    package var from: Double, to: Double
    /// Gaps bridged by interpolation in the current stretch that the window may span.
    package var bridgedGaps: [ClosedRange<Double>]
    /// Samples that arrived per second within the window.
    package var arrivalRate: Double
}

/// The samples' way to the windows' inputs, one sample at a time: `MotionGridFeed`, the path a recording read whole
/// takes too, into windows made as soon as their points are on the grid. `MotionStream` checks the samples, decides
/// the pauses and labels what this completes.
package struct MotionWindowStream: Sendable {
    /// Samples that decide the units and start a raw accelerometer's gravity filter: the first second at 50 Hz.
    package static let headSamples = MotionGridFeed<Windows>.headSamples

    private var feed: MotionGridFeed<Windows>

    /// Windows of `windowing`; accelerations multiplied by `scale` to make g, or (`nil`) the scale decided from the
    /// first `headSamples` samples.
    package init(windowing: MotionWindowing, scale: Double?) {
        feed = MotionGridFeed(rate: windowing.rate, window: windowing.window, scale: scale, sink: Windows(windowing: windowing))
    }

    /// Whether the last sample was Core Motion's.
    package var coreMotion: Bool? { feed.coreMotion }
    /// What was assumed about the input (the units decided, a raw accelerometer's gravity filter).
    package var assumptions: [String] { feed.assumptions }
    /// The time of the last sample that went onto the grid in the current stretch.
    package var lastStretchTime: Double? { feed.lastStretchTime }
    /// The last sample's time, held or on the grid, in the current stretch.
    package var lastSampleTime: Double? { feed.lastSampleTime }
    /// The times of the current stretch's samples that later windows still span.
    var arrivals: [Double] { feed.sink.arrivals }

    /// Whether a gap of `gap` seconds before the next sample ends the stretch (longer than a window).
    package func splits(gap: Double) -> Bool { feed.splits(gap: gap) }

    /// Takes one sample (checked: its time after the last, finite values of the stream's kind) and returns the
    /// windows it completed. A gap longer than a window before it is the caller's pause: `endStretch()` and
    /// `forgetStretch()` first (`MotionStream.append` does), so that the caller can report it.
    package mutating func take(_ sample: MotionStreamSample) -> [MotionStreamWindow] {
        assert(
            feed.lastSampleTime.map { !feed.splits(gap: sample.time - $0) } ?? true,
            "MotionWindowStream.take: a gap longer than a window; end the stretch first")
        feed.take(sample)
        return feed.sink.takeCompleted()
    }

    /// Ends the current stretch: runs the held samples through and makes the grid's last point, and returns the
    /// windows that completed. `lastStretchTime` stays until `forgetStretch()`.
    package mutating func endStretch() -> [MotionStreamWindow] {
        feed.endStretch()
        return feed.sink.takeCompleted()
    }

    /// Forgets the ended stretch's last time: the next sample starts a new one (the units and a raw filter's
    /// state stay).
    package mutating func forgetStretch() { feed.forgetStretch() }

    /// The grid points of the current stretch made into windows as soon as they are there; only what later windows
    /// read is kept.
    struct Windows: MotionGridSink, Sendable {
        let windowing: MotionWindowing
        /// The current stretch's last grid points (at most a window and a hop).
        var points: [MotionSample] = []
        /// The grid index of `points[0]`.
        private var bufferStart = 0
        /// The grid index where the next window starts.
        private var nextWindow = 0
        /// Bridged gaps of the current stretch, in the samples' own times.
        private var bridgedGaps: [ClosedRange<Double>] = []
        /// The times of the current stretch's samples that later windows still span.
        private(set) var arrivals: [Double] = []
        /// Windows completed and not yet taken.
        private var completed: [MotionStreamWindow] = []

        init(windowing: MotionWindowing) { self.windowing = windowing }

        /// The windows completed since the last call.
        mutating func takeCompleted() -> [MotionStreamWindow] {
            defer { completed = [] }
            return completed
        }

        mutating func stretchStarted(at time: Double) {}

        mutating func sampleAdded(at time: Double, stretchStart start: Double) {
            arrivals.append(time)
            // Arrival times only tell a window that came too slowly (under 10 Hz): past 64 a grid point the window
            // came fast enough whatever the rest, so the oldest are dropped and memory stays bounded whatever the
            // timestamps (sub-microsecond ones made it grow with every sample).
            if arrivals.count > 64 * windowing.window { arrivals.removeFirst(arrivals.count - 32 * windowing.window) }
            windowsCompleted(stretchStart: start)
        }

        mutating func bridged(_ gap: ClosedRange<Double>) { bridgedGaps.append(gap) }

        mutating func stretchEnded(stretchStart start: Double) {
            windowsCompleted(stretchStart: start)
            points.removeAll(keepingCapacity: true)
            (bufferStart, nextWindow, bridgedGaps, arrivals) = (0, 0, [], [])
        }

        /// A stream pauses before a gap longer than a window reaches the feed (`MotionStream.append`).
        mutating func split(gap: Double, after time: Double) {}

        /// The windows the grid points made so far complete; keeps only what later windows read.
        private mutating func windowsCompleted(stretchStart start: Double) {
            let (window, hop) = (windowing.window, windowing.hop)
            while bufferStart + points.count >= nextWindow + window {
                let offset = nextWindow - bufferStart
                let from = start + Double(nextWindow) / windowing.rate, to = from + Double(window) / windowing.rate
                let arrived = MotionArrivals.rate(arrivals, from: from, window: window, rate: windowing.rate)
                completed.append(
                    MotionStreamWindow(
                        input: windowing.windows(Array(points[offset..<(offset + window)])), from: from, to: to,
                        bridgedGaps: bridgedGaps, arrivalRate: arrived))
                nextWindow += hop
                let drop = min(nextWindow - bufferStart, points.count)
                if drop > 0 {
                    points.removeFirst(drop)
                    bufferStart += drop
                }
                let nextFrom = start + Double(nextWindow) / windowing.rate
                bridgedGaps.removeAll { $0.upperBound < nextFrom }
                arrivals.removeAll { $0 < nextFrom - 1e-9 }
            }
        }
    }
}
