import DataFiles
import Foundation
import Tensor
import Testing

@testable import Models

/// A phone that barely moves is `still`; uncertain windows do not vote; a recording too slow or too gappy to
/// resolve a stride is refused or uncertain, never silently labelled.
@Suite("Motion: still, votes and sample rates")
struct MotionStillAndRateTests {
    /// Samples of a phone lying on a table: gravity straight down, user acceleration `noise` g of seeded noise.
    func stillSamples(count: Int, noise: Double, seed: UInt64 = 7) -> [MotionSample] {
        var state = seed
        func uniform() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) / Double(1 << 53) * 2 - 1
        }
        return (0..<count).map { _ in
            MotionSample(gravity: (0, 0, -1), rotationRate: (0, 0, 0), userAcceleration: (noise * uniform(), noise * uniform(), noise * uniform()))
        }
    }

    /// This test's files, removed after it.
    let files = TestFiles("motion-tests")

    func write(_ text: String) throws -> String { try files.write(text) }

    @Test func aPhoneOnATableIsStillInEveryWindow() throws {
        let recording = MotionRecording(segments: [stillSamples(count: 1000, noise: 0.005)], segmentStarts: [0], rate: 50, notes: [], sourceRate: 50)
        for recognizer in [CadenceRecognizer() as any MotionWindowClassifier] {
            let timeline = try recognizer.classify(recording)
            #expect(timeline.windows.count == 12)
            #expect(timeline.windows.allSatisfy { $0.label == MotionStillness.label && !$0.uncertain }, "\(timeline.windows)")
            #expect(timeline.windows.allSatisfy { $0.confidence > 0.9 && $0.confidence <= 1 })
            #expect(timeline.label == "still" && !timeline.uncertain)
        }
    }

    @Test func stillConfidenceGrowsAsTheMotionFalls() {
        let windowing = MotionWindowing()
        func confidence(_ noise: Double) -> Double? {
            MotionStillness.confidence(windowing.windows(stillSamples(count: 256, noise: noise)), row: 0, windowing: windowing)
        }
        // Uniform noise of amplitude a has a standard deviation of a / √3.
        let values = [0.001, 0.01, 0.04, 0.2].map(confidence)
        #expect(values[3] == nil, "a 0.12 g SD is over the still level: \(values)")
        let still = values.compactMap { $0 }
        #expect(still.count == 3 && still == still.sorted(by: >), "\(values)")
        #expect(still.allSatisfy { $0 > 0.5 })
    }

    @Test func stillWindowsVoteAndUncertainWindowsDoNot() {
        func window(_ label: String, uncertain: Bool = false) -> MotionWindowPrediction {
            MotionWindowPrediction(start: 0, end: 1, label: label, confidence: 0.9, uncertain: uncertain, reason: uncertain ? "a gap" : nil)
        }
        let timeline = MotionAnswer(
            windows: [
                window("still"), window("still"), window("walking"),
                window("running", uncertain: true), window("running", uncertain: true), window("running", uncertain: true),
            ], model: "test")
        #expect(timeline.label == "still", "three running windows are uncertain and do not vote")
        #expect(timeline.votes.map(\.label) == ["still", "walking"] && timeline.votes.map(\.count) == [2, 1])
        #expect(!timeline.uncertain)
        let none = MotionAnswer(windows: [window("running", uncertain: true), window("walking", uncertain: true)], model: "test")
        #expect(none.label == "unknown" && none.uncertain && none.votes.isEmpty)
        #expect(none.reason == "every window is uncertain: a gap")
    }

    @Test func aRecordingBelowTheLowestRateIsRefused() throws {
        let samples = gaitSamples(count: 1000, period: 36, amplitude: 1.2)
        let slow = MotionRecording(segments: [samples], segmentStarts: [0], rate: 50, notes: [], sourceRate: 2)
        #expect(
            throws: DataError(
                file: "r.csv",
                message: "the samples are 0.5 s apart (median): 2 Hz, too slow to resolve a stride; "
                    + "the lowest rate accepted is 10 Hz (over twice the fastest running cadence, 3.5 steps a second)")
        ) {
            var named = slow
            named.source = "r.csv"
            _ = try CadenceRecognizer().classify(named)
        }
        let enough = MotionRecording(
            segments: [samples], segmentStarts: [0], rate: 50, notes: [], sourceRate: MotionRecordingReader.minimumSampleRate)
        #expect(try CadenceRecognizer().classify(enough).label == "running")
    }

    @Test func theReaderRefusesSlowRecordingsAndHintsAtMilliseconds() throws {
        func rows(spacing: Double, count: Int) -> String {
            "timestamp,acc.x,acc.y,acc.z\n"
                + (0..<count).map { String(format: "%g,0,%.3f,-1", Double($0) * spacing, 0.5 * sin(Double($0))) }
                .joined(separator: "\n") + "\n"
        }
        let slow = try write(rows(spacing: 0.5, count: 60))
        #expect(
            throws: DataError(
                file: slow,
                message: "the samples are 0.5 s apart (median): 2 Hz, too slow to resolve a stride; "
                    + "the lowest rate accepted is 10 Hz (over twice the fastest running cadence, 3.5 steps a second)")
        ) {
            try MotionRecordingReader.read(slow)
        }
        let milliseconds = try write(rows(spacing: 20, count: 400))
        #expect(
            throws: DataError(
                file: milliseconds,
                message: "the samples are 20 s apart (median): 0.05 Hz, too slow to resolve a stride; "
                    + "the lowest rate accepted is 10 Hz (over twice the fastest running cadence, 3.5 steps a second). "
                    + "The timestamps look like milliseconds (50 Hz if divided by 1000): the timestamp column must be in seconds")
        ) {
            try MotionRecordingReader.read(milliseconds)
        }
        let untimed = try write("acc.x,acc.y,acc.z\n" + String(repeating: "0,0,-1\n", count: 100))
        for (rate, problem) in [
            (
                5.0,
                "5 Hz, too slow to resolve a stride; the lowest rate accepted is 10 Hz (over twice the fastest running "
                    + "cadence, 3.5 steps a second)"
            ),
            (1e6, "1e+06 Hz, faster than any phone's motion sensors; the highest rate accepted is 10000 Hz"),
        ] {
            #expect(throws: DataError(file: untimed, message: "there is no timestamp column and the assumed rate (--rate) is " + problem)) {
                try MotionRecordingReader.read(untimed, assumedRate: rate)
            }
        }
        #expect(try MotionRecordingReader.read(try write(rows(spacing: 0.1, count: 100))).sourceRate.map { abs($0 - 10) < 1e-6 } == true)
        // Two minutes at 10 Hz with two-decimal timestamps (a WISDM watch recording taken every other sample): the
        // median spacing is 0.09999999999999432 s, a rate a hair under 10 Hz, and the recording is accepted.
        let tenHertz =
            "timestamp,acc.x,acc.y,acc.z\n"
            + (0..<1200).map { String(format: "%.2f,0,%.3f,-1", Double($0) / 10, 0.5 * sin(Double($0))) }.joined(separator: "\n") + "\n"
        let read = try MotionRecordingReader.read(try write(tenHertz))
        #expect(read.sourceRate.map { $0 < 10 && $0 > 9.999 } == true, "the median rate is just under 10 Hz: \(String(describing: read.sourceRate))")
        #expect(MotionRecordingReader.rateProblem(sourceRate: 9.95) == nil)
        #expect(MotionRecordingReader.rateProblem(sourceRate: 9.85) != nil)
    }

    @Test func aStreamAtTenHertzIsReadAndOneSlowerIsUncertain() throws {
        // A raw accelerometer on the wrist bobbing at a running step (2.8 Hz), streamed at 10 Hz and at 9 Hz. A
        // window's 256 grid points span 5.10 s and hold 51 or 52 samples at 10 Hz (an arrival rate of 10.0 or 10.2 Hz):
        // that is 10 Hz, not too slow; at 9 Hz they hold 46 (9.0 Hz).
        func reasons(rate: Double) throws -> [String?] {
            var stream = MotionStream(recognizer: try MotionRecognizer.shipped())
            var windows: [MotionWindowPrediction] = []
            for k in 0..<Int(30 * rate) {
                let t = Double(k) / rate
                let sample = MotionStreamSample(time: t, acceleration: (0.1, 1 + 0.8 * sin(2 * Double.pi * 2.8 * t), 0.05))
                for case let .window(window) in try stream.append(sample) { windows.append(window) }
            }
            #expect(windows.count > 10, "30 s make more than 10 windows at \(rate) Hz, got \(windows.count)")
            return windows.map(\.reason)
        }
        let tooSlow = { (reason: String?) in reason?.hasPrefix("samples arrived at") == true }
        #expect(try reasons(rate: 10).allSatisfy { !tooSlow($0) })
        #expect(try reasons(rate: 9).allSatisfy(tooSlow))
    }

    @Test func windowsAcrossAGapTooLongToBridgeAreUncertain() throws {
        // 50 Hz with one 0.6 s hole at 10 s: shorter than a window (no split), longer than a step.
        var lines = ["timestamp,acc.x,acc.y,acc.z"]
        for k in 0..<1000 where !(501...529).contains(k) {
            let t = Double(k) / 50
            lines.append(String(format: "%.2f,0,0,%.5f", t, -1 - 0.8 * sin(2 * .pi * 1.4 * t)))
        }
        let recording = try MotionRecordingReader.read(try write(lines.joined(separator: "\n") + "\n"))
        #expect(recording.segments.count == 1)
        #expect(recording.bridgedGaps.count == 1)
        let timeline = try CadenceRecognizer().classify(recording)
        let flagged = timeline.windows.filter(\.uncertain)
        let overlapping = timeline.windows.filter { $0.start <= 10.6 && $0.end >= 10 }
        #expect(flagged == overlapping && !flagged.isEmpty, "\(timeline.windows.map { ($0.start, $0.uncertain) })")
        #expect(flagged.first?.reason == "no samples for 0.60 s from 10.00 s: too long a gap to resolve a stride (at most 0.25 s is bridged)")
        #expect(!timeline.uncertain && timeline.votes.reduce(0) { $0 + $1.count } == timeline.windows.count - flagged.count)
        // Ordinary jitter (a dropped sample or two) is bridged.
        let jitter = try MotionRecordingReader.read(
            try write(
                lines.prefix(500).enumerated().filter { $0.offset % 97 != 5 }.map(\.element)
                    .joined(separator: "\n") + "\n"))
        #expect(jitter.bridgedGaps.isEmpty)
    }
}
