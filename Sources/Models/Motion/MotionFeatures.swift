import Tensor

/// The Core Motion device-motion columns a recording carries, in the order `MotionSample` keeps them.
public let coreMotionColumns = [
    "attitude.roll", "attitude.pitch", "attitude.yaw", "gravity.x", "gravity.y", "gravity.z",
    "rotationRate.x", "rotationRate.y", "rotationRate.z", "userAcceleration.x", "userAcceleration.y",
    "userAcceleration.z",
]

/// One device-motion sample: gravity (g), rotation rate (rad/s) and user acceleration (g).
public struct MotionSample: Sendable, Equatable {
    /// Gravity in the phone's frame, in g.
    public var gravity: (x: Double, y: Double, z: Double)
    /// Rotation rate, in rad/s.
    public var rotationRate: (x: Double, y: Double, z: Double)
    /// Acceleration the user gives the phone, gravity removed, in g.
    public var userAcceleration: (x: Double, y: Double, z: Double)

    /// Creates a sample.
    public init(gravity: (Double, Double, Double), rotationRate: (Double, Double, Double), userAcceleration: (Double, Double, Double)) {
        self.gravity = gravity
        self.rotationRate = rotationRate
        self.userAcceleration = userAcceleration
    }

    public static func == (a: MotionSample, b: MotionSample) -> Bool {
        a.gravity == b.gravity && a.rotationRate == b.rotationRate && a.userAcceleration == b.userAcceleration
    }
}

/// Turns samples into windows of orientation-free features, the motion classifier's input `[window, 2]`:
/// user acceleration along gravity (vertical, g, less its window mean) and its magnitude across gravity
/// (horizontal, g). Neither depends
/// on how the phone sits in the pocket, and neither needs a gyroscope, so accelerometer-only recordings give the
/// same features.
public struct MotionWindowing: Sendable, Equatable {
    /// Samples per window.
    public var window: Int
    /// Samples between window starts.
    public var hop: Int
    /// Samples per second the windows assume.
    public var rate: Double

    /// Feature channels per sample.
    public static let featureCount = 2

    /// Creates the windowing.
    public init(window: Int = 128, hop: Int = 64, rate: Double = 50) {
        self.window = window
        self.hop = hop
        self.rate = rate
    }

    /// The parameters as a weights file's `preprocessing` header stores them.
    public var parameters: [String: JSONValue] {
        ["kind": .string("motion-windows"), "window": .number(Double(window)), "hop": .number(Double(hop)),
         "rate": .number(rate), "features": .string("vertical,horizontal")]
    }

    /// The windowing a weights file's `preprocessing` header describes, or why it cannot be built.
    public init(parameters: [String: JSONValue]) throws(DataError) {
        guard case .string("motion-windows")? = parameters["kind"], case .number(let window)? = parameters["window"],
              case .number(let hop)? = parameters["hop"], case .number(let rate)? = parameters["rate"],
              window >= 2, window <= 100_000, window == window.rounded(), hop >= 1, hop <= window, hop == hop.rounded(),
              rate > 0, rate.isFinite
        else {
            throw DataError(file: "weights", message: "the preprocessing parameters \(parameters) do not describe motion windows")
        }
        self.init(window: Int(window), hop: Int(hop), rate: rate)
    }

    /// The three features of one sample.
    public static func features(of sample: MotionSample) -> (vertical: Double, horizontal: Double, rotation: Double) {
        let g = sample.gravity, a = sample.userAcceleration, r = sample.rotationRate
        let gravityNorm = (g.x * g.x + g.y * g.y + g.z * g.z).squareRoot()
        let vertical = gravityNorm > 0 ? (a.x * g.x + a.y * g.y + a.z * g.z) / gravityNorm : 0
        let total = a.x * a.x + a.y * a.y + a.z * a.z
        return (vertical, max(0, total - vertical * vertical).squareRoot(), (r.x * r.x + r.y * r.y + r.z * r.z).squareRoot())
    }

    /// Window start positions for a recording of `count` samples: every `hop`, while a whole window fits.
    public func starts(count: Int) -> [Int] {
        count < window ? [] : Array(stride(from: 0, through: count - window, by: hop))
    }

    /// The windows of `samples` as `[windows, window, 3]`.
    public func windows(_ samples: [MotionSample]) -> Tensor {
        let features = samples.map(Self.features)
        let starts = starts(count: samples.count)
        var values = [Float]()
        values.reserveCapacity(starts.count * window * Self.featureCount)
        for start in starts {
            // The vertical channel loses its window mean: over seconds of gait it is zero, so what is left is an
            // offset (an imperfect gravity estimate, a sensor bias) that must not count as a cue.
            let slice = features[start..<(start + window)]
            let mean = slice.reduce(0.0) { $0 + $1.vertical } / Double(window)
            for f in slice { values += [Float(f.vertical - mean), Float(f.horizontal)] }
        }
        return Tensor(shape: [starts.count, window, Self.featureCount], scalars: values)
    }
}
