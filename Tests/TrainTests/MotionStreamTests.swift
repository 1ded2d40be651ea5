import DataFiles
import Foundation
import Tensor
import Testing
import WeightsFormat

@testable import Models
@testable import Train

/// The package root: the shipped Weights/ are found relative to it.
private let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The shipped int8 motion recognizer, without fallback.
private func shippedMotion() throws -> MotionRecognizer {
    let file = try ModelFile(contentsOf: root.appendingPathComponent("Weights/motion-state.int8.weights"))
    return MotionRecognizer(engine: .model(try MotionClassifier(file: file)), model: "motion-state.int8")
}

/// A played-back session: Core Motion rows (gravity, user acceleration, rotation rate), their times, and when
/// each activity began.
struct Playback {
    var times: [Double] = []
    var rows: [[Double]] = []
    var activities: [(label: String, start: Double)] = []

    /// `seconds` of a generated gait session (walking or running), continuing the times at 50 Hz.
    mutating func add(_ session: MotionGenerator.Session, seconds: Double) {
        let start = (times.last ?? -0.02) + 0.02
        activities.append((session.label, start))
        for (time, row) in zip(session.times, session.assembledRows) where time < seconds {
            times.append(start + time)
            rows.append(row)
        }
    }

    /// `seconds` of a phone lying still: gravity as the last row left it, a few mg of sensor noise.
    mutating func addStill(seconds: Double, generator: inout SeededGenerator) {
        let start = (times.last ?? -0.02) + 0.02
        activities.append((MotionStillness.label, start))
        let gravity = rows.last.map { Array($0[0..<3]) } ?? [0, 0, -1]
        for k in 0..<Int(seconds * 50) {
            times.append(start + Double(k) * 0.02)
            let noise = (0..<6).map { _ in generator.nextNormal(standardDeviation: 0.002) }
            rows.append(gravity + Array(noise[0..<3]) + Array(noise[3..<6]))
        }
    }

    func sample(_ i: Int) -> MotionStreamSample {
        let r = rows[i]
        return MotionStreamSample(
            time: times[i], gravity: (r[0], r[1], r[2]), userAcceleration: (r[3], r[4], r[5]),
            rotationRate: (r[6], r[7], r[8]))
    }

    /// The label of the activity under way at `time`.
    func truth(at time: Double) -> String {
        activities.last { $0.start <= time }?.label ?? ""
    }
}

/// Walk 30 s, stand still 15 s, run 30 s, stand still 15 s.
private func walkStopRunStop() -> Playback {
    var generator = MotionGenerator(seed: 301)
    let sessions = generator.sessions(people: 1, seconds: 40)
    var noise = SeededGenerator(seed: 302)
    var playback = Playback()
    if let walking = sessions.first(where: { $0.label == "walking" }) { playback.add(walking, seconds: 30) }
    playback.addStill(seconds: 15, generator: &noise)
    if let running = sessions.first(where: { $0.label == "running" }) { playback.add(running, seconds: 30) }
    playback.addStill(seconds: 15, generator: &noise)
    return playback
}

@Suite("Live motion: MotionStream against the whole recording")
struct MotionStreamTests {
    /// Sample by sample, every window is the whole recording's window: the same times, label and confidence.
    @Test func everyWindowIsTheRecordingsWindow() throws {
        let recognizer = try shippedMotion()
        let playback = walkStopRunStop()
        let recording = try MotionRecordingReader.assemble(
            playback.rows, times: playback.times, coreMotion: true,
            rate: recognizer.windowing.rate, window: recognizer.windowing.window)
        let offline = try recognizer.recognize(recording).windows
        var stream = MotionStream(recognizer: recognizer, confirmations: 1)
        var live: [MotionWindowPrediction] = []
        for i in playback.times.indices {
            for event in try stream.append(playback.sample(i)) { if case let .window(w) = event { live.append(w) } }
        }
        live += stream.pause().compactMap { if case let .window(w) = $0 { w } else { nil } }
        #expect(live.count == offline.count, "\(live.count) windows live, \(offline.count) in the recording")
        // The recording counts from its first sample; the stream keeps the samples' own clock.
        let origin = playback.times[0]
        for (a, b) in zip(live, offline) {
            #expect(abs(a.start - origin - b.start) < 1e-9 && abs(a.end - origin - b.end) < 1e-9, "window at \(a.start) vs \(b.start)")
            #expect(
                a.label == b.label && a.confidence == b.confidence && a.uncertain == b.uncertain,
                "window at \(a.start): live \(a.label) \(a.confidence), recording \(b.label) \(b.confidence)")
        }
    }

    /// The samples of a file, read whole and streamed in batches of any size, give the same window inputs bit for
    /// bit: the same units, gravity filter, grid and autocorrelation run in both (MotionPipeline.swift). Case 0:
    /// Core Motion at 50 Hz with a bridged gap and a gap that splits the recording; 1: a raw accelerometer in m/s² at
    /// an uneven 25 Hz, resampled; 2: the same with a first stretch of 20 samples, split off before the first
    /// second (the gravity filter starts from that stretch in both); 3: Core Motion with timestamps in seconds since
    /// 1970 at millisecond resolution (grid points that round onto a sample).
    @Test(arguments: 0..<4)
    func aFileAndTheSameSamplesStreamedGiveTheSameInputsBitForBit(variant: Int) throws {
        let raw = variant == 1 || variant == 2
        let recognizer = try shippedMotion()
        let windowing = recognizer.windowing
        let playback = walkStopRunStop()
        var lines = [
            raw
                ? "timestamp,acc.x,acc.y,acc.z"
                : "timestamp,gravity.x,gravity.y,gravity.z,userAcceleration.x,userAcceleration.y,userAcceleration.z,"
                    + "rotationRate.x,rotationRate.y,rotationRate.z"
        ]
        let g = MotionRecordingReader.standardGravity
        for (i, (time, r)) in zip(playback.times, playback.rows).enumerated() {
            if raw && i % 2 == 1 { continue }
            if (20.0..<20.4).contains(time) { continue }  // bridged: 0.4 s without a sample
            var t = time + (time > 50 ? 8 : 0) + (raw ? 0.004 * sin(Double(i)) : 0)  // 8 s more: a split
            if variant == 2 && i >= 40 { t += 6 }  // a first stretch of 20 samples
            let values = raw ? [(r[0] + r[3]) * g, (r[1] + r[4]) * g, (r[2] + r[5]) * g] : r
            let stamp = variant == 3 ? String(format: "%.3f", 1_700_000_000.123 + t) : "\(t)"
            lines.append(([stamp] + values.map { "\($0)" }).joined(separator: ","))
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("stream-bits-\(variant)-\(UUID().uuidString).csv").path
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }

        let recording = try MotionRecordingReader.read(path, rate: windowing.rate, window: windowing.window)
        #expect(recording.segments.count == (variant == 2 ? 3 : 2) && !recording.bridgedGaps.isEmpty, "\(recording.notes)")
        let whole = recording.segments.flatMap { windowing.windows($0).scalars }

        var reader = try CSVReader(path: path)
        let columns = try MotionRecordingReader.recordingColumns(reader)
        var samples: [MotionStreamSample] = []
        while try reader.advance() {
            samples.append(try MotionRecordingReader.sample(reader, columns: columns, index: samples.count, assumedRate: 50))
        }
        // As many grid points as the span check counts (it bounds what resampling allocates).
        let points = recording.segments.map(\.count).reduce(0, +)
        #expect(
            Double(points) == MotionRecordingReader.resampledCount(samples.map(\.time), rate: windowing.rate, window: windowing.window))
        var batches = SeededGenerator(seed: UInt64(71 + variant))
        for largest in [1, 7, 64, 1000, samples.count] {
            var stream = MotionStream(recognizer: recognizer, confirmations: 1)
            var streamed: [Float] = [], next = 0
            while next < samples.count {
                let size = Int.random(in: 1...largest, using: &batches)
                _ = try stream.append(contentsOf: samples[next..<min(samples.count, next + size)])
                streamed += stream.completedInputs.flatMap(\.scalars)
                next += size
            }
            _ = stream.pause()
            streamed += stream.completedInputs.flatMap(\.scalars)
            #expect(
                streamed.count == whole.count,
                "batches up to \(largest): \(streamed.count / windowing.inputSize) windows streamed, \(whole.count / windowing.inputSize) read whole")
            let differing = zip(streamed, whole).filter { $0.bitPattern != $1.bitPattern }.count
            #expect(differing == 0, "batches up to \(largest): \(differing) of \(whole.count) values differ")
        }
    }

    /// A file and the same samples streamed give the same answers, not only the same inputs: every window's start,
    /// end, label, confidence, uncertainty and reason, compared with `==` (no tolerance), whether the file is read as
    /// a recording or as signals (what `classify motion` and `serve` answer from). The samples have a bridged gap, a
    /// gap that splits them, and 15 s that arrived at 7 Hz in a file whose median rate is 50 Hz: those windows are
    /// uncertain in both, with the same reason (before, only the stream checked how fast a window's samples came).
    /// Case 0: Core Motion in g; 1: a raw accelerometer in m/s² (the units decided alike by the first second and by
    /// the whole file). The samples' clock starts at 0, where a file's and a stream's times coincide.
    @Test(arguments: 0..<2)
    func aFileAndTheSameSamplesStreamedGiveTheSameAnswers(variant: Int) throws {
        let raw = variant == 1
        let recognizer = try shippedMotion()
        let windowing = recognizer.windowing
        let playback = walkStopRunStop()
        var lines = [
            raw
                ? "timestamp,acc.x,acc.y,acc.z,gyro.x,gyro.y,gyro.z"
                : "timestamp,gravity.x,gravity.y,gravity.z,userAcceleration.x,userAcceleration.y,userAcceleration.z,"
                    + "rotationRate.x,rotationRate.y,rotationRate.z"
        ]
        var samples: [MotionStreamSample] = []
        let g = MotionRecordingReader.standardGravity
        for (i, (time, r)) in zip(playback.times, playback.rows).enumerated() {
            if (20.0..<20.4).contains(time) { continue }  // bridged: 0.4 s without a sample
            if (55.0..<70.0).contains(time) && i % 7 != 0 { continue }  // 15 s at 7 Hz
            let t = time - playback.times[0] + (time > 80 ? 8 : 0)  // from 0; 8 s more: a split
            let values = raw ? [(r[0] + r[3]) * g, (r[1] + r[4]) * g, (r[2] + r[5]) * g, r[6], r[7], r[8]] : r
            lines.append(([t] + values).map { "\($0)" }.joined(separator: ","))
            samples.append(
                raw
                    ? MotionStreamSample(time: t, acceleration: (values[0], values[1], values[2]), rotationRate: (r[6], r[7], r[8]))
                    : MotionStreamSample(time: t, gravity: (r[0], r[1], r[2]), userAcceleration: (r[3], r[4], r[5]), rotationRate: (r[6], r[7], r[8]))
            )
        }
        #expect(samples.first?.time == 0)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("stream-answers-\(variant)-\(UUID().uuidString).csv").path
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }

        let recording = try MotionRecordingReader.read(path, rate: windowing.rate, window: windowing.window)
        #expect(recording.segments.count == 2 && recording.bridgedGaps.count == 1, "\(recording.notes)")
        let read = try recognizer.recognize(recording).windows
        let signals = try recognizer.recognize(
            MotionRecordingReader.readSignals(path, assumedRate: 50, rate: windowing.rate, window: windowing.window)
        ).windows
        var stream = MotionStream(recognizer: recognizer, confirmations: 1)
        var streamed: [MotionWindowPrediction] = []
        for sample in samples {
            for case let .window(window) in try stream.append(sample) { streamed.append(window) }
        }
        for case let .window(window) in stream.pause() { streamed.append(window) }

        let slow = streamed.filter { $0.reason?.hasPrefix("samples arrived at") == true }
        #expect(slow.count >= 5 && slow.allSatisfy(\.uncertain), "\(slow.count) windows too slow")
        #expect(streamed.contains { $0.reason?.hasPrefix("no samples for 0.4") == true })
        #expect(Set(streamed.map(\.label)).isSuperset(of: ["walking", "running", "still"]))
        for (name, whole) in [("recording", read), ("signals", signals)] {
            #expect(whole.count == streamed.count, "\(name): \(whole.count) windows, streamed \(streamed.count)")
            let differing = zip(whole, streamed).filter { $0 != $1 }
            let first = differing.first.map { "\($0.0) read, \($0.1) streamed" } ?? ""
            #expect(differing.count == 0, "\(name): \(differing.count) windows differ, first \(first)")
        }
    }

    /// Walk, stop, run, stop: four changes in that order, each reported within a window and two hops of the real
    /// change, and no other.
    @Test func statesChangeOnceEachAndSoon() throws {
        let recognizer = try shippedMotion()
        let playback = walkStopRunStop()
        var stream = MotionStream(recognizer: recognizer)
        var changes: [MotionStateChange] = []
        for i in playback.times.indices {
            for event in try stream.append(playback.sample(i)) { if case let .change(c) = event { changes.append(c) } }
        }
        #expect(changes.map(\.to) == playback.activities.map(\.label), "changes \(changes.map(\.to)), truth \(playback.activities.map(\.label))")
        let windowing = recognizer.windowing
        let bound = Double(windowing.window + 2 * windowing.hop) / windowing.rate
        for (change, activity) in zip(changes, playback.activities) {
            let latency = change.time - activity.start
            #expect(latency >= 0 && latency <= bound, "\(change.to) reported \(latency) s after it began (at most \(bound) s)")
        }
        #expect(stream.changes == changes && stream.state == playback.activities.last?.label)
    }

    /// One window that disagrees does not flip the state; two in a row do (confirmations 2).
    @Test func oneOddWindowDoesNotFlipTheState() throws {
        let recognizer = try shippedMotion()
        var stream = MotionStream(recognizer: recognizer, confirmations: 2)
        // Drive the state machine with windows directly: the labelling is the recording's (tested above).
        let labels = ["walking", "walking", "running", "walking", "walking", "running", "running", "running"]
        var reported: [String] = []
        for (i, label) in labels.enumerated() {
            let window = MotionWindowPrediction(start: Double(i), end: Double(i) + 5.12, label: label, confidence: 0.9)
            reported += stream.confirm(window).compactMap { if case let .change(c) = $0 { c.to } else { nil } }
        }
        #expect(reported == ["walking", "running"])
    }

    /// A pause ends the stretch: no window spans it, and windows resume a whole window after the next sample.
    @Test func aPauseIsNeverSpanned() throws {
        let recognizer = try shippedMotion()
        let playback = walkStopRunStop()
        var stream = MotionStream(recognizer: recognizer)
        var windows: [MotionWindowPrediction] = []
        let pauseAt = 20.0, resumeAt = 26.0
        for i in playback.times.indices where playback.times[i] < pauseAt || playback.times[i] >= resumeAt {
            if playback.times[i] >= resumeAt, playback.times[i - 1] < resumeAt {
                windows += stream.pause().compactMap { if case let .window(w) = $0 { w } else { nil } }
            }
            windows += try stream.append(playback.sample(i)).compactMap { if case let .window(w) = $0 { w } else { nil } }
        }
        #expect(!windows.isEmpty)
        #expect(windows.allSatisfy { $0.end <= pauseAt + 1e-9 || $0.start >= resumeAt - 1e-9 }, "a window spans the pause")
        let firstAfter = windows.first { $0.start >= resumeAt - 1e-9 }
        #expect(firstAfter.map { abs($0.start - resumeAt) < 0.03 } == true, "first window after the pause: \(String(describing: firstAfter))")
    }

    /// A raw accelerometer in m/s², gravity included: the stream finds the units and separates gravity as the
    /// whole-recording reader does, so every window is the recording's window. (Whether a raw accelerometer's
    /// windows agree with Core Motion's is a question of the model, measured on real recordings by
    /// `realRecordingsMeetTheAccuracyTargets`.)
    @Test func aRawAccelerometerInMetresPerSecondSquaredReadsAsTheRecordingDoes() throws {
        let recognizer = try shippedMotion()
        let playback = walkStopRunStop()
        let g = MotionRecordingReader.standardGravity
        let rows = playback.rows.map { r in [(r[0] + r[3]) * g, (r[1] + r[4]) * g, (r[2] + r[5]) * g, 0, 0, 0, r[6], r[7], r[8]] }
        let recording = try MotionRecordingReader.assemble(
            rows, times: playback.times, coreMotion: false, rate: recognizer.windowing.rate, window: recognizer.windowing.window)
        #expect(recording.notes.contains { $0.contains("m/s²") }, "\(recording.notes)")
        let offline = try recognizer.recognize(recording).windows
        var raw = MotionStream(recognizer: recognizer, confirmations: 1)
        var live: [MotionWindowPrediction] = []
        for (i, r) in rows.enumerated() {
            let sample = MotionStreamSample(time: playback.times[i], acceleration: (r[0], r[1], r[2]), rotationRate: (r[6], r[7], r[8]))
            for event in try raw.append(sample) { if case let .window(w) = event { live.append(w) } }
        }
        live += raw.pause().compactMap { if case let .window(w) = $0 { w } else { nil } }
        #expect(live.count == offline.count, "\(live.count) windows live, \(offline.count) in the recording")
        let labels = Set(live.map(\.label))
        #expect(labels.isSuperset(of: ["walking", "running", "still"]), "\(labels)")
        for (a, b) in zip(live, offline) {
            #expect(
                a.label == b.label && a.confidence == b.confidence && a.uncertain == b.uncertain,
                "window at \(a.start): live \(a.label) \(a.confidence), recording \(b.label) \(b.confidence)")
        }
    }

    /// Walk, no samples for 60 s, then run (or walk again): the gap is a `paused` event naming the last sample and
    /// the state, and the first state confirmed after it a `resumed` event — with a `change` only when it is a new
    /// state, whose `since` lies after the gap (before, the change was reported with `since` before the gap, and a
    /// walk resumed after a pause reported nothing).
    @Test(arguments: ["running", "walking"])
    func aGapIsAPauseAndTheStateAfterItIsResumed(after: String) throws {
        let recognizer = try shippedMotion()
        var generator = MotionGenerator(seed: 301)
        let sessions = generator.sessions(people: 1, seconds: 40)
        var playback = Playback()
        if let walking = sessions.first(where: { $0.label == "walking" }) { playback.add(walking, seconds: 30) }
        let walkEnd = playback.times.last ?? 0
        if let next = sessions.last(where: { $0.label == after }) { playback.add(next, seconds: 30) }
        var stream = MotionStream(recognizer: recognizer)
        var events: [MotionStreamEvent] = []
        for i in playback.times.indices {
            var sample = playback.sample(i)
            if sample.time > walkEnd { sample.time += 60 }
            events += try stream.append(sample).filter { if case .window = $0 { false } else { true } }
        }
        let gapEnd = walkEnd + 60.02
        let expected: [String] = after == "running" ? ["change", "paused", "resumed", "change"] : ["change", "paused", "resumed"]
        let kinds = events.map { event -> String in
            switch event {
            case .window: "window"
            case .change: "change"
            case .paused: "paused"
            case .resumed: "resumed"
            }
        }
        #expect(kinds == expected, "\(events)")
        guard events.count >= 3, case let .paused(pause) = events[1], case let .resumed(resumption) = events[2] else { return }
        #expect(pause == MotionPause(time: walkEnd, state: "walking"))
        #expect(resumption.from == "walking" && resumption.to == after && resumption.pausedAt == walkEnd)
        #expect(resumption.since >= gapEnd - 1e-9 && resumption.time > resumption.since, "\(resumption)")
        if events.count == 4, case let .change(change) = events[3] {
            #expect(change.from == "walking" && change.to == "running" && change.since >= gapEnd - 1e-9, "\(change)")
        }
        #expect(stream.state == after)
    }

    /// `pause()` says so once; `reset()` forgets the state, the changes and the clock, as a new stream.
    @Test func pauseIsAnEventAndResetStartsAfresh() throws {
        let recognizer = try shippedMotion()
        let playback = walkStopRunStop()
        var stream = MotionStream(recognizer: recognizer)
        for i in playback.times.indices where playback.times[i] < 20 { _ = try stream.append(playback.sample(i)) }
        #expect(stream.state == "walking")
        let paused = stream.pause().compactMap { if case let .paused(p) = $0 { p } else { nil } }
        #expect(paused.count == 1 && paused.first?.state == "walking", "\(paused)")
        #expect(stream.pause().isEmpty, "nothing arrived since the last pause")
        stream.reset()
        #expect(stream.state == nil && stream.changes.isEmpty)
        // The clock starts again: times from 0, and the first change comes from no state.
        var first: MotionStateChange?
        for i in playback.times.indices where playback.times[i] < 20 {
            for case let .change(change) in try stream.append(playback.sample(i)) where first == nil { first = change }
        }
        #expect(first?.from == nil && first?.to == "walking", "\(String(describing: first))")
    }

    /// Samples slower than 10 Hz cannot resolve a stride: those windows are uncertain and change nothing.
    @Test func windowsFilledTooSlowlyAreUncertain() throws {
        let recognizer = try shippedMotion()
        let playback = walkStopRunStop()
        var stream = MotionStream(recognizer: recognizer, confirmations: 1)
        var windows: [MotionWindowPrediction] = []
        // Every sixth sample: about 8 Hz.
        for i in stride(from: 0, to: playback.times.count, by: 6) {
            windows += try stream.append(playback.sample(i)).compactMap { if case let .window(w) = $0 { w } else { nil } }
        }
        #expect(
            !windows.isEmpty && windows.allSatisfy { $0.uncertain && ($0.reason ?? "").contains("Hz in this window") },
            "\(windows.first.map { "\($0)" } ?? "no windows")")
        #expect(stream.state == nil && stream.changes.isEmpty)
    }

    /// Bad samples are refused with a reason and change nothing.
    @Test func badSamplesAreRefused() throws {
        let recognizer = try shippedMotion()
        var stream = MotionStream(recognizer: recognizer)
        let good = MotionStreamSample(time: 1, gravity: (0, 0, -1), userAcceleration: (0, 0, 0))
        _ = try stream.append(good)
        let cases: [(MotionStreamSample, String)] = [
            (MotionStreamSample(time: 1, gravity: (0, 0, -1), userAcceleration: (0, 0, 0)), "does not come after"),
            (MotionStreamSample(time: 0.5, gravity: (0, 0, -1), userAcceleration: (0, 0, 0)), "does not come after"),
            (MotionStreamSample(time: .nan, gravity: (0, 0, -1), userAcceleration: (0, 0, 0)), "not a finite number"),
            (MotionStreamSample(time: 2, gravity: (0, .nan, -1), userAcceleration: (0, 0, 0)), "not a finite value"),
            (MotionStreamSample(time: 2, gravity: (0, 0, -1), userAcceleration: (1e6, 0, 0)), "range"),
            (MotionStreamSample(time: 2, acceleration: (0, 0, -1)), "raw accelerometer sample after Core Motion"),
        ]
        for (sample, expected) in cases {
            #expect(throws: DataError.self) { _ = try stream.append(sample) }
            do { _ = try stream.append(sample) } catch { #expect(error.message.contains(expected), "\(error.message)") }
        }
        #expect(try stream.append(MotionStreamSample(time: 1.02, gravity: (0, 0, -1), userAcceleration: (0, 0, 0))).isEmpty)
    }

    /// Samples timestamped a tenth of a microsecond apart (a clock in the wrong unit): the stream's memory stays
    /// bounded — the arrival times it keeps stop at 64 a grid point of a window (before: one per sample, 27 → 60 MB
    /// over 3M samples).
    @Test func subMicrosecondTimestampsKeepTheStreamSmall() throws {
        let recognizer = try shippedMotion()
        var stream = MotionStream(recognizer: recognizer)
        let window = recognizer.windowing.window
        for index in 0..<(100 * window) {
            _ = try stream.append(MotionStreamSample(time: Double(index) * 1e-7, gravity: (0, 0, -1), userAcceleration: (0, 0, 0.01)))
        }
        #expect(stream.arrivals.count <= 64 * window, "\(stream.arrivals.count) arrival times kept")
    }
}
