import DataFiles
import Foundation

/// A recording as the window classifier reads it: each segment's vertical and horizontal signals
/// (`MotionWindowing.signals`), 8 bytes a sample where a `MotionSample` takes 72, with what the answer and its
/// errors say of the recording. `MotionRecordingReader.readSignals` makes one from a file without holding the
/// samples; `init(_:)` from a recording read whole. `classify` and `serve` answer from it.
package struct MotionSignals: Sendable {
    /// Each segment's signals, one value a sample each.
    package var segments: [(vertical: [Float], horizontal: [Float])]
    /// Seconds from the recording's start to each segment's first sample.
    package var segmentStarts: [Double]
    /// Notes for the user (as `MotionRecording.notes`).
    package var notes: [String]
    /// The rate the recording arrived at, and the one assumed without timestamps (as `MotionRecording`'s).
    package var sourceRate: Double?, assumedRate: Double?
    /// Where consecutive samples are far enough apart to make windows over them uncertain.
    package var bridgedGaps: [ClosedRange<Double>]
    /// Where the recording came from, named in errors.
    package var source: String
    /// When its samples arrived (as `MotionRecording.arrivals`).
    package var arrivals: MotionArrivals?

    /// The signals of `recording`'s samples.
    package init(_ recording: MotionRecording) {
        segments = recording.segments.map { MotionWindowing.signals($0) }
        (segmentStarts, notes, sourceRate, assumedRate) = (recording.segmentStarts, recording.notes, recording.sourceRate, recording.assumedRate)
        (bridgedGaps, source, arrivals) = (recording.bridgedGaps, recording.source, recording.arrivals)
    }

    /// Signals made by `MotionRecordingReader.assemble` (`SignalSegments`).
    init(
        segments: [(vertical: [Float], horizontal: [Float])], segmentStarts: [Double], notes: [String], sourceRate: Double?,
        assumedRate: Double?, bridgedGaps: [ClosedRange<Double>], source: String, arrivals: MotionArrivals?
    ) {
        (self.segments, self.segmentStarts, self.notes) = (segments, segmentStarts, notes)
        (self.sourceRate, self.assumedRate, self.bridgedGaps, self.source) = (sourceRate, assumedRate, bridgedGaps, source)
        self.arrivals = arrivals
    }
}

/// Where `MotionRecordingReader.assemble` puts the grid points of each stretch: its `MotionGridFeed` appends them to
/// `points`, and its sink (`RecordingPoints`) calls `added()` after each sample and `endSegment()` after each stretch.
protocol MotionSegmentBuilder {
    /// No points yet.
    init()
    /// The points made and not yet taken.
    var points: [MotionSample] { get set }
    /// A stretch of about `expected` points starts.
    mutating func startSegment(expected: Int)
    /// Points were appended.
    mutating func added()
    /// The stretch ended; its points are all in `points`.
    mutating func endSegment()
}

/// The points of each stretch kept as samples: a `MotionRecording`'s segments.
struct SampleSegments: MotionSegmentBuilder {
    var points: [MotionSample] = []
    var segments: [[MotionSample]] = []

    mutating func startSegment(expected: Int) { points.reserveCapacity(expected) }
    mutating func added() {}
    mutating func endSegment() {
        segments.append(points)
        points = []
    }
}

/// The points of each stretch turned into signals a few thousand at a time, so that the samples are never held.
struct SignalSegments: MotionSegmentBuilder {
    /// Points turned into signals at a time.
    static let batch = 4096

    var points: [MotionSample] = []
    var segments: [(vertical: [Float], horizontal: [Float])] = []
    private var vertical: [Float] = [], horizontal: [Float] = []

    mutating func startSegment(expected: Int) {
        vertical.reserveCapacity(expected)
        horizontal.reserveCapacity(expected)
        points.reserveCapacity(Self.batch + 64)
    }

    mutating func added() { if points.count >= Self.batch { take() } }

    mutating func endSegment() {
        take()
        segments.append((vertical, horizontal))
        (vertical, horizontal) = ([], [])
    }

    /// Appends the signals of `points` and empties it.
    private mutating func take() {
        let (start, count) = (vertical.count, points.count)
        vertical.append(contentsOf: repeatElement(0, count: count))
        horizontal.append(contentsOf: repeatElement(0, count: count))
        points.withUnsafeBufferPointer { samples in
            vertical.withUnsafeMutableBufferPointer { v in
                horizontal.withUnsafeMutableBufferPointer { h in
                    MotionWindowing.signals(
                        samples, vertical: UnsafeMutableBufferPointer(rebasing: v[start...]),
                        horizontal: UnsafeMutableBufferPointer(rebasing: h[start...]))
                }
            }
        }
        points.removeAll(keepingCapacity: true)
    }
}
