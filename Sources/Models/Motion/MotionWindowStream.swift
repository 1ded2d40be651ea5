import Foundation
import Tensor

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

/// The samples' way to the windows' inputs, one sample at a time: the stages of MotionPipeline.swift (units,
/// gravity filter, grid, windows) that `MotionRecordingReader.assemble` runs over a whole recording. `MotionStream`
/// checks the samples, decides the pauses and labels what this completes.
package struct MotionWindowStream: Sendable {
    /// Samples that decide the units and start a raw accelerometer's gravity filter: the first second at 50 Hz.
    package static let headSamples = GravityFilter.startSamples

    let windowing: MotionWindowing
    /// Whether the first sample was Core Motion's.
    package private(set) var coreMotion: Bool?
    /// What was assumed about the input (the units decided, a raw accelerometer's gravity filter).
    package private(set) var assumptions: [String] = []
    /// g per given unit, once known.
    private var scale: Double?
    /// Samples held until `headSamples` have arrived (or the stretch ends), to decide the units and the filter's
    /// start.
    private var head: [MotionStreamSample] = []
    /// A raw accelerometer's gravity, once started.
    private var gravity: GravityFilter?
    /// The current stretch's grid.
    private var grid: MotionGrid
    /// The time of the last sample that went onto the grid in the current stretch.
    package private(set) var lastStretchTime: Double?
    /// The current stretch's last grid points (at most a window and a hop).
    private var points: [MotionSample] = []
    /// The grid index of `points[0]`.
    private var bufferStart = 0
    /// The grid index where the next window starts.
    private var nextWindow = 0
    /// Bridged gaps of the current stretch, in the samples' own times.
    private var bridgedGaps: [ClosedRange<Double>] = []
    /// The times of the current stretch's samples that later windows still span.
    private(set) var arrivals: [Double] = []

    /// Windows of `windowing`; accelerations multiplied by `scale` to make g, or (`nil`) the scale decided from the
    /// first `headSamples` samples.
    package init(windowing: MotionWindowing, scale: Double?) {
        self.windowing = windowing
        self.scale = scale
        grid = MotionGrid(rate: windowing.rate)
    }

    /// The last sample's time, held or on the grid, in the current stretch.
    package var lastSampleTime: Double? { head.last?.time ?? lastStretchTime }

    /// Whether a gap of `gap` seconds before the next sample ends the stretch (longer than a window).
    package func splits(gap: Double) -> Bool { grid.splits(gap: gap, window: windowing.window) }

    /// Takes one sample (checked: its time after the last, finite values of the stream's kind) and returns the
    /// windows it completed.
    package mutating func take(_ sample: MotionStreamSample) -> [MotionStreamWindow] {
        coreMotion = sample.isCoreMotion
        guard scale == nil || (!sample.isCoreMotion && gravity == nil) else { return process(sample) }
        head.append(sample)
        return head.count >= Self.headSamples ? finishHead() : []
    }

    /// Ends the current stretch: runs the held samples through and makes the grid's last point, and returns the
    /// windows that completed. `lastStretchTime` stays until `forgetStretch()`.
    package mutating func endStretch() -> [MotionStreamWindow] {
        var completed = finishHead()
        let start = grid.start
        grid.finish(to: &points)
        if let start { completed += windowsCompleted(stretchStart: start) }
        points.removeAll(keepingCapacity: true)
        (bufferStart, nextWindow, bridgedGaps, arrivals) = (0, 0, [], [])
        return completed
    }

    /// Forgets the ended stretch's last time: the next sample starts a new one (the units and a raw filter's
    /// state stay).
    package mutating func forgetStretch() { lastStretchTime = nil }

    /// Decides what the head decides (units; a raw accelerometer's filter start) and runs its samples through.
    private mutating func finishHead() -> [MotionStreamWindow] {
        guard !head.isEmpty else { return [] }
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
        return held.flatMap { process($0) }
    }

    /// The sample in g, gravity apart, then onto the grid; the windows it completes.
    private mutating func process(_ sample: MotionStreamSample) -> [MotionStreamWindow] {
        let s = scale ?? 1, a = sample.acceleration, r = sample.rotationRate
        let converted: MotionSample
        if let u = sample.userAcceleration {
            converted = MotionSample(
                gravity: (a.x * s, a.y * s, a.z * s), rotationRate: (r.x, r.y, r.z), userAcceleration: (u.x * s, u.y * s, u.z * s))
        } else {
            let raw = (a.x * s, a.y * s, a.z * s)
            // Raw samples wait in the head until it starts the filter (`take`).
            guard var filter = gravity else { preconditionFailure("MotionWindowStream: a raw sample before the gravity filter started") }
            converted = filter.split(raw, rotationRate: (r.x, r.y, r.z), at: sample.time)
            gravity = filter
        }
        arrivals.append(sample.time)
        // Arrival times only tell a window that came too slowly (under 10 Hz): past 64 a grid point the window came
        // fast enough whatever the rest, so the oldest are dropped and memory stays bounded whatever the timestamps
        // (sub-microsecond ones made it grow with every sample).
        if arrivals.count > 64 * windowing.window { arrivals.removeFirst(arrivals.count - 32 * windowing.window) }
        if let last = lastStretchTime, MotionGrid.flags(gap: sample.time - last) { bridgedGaps.append(last...sample.time) }
        lastStretchTime = sample.time
        grid.add(converted, at: sample.time, to: &points)
        return grid.start.map { windowsCompleted(stretchStart: $0) } ?? []
    }

    /// The windows the grid points made so far complete; keeps only what later windows read.
    private mutating func windowsCompleted(stretchStart start: Double) -> [MotionStreamWindow] {
        var completed: [MotionStreamWindow] = []
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
        return completed
    }
}
