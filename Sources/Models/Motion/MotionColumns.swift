import DataFiles

/// Where a motion CSV's sensor values are, found from its header by name: Core Motion's `gravity.*` and
/// `userAcceleration.*` (with `rotationRate.*` when all three are there), or a raw accelerometer's `acc.*` (with
/// `gyro.*`; phyphox's `Acceleration x (m/s^2)`, `Gyroscope x (rad/s)` and `Time (s)` too; Sensor Logger's `x`, `y`,
/// `z` beside `seconds_elapsed`), and `timestamp`, in any case (`CSVReader.position(of:in:)`). The recording reader,
/// the dataset reader and `classify motion --follow` read headers with it.
package struct MotionColumns: Sendable, Equatable {
    /// Whether the values are Core Motion's (gravity and user acceleration apart) rather than a raw accelerometer's.
    package let coreMotion: Bool
    /// Gravity then user acceleration (Core Motion), or the raw acceleration: the first values of a sample's nine.
    package let values: [Int]
    /// The rotation rate (Core Motion) or gyroscope, or none: a sample's last three values.
    package let spins: [Int]
    /// The `timestamp` column, if any.
    package let time: Int?
    /// Whether the header is Sensor Logger's (`time,seconds_elapsed,z,y,x`): its `Accelerometer.csv` has gravity
    /// removed and its `TotalAcceleration.csv` keeps it, with the same header, so only the file's name tells which
    /// (`MotionRecordingReader.recordingColumns`).
    package let sensorLogger: Bool

    /// The columns of `header`, or `nil` when it has neither Core Motion's nor a raw accelerometer's.
    package init?(header: [String]) {
        func find(_ names: [String]) -> [Int] { names.compactMap { CSVReader.position(of: $0, in: header) } }
        /// The first of `spellings` (each three names, x y z) whose columns are all there.
        func find(anyOf spellings: [[String]]) -> [Int] { spellings.lazy.map(find).first { $0.count == 3 } ?? [] }
        let gravity = find(["gravity.x", "gravity.y", "gravity.z"])
        let user = find(["userAcceleration.x", "userAcceleration.y", "userAcceleration.z"])
        let rotation = find(["rotationRate.x", "rotationRate.y", "rotationRate.z"])
        // A raw accelerometer as this project writes it, or as phyphox exports "Acceleration with g" (and its gyroscope).
        // Sensor Logger's x, y, z only beside its seconds_elapsed: a drawing's x and y are not a sensor's.
        let elapsed = CSVReader.position(of: "seconds_elapsed", in: header)
        let acc = find(
            anyOf: [["acc.x", "acc.y", "acc.z"], ["Acceleration x (m/s^2)", "Acceleration y (m/s^2)", "Acceleration z (m/s^2)"]]
                + (elapsed == nil ? [] : [["x", "y", "z"]]))
        let gyro = find(anyOf: [["gyro.x", "gyro.y", "gyro.z"], ["Gyroscope x (rad/s)", "Gyroscope y (rad/s)", "Gyroscope z (rad/s)"]])
        coreMotion = gravity.count == 3 && user.count == 3
        guard coreMotion || acc.count == 3 else { return nil }
        values = coreMotion ? gravity + user : acc
        spins = coreMotion ? (rotation.count == 3 ? rotation : []) : (gyro.count == 3 ? gyro : [])
        sensorLogger = !coreMotion && elapsed != nil && values == find(["x", "y", "z"])
        time = CSVReader.position(of: "timestamp", in: header) ?? CSVReader.position(of: "Time (s)", in: header) ?? elapsed
    }
}
