import Datasets
import Foundation
import Models
import Tensor

/// Synthetic phone-in-pocket recordings of walking and running, grounded in gait physics, deterministic for a
/// seed, in Core Motion's columns and units.
///
/// Each simulated person has a walking and a running cadence (steps per second; the ranges overlap at the edges:
/// brisk walkers, slow joggers), step intensities, a thigh swing and a pocket. The body accelerates vertically at
/// the step frequency with harmonics (and sharp heel-strike impacts when running), forward at the step frequency
/// and sideways at the stride frequency (half of it). The phone rides the thigh, which swings at the stride
/// frequency: that swing turns gravity in the phone's frame, adds tangential and centripetal acceleration
/// (r·θ̈, r·θ̇²) and is what the gyroscope sees. The phone sits in the pocket at a random orientation that drifts
/// slowly; the sensors add noise and bias, the timestamps jitter, and each session starts and stops gently.
public struct MotionGenerator: Sendable {
    /// The classes, in label order: the two gaits and `still` (sitting, standing or lying on a table).
    public static let labels = MotionDataset.standardLabels + [MotionStillness.label]

    private var generator: SeededGenerator

    /// Creates a generator; the same seed always gives the same recordings.
    public init(seed: UInt64) { generator = SeededGenerator(seed: seed) }

    private mutating func uniform(_ low: Double, _ high: Double) -> Double { generator.nextUniform(in: low..<high) }
    private mutating func normal(_ sd: Double) -> Double { generator.nextNormal(standardDeviation: sd) }

    /// One session's rows: time (s) and the twelve Core Motion values.
    public struct Session: Sendable {
        /// The activity.
        public let label: String
        /// Which generated person moved.
        public let person: Int
        /// Each sample's time, in seconds.
        public let times: [Double]
        /// Per sample, in `coreMotionColumns` order: attitude (roll, pitch, yaw), gravity, rotation rate, user
        /// acceleration.
        public let rows: [[Double]]

        /// The rows as `MotionRecordingReader.assemble` takes them: gravity, user acceleration, rotation rate.
        public var assembledRows: [[Double]] {
            rows.map { Array($0[Self.gravity] + $0[Self.userAcceleration] + $0[Self.rotationRate]) }
        }

        /// The session as a recording at `windowing`'s rate, as `classify` would read its CSV.
        public func recording(windowing: MotionWindowing = MotionWindowing()) -> MotionRecording {
            MotionRecordingReader.assemble(
                rows: assembledRows.flatMap { $0 }, times: times, coreMotion: true, rate: windowing.rate, window: windowing.window)
        }

        /// Where each quantity is in a row.
        static let gravity = 3..<6, rotationRate = 6..<9, userAcceleration = 9..<12
    }

    /// `people` people, each recorded walking, running and still for `seconds` seconds at about 50 Hz.
    public mutating func sessions(people: Int, seconds: Double, firstPerson: Int = 0) -> [Session] {
        var result: [Session] = []
        for p in 0..<people {
            let walkCadence = uniform(1.55, 2.25), runCadence = uniform(2.2, 3.1)
            let radius = uniform(0.18, 0.3)  // hip to pocket, metres
            for label in Self.labels {
                if label == MotionStillness.label {
                    result.append(stillSession(person: firstPerson + p, seconds: seconds * uniform(0.8, 1.2)))
                    continue
                }
                let running = label == "running"
                result.append(
                    session(
                        label: label, person: firstPerson + p, seconds: seconds * uniform(0.8, 1.2),
                        cadence: running ? runCadence : walkCadence,
                        amplitude: running ? uniform(0.35, 0.95) : uniform(0.13, 0.55),
                        swing: running ? uniform(0.5, 0.9) : uniform(0.4, 0.8), radius: radius, running: running))
            }
        }
        return result
    }

    mutating func session(
        label: String, person: Int, seconds: Double, cadence: Double, amplitude: Double, swing: Double,
        radius: Double, running: Bool
    ) -> Session {
        let rate = 50.0
        let count = Int(seconds * rate)
        // Gait shape: harmonics and phases of this session.
        let h2 = uniform(0.2, 0.6), h3 = uniform(0.05, 0.3), p2 = uniform(0, 2 * .pi), p3 = uniform(0, 2 * .pi)
        let forward = uniform(0.6, 1.3), lateral = uniform(0.2, 0.6), swingPhase = uniform(0, 2 * .pi)
        // Heel strikes dominate what a pocketed phone feels: peaks of 1.3–4.2 g walking and 2.2–5.5 g running,
        // far above the smooth sway of the gait.
        let impact = running ? uniform(2.2, 5.5) : uniform(1.3, 4.2)
        let impactWidth = uniform(0.015, 0.035)
        let shock = uniform(0.03, 0.1) * impact
        // The phone's own leg strikes hard; the far leg's strike reaches the pocket much weakened, which is why a
        // pocketed phone's signal repeats once per stride, not once per step, walking (about 1 Hz) and running
        // (about 1.4 Hz) alike.
        // A phone in a back pocket, a jacket or a hand feels both legs alike (about 1 in 4 sessions); its signal
        // repeats once per step.
        let farLeg = generator.nextUnitDouble() < 0.25 ? uniform(0.7, 1) : running ? uniform(0.1, 0.5) : uniform(0.1, 0.6)
        let strideComponent = running ? uniform(0.4, 1.0) : uniform(0.2, 0.7)
        let strikeForward = uniform(0.2, 0.8) * (generator.nextUnitDouble() < 0.5 ? 1 : -1), strikeSide = uniform(0.1, 0.6)
        let stridePhase = uniform(0, 2 * .pi)
        // Pocket orientation: a random rotation, drifting slowly.
        var pocket = randomRotation()
        let drift = (normal(0.02), normal(0.02), normal(0.02))  // rad/s
        let noise = uniform(0.005, 0.03), gyroNoise = uniform(0.01, 0.05)
        // Core Motion's user acceleration keeps a bias of a few hundredths of a g, as when still.
        let bias = (normal(0.03), normal(0.03), normal(0.03))
        var rows: [[Double]] = [], times: [Double] = []
        var phase = uniform(0, 2 * .pi)
        let ramp = uniform(0.5, 2)
        // Real recordings start with the person standing while the app starts: up to 4 s still, then the gait.
        // Such a window is labelled with the gait, as a window with any walking in it should be answered.
        let leadIn = generator.nextUnitDouble() < 0.5 ? uniform(0, 4) : 0
        // Turning round or slowing down: now and then the steps weaken to 20–50% for 1–3 s.
        let turns = (0..<generator.nextIndex(below: 3)).map { _ in (at: uniform(leadIn, seconds), length: uniform(1, 3), depth: uniform(0.5, 0.8)) }
        var time = 0.0
        for k in 0..<count {
            let t = Double(k) / rate
            var envelope = t < leadIn ? 0 : min(1, (t - leadIn) / ramp, (seconds - t) / ramp)
            for turn in turns where t >= turn.at && t < turn.at + turn.length {
                envelope *= 1 - turn.depth * pow(sin(.pi * (t - turn.at) / turn.length), 2)
            }
            let stepFrequency = cadence * (1 + 0.02 * sin(2 * .pi * 0.05 * t))  // cadence wanders slightly
            phase += 2 * .pi * stepFrequency / rate
            // Body acceleration in the world (x forward, y left, z up), in g.
            var vertical =
                amplitude * envelope
                * (sin(phase) + h2 * sin(2 * phase + p2) + h3 * sin(3 * phase + p3)
                    + strideComponent * sin(phase / 2 + stridePhase))
            let steps = phase / (2 * .pi)
            let stepPosition = steps.truncatingRemainder(dividingBy: 1)
            let sinceStrike = min(stepPosition, 1 - stepPosition) / stepFrequency
            let nearestStep = Int(steps.rounded())
            let strike = nearestStep % 2 == 0 ? 1 : farLeg
            let pulse = exp(-0.5 * pow(sinceStrike / impactWidth, 2))
            // A body does not accelerate away: over a stride, vertical acceleration averages zero, so the strikes'
            // mean (height · width · √(2π) per step) comes off the rest of the step.
            let strikeMean = impact * (1 + farLeg) / 2 * impactWidth * (2 * Double.pi).squareRoot() * stepFrequency
            vertical += impact * strike * envelope * pulse - strikeMean * envelope
            vertical += shock * envelope * normal(1) * (0.3 + pulse)
            let forwardAcceleration = forward * amplitude * envelope * sin(phase + 1.2)
            let lateralAcceleration = lateral * amplitude * envelope * sin(phase / 2 + 0.4)
            // Thigh swing at the stride frequency: angle, angular velocity, angular acceleration.
            let omega = 2 * Double.pi * stepFrequency / 2
            let theta = swing * envelope * sin(phase / 2 + swingPhase)
            let thetaDot = swing * envelope * omega * cos(phase / 2 + swingPhase)
            let thetaDotDot = -swing * envelope * omega * omega * sin(phase / 2 + swingPhase)
            // The pocket rides a pendulum of radius r about the hip: its acceleration is r·(θ̈·cos θ − θ̇²·sin θ)
            // forward and r·(θ̈·sin θ + θ̇²·cos θ) up, which averages to zero over a swing, as it must.
            let r = radius / MotionRecordingReader.standardGravity
            let swingForward = r * (thetaDotDot * cos(theta) - thetaDot * thetaDot * sin(theta))
            let swingUp = r * (thetaDotDot * sin(theta) + thetaDot * thetaDot * cos(theta))
            // A strike shakes the pocket sideways and forward too, not only up.
            let shake = impact * strike * envelope * pulse
            let world = (
                forwardAcceleration + swingForward + strikeForward * shake, lateralAcceleration + strikeSide * shake,
                vertical + swingUp
            )
            // Phone frame: the thigh pitched by θ about the lateral axis, then the pocket's orientation.
            pocket = rotate(pocket, by: (drift.0 / rate, drift.1 / rate, drift.2 / rate))
            let thigh = pitch(theta)
            let toPhone = multiply(transpose(pocket), transpose(thigh))  // world → phone
            let gravity = apply(toPhone, (0, 0, -1))
            // Core Motion reports acceleration as gravity minus the kinematic acceleration (at rest, flat, it
            // reads z = −1 g), so userAcceleration is the negative of how the phone accelerates: a heel strike,
            // which throws the leg upward, reads as a spike along gravity.
            let kinematic = apply(toPhone, world)
            let user = (-kinematic.0, -kinematic.1, -kinematic.2)
            let spin = apply(transpose(pocket), (0, thetaDot, 0))
            let roll = atan2(gravity.1, -gravity.2), pitchAngle = asin(max(-1, min(1, -gravity.0)))
            rows.append([
                roll, pitchAngle, 0,
                gravity.0, gravity.1, gravity.2,
                spin.0 + normal(gyroNoise), spin.1 + normal(gyroNoise), spin.2 + normal(gyroNoise),
                user.0 + bias.0 + normal(noise), user.1 + bias.1 + normal(noise), user.2 + bias.2 + normal(noise),
            ])
            time += (1 / rate) * (1 + normal(0.02))  // sample-rate jitter
            times.append(time)
        }
        return Session(label: label, person: person, times: times, rows: rows)
    }

    /// A person not going anywhere, phone in the pocket (or on a table): what a running app must not take for a
    /// gait. Sitting people breathe and jiggle a knee (3–6.5 Hz, 2–15 s at a time); standing people sway
    /// (0.1–1.2 Hz) and shift their weight, now and then with a step or two; both shift posture, which turns the
    /// phone. Core Motion's user acceleration keeps a bias of a few hundredths of a g that wanders, so a still
    /// phone rarely reads zero.
    mutating func stillSession(person: Int, seconds: Double) -> Session {
        let rate = 50.0
        let count = Int(seconds * rate)
        let kind = generator.nextUnitDouble()
        let onTable = kind < 0.15, sitting = kind >= 0.15 && kind < 0.6
        var orientation = randomRotation()  // phone → world
        // Sway and breathing: a few slow sinusoids per world axis.
        var sway: [(axis: Int, frequency: Double, amplitude: Double, phase: Double)] = []
        if !onTable {
            for _ in 0..<4 {
                sway.append(
                    (
                        generator.nextIndex(below: 3), sitting ? uniform(0.15, 0.45) : uniform(0.1, 1.2),
                        sitting ? uniform(0.001, 0.008) : uniform(0.002, 0.02), uniform(0, 2 * .pi)
                    ))
            }
        }
        // Fidgets: events at random times, each a burst of one kind.
        enum Fidget { case shift, jiggle, rock, step }
        struct Event {
            var start: Double, length: Double, kind: Fidget, amplitude: Double
            var frequencies: [Double], phases: [Double]
            var turn: (Double, Double, Double)  // radians about the phone's axes, over the event
        }
        var events: [Event] = []
        if !onTable {
            let meanGap = uniform(4, 30)
            var t = uniform(0, meanGap)
            while t < seconds {
                let roll = generator.nextUnitDouble()
                let kind: Fidget =
                    roll < 0.2 ? .rock : sitting ? (roll < 0.5 ? .jiggle : .shift) : (roll < 0.4 ? .step : .shift)
                let length: Double, amplitude: Double, frequencies: [Double]
                switch kind {
                case .jiggle: (length, amplitude, frequencies) = (uniform(2, 15), uniform(0.03, 0.3), [uniform(3, 6.5)])
                // Rocking, tapping a foot, swaying to music: as regular as a gait, far gentler.
                case .rock: (length, amplitude, frequencies) = (uniform(3, 20), uniform(0.01, 0.08), [uniform(0.7, 2.5)])
                case .step: (length, amplitude, frequencies) = (uniform(0.6, 1.8), uniform(0.3, 1.2), [uniform(0.5, 4)])
                case .shift: (length, amplitude, frequencies) = (uniform(0.4, 4), uniform(0.01, 0.25), (0..<4).map { _ in uniform(0.5, 4) })
                }
                let phases = frequencies.map { _ in uniform(0, 2 * .pi) }
                let turn = kind == .shift ? (normal(0.25), normal(0.25), normal(0.25)) : (0, 0, 0)
                events.append(Event(start: t, length: length, kind: kind, amplitude: amplitude, frequencies: frequencies, phases: phases, turn: turn))
                t += length + meanGap * -log(max(1e-9, 1 - generator.nextUnitDouble()))
            }
        }
        let noise = uniform(0.002, 0.02), gyroNoise = uniform(0.005, 0.03)
        var bias = (normal(0.03), normal(0.03), normal(0.03))
        let wander = uniform(0, 0.0006)
        var rows: [[Double]] = [], times: [Double] = []
        var time = 0.0
        for k in 0..<count {
            let t = Double(k) / rate
            var world = (0.0, 0.0, 0.0)
            for s in sway {
                let a = s.amplitude * sin(2 * .pi * s.frequency * t + s.phase)
                if s.axis == 0 { world.0 += a } else if s.axis == 1 { world.1 += a } else { world.2 += a }
            }
            var spin = (0.0, 0.0, 0.0)  // the phone's frame, rad/s
            for event in events where t >= event.start && t < event.start + event.length {
                let u = (t - event.start) / event.length
                let envelope = sin(.pi * u) * sin(.pi * u)
                switch event.kind {
                case .jiggle, .rock:
                    world.2 += event.amplitude * envelope * sin(2 * .pi * event.frequencies[0] * t + event.phases[0])
                case .step:
                    // One heel strike, or two when the event is long enough for a second step.
                    for strike in event.length > 1.1 ? [0.3, 0.8] : [0.5] {
                        let since = t - (event.start + strike * event.length)
                        world.2 += event.amplitude * exp(-0.5 * pow(since / 0.03, 2))
                    }
                    world.0 += 0.2 * event.amplitude * envelope * sin(2 * .pi * event.frequencies[0] * t + event.phases[0])
                case .shift:
                    for (index, frequency) in event.frequencies.enumerated() {
                        let a = event.amplitude * envelope * sin(2 * .pi * frequency * t + event.phases[index]) / 2
                        if index % 3 == 0 { world.0 += a } else if index % 3 == 1 { world.1 += a } else { world.2 += a }
                    }
                    // The phone turns by `turn` over the event, fastest in its middle.
                    let rate = 2 * envelope / event.length
                    spin = (spin.0 + event.turn.0 * rate, spin.1 + event.turn.1 * rate, spin.2 + event.turn.2 * rate)
                }
            }
            orientation = rotate(orientation, by: (spin.0 / rate, spin.1 / rate, spin.2 / rate))
            let toPhone = transpose(orientation)
            let gravity = apply(toPhone, (0, 0, -1))
            let kinematic = apply(toPhone, world)
            bias = (bias.0 + normal(wander), bias.1 + normal(wander), bias.2 + normal(wander))
            let gyro = spin
            let roll = atan2(gravity.1, -gravity.2), pitchAngle = asin(max(-1, min(1, -gravity.0)))
            rows.append([
                roll, pitchAngle, 0,
                gravity.0, gravity.1, gravity.2,
                gyro.0 + normal(gyroNoise), gyro.1 + normal(gyroNoise), gyro.2 + normal(gyroNoise),
                -kinematic.0 + bias.0 + normal(noise), -kinematic.1 + bias.1 + normal(noise), -kinematic.2 + bias.2 + normal(noise),
            ])
            time += (1 / rate) * (1 + normal(0.02))
            times.append(time)
        }
        return Session(label: MotionStillness.label, person: person, times: times, rows: rows)
    }

    // MARK: - Rotations (3×3, row-major)

    typealias Matrix = [Double]

    mutating func randomRotation() -> Matrix {
        // A uniformly random unit quaternion.
        let (a, b, c, d) = (normal(1), normal(1), normal(1), normal(1))
        let n = (a * a + b * b + c * c + d * d).squareRoot()
        let (w, x, y, z) = (a / n, b / n, c / n, d / n)
        return [
            1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
            2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
            2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y),
        ]
    }

    func pitch(_ angle: Double) -> Matrix {
        [cos(angle), 0, sin(angle), 0, 1, 0, -sin(angle), 0, cos(angle)]
    }

    func rotate(_ m: Matrix, by small: (Double, Double, Double)) -> Matrix {
        // m · (I + [small]×), re-orthonormalized lightly by keeping the step tiny.
        let (x, y, z) = small
        let step: Matrix = [1, -z, y, z, 1, -x, -y, x, 1]
        return multiply(m, step)
    }

    func multiply(_ a: Matrix, _ b: Matrix) -> Matrix {
        var result = Matrix(repeating: 0, count: 9)
        for row in 0..<3 {
            for column in 0..<3 {
                var total = 0.0
                for k in 0..<3 { total += a[row * 3 + k] * b[k * 3 + column] }
                result[row * 3 + column] = total
            }
        }
        return result
    }

    func transpose(_ m: Matrix) -> Matrix { [m[0], m[3], m[6], m[1], m[4], m[7], m[2], m[5], m[8]] }

    func apply(_ m: Matrix, _ v: (Double, Double, Double)) -> (Double, Double, Double) {
        (m[0] * v.0 + m[1] * v.1 + m[2] * v.2, m[3] * v.0 + m[4] * v.1 + m[5] * v.2, m[6] * v.0 + m[7] * v.1 + m[8] * v.2)
    }

    /// The motion dataset's header line (`session,label,timestamp` and the Core Motion columns), without its newline.
    public static let csvHeader = "session,label,timestamp," + coreMotionColumns.joined(separator: ",")

    /// The sessions as a motion dataset CSV (`session,label,timestamp` and the Core Motion columns).
    public static func csv(_ sessions: [Session], prefix: String) -> String {
        csvHeader + "\n" + csvRows(sessions, prefix: prefix)
    }

    /// The rows of `sessions` (each line ending in a newline), named `<prefix><firstIndex + i>`: a piece of `csv`'s
    /// text after its header, for writing a dataset a part at a time.
    public static func csvRows(_ sessions: [Session], prefix: String, firstIndex: Int = 0) -> String {
        var text = ""
        for (offset, session) in sessions.enumerated() {
            for (time, row) in zip(session.times, session.rows) {
                text +=
                    "\(prefix)\(firstIndex + offset),\(session.label),\(String(format: "%.3f", time)),"
                    + row.map { String(format: "%.4f", $0) }.joined(separator: ",") + "\n"
            }
        }
        return text
    }
}
