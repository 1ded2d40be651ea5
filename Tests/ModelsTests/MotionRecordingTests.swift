import DataFiles
import Foundation
import Tensor
import Testing

@testable import Models

@Suite("Motion recordings")
struct MotionRecordingTests {
    /// This test's files, removed after it.
    let files = TestFiles("motion-tests")

    func write(_ text: String) throws -> String { try files.write(text) }

    /// Core Motion rows: gravity straight down, vertical user acceleration `sin(2π·2·t)`.
    func coreMotion(rate: Double, seconds: Double, scale: Double = 1, timestamps: Bool = true) -> String {
        var lines = [(timestamps ? "timestamp," : "") + coreMotionColumns.joined(separator: ",")]
        for k in 0..<Int(rate * seconds) {
            let t = Double(k) / rate
            let v = sin(2 * .pi * 2 * t)
            lines.append((timestamps ? String(format: "%.4f,", t) : "") + "0,0,0,0,0,\(-scale),0,0,0,0,0,\(-v * scale)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// An endless recording (a pipe that never ends) stops at the sample limit as it is read, with the line where
    /// it was passed, having read only that far.
    @Test func theSampleLimitStopsTheReadingWhereItIsPassed() throws {
        let chunks = Counter()
        let reader = try CSVReader(file: "endless") { () throws(DataError) -> Data in
            chunks.count += 1
            return chunks.count == 1 ? Data("acc.x,acc.y,acc.z\n".utf8) : Data(String(repeating: "0,0,1\n", count: 100).utf8)
        }
        #expect {
            _ = try MotionRecordingReader.read(reader, assumedRate: 50, rate: 50, window: 256, maximumSamples: 1000)
        } throws: { error in
            let error = error as? DataError
            return error?.line == 1002 && error?.message.hasPrefix("more than 1000 samples, the most one recording is read in") == true
        }
        #expect(chunks.count < 20, "\(chunks.count) chunks read")
    }

    @Test func anyRateIsResampledTo50Hz() throws {
        let recording = try MotionRecordingReader.read(try write(coreMotion(rate: 100, seconds: 4)))
        #expect(recording.segments.count == 1)
        #expect(abs(recording.segments[0].count - 200) <= 1)
        #expect(recording.notes.contains("resampled from 100.0 Hz to 50 Hz"))
        // The vertical feature keeps the 2 Hz wave: at t = 0.125 s, sin(π/2) = 1.
        let vertical = MotionWindowing.features(of: recording.segments[0][6 + 0]).vertical
        #expect(abs(vertical - sin(2 * .pi * 2 * 0.12)) < 0.02)
    }

    /// A recording keeps its samples' times for the arrival-rate check; an app that changes its segments afterwards
    /// (joins two recordings, drops one) gets a recording without them, not times of other segments or a crash.
    @Test func changedSegmentsDropTheArrivalTimes() throws {
        var recording = try MotionRecordingReader.read(try write(coreMotion(rate: 50, seconds: 12)))
        #expect(recording.arrivals?.segmentFirstSample == [0] && recording.arrivals?.times.count == 600)
        recording.segments.append(recording.segments[0])
        recording.segmentStarts.append(20)
        #expect(recording.arrivals == nil)
        let answer = try MotionRecognizer.shipped().recognize(recording)
        #expect(answer.windows.count == 2 * MotionWindowing().windowCount(samples: recording.segments[0].count))
    }

    @Test func withoutTimestampsTheRateIsAssumed() throws {
        let recording = try MotionRecordingReader.read(try write(coreMotion(rate: 50, seconds: 3, timestamps: false)))
        #expect(recording.segments[0].count == 150)
        #expect(recording.notes.isEmpty)
        #expect(recording.assumedRate == 50)
        let timed = try MotionRecordingReader.read(try write(coreMotion(rate: 50, seconds: 3)))
        #expect(timed.assumedRate == nil)
    }

    @Test func metresPerSecondSquaredAreDetectedAndConverted() throws {
        let recording = try MotionRecordingReader.read(try write(coreMotion(rate: 50, seconds: 3, scale: 9.80665)))
        #expect(abs(recording.segments[0][10].gravity.z + 1) < 1e-9)
        #expect(recording.notes.first?.hasPrefix("accelerations look like m/s² (median gravity magnitude ") == true, "\(recording.notes)")
    }

    @Test func rawAccelerationIsSplitIntoGravityAndUserAcceleration() throws {
        // acc = gravity (0, 0, -1) + user acceleration 0.5·sin(2π·2·t) along z.
        var lines = ["timestamp,acc.x,acc.y,acc.z"]
        for k in 0..<500 {
            let t = Double(k) / 50
            lines.append(String(format: "%.3f,0,0,%.5f", t, -1 - 0.5 * sin(2 * .pi * 2 * t)))
        }
        let recording = try MotionRecordingReader.read(try write(lines.joined(separator: "\n") + "\n"))
        let samples = recording.segments[0]
        #expect(recording.notes.contains("raw accelerometer: gravity estimated by a 0.3 Hz low-pass filter"))
        // After the filter settles, gravity is within a few percent of straight down and the vertical feature
        // follows the wave.
        for sample in samples[250...] { #expect(abs(sample.gravity.z + 1) < 0.08) }
        var error = 0.0
        for (k, sample) in samples.enumerated() where k >= 250 {
            error = max(error, abs(MotionWindowing.features(of: sample).vertical - 0.5 * sin(2 * .pi * 2 * Double(k) / 50)))
        }
        #expect(error < 0.12, "largest vertical error \(error)")
    }

    @Test func aGapLongerThanAWindowSplitsTheRecording() throws {
        var lines = ["timestamp," + coreMotionColumns.joined(separator: ",")]
        for k in 0..<300 {
            let t = Double(k) / 50 + (k >= 150 ? 10 : 0)  // 10 s missing after 3 s
            lines.append(String(format: "%.3f,", t) + "0,0,0,0,0,-1,0,0,0,0,0,0.1")
        }
        let recording = try MotionRecordingReader.read(try write(lines.joined(separator: "\n") + "\n"))
        #expect(recording.segments.map(\.count) == [150, 150])
        #expect(abs(recording.segmentStarts[1] - 13) < 0.01)
        #expect(recording.notes.contains { $0.hasPrefix("a gap of 10.02 s at 2.98 s splits the recording") })
    }

    @Test func badRecordingsAreNamedPrecisely() throws {
        let backwards = try write(
            "timestamp," + coreMotionColumns.joined(separator: ",")
                + "\n0.00,0,0,0,0,0,-1,0,0,0,0,0,0\n0.02,0,0,0,0,0,-1,0,0,0,0,0,0\n0.01,0,0,0,0,0,-1,0,0,0,0,0,0\n")
        #expect(
            throws: DataError(
                file: backwards, line: 4, column: (1, "timestamp"),
                message: "timestamp 0.01 does not come after 0.02; timestamps must increase")
        ) {
            try MotionRecordingReader.read(backwards)
        }
        let noColumns = try write("time,a,b\n1,2,3\n")
        #expect(
            throws: DataError(
                file: noColumns, line: 1,
                message: "missing columns: a recording needs gravity.x/y/z and "
                    + "userAcceleration.x/y/z (Core Motion), or acc.x/y/z (raw accelerometer); the header has 'time', 'a', 'b'")
        ) {
            try MotionRecordingReader.read(noColumns)
        }
        let nan = try write("acc.x,acc.y,acc.z\n0,0,-1\n0,nan,-1\n")
        #expect(throws: DataError(file: nan, line: 3, column: (2, "acc.y"), message: "nan is not a finite number")) {
            try MotionRecordingReader.read(nan)
        }
    }

    @Test func exactlyOneWindowOfSamplesIsOneWindow() throws {
        // 5.1 s · 50 Hz is 254.99999999999997 in floating point; resampling must still give 256 samples.
        let recording = try MotionRecordingReader.read(try write(coreMotion(rate: 50, seconds: 5.12)), window: 256)
        #expect(recording.segments.map(\.count) == [256])
        let untimed = try MotionRecordingReader.read(try write(coreMotion(rate: 50, seconds: 5.12, timestamps: false)), window: 256)
        #expect(untimed.segments.map(\.count) == [256])
    }

    @Test(arguments: [1, 2, 3, 7, 17, 33, 1000])
    func theMiddleValueIsTheSortedArraysMiddle(count: Int) {
        // The naive twin of the linear-time `middle` is sorting; spacings of a recording are mostly equal.
        var generator = SeededGenerator(seed: UInt64(count))
        for distinct in [1, 2, 5, count] {
            let values = (0..<count).map { _ in 0.02 + Double(Int(generator.nextUniform(in: 0..<Double(distinct)))) * 1e-9 }
            #expect(MotionRecordingReader.middle(values) == values.sorted()[count / 2], "\(count) values, \(distinct) distinct")
            let ascending = values.sorted(), descending = Array(ascending.reversed())
            #expect(MotionRecordingReader.middle(ascending) == ascending[count / 2])
            #expect(MotionRecordingReader.middle(descending) == ascending[count / 2])
        }
        #expect(MotionRecordingReader.middle([]) == nil)
    }

    @Test func readingInPlaceGivesTheRecordingOfReadingByStrings() throws {
        // `read` parses fields in place; the string path (`next`, `sensorValues`, `assemble` of rows) is its twin.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        // A raw accelerometer with a gyroscope, over more rows than one of the reader's blocks (`SensorBlocks`), and one
        // without: the reader keeps only the columns a file has.
        func rawFile(rows: Int, gyro: Bool) throws -> String {
            var raw = "timestamp,acc.x,acc.y,acc.z" + (gyro ? ",gyro.x,gyro.y,gyro.z" : "") + "\n"
            for i in 0..<rows {
                let t = Double(i) * 0.01 + (i % 7 == 0 ? 0.003 : 0)
                raw += String(format: "%.4f,%.5f,%.5f,%.5f", t, 0.1 * sin(t * 9), -0.98 + 0.3 * sin(t * 11), 0.2 * cos(t * 7))
                raw += gyro ? String(format: ",%.3f,%.3f,%.3f\n", sin(t), cos(t), 0.5) : "\n"
            }
            return try write(raw)
        }
        let files = [
            root.appendingPathComponent("Datasets/examples/walking.csv").path,
            try rawFile(rows: SensorBlocks.blockRows + 600, gyro: true), try rawFile(rows: 600, gyro: false),
        ]
        for path in files {
            let recording = try MotionRecordingReader.read(path, window: 256)
            var reader = try CSVReader(path: path)
            let core = reader.optionalColumn("gravity.x") != nil
            let values = try reader.columns(
                core
                    ? [
                        "gravity.x", "gravity.y", "gravity.z", "userAcceleration.x", "userAcceleration.y",
                        "userAcceleration.z",
                    ] : ["acc.x", "acc.y", "acc.z"])
            let spinNames = core ? ["rotationRate.x", "rotationRate.y", "rotationRate.z"] : ["gyro.x", "gyro.y", "gyro.z"]
            let spins = reader.optionalColumn(spinNames[0]) == nil ? [] : try reader.columns(spinNames)
            let time = try reader.columns(["timestamp"])[0]
            var rows: [[Double]] = [], times: [Double] = []
            while let fields = try reader.next() {
                // The twin of `appendSensorValues` (in place): the same nine values from the record's strings.
                var row = [Double](repeating: 0, count: 9)
                for (slot, column) in zip(Array(0..<values.count) + Array(6..<(6 + spins.count)), values + spins) {
                    row[slot] = try reader.number(fields[column], column: column)
                }
                rows.append(row)
                times.append(try reader.number(fields[time], column: time))
            }
            let expected = try MotionRecordingReader.assemble(rows, times: times, coreMotion: core, rate: 50, window: 256)
            let firstDifference = zip(recording.segments, expected.segments).enumerated().lazy
                .compactMap { segment, pair in pair.0.indices.first { pair.0[$0] != pair.1[$0] }.map { (segment, $0) } }.first
            let counts = (recording.segments.map(\.count), expected.segments.map(\.count))
            #expect(
                counts.0 == counts.1 && firstDifference == nil,
                "\(path): segments of \(counts.0) and \(counts.1) samples; first different (segment, sample): \(String(describing: firstDifference))")
            #expect(recording.notes == expected.notes && recording.sourceRate == expected.sourceRate, "\(path)")
            // What `classify motion` and `serve` answer from: the same signals, made without holding the samples.
            let signals = try MotionRecordingReader.readSignals(path, assumedRate: 50, rate: MotionWindowing().rate, window: 256)
            let whole = MotionSignals(recording)
            #expect(
                signals.segments.map(\.vertical) == whole.segments.map(\.vertical)
                    && signals.segments.map(\.horizontal) == whole.segments.map(\.horizontal), "\(path): the signals differ")
            #expect(
                signals.notes == whole.notes && signals.segmentStarts == whole.segmentStarts && signals.bridgedGaps == whole.bridgedGaps
                    && signals.sourceRate == whole.sourceRate && signals.assumedRate == whole.assumedRate && signals.source == whole.source,
                "\(path)")
        }
    }

    @Test func windowsAreCutPerSegment() {
        let windowing = MotionWindowing(window: 8, hop: 4, lags: 3)
        let samples = (0..<20).map { i in MotionSample(gravity: (0, 0, -1), rotationRate: (0, 0, 0), userAcceleration: (0.3, 0.4, sin(Double(i)))) }
        #expect(windowing.windows(samples).shape == [4, 8])  // starts 0, 4, 8, 12; 2 · 3 lags + 2 intensities
        #expect(windowing.starts(count: 7).isEmpty, "too short for one window")
    }
}

@Suite("Motion grid")
struct MotionGridTests {
    /// Timestamps in seconds since 1970 at millisecond resolution: (last − first) · 50 comes out a hair under 256
    /// though first + 256/50 rounds onto the last sample. The grid makes as many points as the span check counts.
    @Test(arguments: [5.04, 5.12, 5.28, 10.0])
    func largeTimestampsMakeAsManyPointsAsTheSpanHolds(seconds: Double) {
        let first = 1_700_000_000.0
        let times = (0...Int((seconds * 50).rounded())).map { first + Double($0) / 50 }
        var grid = MotionGrid(rate: 50)
        var points: [MotionSample] = []
        let sample = MotionSample(gravity: (0, 0, -1), rotationRate: (0, 0, 0), userAcceleration: (0, 0, 0))
        for time in times { grid.add(sample, at: time, to: &points) }
        grid.finish(to: &points)
        #expect(Double(points.count) == MotionRecordingReader.resampledCount(times, rate: 50, window: 256), "\(points.count) points")
    }
}

/// A count a closure can change.
private final class Counter: @unchecked Sendable {
    var count = 0
}
