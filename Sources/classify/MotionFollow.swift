import Foundation
import Models

/// `classify motion --follow FILE|-`: a recording read line by line as it grows, through `CSVReader` and
/// `MotionStream`, printing each change of state as it is confirmed.
struct MotionFollower {
    let path: String
    let recognizer: MotionRecognizer
    let confirmations: Int
    /// Samples per second when the recording has no timestamp column.
    let assumedRate: Double
    let json: Bool
    /// The weights file's path, or `built-in`, for JSON lines; `nil` for the rule that needs none.
    let weights: String?
    /// How long to wait for a growing file to grow, in seconds.
    let poll = 0.25

    /// Follows the recording until standard input ends (a file is followed until the command is interrupted).
    /// Rows are read by the same CSV reader and checked as `classify motion` reads them, handed over as each line
    /// ends. Returns the exit status: 0, or 65 when the input ended before one window.
    func run() throws(DataError) -> Int32 {
        var descriptor: Int32 = 0
        var waiting = false
        while path != "-" {
            descriptor = open(path, O_RDONLY)
            if descriptor >= 0 { break }
            let code = errno
            // A file that does not exist yet is waited for, as `tail -F` does, when its folder exists (a folder
            // that does not is a mistake, not a file to come).
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
            var isFolder: ObjCBool = false
            guard code == ENOENT, FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
                throw DataError(
                    file: path,
                    message: code == ENOENT
                        ? "no such file, and no folder \(folder) for it to appear in" : "cannot be read: \(String(cString: strerror(code)))",
                    kind: code == ENOENT ? .missingFile : .unreadable)
            }
            if !waiting {
                reportNote("\(path) does not exist yet; waiting for it to appear")
                waiting = true
            }
            usleep(useconds_t(poll * 1_000_000))
        }
        defer { if descriptor != 0 { close(descriptor) } }
        // A pipe, a FIFO, a terminal or a socket ends when its writer does, however it is named (`-`,
        // `/dev/stdin`, a FIFO's path); only a file that can grow is waited on at its end.
        var status = stat()
        let kind = fstat(descriptor, &status) == 0 ? status.st_mode & S_IFMT : S_IFREG
        let endsAtEndOfInput = path == "-" || kind == S_IFIFO || kind == S_IFCHR || kind == S_IFSOCK
        let (path, poll) = (path, poll)
        // The bytes as they arrive: what one read gives; at the end of a file, wait for it to grow.
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var reader = try CSVReader(file: path) { () throws(DataError) -> Data in
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 {
                    if errno == EINTR { continue }
                    throw DataError(file: path, message: "cannot be read: \(String(cString: strerror(errno)))", kind: .unreadable)
                }
                if count == 0 && !endsAtEndOfInput {
                    usleep(useconds_t(poll * 1_000_000))
                    continue
                }
                return Data(buffer[0..<count])
            }
        }
        let columns = try MotionRecordingReader.recordingColumns(reader)
        var stream = MotionStream(recognizer: recognizer, confirmations: confirmations)
        var samples = 0, windows = 0
        // The first samples are held until their times show the rate: a rate the file command refuses (too slow to
        // resolve a stride, or timestamps in milliseconds or days) is refused here too, with the same message,
        // before anything is printed. The stream holds as many itself before its first window, so this costs no
        // delay.
        var held: [(sample: MotionStreamSample, line: Int)] = []
        var rateChecked = false
        let assumed = columns.time == nil ? assumedRate : nil
        func feed(_ sample: MotionStreamSample, line: Int) throws(DataError) -> Bool {
            let events: [MotionStreamEvent]
            do {
                events = try stream.append(sample)
            } catch {
                throw DataError(file: path, line: line, message: error.message)
            }
            let (count, written) = report(events)
            windows += count
            return written
        }
        func releaseHeld() throws(DataError) -> Bool {
            rateChecked = true
            if held.count >= 2,
                let problem = MotionRecordingReader.rateProblem(
                    sourceRate: MotionRecordingReader.medianRate(held.map(\.sample.time)), assumedRate: assumed)
            {
                throw DataError(file: path, message: problem)
            }
            defer { held = [] }
            for (sample, line) in held {
                guard try feed(sample, line: line) else { return false }
            }
            return true
        }
        while try reader.advance() {
            let sample = try MotionRecordingReader.sample(reader, columns: columns, index: samples, assumedRate: assumedRate)
            samples += 1
            // Nobody can read what follows: stop, and let the exit say why (74, one line).
            if rateChecked {
                guard try feed(sample, line: reader.lineNumber) else { return 0 }
            } else {
                held.append((sample, reader.lineNumber))
                if held.count == MotionStream.headSamples { guard try releaseHeld() else { return 0 } }
            }
        }
        if !rateChecked { guard try releaseHeld() else { return 0 } }
        // The end of the input is not a pause: what the held samples complete, without a `paused` line.
        windows += report(stream.pause().filter { if case .paused = $0 { false } else { true } }).windows
        guard windows > 0 else {
            let windowing = recognizer.windowing
            throw DataError(
                file: path,
                message: "the input ended after \(samples) samples, before one window "
                    + String(format: "(%ld samples at %.0f Hz, %.2f s)", windowing.window, windowing.rate, Double(windowing.window) / windowing.rate))
        }
        return 0
    }

    /// Prints each change, pause and resumption at once (flushed: whoever reads the output sees it as it
    /// happens); returns how many windows `events` held, and `false` once standard output cannot be written. A
    /// change that comes with a resumption is printed once, as the resumption.
    func report(_ events: [MotionStreamEvent]) -> (windows: Int, written: Bool) {
        var windows = 0, written = true
        let resumed = events.contains { if case .resumed = $0 { true } else { false } }
        for event in events {
            let line: String
            switch event {
            case .window:
                windows += 1
                continue
            case let .change(change):
                guard !resumed else { continue }
                line =
                    json
                    ? jsonText(FollowJSON(change: change, model: recognizer.model, weights: weights))
                    : String(format: "%8.2f s", change.time) + "  " + change.to.padding(toLength: 8, withPad: " ", startingAt: 0)
                        + percentText(change.confidence) + String(format: "  (since %.2f s)", change.since)
            case let .paused(pause):
                line =
                    json
                    ? jsonText(FollowJSON(pause: pause, model: recognizer.model, weights: weights))
                    : String(format: "%8.2f s  paused", pause.time)
                        + (pause.state.map { "   (was \($0); no samples after this)" } ?? "   (no samples after this)")
            case let .resumed(resumption):
                line =
                    json
                    ? jsonText(FollowJSON(resumption: resumption, model: recognizer.model, weights: weights))
                    : String(format: "%8.2f s", resumption.time) + "  " + resumption.to.padding(toLength: 8, withPad: " ", startingAt: 0)
                        + percentText(resumption.confidence)
                        + String(format: "  (resumed; since %.2f s, paused at %.2f s)", resumption.since, resumption.pausedAt)
            }
            StandardStreams.write(line + "\n")
            written = StandardStreams.flush() && written
        }
        return (windows, written)
    }
}

/// One event as `--follow --json` prints it: `event` is `change`, `paused` or `resumed`; a pause has `time` (the
/// last sample before it) and `from` (the state then); a resumption also `to`, `since`, `pausedAt` and
/// `confidence`.
struct FollowJSON: Encodable {
    let event: String
    let time: Double
    let from: String?
    let to: String?
    let since: Double?
    let pausedAt: Double?
    let confidence: Double?
    let model: String
    /// The weights file's path, or `built-in`; absent for the rule that needs none.
    let weights: String?

    private static func ms(_ seconds: Double) -> Double { (seconds * 1000).rounded() / 1000 }

    init(change: MotionStateChange, model: String, weights: String?) {
        self.weights = weights
        (event, time, from, to) = ("change", Self.ms(change.time), change.from, change.to)
        (since, pausedAt, confidence, self.model) = (Self.ms(change.since), nil, change.confidence, model)
    }

    init(pause: MotionPause, model: String, weights: String?) {
        self.weights = weights
        (event, time, from, to) = ("paused", Self.ms(pause.time), pause.state, nil)
        (since, pausedAt, confidence, self.model) = (nil, nil, nil, model)
    }

    init(resumption: MotionResumption, model: String, weights: String?) {
        self.weights = weights
        (event, time, from, to) = ("resumed", Self.ms(resumption.time), resumption.from, resumption.to)
        (since, pausedAt, confidence, self.model) = (Self.ms(resumption.since), Self.ms(resumption.pausedAt), resumption.confidence, model)
    }
}
