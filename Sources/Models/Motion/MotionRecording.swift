import DataFiles
import Foundation

/// A motion recording at a fixed rate, in Core Motion's units: gravity and user acceleration in g, rotation rate
/// in rad/s (absent for accelerometer-only recordings). Several segments when the recording had gaps.
public struct MotionRecording: Sendable {
    /// Consecutive samples; a gap longer than a window starts a new segment.
    public var segments: [[MotionSample]] { didSet { arrivals = nil } }
    /// Seconds from the recording's start to each segment's first sample.
    public var segmentStarts: [Double] { didSet { arrivals = nil } }
    /// Samples per second (after resampling).
    public var rate: Double
    /// Notes for the user (units converted, gravity estimated, resampled, gaps split).
    public var notes: [String]
    /// Samples per second as the recording arrived (the median of its timestamps' spacing, or the assumed rate),
    /// or `nil` when unknown (samples built in code); below `MotionRecordingReader.minimumSampleRate` the
    /// recognizers refuse the recording.
    package var sourceRate: Double? = nil
    /// The rate assumed because the recording has no `timestamp` column, or `nil` when it has one.
    package var assumedRate: Double? = nil
    /// Where (seconds from the start) consecutive samples are further apart than
    /// `MotionRecordingReader.maximumBridge` yet close enough not to split the recording: the resampled signal
    /// there is a straight line, not the gait, so windows overlapping one are uncertain.
    public var bridgedGaps: [ClosedRange<Double>] = []
    /// Where the recording came from (a file's path, a dataset's `path#session`, `samples`), named in the errors
    /// about it.
    public var source = "recording"
    /// When its samples arrived, which makes a window whose samples came too slowly uncertain as a stream's is
    /// (`MotionArrivals`); `nil` for a recording built in code from grid points, or whose segments were changed after
    /// it was read (the times would no longer match them).
    package var arrivals: MotionArrivals? = nil
}

/// Reads a motion recording from CSV: the Core Motion columns, or raw accelerometer `acc.x,acc.y,acc.z` (g, gravity
/// included) with optional gyroscope `gyro.*` (rad/s); optional `timestamp` (s). Resamples to `rate`, converts
/// m/s² to g (with a note), separates gravity from raw acceleration by low-pass filtering, and splits at gaps.
public enum MotionRecordingReader {
    /// Standard gravity: 1 g in m/s².
    package static let standardGravity = 9.80665

    /// Reads `path` (`-` for standard input). `assumedRate` applies when there is no `timestamp` column; `rate` and
    /// `window` are the model's (the defaults are the shipped motion model's windowing, `MotionWindowing()`).
    public static func read(
        _ path: String, assumedRate: Double = 50, rate: Double = MotionWindowing().rate,
        window: Int = MotionWindowing().window
    ) throws(DataError) -> MotionRecording {
        try read(CSVReader(path: path), assumedRate: assumedRate, rate: rate, window: window)
    }

    /// The recording in `bytes` (a recording file's text, as `read(_:assumedRate:rate:window:)` takes it), named
    /// `name` in the errors.
    public static func read(
        csv bytes: Data, name: String, assumedRate: Double = 50, rate: Double = MotionWindowing().rate,
        window: Int = MotionWindowing().window
    ) throws(DataError) -> MotionRecording {
        try read(CSVReader(file: name, bytes: bytes), assumedRate: assumedRate, rate: rate, window: window)
    }

    /// The signals of the recording in `path` (`-` for standard input), as `read(_:assumedRate:rate:window:)`
    /// reads it, made without holding its samples: what `classify motion` and `serve` answer from.
    package static func readSignals(_ path: String, assumedRate: Double, rate: Double, window: Int) throws(DataError) -> MotionSignals {
        try readSignals(CSVReader(path: path), assumedRate: assumedRate, rate: rate, window: window)
    }

    /// The signals of the recording in `bytes`, named `name` in the errors.
    package static func readSignals(csv bytes: Data, name: String, assumedRate: Double, rate: Double, window: Int) throws(DataError)
        -> MotionSignals
    {
        try readSignals(CSVReader(file: name, bytes: bytes), assumedRate: assumedRate, rate: rate, window: window)
    }

    /// The signals of the recording `reader` holds (a CSV file's records, or rows that arrived another way).
    package static func readSignals(
        _ reader: consuming some RecordReader, assumedRate: Double, rate: Double, window: Int, maximumSamples: Int = maximumSamples
    ) throws(DataError) -> MotionSignals {
        var builder = SignalSegments()
        let made = try read(reader, assumedRate: assumedRate, rate: rate, window: window, maximumSamples: maximumSamples, into: &builder)
        return MotionSignals(
            segments: builder.segments, segmentStarts: made.segmentStarts, notes: made.notes, sourceRate: made.sourceRate,
            assumedRate: made.assumedRate, bridgedGaps: made.bridgedGaps, source: made.source, arrivals: made.arrivals)
    }

    /// The recording `reader` holds (one path for files and bytes); reading stops at sample `maximumSamples + 1`.
    static func read(
        _ reader: consuming CSVReader, assumedRate: Double, rate: Double, window: Int, maximumSamples: Int = maximumSamples
    ) throws(DataError) -> MotionRecording {
        var builder = SampleSegments()
        let made = try read(reader, assumedRate: assumedRate, rate: rate, window: window, maximumSamples: maximumSamples, into: &builder)
        return made.recording(builder.segments, rate: rate)
    }

    /// What `assemble` makes of a recording besides its points, which go to a `MotionSegmentBuilder`.
    struct Assembled {
        var segmentStarts: [Double], notes: [String], sourceRate: Double?, assumedRate: Double?, bridgedGaps: [ClosedRange<Double>]
        var arrivals: MotionArrivals
        var source = "recording"

        /// The recording of these and `segments`.
        func recording(_ segments: [[MotionSample]], rate: Double) -> MotionRecording {
            var recording = MotionRecording(
                segments: segments, segmentStarts: segmentStarts, rate: rate, notes: notes, sourceRate: sourceRate,
                assumedRate: assumedRate, bridgedGaps: bridgedGaps)
            (recording.source, recording.arrivals) = (source, arrivals)
            return recording
        }
    }

    /// Reads the rows `reader` holds, checks them and assembles them into `builder` (the one reading path of
    /// recordings and their signals).
    static func read<Builder: MotionSegmentBuilder>(
        _ reader: consuming some RecordReader, assumedRate: Double, rate: Double, window: Int, maximumSamples: Int,
        into builder: inout Builder
    ) throws(DataError) -> Assembled {
        var reader = reader
        let path = reader.file
        let columns = try recordingColumns(reader)
        let timeColumn = columns.time
        var times: [Double] = [], values = SensorBlocks(columns: columns)
        while try reader.advance() {
            guard times.count < maximumSamples else {
                throw DataError(
                    file: path, line: reader.lineNumber,
                    message: "more than \(maximumSamples) samples, the most one recording is read in; classify it in parts "
                        + "(or follow it with MotionStream / --follow, which keeps no more than a window)")
            }
            try values.append(reader, columns: columns)
            let time = try timeColumn.map { column throws(DataError) in try reader.number(column: column) } ?? Double(times.count) / assumedRate
            if let problem = MotionSampleRules.timeProblem(time, after: times.last, word: "timestamp") {
                throw DataError(file: path, line: reader.lineNumber, column: timeColumn.map { ($0 + 1, "timestamp") }, message: problem)
            }
            times.append(time)
        }
        guard !times.isEmpty else { throw DataError(file: path, line: 2, message: "no samples: the file has a header but no rows") }
        guard times.count >= 2 else {
            throw DataError(file: path, line: 2, message: "\(times.count) samples; a recording needs at least one window (\(window))")
        }
        let assumed = timeColumn == nil ? assumedRate : nil
        let sourceRate = medianRate(times)
        if let problem = rateProblem(sourceRate: sourceRate, assumedRate: assumed) { throw DataError(file: path, message: problem) }
        try checkSpan(times, rate: rate, window: window, file: path)
        var made = assemble(
            blocks: consume values, times: times, sourceRate: sourceRate, coreMotion: columns.coreMotion, rate: rate, window: window,
            assumedRate: assumed, into: &builder)
        made.source = path
        return made
    }

    /// The fastest cadence a runner reaches: about 3.5 steps a second (210 a minute, a sprint).
    package static let fastestStepRate = 3.5

    /// The lowest sample rate (Hz) that still resolves a stride: 10 Hz.
    ///
    /// The vertical acceleration bounces once per step, so its fundamental lies at the step rate, up to
    /// `fastestStepRate` (3.5 Hz). Sampling must be faster than twice that (Nyquist: 7 Hz) or the bounce aliases
    /// to a slower, walking-like rhythm. Resampling to the model's rate interpolates linearly, which damps a
    /// component at `f` by sinc²(f / rate): at 7 Hz a 3.5 Hz step keeps 41% of its amplitude, at 10 Hz 66%
    /// (−3.7 dB). 10 Hz is the first round rate above Nyquist that keeps most of the step, and phones record at
    /// 50–100 Hz. The threshold comes from this reasoning, not from any data set.
    public static let minimumSampleRate = 10.0

    /// Whether samples at `rate` (Hz) are fast enough: at least `minimumSampleRate` less 1%, so that a 10 Hz
    /// recording is accepted whatever its timestamps' rounding (steps of 0.1 s written as decimals differ from 0.1 s
    /// by up to 1e-14 s, so their median rate can be 9.999…) or a sensor clock's drift; under 9.9 Hz is refused.
    package static func resolvesStride(rate: Double) -> Bool { rate >= minimumSampleRate * 0.99 }

    /// The highest sample rate (Hz) accepted: 10 kHz. Core Motion delivers at most 100 Hz and raw phone IMUs a
    /// few kHz; samples closer than 0.1 ms are timestamps in a unit larger than seconds (a spreadsheet's date
    /// serial counts days) or not timestamps at all, and would be read as a recording of a few milliseconds.
    package static let maximumSampleRate = 10_000.0

    /// The longest stretch (s) between two samples that interpolation may bridge inside a window: 0.25 s, under
    /// the fastest step's period (1 / 3.5 Hz ≈ 0.29 s), so no whole step can vanish into a gap.
    package static let maximumBridge = 0.25

    /// The median rate (Hz) of `times` (seconds), from the median spacing; `nil` with fewer than two times.
    package static func medianRate(_ times: [Double]) -> Double? {
        guard let spacing = middle(zip(times, times.dropFirst()).map { $1 - $0 }), spacing > 0 else { return nil }
        return 1 / spacing
    }

    /// `values.sorted()[values.count / 2]` (nil when empty) in linear time: quickselect with three-way partitions,
    /// since a recording's spacings are nearly all equal. The values must not be NaN.
    static func middle(_ values: consuming [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let target = values.count / 2
        var low = 0, high = values.count, rounds = 0
        while high - low > 1 {
            rounds += 1
            if rounds > 64 { return values[low..<high].sorted()[target - low] }  // (pathological inputs)
            let (a, b, c) = (values[low], values[(low + high) / 2], values[high - 1])
            let pivot = max(min(a, b), min(max(a, b), c))
            // [low, less) < pivot, [less, i) == pivot, [greater, high) > pivot.
            var less = low, i = low, greater = high
            while i < greater {
                if values[i] < pivot {
                    values.swapAt(i, less)
                    less += 1
                    i += 1
                } else if values[i] > pivot {
                    greater -= 1
                    values.swapAt(i, greater)
                } else {
                    i += 1
                }
            }
            if target < less {
                high = less
            } else if target >= greater {
                low = greater
            } else {
                return pivot
            }
        }
        return values[low]
    }

    /// Why a recording that arrived at `sourceRate` (Hz; `assumedRate` when it has no timestamps) cannot be
    /// classified, or `nil` when its rate resolves a stride (`minimumSampleRate`) and is one a phone can
    /// record (`maximumSampleRate`).
    package static func rateProblem(sourceRate: Double?, assumedRate: Double? = nil) -> String? {
        guard let sourceRate else { return nil }
        if sourceRate > maximumSampleRate {
            let limit = String(format: ", faster than any phone's motion sensors; the highest rate accepted is %.0f Hz", maximumSampleRate)
            if let assumedRate {
                return String(format: "there is no timestamp column and the assumed rate (--rate) is %g Hz", assumedRate) + limit
            }
            let spacing = 1 / sourceRate
            var text = String(format: "the samples are %.3g s apart (median): %.3g Hz", spacing, sourceRate) + limit
            if (minimumSampleRate...1000).contains(1 / (spacing * 86_400)) {
                text += String(
                    format: ". The timestamps look like days, as a spreadsheet's dates count them (%.3g Hz if multiplied "
                        + "by 86400): the timestamp column must be in seconds", 1 / (spacing * 86_400))
            }
            return text
        }
        guard !resolvesStride(rate: sourceRate) else { return nil }
        let need = String(
            format: ", too slow to resolve a stride; the lowest rate accepted is %.0f Hz (over twice the fastest running "
                + "cadence, %.1f steps a second)", minimumSampleRate, fastestStepRate)
        if let assumedRate {
            return String(format: "there is no timestamp column and the assumed rate (--rate) is %g Hz", assumedRate) + need
        }
        let spacing = 1 / sourceRate
        var text = String(format: "the samples are %g s apart (median): %.3g Hz", spacing, sourceRate) + need
        // Times in a smaller unit: milliseconds (a web page's), microseconds, nanoseconds (Android's
        // SensorEvent.timestamp, Sensor Logger's `time`): the first unit that makes the rate one a phone records.
        if spacing >= 1,
            let (unit, factor) = [("milliseconds", 1e3), ("microseconds", 1e6), ("nanoseconds", 1e9)].first(where: {
                (minimumSampleRate...maximumSampleRate).contains($0.1 / spacing)
            })
        {
            text += String(
                format: ". The timestamps look like %@ (%.3g Hz if divided by %.0f): the timestamp column must be in seconds", unit,
                factor / spacing, factor)
        }
        return text
    }

    /// The most samples one recording is read in (a file, standard input or a request): 10 million, 55 hours at
    /// 50 Hz. Checked as each row is read, so a longer input stops there rather than after all of it was parsed
    /// (a row held until it is resampled takes 8 bytes a value of its columns and 8 for its time).
    package static let maximumSamples = 10_000_000

    /// The most samples a recording may have after resampling (55 hours at 50 Hz): a guard against timestamps
    /// spread so far apart that resampling would fill gigabytes.
    package static let maximumResampledSamples = 10_000_000

    /// The most samples resampling to `rate` may make per sample read (plus one window): twice the
    /// upsampling of a recording at `minimumSampleRate` (10 at 50 Hz). An honest recording at an accepted rate
    /// needs at most half of it, even with gaps bridged; more means timestamps far apart between many samples
    /// (gaps up to a window long, which are interpolated rather than split), which would make up most of the
    /// signal and cost memory out of proportion to the file.
    static func maximumUpsampling(rate: Double) -> Double { 2 * max(1, rate / minimumSampleRate) }

    /// How many samples `assemble` makes of `times` at `rate`: each piece between gaps longer than `window`
    /// samples resampled on its own. In `Double`, so that any finite times give a finite count or +∞.
    static func resampledCount(_ times: [Double], rate: Double, window: Int) -> Double {
        let windowSeconds = Double(window) / rate
        var total = 0.0, pieceStart = 0
        for i in 1...max(times.count, 1) where !times.isEmpty {
            if i == times.count || times[i] - times[i - 1] > windowSeconds {
                total += i - pieceStart > 1 ? ((times[i - 1] - times[pieceStart]) * rate + 1e-6).rounded(.down) + 1 : 1
                pieceStart = i
            }
        }
        return total
    }

    /// Throws unless resampling `times` to `rate` stays within `maximumResampledSamples` and within
    /// `maximumUpsampling(rate:)` samples per sample read (plus a window): what `assemble` may allocate is
    /// bounded before it allocates.
    package static func checkSpan(_ times: [Double], rate: Double, window: Int = 256, file: String, line: Int? = nil) throws(DataError) {
        guard let first = times.first, let last = times.last else { return }
        let count = resampledCount(times, rate: rate, window: window)
        if count > Double(maximumResampledSamples) {
            // Samples about as many as the span holds at the model's rate: a real recording, only too long for one call.
            let plausible = Double(times.count) >= count / maximumUpsampling(rate: rate)
            throw DataError(
                file: file, line: line,
                message: plausible
                    ? String(
                        format: "the recording spans %.0f s (%.1f hours), more than %d samples at %.0f Hz, the most one recording is "
                            + "classified in; classify it in parts (or follow it with MotionStream / --follow, which keeps no more "
                            + "than a window)", last - first, (last - first) / 3600, maximumResampledSamples, rate)
                    : String(
                        format: "the timestamps span %.0f s, which at %.0f Hz would be more than %d samples; are they in seconds?",
                        last - first, rate, maximumResampledSamples))
        }
        let limit = maximumUpsampling(rate: rate)
        if count > limit * Double(times.count) + Double(window) {
            throw DataError(
                file: file, line: line,
                message: String(
                    format: "resampling to %.0f Hz would make %.0f samples of %d (more than %g per sample): the timestamps span "
                        + "%.0f s with long gaps between many samples, which interpolation would fill with straight lines; "
                        + "check the timestamp column", rate, count, times.count, limit, last - first))
        }
    }

    /// The largest magnitude a sensor value may have: 1000 g (or m/s²) or rad/s is far beyond any phone's
    /// sensors (about 16 g and 35 rad/s), and keeps the features' arithmetic finite.
    package static let maximumSensorMagnitude = 1000.0

    /// Where a recording's sensor values are in `reader`'s header; an error naming what is missing otherwise.
    package static func recordingColumns(_ reader: borrowing some RecordReader) throws(DataError) -> MotionColumns {
        guard let columns = MotionColumns(header: reader.header) else {
            let header = reader.header
            let drawing = CSVReader.position(of: "x", in: header) != nil && CSVReader.position(of: "y", in: header) != nil
            throw DataError(
                file: reader.file, line: 1,
                message: "missing columns: a recording needs gravity.x/y/z and userAcceleration.x/y/z "
                    + "(Core Motion), or acc.x/y/z (raw accelerometer); the header has " + reader.headerSummary
                    + (drawing ? "; this looks like a drawing of x,y points (`classify shape \(reader.file)` reads it)" : ""))
        }
        if columns.sensorLogger, let problem = sensorLoggerProblem(file: reader.file) {
            throw DataError(file: reader.file, line: 1, message: problem)
        }
        return columns
    }

    /// Why a Sensor Logger export named `file` is not read, or `nil` for its `TotalAcceleration.csv` (gravity
    /// included, in m/s²). Its `Accelerometer.csv` has the same header with gravity removed, which no check of the
    /// values tells apart from a raw accelerometer on these recordings (a watch's one-second or whole-stretch
    /// means go down to 0.25 g with gravity; a jog's user acceleration averages up to 0.54 g without it), so the
    /// file's name says which.
    static func sensorLoggerProblem(file: String) -> String? {
        let name = (file.split(separator: "/").last.map(String.init) ?? file).lowercased()
        if name.hasPrefix("totalacceleration") { return nil }
        let which =
            name.hasPrefix("accelerometer")
            ? "Sensor Logger's Accelerometer.csv has gravity removed, which a recording needs"
            : "this is a Sensor Logger export (time,seconds_elapsed,z,y,x), and only its file's name tells "
                + "Accelerometer.csv (gravity removed) from TotalAcceleration.csv (gravity included)"
        return which + "; give its TotalAcceleration.csv, under that name"
    }

    /// The sample of the record `reader` has just read, with the checks `read` makes of every row (finite numbers
    /// within any sensor's range): what `classify motion --follow` hands to its `MotionStream`. `index` is the
    /// sample's position, which gives its time at `assumedRate` when there is no timestamp column.
    package static func sample(_ reader: CSVReader, columns: MotionColumns, index: Int, assumedRate: Double) throws(DataError) -> MotionStreamSample {
        try sample(columns: columns, index: index, assumedRate: assumedRate) { column throws(DataError) in
            try reader.number(column: column)
        } refused: { problem, column in
            DataError(file: reader.file, line: reader.lineNumber, column: (column + 1, reader.header[column]), message: problem)
        }
    }

    /// The sample of a row whose values `number` gives by column (a CSV record, or a JSON sample's members), with
    /// the same checks: a sensor value `MotionSampleRules.valueProblem` refuses throws `refused(problem, column)`.
    package static func sample(
        columns: MotionColumns, index: Int, assumedRate: Double, number: (Int) throws(DataError) -> Double,
        refused: (String, Int) -> DataError
    ) throws(DataError) -> MotionStreamSample {
        var v: [Double] = []
        v.reserveCapacity(9)
        for (list, width) in [(columns.values, 6), (columns.spins, 3)] {
            for column in list {
                let value = try number(column)
                if let problem = MotionSampleRules.valueProblem(value) { throw refused(problem, column) }
                v.append(value)
            }
            for _ in list.count..<width { v.append(0) }
        }
        let time = try columns.time.map { column throws(DataError) in try number(column) } ?? Double(index) / assumedRate
        return columns.coreMotion
            ? MotionStreamSample(time: time, gravity: (v[0], v[1], v[2]), userAcceleration: (v[3], v[4], v[5]), rotationRate: (v[6], v[7], v[8]))
            : MotionStreamSample(time: time, acceleration: (v[0], v[1], v[2]), rotationRate: (v[6], v[7], v[8]))
    }

    /// The nine sensor values of the record `reader.advance()` read, appended to `row`: `values` (gravity and user
    /// acceleration, or raw acceleration, then zeros up to six) and `spins` (the rotation rate, then zeros up to
    /// three), each a finite number no larger than `maximumSensorMagnitude`; read in place, without strings.
    /// Unpadded, only the columns' values are appended (as `SensorBlocks` keeps them).
    @inline(__always)
    package static func appendSensorValues(
        reader: borrowing some RecordReader, values: [Int], spins: [Int], to row: inout [Double], padded: Bool = true
    ) throws(DataError) {
        for column in values { row.append(try checkedSensorValue(reader.number(column: column), column: column, reader: reader)) }
        if padded { for _ in values.count..<6 { row.append(0) } }
        for column in spins { row.append(try checkedSensorValue(reader.number(column: column), column: column, reader: reader)) }
        if padded { for _ in spins.count..<3 { row.append(0) } }
    }

    @inline(__always)
    private static func checkedSensorValue(_ value: Double, column: Int, reader: borrowing some RecordReader) throws(DataError) -> Double {
        if let problem = MotionSampleRules.valueProblem(value) {
            throw DataError(file: reader.file, line: reader.lineNumber, column: (column + 1, reader.header[column]), message: problem)
        }
        return value
    }

    /// The recording from parsed rows: `values` holds, per sample, gravity and user acceleration (Core Motion)
    /// or raw acceleration and three zeros, then the rotation rate. Converts m/s² to g, separates gravity from raw
    /// acceleration, splits at gaps longer than a window and resamples each piece to `rate`.
    /// `assumedRate` is the rate the times were made from when the recording has no timestamps. What a caller
    /// passes is checked first, each a `DataError` naming the value: one time per row, nine finite values a row
    /// within a phone sensor's range, finite increasing times that `checkSpan` accepts (they bound what resampling
    /// allocates), a rate of 1–10,000 Hz and a window of 2–65,536 samples.
    public static func assemble(
        _ values: [[Double]], times: [Double], coreMotion: Bool, rate: Double, window: Int,
        assumedRate: Double? = nil
    ) throws(DataError) -> MotionRecording {
        let source = "MotionRecordingReader.assemble"
        guard values.count == times.count else {
            throw DataError(file: source, message: "\(values.count) rows of values but \(times.count) times; give one time per row")
        }
        guard rate.isFinite && rate >= 1 && rate <= 10_000 else {
            throw DataError(file: source, message: "rate \(rate) Hz is not within 1–10,000 Hz")
        }
        guard window >= 2 && window <= 65_536 else { throw DataError(file: source, message: "window \(window) is not within 2–65,536 samples") }
        if let assumedRate, !(assumedRate.isFinite && assumedRate > 0) {
            throw DataError(file: source, message: "assumed rate \(assumedRate) Hz is not a positive finite number")
        }
        for (index, row) in values.enumerated() {
            guard row.count == 9 else { throw DataError(file: source, message: "row \(index) has \(row.count) values, expected 9") }
            if let problem = row.lazy.compactMap(MotionSampleRules.valueProblem).first {
                throw DataError(file: source, message: "row \(index): \(problem)")
            }
        }
        for index in times.indices {
            if let problem = MotionSampleRules.timeProblem(times[index], after: index > 0 ? times[index - 1] : nil) {
                throw DataError(file: source, message: "row \(index): \(problem)")
            }
        }
        try checkSpan(times, rate: rate, window: window, file: source)
        return assemble(rows: values.flatMap { $0 }, times: times, coreMotion: coreMotion, rate: rate, window: window, assumedRate: assumedRate)
    }

    /// The note that accelerations were read as m/s²: the median magnitude of gravity (Core Motion) or of the whole
    /// acceleration (a raw accelerometer), which is about 9.8 when the unit is m/s² and 1 when it is g.
    package static func unitsNote(medianMagnitude: Double, coreMotion: Bool) -> String {
        String(
            format: "accelerations look like m/s² (median %@ magnitude %.2f); converted to g",
            coreMotion ? "gravity" : "acceleration", medianMagnitude)
    }

    /// The note that a raw accelerometer's gravity was estimated.
    package static let gravityFilterNote = "raw accelerometer: gravity estimated by a 0.3 Hz low-pass filter"

    /// Whether a recording's note is a gap splitting it (which changes the windows: a warning) rather than an
    /// assumption about the input (units, the gravity filter, resampling: a note).
    package static func isGapNote(_ note: String) -> Bool { note.hasPrefix(gapNotePrefix) }

    /// How a gap's note begins, so that `isGapNote` reads what `assemble` writes.
    static let gapNotePrefix = "a gap of "

    /// `assemble` of rows laid end to end, nine values each, for callers that checked them (readers, generators):
    /// the times increasing and accepted by `checkSpan`.
    package static func assemble(
        rows flat: [Double], times: [Double], coreMotion: Bool, rate: Double, window: Int,
        assumedRate: Double? = nil
    ) -> MotionRecording {
        var builder = SampleSegments()
        let made = assemble(
            blocks: SensorBlocks(padded: flat), times: times, sourceRate: medianRate(times), coreMotion: coreMotion, rate: rate,
            window: window, assumedRate: assumedRate, into: &builder)
        return made.recording(builder.segments, rate: rate)
    }

    /// The recording from checked rows (`rows` with `times`, whose median rate is `sourceRate`): the rows go through
    /// `MotionGridFeed` one at a time, as a `MotionStream`'s samples do (`MotionWindowStream`); only the units are
    /// decided from the whole recording. Each block of `rows` is freed once its samples are on the grid, so a long
    /// recording is not held twice over.
    static func assemble<Builder: MotionSegmentBuilder>(
        blocks rows: consuming SensorBlocks, times: [Double], sourceRate: Double?, coreMotion: Bool, rate: Double, window: Int,
        assumedRate: Double?, into builder: inout Builder
    ) -> Assembled {
        var magnitudes: [Double] = []
        magnitudes.reserveCapacity(rows.count)
        rows.forEachRow { v in magnitudes.append(MotionUnits.magnitude(v[0], v[1], v[2])) }
        let (scale, unitsNote) = MotionUnits.decide(magnitudes: consume magnitudes, coreMotion: coreMotion)
        var feed = MotionGridFeed(
            rate: rate, window: window, scale: scale, sink: RecordingPoints(builder: Builder(), times: times, rate: rate, window: window))
        // The caller's builder is moved in and back out, never copied: a copy would share its arrays, and the
        // first point appended would copy them whole.
        swap(&feed.sink.builder, &builder)
        var i = 0
        rows.consumeRows { v in
            feed.take(
                coreMotion
                    ? MotionStreamSample(
                        time: times[i], gravity: (v[0], v[1], v[2]), userAcceleration: (v[3], v[4], v[5]), rotationRate: (v[6], v[7], v[8]))
                    : MotionStreamSample(time: times[i], acceleration: (v[0], v[1], v[2]), rotationRate: (v[6], v[7], v[8])))
            i += 1
        }
        feed.endStretch()
        swap(&feed.sink.builder, &builder)
        var notes = (unitsNote.map { [$0] } ?? []) + feed.assumptions + feed.sink.splits
        if let sourceRate, abs(sourceRate - rate) > 0.5 {
            notes.append(String(format: "resampled from %.1f Hz to %.0f Hz", sourceRate, rate))
        }
        return Assembled(
            segmentStarts: feed.sink.starts, notes: notes, sourceRate: sourceRate, assumedRate: assumedRate, bridgedGaps: feed.sink.bridgedGaps,
            arrivals: MotionArrivals(times: times, segmentFirstSample: feed.sink.firsts))
    }

    /// A recording's grid points, kept by `builder`, and what `assemble` says of them on the recording's clock (from
    /// its first sample): where each stretch starts (and its first sample), the bridged gaps and the splits' notes.
    struct RecordingPoints<Builder: MotionSegmentBuilder>: MotionGridSink {
        var builder: Builder
        /// The recording's times, one per sample.
        let times: [Double]
        /// The grid's rate and a window's length in points.
        let rate: Double, window: Int
        /// Each stretch's start (s from the first sample), and its first sample's index.
        private(set) var starts: [Double] = [], firsts: [Int] = []
        /// The bridged gaps, from the first sample.
        private(set) var bridgedGaps: [ClosedRange<Double>] = []
        /// A note per gap that split the recording.
        private(set) var splits: [String] = []
        /// Samples on the grid so far.
        private var added = 0

        init(builder: Builder, times: [Double], rate: Double, window: Int) {
            (self.builder, self.times, self.rate, self.window) = (builder, times, rate, window)
        }

        var points: [MotionSample] {
            get { builder.points }
            _modify { yield &builder.points }
        }

        mutating func stretchStarted(at time: Double) {
            starts.append(time - times[0])
            firsts.append(added)
            builder.startSegment(expected: stretchPoints(from: added))
        }

        mutating func sampleAdded(at time: Double, stretchStart start: Double) {
            builder.added()
            added += 1
        }

        mutating func bridged(_ gap: ClosedRange<Double>) { bridgedGaps.append((gap.lowerBound - times[0])...(gap.upperBound - times[0])) }

        mutating func stretchEnded(stretchStart start: Double) { builder.endSegment() }

        mutating func split(gap: Double, after time: Double) {
            splits.append(gapNotePrefix + String(format: "%.2f s at %.2f s splits the recording", gap, time - times[0]))
        }

        /// About how many grid points the stretch that starts at sample `start` makes (its span times the rate,
        /// plus one): room reserved for them at once, since doubling an array of a few hundred megabytes copies it.
        private func stretchPoints(from start: Int) -> Int {
            let grid = MotionGrid(rate: rate)
            var end = start
            while end + 1 < times.count && !grid.splits(gap: times[end + 1] - times[end], window: window) { end += 1 }
            return Int(((times[end] - times[start]) * rate).rounded(.up)) + 2
        }
    }

    /// The sample the fraction `f` of the way from `a` to `b` (0 gives `a`, 1 gives `b`): each field linearly.
    static func interpolate(_ a: MotionSample, _ b: MotionSample, _ f: Double) -> MotionSample {
        func mix(_ p: (x: Double, y: Double, z: Double), _ q: (x: Double, y: Double, z: Double)) -> (Double, Double, Double) {
            (p.x + (q.x - p.x) * f, p.y + (q.y - p.y) * f, p.z + (q.z - p.z) * f)
        }
        return MotionSample(
            gravity: mix(a.gravity, b.gravity), rotationRate: mix(a.rotationRate, b.rotationRate),
            userAcceleration: mix(a.userAcceleration, b.userAcceleration))
    }
}

/// Sensor rows as a recording's reader keeps them: only the columns the file has (the values, then the spins, if
/// any), in blocks of `blockRows` rows, so that a long recording never doubles one large array and `assemble` can
/// free each block as it goes.
struct SensorBlocks: ~Copyable {
    /// Rows per block.
    static let blockRows = 1 << 16

    /// One row as nine values (`row[k]`, 0…8): the missing columns read as zeros.
    struct Row {
        let block: UnsafeBufferPointer<Double>, base: Int, valueCount: Int, spinCount: Int
        subscript(k: Int) -> Double {
            if k < 6 { return k < valueCount ? block[base + k] : 0 }
            return spinCount == 0 ? 0 : block[base + valueCount + k - 6]
        }
    }

    let valueCount: Int, spinCount: Int
    private var blocks: [[Double]] = []
    /// The number of rows.
    private(set) var count = 0
    private var width: Int { valueCount + spinCount }

    /// No rows yet, of the columns a reader found.
    init(columns: MotionColumns) { (valueCount, spinCount) = (columns.values.count, columns.spins.count) }

    /// The rows laid end to end in `padded`, nine values each, as one block.
    init(padded: [Double]) {
        (valueCount, spinCount) = (6, 3)
        blocks = [padded]
        count = padded.count / 9
    }

    /// Reads the sensor values of the record `reader` has just read (`appendSensorValues`, unpadded).
    @inline(__always)
    mutating func append(_ reader: borrowing some RecordReader, columns: MotionColumns) throws(DataError) {
        if blocks.isEmpty || blocks[blocks.count - 1].count >= Self.blockRows * width {
            blocks.append([])
            blocks[blocks.count - 1].reserveCapacity(Self.blockRows * width)
        }
        try MotionRecordingReader.appendSensorValues(
            reader: reader, values: columns.values, spins: columns.spins, to: &blocks[blocks.count - 1], padded: false)
        count += 1
    }

    /// Calls `body` with the first `limit` rows (all by default), in order.
    func forEachRow(upTo limit: Int = .max, _ body: (Row) -> Void) {
        var left = limit
        for block in blocks where left > 0 {
            block.withUnsafeBufferPointer { buffer in
                var base = 0
                while base < buffer.count && left > 0 {
                    body(Row(block: buffer, base: base, valueCount: valueCount, spinCount: spinCount))
                    base += width
                    left -= 1
                }
            }
        }
    }

    /// Calls `body` with every row, in order, freeing each block once its rows are done.
    consuming func consumeRows(_ body: (Row) -> Void) {
        for index in blocks.indices {
            let block = blocks[index]
            blocks[index] = []
            block.withUnsafeBufferPointer { buffer in
                for base in stride(from: 0, to: buffer.count, by: width) {
                    body(Row(block: buffer, base: base, valueCount: valueCount, spinCount: spinCount))
                }
            }
        }
    }
}
