import DataFiles
import Foundation
import Testing

@testable import Models

/// Files as other apps write them (issue 52, item 6): a spreadsheet's other separators and UTF-16 are named in one
/// line, a recording's timestamps in a smaller unit are named with the rate they would give, a motion file given
/// as a drawing (and the other way round) says which it is, and phyphox's export is read as it comes.
@Suite("Files from other apps")
struct RealAppFilesTests {
    /// The words of the `DataError` that reading `text` as a drawing throws.
    static func drawingError(_ bytes: Data) -> String? {
        do {
            _ = try DrawingReader.read(csv: bytes, name: "f.csv")
            return nil
        } catch {
            return error.description
        }
    }

    /// The words of the `DataError` that reading `text` as a recording throws.
    static func recordingError(_ text: String) -> String? {
        do {
            _ = try MotionRecordingReader.read(csv: Data(text.utf8), name: "r.csv")
            return nil
        } catch {
            return error.description
        }
    }

    static let square = "x,y\n0,0\n10,0\n10,10\n0,10\n0,0\n"

    @Test func semicolonsAndTabsAreNamed() {
        let semicolons = Self.drawingError(Data("x;y\n0;0\n10;0\n10;10\n".utf8))
        #expect(
            semicolons
                == "f.csv:1: the header is one column, 'x;y': its fields are separated by semicolons, not commas (a spreadsheet set to "
                + "another list separator writes them so); save the file as CSV with commas between fields and points in numbers (1.5, not 1,5)")
        let tabs = Self.drawingError(Data("x\ty\n0\t0\n".utf8))
        #expect(tabs?.contains("its fields are separated by tabs, not commas") == true, "\(tabs ?? "nil")")
        // A comma-separated file whose names hold a semicolon is read as usual.
        #expect(Self.drawingError(Data("x,y,note;a\n0,0,a\n10,0,b\n10,10,c\n".utf8)) == nil)
    }

    @Test(arguments: [
        ("utf-16le", true, "little-endian, byte-order mark FF FE"), ("utf-16be", true, "big-endian, byte-order mark FE FF"),
        ("utf-16le", false, "little-endian, no byte-order mark"), ("utf-16be", false, "big-endian, no byte-order mark"),
    ])
    func utf16IsNamed(encoding: String, mark: Bool, words: String) throws {
        let text = Self.square
        var bytes = [UInt8]()
        if mark { bytes += encoding == "utf-16le" ? [0xFF, 0xFE] : [0xFE, 0xFF] }
        for unit in text.utf16 {
            bytes += encoding == "utf-16le" ? [UInt8(unit & 0xFF), UInt8(unit >> 8)] : [UInt8(unit >> 8), UInt8(unit & 0xFF)]
        }
        #expect(Self.drawingError(Data(bytes)) == "f.csv:1: is UTF-16 text (\(words)), not UTF-8; save it as UTF-8 (in Excel: CSV UTF-8)")
        // UTF-8 with its byte-order mark is read.
        #expect(Self.drawingError(Data([0xEF, 0xBB, 0xBF] + Array(text.utf8))) == nil)
    }

    @Test func aRecordingGivenAsADrawingAndTheOtherWayRoundSayWhichItIs() {
        let recording = "timestamp,acc.x,acc.y,acc.z\n0,0,1,0\n0.02,0,1,0\n"
        #expect(
            Self.drawingError(Data(recording.utf8))
                == "f.csv:1: this is a motion recording (a motion sensor's columns), not a drawing of x,y points; `classify motion f.csv` reads it")
        let drawing = Self.recordingError(Self.square)
        #expect(drawing?.hasSuffix("; this looks like a drawing of x,y points (`classify shape r.csv` reads it)") == true, "\(drawing ?? "nil")")
    }

    /// Samples 20 ms apart written in milliseconds, microseconds and nanoseconds (an Android timestamp of 2023):
    /// each is refused with its unit and the 50 Hz it would give.
    @Test(arguments: [("milliseconds", 1e3, 0.0), ("microseconds", 1e6, 0.0), ("nanoseconds", 1e9, 1.7e18)])
    func timestampsInASmallerUnitAreNamed(unit: String, factor: Double, start: Double) {
        let rows = (0..<400).map { index in String(format: "%.0f,0,1,0.1", start + Double(index) * 0.02 * factor) }
        let error = Self.recordingError("timestamp,acc.x,acc.y,acc.z\n" + rows.joined(separator: "\n") + "\n")
        #expect(
            error?.hasSuffix(
                ". The timestamps look like \(unit) (50 Hz if divided by \(String(format: "%.0f", factor))): the timestamp column must be in seconds")
                == true, "\(error ?? "nil")")
    }

    /// phyphox's "Acceleration with g" export (quoted names with units, times in seconds) reads as the same samples
    /// under this project's names do, with the same notes.
    @Test func aPhyphoxExportIsReadAsItComes() throws {
        let rows = (0..<1500).map { index -> String in
            let t = Double(index) / 100
            return String(format: "%.9E,%.9E,%.9E,%.9E", t, 2.5 * sin(11.3 * t), 9.81 + 3 * sin(22.6 * t), 0.5 * cos(11.3 * t))
        }.joined(separator: "\n")
        let phyphox = try MotionRecordingReader.read(
            csv: Data(("\"Time (s)\",\"Acceleration x (m/s^2)\",\"Acceleration y (m/s^2)\",\"Acceleration z (m/s^2)\"\n" + rows).utf8),
            name: "phyphox.csv")
        let ours = try MotionRecordingReader.read(csv: Data(("timestamp,acc.x,acc.y,acc.z\n" + rows).utf8), name: "ours.csv")
        #expect(phyphox.segments.count == 1 && phyphox.segments == ours.segments)
        #expect(phyphox.notes == ours.notes && phyphox.notes.contains { $0.hasPrefix("accelerations look like m/s²") })
        let columns = try #require(
            MotionColumns(header: [
                "Time (s)", "Acceleration x (m/s^2)", "Acceleration y (m/s^2)", "Acceleration z (m/s^2)", "Gyroscope x (rad/s)",
                "Gyroscope y (rad/s)", "Gyroscope z (rad/s)",
            ]))
        #expect(columns == MotionColumns(header: ["timestamp", "acc.x", "acc.y", "acc.z", "gyro.x", "gyro.y", "gyro.z"]))
    }

    /// Sensor Logger's TotalAcceleration.csv (`time,seconds_elapsed,z,y,x`: nanoseconds since 1970, seconds since the
    /// start, m/s² with gravity) reads as the same samples under this project's names do. Its Accelerometer.csv has the
    /// same header with gravity removed, so it, and the header under any other name, is refused with the file to give.
    @Test func aSensorLoggerTotalAccelerationIsReadAndItsOtherFilesAreNamed() throws {
        let samples = (0..<1500).map { index -> (Double, Double, Double, Double) in
            let t = Double(index) / 100
            return (t, 2.5 * sin(11.3 * t), 9.81 + 3 * sin(22.6 * t), 0.5 * cos(11.3 * t))
        }
        let logger =
            "time,seconds_elapsed,z,y,x\n"
            + samples.map { t, x, y, z in String(format: "%.0f,%.9E,%.9E,%.9E,%.9E", 1.7e18 + t * 1e9, t, z, y, x) }.joined(separator: "\n")
        let ours =
            "timestamp,acc.x,acc.y,acc.z\n"
            + samples.map { t, x, y, z in String(format: "%.9E,%.9E,%.9E,%.9E", t, x, y, z) }.joined(separator: "\n")
        let total = try MotionRecordingReader.read(csv: Data(logger.utf8), name: "exports/TotalAcceleration.csv")
        let same = try MotionRecordingReader.read(csv: Data(ours.utf8), name: "ours.csv")
        #expect(total.segments.count == 1 && total.segments == same.segments)
        #expect(total.notes == same.notes)
        for (name, start) in [
            ("Accelerometer.csv", "Sensor Logger's Accelerometer.csv has gravity removed"),
            ("walk.csv", "this is a Sensor Logger export (time,seconds_elapsed,z,y,x)"),
        ] {
            #expect(throws: DataError.self) { try MotionRecordingReader.read(csv: Data(logger.utf8), name: name) }
            do {
                _ = try MotionRecordingReader.read(csv: Data(logger.utf8), name: name)
            } catch {
                #expect(error.message.hasPrefix(start) && error.message.hasSuffix("give its TotalAcceleration.csv, under that name"), "\(error)")
                #expect(error.line == 1)
            }
        }
        // Its x and y are not a drawing's.
        do {
            _ = try DrawingReader.read(csv: Data(logger.utf8), name: "TotalAcceleration.csv")
            Issue.record("a Sensor Logger export read as a drawing")
        } catch {
            #expect(error.message.hasPrefix("this is a motion recording"), "\(error)")
        }
    }
}
