import DataFiles

/// Where a motion CSV's sensor values are, found from its header by name: Core Motion's `gravity.*` and
/// `userAcceleration.*` (with `rotationRate.*` when all three are there), or a raw accelerometer's `acc.*` (with
/// `gyro.*`), and `timestamp`, in any case (`CSVReader.position(of:in:)`). The recording reader, the dataset reader and `classify motion --follow` read
/// headers with it.
package struct MotionColumns: Sendable, Equatable {
    /// Whether the values are Core Motion's (gravity and user acceleration apart) rather than a raw accelerometer's.
    package let coreMotion: Bool
    /// Gravity then user acceleration (Core Motion), or the raw acceleration: the first values of a sample's nine.
    package let values: [Int]
    /// The rotation rate (Core Motion) or gyroscope, or none: a sample's last three values.
    package let spins: [Int]
    /// The `timestamp` column, if any.
    package let time: Int?

    /// The columns of `header`, or `nil` when it has neither Core Motion's nor a raw accelerometer's.
    package init?(header: [String]) {
        func find(_ names: [String]) -> [Int] { names.compactMap { CSVReader.position(of: $0, in: header) } }
        let gravity = find(["gravity.x", "gravity.y", "gravity.z"])
        let user = find(["userAcceleration.x", "userAcceleration.y", "userAcceleration.z"])
        let rotation = find(["rotationRate.x", "rotationRate.y", "rotationRate.z"])
        let acc = find(["acc.x", "acc.y", "acc.z"]), gyro = find(["gyro.x", "gyro.y", "gyro.z"])
        coreMotion = gravity.count == 3 && user.count == 3
        guard coreMotion || acc.count == 3 else { return nil }
        values = coreMotion ? gravity + user : acc
        spins = coreMotion ? (rotation.count == 3 ? rotation : []) : (gyro.count == 3 ? gyro : [])
        time = CSVReader.position(of: "timestamp", in: header)
    }
}
