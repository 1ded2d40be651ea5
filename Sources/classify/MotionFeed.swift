import DataFiles
import Models

/// Samples into a `MotionStream` as `classify motion --follow` and `classify serve`'s live sessions give them, so
/// that both say the same events for the same samples: the first `MotionStream.headSamples` are held until their
/// times show the rate, and a rate the file command refuses (too slow to resolve a stride, or timestamps in
/// milliseconds or days) is refused here too, with the same message, before any event. The stream holds as many
/// itself before its first window, so this costs no delay. One feed per recording (a followed file read again from
/// its start gets a new one); the stream is the caller's.
struct MotionFeed: Sendable {
    /// The input's name in errors.
    let source: String
    /// The rate the samples' times were made from (a recording without timestamps), or `nil`.
    let assumedRate: Double?
    private var held: [(sample: MotionStreamSample, line: Int)] = []
    /// Whether the rate was checked (every sample after goes straight to the stream).
    private(set) var rateChecked = false
    /// How many of the stream's assumptions were handed on.
    private var noted = 0

    init(source: String, assumedRate: Double?) {
        (self.source, self.assumedRate) = (source, assumedRate)
    }

    /// What a fed sample gave: its events and the stream's new assumptions (units, a raw accelerometer's gravity
    /// filter), each said once. Returns `false` to stop feeding (nobody can read what follows).
    typealias Delivery = ([MotionStreamEvent], ArraySlice<String>) -> Bool

    /// Takes the sample read at `line` (a line of a file, or a sample's number): held, or fed to `stream` with
    /// `deliver` called for it (and for the held ones it releases). Returns `false` once `deliver` does. An error
    /// names `source` and `line`.
    mutating func add(_ sample: MotionStreamSample, line: Int, to stream: inout MotionStream, _ deliver: Delivery) throws(DataError) -> Bool {
        if rateChecked { return try feed(sample, line: line, to: &stream, deliver) }
        held.append((sample, line))
        return held.count < MotionStream.headSamples ? true : try release(to: &stream, deliver)
    }

    /// Checks the rate of the held samples and feeds them (at the end of the input, or when it starts again, before
    /// `headSamples` arrived); nothing once the rate was checked.
    mutating func release(to stream: inout MotionStream, _ deliver: Delivery) throws(DataError) -> Bool {
        guard !rateChecked else { return true }
        rateChecked = true
        if held.count >= 2,
            let problem = MotionRecordingReader.rateProblem(
                sourceRate: MotionRecordingReader.medianRate(held.map(\.sample.time)), assumedRate: assumedRate)
        {
            throw DataError(file: source, message: problem)
        }
        let samples = held
        held = []
        for (sample, line) in samples {
            guard try feed(sample, line: line, to: &stream, deliver) else { return false }
        }
        return true
    }

    private mutating func feed(_ sample: MotionStreamSample, line: Int, to stream: inout MotionStream, _ deliver: Delivery) throws(DataError)
        -> Bool
    {
        let events: [MotionStreamEvent]
        do {
            events = try stream.append(sample)
        } catch {
            throw DataError(file: source, line: line, message: error.message)
        }
        if stream.assumptions.count < noted { noted = 0 }  // a new recording (the stream was reset): said again
        let notes = stream.assumptions.dropFirst(noted)
        noted = stream.assumptions.count
        return deliver(events, notes)
    }
}
