import DataFiles
import Foundation
import Tensor

/// One motion sensor sample as it arrives: Core Motion's device motion (gravity, user acceleration and rotation
/// rate) or a raw accelerometer (and, if there is one, a gyroscope), at the time the sensor took it.
public struct MotionStreamSample: Sendable, Equatable {
    /// Seconds on any clock that only moves forward (Core Motion's `timestamp`, say).
    public var time: Double
    /// Core Motion: gravity; raw: the measured acceleration (gravity included). In g or m/s² (see
    /// `MotionStream.Units`).
    public var acceleration: (x: Double, y: Double, z: Double)
    /// Core Motion: user acceleration (gravity removed); `nil` for a raw accelerometer.
    public var userAcceleration: (x: Double, y: Double, z: Double)?
    /// The rotation rate in rad/s, zeros when there is no gyroscope.
    public var rotationRate: (x: Double, y: Double, z: Double)

    /// A Core Motion device-motion sample.
    public init(
        time: Double, gravity: (x: Double, y: Double, z: Double), userAcceleration: (x: Double, y: Double, z: Double),
        rotationRate: (x: Double, y: Double, z: Double) = (0, 0, 0)
    ) {
        self.time = time
        acceleration = gravity
        self.userAcceleration = userAcceleration
        self.rotationRate = rotationRate
    }

    /// A raw accelerometer sample (gravity included), with the gyroscope's rotation rate when there is one.
    public init(time: Double, acceleration: (x: Double, y: Double, z: Double), rotationRate: (x: Double, y: Double, z: Double) = (0, 0, 0)) {
        self.time = time
        self.acceleration = acceleration
        userAcceleration = nil
        self.rotationRate = rotationRate
    }

    /// Whether it came from Core Motion (with gravity and user acceleration apart).
    public var isCoreMotion: Bool { userAcceleration != nil }

    /// The nine values as `MotionRecordingReader.assemble` takes a row: `acceleration`, the user acceleration
    /// (zeros for a raw accelerometer), the rotation rate.
    var row: [Double] {
        let u = userAcceleration ?? (0, 0, 0)
        return [acceleration.x, acceleration.y, acceleration.z, u.x, u.y, u.z, rotationRate.x, rotationRate.y, rotationRate.z]
    }

    /// Equal times and values, component by component.
    public static func == (a: Self, b: Self) -> Bool {
        a.time == b.time && a.acceleration == b.acceleration && a.rotationRate == b.rotationRate
            && a.userAcceleration.map { [$0.x, $0.y, $0.z] } == b.userAcceleration.map { [$0.x, $0.y, $0.z] }
    }
}

/// The state a `MotionStream` reports, when it changes.
public struct MotionStateChange: Sendable, Equatable {
    /// The state before (`nil` for the first one reported).
    public var from: String?
    /// The new state: one of the model's labels (`walking`, `running`) or `still`.
    public var to: String
    /// When it was reported: the end of the window that confirmed it (the latest sample's time then).
    public var time: Double
    /// The start of the first window of the run that confirmed it: the change happened after this, and the
    /// windows before it still said otherwise.
    public var since: Double
    /// The mean confidence of the windows that confirmed it.
    public var confidence: Double
}

/// A pause in a `MotionStream`: `pause()`, or no sample for longer than a window.
public struct MotionPause: Sendable, Equatable {
    /// The last sample's time before the pause.
    public var time: Double
    /// The state when the stream paused (`nil` before the first).
    public var state: String?
}

/// The first confirmed state after a pause: whatever it is, the old state included, it must be confirmed anew.
public struct MotionResumption: Sendable, Equatable {
    /// When it was reported: the end of the window that confirmed it.
    public var time: Double
    /// The start of the first window of the run that confirmed it (after the pause).
    public var since: Double
    /// The last sample's time before the pause.
    public var pausedAt: Double
    /// The state before the pause (`nil` if there was none).
    public var from: String?
    /// The state confirmed after it (the same as `from` when the activity went on).
    public var to: String
    /// The mean confidence of the windows that confirmed it.
    public var confidence: Double
}

/// What a `MotionStream` says after a sample: each window as it completes, state changes, and pauses.
public enum MotionStreamEvent: Sendable, Equatable {
    /// A window completed (every `hop` samples of the model's rate, once a whole window has arrived).
    case window(MotionWindowPrediction)
    /// The state changed: `confirmations` windows in a row agreed on a new one (across a pause, it follows the
    /// `resumed` event).
    case change(MotionStateChange)
    /// The samples stopped: `pause()`, or a gap longer than a window (reported when the next sample arrives).
    case paused(MotionPause)
    /// After a pause, `confirmations` windows in a row agreed on a state, which may be the one before the pause.
    case resumed(MotionResumption)
}

/// Live motion classification, for an app that reads the sensors as they run: samples go in one at a time, at
/// whatever rate the phone delivers them; a window's answer comes out every hop (1.28 s with the shipped model,
/// once 5.12 s have arrived); the state — `walking`, `running` or `still` — changes only when `confirmations`
/// windows in a row agree on the new one, so one odd window does not flip it.
///
/// A recording is this stream run to its end: the same stages (MotionPipeline.swift: units, gravity filter, grid,
/// windows) in the same code, so each window's input is the same bits as `MotionRecognizer.recognize` computes
/// from the same samples read whole. One thing must be decided before a whole recording exists, so it is decided
/// from the first `MotionStream.headSamples` samples: whether accelerations are in g or m/s² (`Units.automatic`;
/// a recording read whole decides from all its samples). A raw accelerometer's gravity filter starts from the
/// mean of those samples in both.
///
/// A pause — `pause()`, or no sample for longer than a window — ends the stretch of samples: windows never span
/// it and the next sample starts a new one. It is reported as a `paused` event; the state stays as it was until
/// `confirmations` windows after the pause agree on one, reported as `resumed` (and as a `change` too when it is a
/// new state). `reset()` starts the stream afresh. A gap longer than
/// `MotionRecordingReader.maximumBridge` but shorter than a window is bridged by interpolation, and the windows
/// across it are uncertain (they neither confirm nor break a change).
public struct MotionStream: Sendable {
    /// How accelerations are given.
    public enum Units: Sendable, Equatable {
        /// Decided from the first samples: a median magnitude above 4 means m/s², as `MotionRecordingReader` decides.
        case automatic
        /// In g (Core Motion's unit).
        case g
        /// In m/s².
        case metersPerSecondSquared
    }

    /// What labels the windows.
    public let recognizer: MotionRecognizer
    /// How many windows in a row must agree on a new state before it is reported (1 reports every change at once).
    public let confirmations: Int
    /// The unit of accelerations.
    public let units: Units

    /// What the stream assumed about its input, as `MotionRecording.notes` says it of a file: the units it decided
    /// (m/s² converted to g) and a raw accelerometer's gravity filter; empty until the first second decides them.
    package var assumptions: [String] { windows.assumptions }

    /// The state last reported, `nil` before the first.
    public private(set) var state: String?
    /// The changes reported so far, in order: the last `keptChanges` (older ones are dropped, so a stream that runs
    /// for days stays small; each was returned by `append` when it happened).
    public private(set) var changes: [MotionStateChange] = []
    /// How many of the latest changes `changes` keeps.
    public static let keptChanges = 1000

    /// Samples that decide the units and start a raw accelerometer's gravity filter: the first second at 50 Hz.
    package static let headSamples = MotionWindowStream.headSamples

    private var windowing: MotionWindowing { recognizer.windowing }
    /// The samples' way to the windows' inputs (units, gravity, grid, windows), as a recording's.
    private var windows: MotionWindowStream
    /// The inputs of the windows the last `append` or `pause` completed, in order (tests compare them with a
    /// recording's, bit for bit).
    package private(set) var completedInputs: [Tensor] = []
    /// The times of the current stretch's samples that later windows still span.
    var arrivals: [Double] { windows.arrivals }
    /// The run of windows agreeing on a state other than `state`: its label, length, start and summed confidence.
    private var streak: (label: String, count: Int, since: Double, confidence: Double)?
    /// The checks of each sample: the last one's time, across pauses (times must keep increasing), and kind.
    private var rules = MotionSampleRules()
    /// The pause not yet followed by a confirmed state.
    private var pending: MotionPause?

    /// A stream labelling windows with `recognizer`, reporting a new state after `confirmations` windows in a row
    /// agree on it (fewer than 1 counts as 1).
    public init(recognizer: MotionRecognizer, confirmations: Int = 2, units: Units = .automatic) {
        self.recognizer = recognizer
        self.confirmations = max(1, confirmations)
        self.units = units
        let scale: Double? =
            switch units {
            case .automatic: nil
            case .g: 1
            case .metersPerSecondSquared: 1 / MotionRecordingReader.standardGravity
            }
        windows = MotionWindowStream(windowing: recognizer.windowing, scale: scale)
    }

    /// Takes one sample and returns what it completed: windows, and a state change when one was confirmed.
    ///
    /// Throws, and takes nothing, when the sample's time does not come after the last one's, when a value is not
    /// finite or beyond any phone sensor's range (`MotionRecordingReader.maximumSensorMagnitude`), or when a raw
    /// sample follows Core Motion ones or the other way round.
    public mutating func append(_ sample: MotionStreamSample) throws(DataError) -> [MotionStreamEvent] {
        completedInputs = []
        // The problem alone: the caller knows which sample it appended (`--follow` names its file and line).
        if let problem = rules.take(sample) { throw DataError(file: "motion stream", message: problem) }
        if let last = windows.lastSampleTime, windows.splits(gap: sample.time - last) {
            // No sample for longer than a window: as in a recording, the stretch ends here.
            var events = pause()
            events += label(windows.take(sample))
            return events
        }
        return label(windows.take(sample))
    }

    /// Takes a batch of samples, as a sensor API delivers them, and returns what they completed: the same events,
    /// in the same order, as `append` one at a time (a batch of any size computes the same windows, bit for bit).
    /// Throws at the first sample `append` refuses; the samples before it are taken (the changes they confirmed are
    /// in `changes`).
    public mutating func append(contentsOf samples: some Sequence<MotionStreamSample>) throws(DataError) -> [MotionStreamEvent] {
        var events: [MotionStreamEvent] = [], inputs: [Tensor] = []
        for sample in samples {
            events += try append(sample)
            inputs += completedInputs
        }
        completedInputs = inputs
        return events
    }

    /// Ends the current stretch of samples (the app stopped reading the sensors): no window will span the pause.
    /// Returns what the held samples still completed and a `paused` event (none when no sample arrived since the
    /// last pause). The state stays as it was until windows after the pause confirm one (`resumed`).
    public mutating func pause() -> [MotionStreamEvent] {
        completedInputs = []
        var events = label(windows.endStretch())
        streak = nil
        if let last = windows.lastStretchTime {
            // The state stays while a pause is pending, so a second pause reports the same one.
            let paused = MotionPause(time: last, state: state)
            pending = paused
            events.append(.paused(paused))
        }
        windows.forgetStretch()
        return events
    }

    /// Starts afresh, as a new stream: no state, no changes, no held samples; the units (when automatic) and a raw
    /// accelerometer's gravity are decided again from the next samples, whose times may start anywhere.
    public mutating func reset() {
        self = MotionStream(recognizer: recognizer, confirmations: confirmations, units: units)
    }

    /// Labels the windows the samples completed: each a `window` event, followed by the change it confirms.
    private mutating func label(_ completed: [MotionStreamWindow]) -> [MotionStreamEvent] {
        var events: [MotionStreamEvent] = []
        completedInputs += completed.map(\.input)
        for window in completed {
            let scores = recognizer.engine.probabilities(window.input).scalars.map(Double.init)
            let prediction = scores.withUnsafeBufferPointer { scores in
                recognizer.engine.prediction(
                    scores: scores,
                    intensity: (window.input.scalars[windowing.logVerticalDeviationIndex], window.input.scalars[windowing.logHorizontalMeanIndex]),
                    from: window.from, to: window.to, bridgedGaps: window.bridgedGaps, arrivalRate: window.arrivalRate)
            }
            events.append(.window(prediction))
            events += confirm(prediction)
        }
        return events
    }

    /// Counts `window` towards a change of state; returns the change when this window confirms one (after a pause,
    /// the resumption, and the change when the state is new).
    mutating func confirm(_ window: MotionWindowPrediction) -> [MotionStreamEvent] {
        // Uncertain windows (a gap, a model that overflowed) neither confirm nor break a run.
        guard !window.uncertain else { return [] }
        // After a pause every state, the old one too, is confirmed anew.
        guard pending != nil || window.label != state else {
            streak = nil
            return []
        }
        var run =
            streak.flatMap { $0.label == window.label ? $0 : nil }
            ?? (label: window.label, count: 0, since: window.start, confidence: 0)
        run.count += 1
        run.confidence += window.confidence
        streak = run
        guard run.count >= confirmations else { return [] }
        let confidence = run.confidence / Double(run.count)
        var events: [MotionStreamEvent] = []
        if let paused = pending {
            events.append(
                .resumed(
                    MotionResumption(
                        time: window.end, since: run.since, pausedAt: paused.time, from: paused.state, to: run.label,
                        confidence: confidence)))
            pending = nil
        }
        streak = nil
        if run.label != state {
            let change = MotionStateChange(from: state, to: run.label, time: window.end, since: run.since, confidence: confidence)
            state = run.label
            changes.append(change)
            if changes.count > Self.keptChanges { changes.removeFirst(changes.count - Self.keptChanges) }
            events.append(.change(change))
        }
        return events
    }
}
