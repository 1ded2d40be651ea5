import Foundation
import Models

#if canImport(CoreMotion)
import CoreMotion
#endif

/// The phone's motion state, live: Core Motion's device-motion samples go in as they arrive, and `state` is the
/// latest state two windows in a row agreed on (`walking`, `running`, `still`), or `nil` until the first 5 s are in.
public struct LiveMotion: Sendable {
    /// The confirmed state, if any yet.
    public private(set) var state: String?
    /// The last window's answer and confidence, for a view that shows it as it comes.
    public private(set) var lastWindow: (label: String, confidence: Double)?
    /// Why samples were refused, if they were (a clock that went backwards, a NaN): the stream stops there.
    public private(set) var problem: String?

    private var stream: MotionStream

    /// Follows `recognizer` (the shipped motion model by default).
    public init(recognizer: MotionRecognizer) {
        stream = MotionStream(recognizer: recognizer)
    }

    /// One device-motion sample: seconds on the sensor's clock, gravity and user acceleration in g, the rotation
    /// rate in rad/s (Core Motion's `CMDeviceMotion`, field for field).
    public mutating func append(
        time: Double, gravity: (x: Double, y: Double, z: Double), userAcceleration: (x: Double, y: Double, z: Double),
        rotationRate: (x: Double, y: Double, z: Double) = (0, 0, 0)
    ) {
        guard problem == nil else { return }
        let sample = MotionStreamSample(time: time, gravity: gravity, userAcceleration: userAcceleration, rotationRate: rotationRate)
        do {
            for event in try stream.append(sample) {
                switch event {
                case .window(let window): lastWindow = (window.label, window.confidence)
                case .change(let change): state = change.to
                case .resumed(let resumption): state = resumption.to
                case .paused: lastWindow = nil
                }
            }
        } catch {
            problem = error.message
        }
    }

    #if canImport(CoreMotion)
    /// `append` of a Core Motion sample.
    public mutating func append(_ motion: CMDeviceMotion) {
        append(
            time: motion.timestamp, gravity: (motion.gravity.x, motion.gravity.y, motion.gravity.z),
            userAcceleration: (motion.userAcceleration.x, motion.userAcceleration.y, motion.userAcceleration.z),
            rotationRate: (motion.rotationRate.x, motion.rotationRate.y, motion.rotationRate.z))
    }
    #endif
}
