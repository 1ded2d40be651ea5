import DataFiles
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
    /// ends. A followed file is followed by name, as `tail -F` does: truncated, rewritten from its start or
    /// replaced by a new file of that name (a log rotated), it is read again from its start as a new recording —
    /// the stream is paused (a `paused` line), started afresh, and a note says why. Returns the exit status: 0, or
    /// 65 when the input ended before one window.
    func run() throws(DataError) -> Int32 {
        let input = try FollowedInput(path: path, poll: poll)
        defer { input.close() }
        var stream = MotionStream(recognizer: recognizer, confirmations: confirmations)
        var samples = 0, windows = 0
        while true {
            let result = try follow(input, stream: &stream)
            windows += result.windows
            samples += result.samples
            guard result.written else { return 0 }
            guard let restart = input.restart else { break }
            reportNote("\(path) \(restart.rawValue); following it from its start as a new recording")
            windows += report(stream.pause()).windows
            stream.reset()
            try input.reopen()
        }
        guard windows > 0 else {
            let windowing = recognizer.windowing
            throw DataError(
                file: path,
                message: "the input ended after \(samples) samples, before one window "
                    + String(format: "(%ld samples at %.0f Hz, %.2f s)", windowing.window, windowing.rate, Double(windowing.window) / windowing.rate))
        }
        return 0
    }

    /// Reads one recording from `input` (its header, then rows) into `stream` until the input ends or the file is
    /// to be read again from its start (`input.restart`); returns the windows and samples it saw, and `false` once
    /// standard output cannot be written.
    private func follow(_ input: FollowedInput, stream: inout MotionStream) throws(DataError) -> (windows: Int, samples: Int, written: Bool) {
        var samples = 0, windows = 0
        func deliver(_ events: [MotionStreamEvent], _ notes: ArraySlice<String>) -> Bool {
            // What the stream assumed (units, a raw accelerometer's gravity filter), said once, as a file's notes are.
            for note in notes { reportNote("\(path): \(note)") }
            let (count, written) = report(events)
            windows += count
            return written
        }
        /// What the reader gives next: `.some(sample, line)`, `nil` at the end of the input, or `.restart` when the
        /// file is to be read again — a restart noticed by `input.next()` (which throws, so a line the truncation cut
        /// is never parsed), or a reading error that a rewrite explains. Only the reader's errors can be a rewrite's:
        /// the stream's are thrown as they are.
        enum Step {
            case sample(MotionStreamSample, Int)
            case end, restart
        }
        var reader: CSVReader
        let columns: MotionColumns
        do {
            reader = try CSVReader(file: path) { () throws(DataError) -> Data in try input.next() }
            columns = try MotionRecordingReader.recordingColumns(reader)
        } catch {
            if input.restart != nil || input.noticeRewrite() { return (0, 0, true) }
            throw error
        }
        var feed = MotionFeed(source: path, assumedRate: columns.time == nil ? assumedRate : nil)
        func step() throws(DataError) -> Step {
            do {
                guard try reader.advance() else { return .end }
                return .sample(
                    try MotionRecordingReader.sample(reader, columns: columns, index: samples, assumedRate: assumedRate), reader.lineNumber)
            } catch {
                if input.restart != nil || input.noticeRewrite() { return .restart }
                throw error
            }
        }
        loop: while true {
            switch try step() {
            case let .sample(sample, line):
                samples += 1
                // Nobody can read what follows: stop, and let the exit say why (74, one line).
                guard try feed.add(sample, line: line, to: &stream, deliver) else { return (windows, samples, false) }
            case .end: break loop
            case .restart:
                // The rows read before it were the old recording's: they go to the stream, for the restart's pause.
                guard try feed.release(to: &stream, deliver) else { return (windows, samples, false) }
                return (windows, samples, true)
            }
        }
        guard try feed.release(to: &stream, deliver) else { return (windows, samples, false) }
        // The end of the input is not a pause: what the held samples complete, without a `paused` line.
        windows += report(stream.pause().filter { if case .paused = $0 { false } else { true } }).windows
        return (windows, samples, true)
    }

    /// Prints each change, pause and resumption at once (flushed: whoever reads the output sees it as it
    /// happens); returns how many windows `events` held, and `false` once standard output cannot be written. A
    /// change that comes with a resumption is printed once, as the resumption.
    func report(_ events: [MotionStreamEvent]) -> (windows: Int, written: Bool) {
        var written = true
        for event in FollowJSON.printed(events) {
            let line: String
            switch event {
            case .window: continue
            case let .change(change):
                line =
                    json
                    ? FollowJSON(change: change, model: recognizer.model, weights: weights).text
                    : String(format: "%8.2f s", change.time) + "  " + change.to.padding(toLength: 8, withPad: " ", startingAt: 0)
                        + percentText(change.confidence) + String(format: "  (since %.2f s)", change.since)
            case let .paused(pause):
                line =
                    json
                    ? FollowJSON(pause: pause, model: recognizer.model, weights: weights).text
                    : String(format: "%8.2f s  paused", pause.time)
                        + (pause.state.map { "   (was \($0); no samples after this)" } ?? "   (no samples after this)")
            case let .resumed(resumption):
                line =
                    json
                    ? FollowJSON(resumption: resumption, model: recognizer.model, weights: weights).text
                    : String(format: "%8.2f s", resumption.time) + "  " + resumption.to.padding(toLength: 8, withPad: " ", startingAt: 0)
                        + percentText(resumption.confidence)
                        + String(format: "  (resumed; since %.2f s, paused at %.2f s)", resumption.since, resumption.pausedAt)
            }
            StandardStreams.write(line + "\n")
            written = StandardStreams.flush() && written
        }
        return (events.count { if case .window = $0 { true } else { false } }, written)
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

    /// The events `--follow` prints of what one sample gave, in order: changes, pauses and resumptions — a change
    /// that comes with a resumption is printed once, as the resumption — and no windows. The follower and the live
    /// sessions of `classify serve` both print through it.
    static func printed(_ events: [MotionStreamEvent]) -> [MotionStreamEvent] {
        let resumed = events.contains { if case .resumed = $0 { true } else { false } }
        return events.filter { event in
            switch event {
            case .window: false
            case .change: !resumed
            case .paused, .resumed: true
            }
        }
    }

    /// The object of a printed event (`printed(_:)`); `nil` for a window.
    init?(_ event: MotionStreamEvent, model: String, weights: String?) {
        switch event {
        case .window: return nil
        case let .change(change): self.init(change: change, model: model, weights: weights)
        case let .paused(pause): self.init(pause: pause, model: model, weights: weights)
        case let .resumed(resumption): self.init(resumption: resumption, model: model, weights: weights)
        }
    }

    /// The text `jsonText(self)` makes, written by `JSONWriter` (the conformance to `Encodable` is the reference
    /// the tests hold it to).
    var text: String {
        var writer = JSONWriter(capacity: 160)
        write(to: &writer)
        return writer.text
    }

    /// The object, keys sorted.
    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.member("confidence", confidence)
        writer.member("event", event)
        writer.member("from", from)
        writer.member("model", model)
        writer.member("pausedAt", pausedAt)
        writer.member("since", since)
        writer.member("time", time)
        writer.member("to", to)
        writer.member("weights", weights)
        writer.endObject()
    }

    init(change: MotionStateChange, model: String, weights: String?) {
        self.weights = weights
        (event, time, from, to) = ("change", Self.ms(change.time), change.from, change.to)
        (since, pausedAt, confidence, self.model) = (Self.ms(change.since), nil, change.confidence, modelName(model))
    }

    init(pause: MotionPause, model: String, weights: String?) {
        self.weights = weights
        (event, time, from, to) = ("paused", Self.ms(pause.time), pause.state, nil)
        (since, pausedAt, confidence, self.model) = (nil, nil, nil, modelName(model))
    }

    init(resumption: MotionResumption, model: String, weights: String?) {
        self.weights = weights
        (event, time, from, to) = ("resumed", Self.ms(resumption.time), resumption.from, resumption.to)
        (since, pausedAt, confidence, self.model) = (
            Self.ms(resumption.since), Self.ms(resumption.pausedAt), resumption.confidence, modelName(model)
        )
    }
}

/// The bytes of a followed recording as they arrive: standard input (`-`) or anything that ends when its writer
/// does (a pipe, a FIFO, a terminal, a socket) is read to its end; a regular file is waited on at its end and
/// watched, by name, for being truncated, rewritten from its start, or replaced by another file — then `restart`
/// says which and `next()` reports the end of this recording, for `reopen()`. A class: the CSV reader's source
/// and the follower share it.
final class FollowedInput {
    /// Why a followed file is read again from its start.
    enum Restart: String {
        case truncated = "was truncated"
        case rewritten = "was rewritten from its start"
        case replaced = "was replaced by a new file of that name"
    }

    let path: String
    let poll: Double
    private(set) var descriptor: Int32 = 0
    /// Whether the input ends when its writer does (not waited on at its end).
    private(set) var endsAtEndOfInput = true
    /// Why the file is to be read again, once noticed.
    private(set) var restart: Restart?
    /// The file (device, inode) open now, and how many bytes of it were read.
    private var identity: (dev_t, ino_t) = (0, 0)
    private var offset = 0
    /// The first bytes read from the file, and the last ones before `offset`, to notice it rewritten from its start
    /// (a rewrite that begins as the old file did and has grown past `offset` between two polls still differs
    /// just before `offset`, where the next read would begin in the middle of its lines).
    private var prefix: [UInt8] = []
    private var tail: [UInt8] = []
    private var buffer = [UInt8](repeating: 0, count: 1 << 16)
    private static let prefixBytes = 4096

    /// Opens `path` (waiting for it to appear, as `tail -F` does, when its folder exists).
    init(path: String, poll: Double) throws(DataError) {
        (self.path, self.poll) = (path, poll)
        try open()
    }

    private func open() throws(DataError) {
        var waiting = false
        descriptor = 0
        while path != "-" {
            descriptor = Foundation.open(path, O_RDONLY)
            if descriptor >= 0 { break }
            let code = errno
            // A file that does not exist yet is waited for when its folder exists (a folder that does not is a
            // mistake, not a file to come).
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
        // A pipe, a FIFO, a terminal or a socket ends when its writer does, however it is named (`-`,
        // `/dev/stdin`, a FIFO's path); only a file that can grow is waited on at its end.
        var status = stat()
        let known = fstat(descriptor, &status) == 0
        let kind = known ? status.st_mode & S_IFMT : S_IFREG
        // A device, a socket or a folder by its path is refused, as every input is (`InputFile`): `/dev/zero` never
        // ends. Standard input is read whatever it is.
        if path != "-", known, let refused = InputFile.refusal(status, path: path, as: "a CSV file") {
            systemClose(descriptor)
            descriptor = 0
            throw refused
        }
        endsAtEndOfInput = path == "-" || kind == S_IFIFO || kind == S_IFCHR || kind == S_IFSOCK
        identity = (status.st_dev, status.st_ino)
        (offset, prefix, tail, restart) = (0, [], [], nil)
    }

    /// Starts the file again from its start: the same file when it was truncated or rewritten, the new one when
    /// it was replaced.
    func reopen() throws(DataError) {
        if restart == .replaced {
            close()
            try open()
        } else {
            lseek(descriptor, 0, SEEK_SET)
            (offset, prefix, tail, restart) = (0, [], [], nil)
        }
    }

    func close() {
        if descriptor > 0 { Foundation.close(descriptor) }
        descriptor = 0
    }

    /// The next bytes as soon as there are any; none at the end of the input. When the file is to be read again
    /// (`restart`) it throws, so that a line the truncation or rewrite cut short is never read as a row.
    func next() throws(DataError) -> Data {
        let data = try nextBytes()
        if data.isEmpty, let restart { throw DataError(file: path, message: "\(restart.rawValue)") }
        return data
    }

    private func nextBytes() throws(DataError) -> Data {
        var waited = false
        while restart == nil {
            // After a wait at its end, the file may have been rewritten and grown past what was read.
            if waited, noticeRewrite() { break }
            if !endsAtEndOfInput, shrunk() {
                restart = .truncated
                break
            }
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw DataError(file: path, message: "cannot be read: \(String(cString: strerror(errno)))", kind: .unreadable)
            }
            if count > 0 {
                offset += count
                if prefix.count < Self.prefixBytes { prefix += buffer[0..<min(count, Self.prefixBytes - prefix.count)] }
                if !endsAtEndOfInput {
                    tail = Array((tail + buffer[max(0, count - Self.prefixBytes)..<count]).suffix(Self.prefixBytes))
                }
                return Data(buffer[0..<count])
            }
            if endsAtEndOfInput { break }
            // At the end of a file: wait for it to grow, unless it was replaced or rewritten meanwhile.
            if noticeRewrite() { break }
            usleep(useconds_t(poll * 1_000_000))
            waited = true
        }
        return Data()
    }

    /// Whether the followed file was replaced by another of its name, or rewritten from its start (its first bytes
    /// or its last ones before `offset` changed, or it is shorter than what was read); sets `restart` when it was.
    func noticeRewrite() -> Bool {
        guard !endsAtEndOfInput else { return false }
        if restart != nil { return true }
        var status = stat()
        if stat(path, &status) == 0, (status.st_dev, status.st_ino) != identity {
            restart = .replaced
        } else if shrunk() {
            restart = .truncated
        } else if !matches(prefix, at: 0) || !matches(tail, at: offset - tail.count) {
            restart = .rewritten
        }
        return restart != nil
    }

    /// Whether the file holds `bytes` at `position` now.
    private func matches(_ bytes: [UInt8], at position: Int) -> Bool {
        guard !bytes.isEmpty else { return true }
        var now = [UInt8](repeating: 0, count: bytes.count)
        let count = now.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, off_t(position)) }
        return count == bytes.count && now == bytes
    }

    /// Whether the open file is now shorter than what was read of it.
    private func shrunk() -> Bool {
        var status = stat()
        return fstat(descriptor, &status) == 0 && Int(status.st_size) < offset
    }
}
