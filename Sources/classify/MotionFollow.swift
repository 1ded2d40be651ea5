import Foundation
import Models

/// `classify motion --follow FILE|-`: a recording read line by line as it grows, through `MotionStream`, printing
/// each change of state as it is confirmed.
struct MotionFollower {
    let path: String
    let recognizer: MotionRecognizer
    let confirmations: Int
    /// Samples per second when the recording has no timestamp column.
    let assumedRate: Double
    let json: Bool
    /// How long to wait for a growing file to grow, in seconds.
    let poll = 0.25

    /// A recording's header and where its sensor values are (`MotionColumns`, as the recording reader finds them).
    struct Columns {
        let columns: MotionColumns
        let header: [String]

        init(header: [String], file: String) throws(DataError) {
            guard let columns = MotionColumns(header: header) else {
                throw DataError(file: file, line: 1, message: "missing columns: a recording needs gravity.x/y/z and userAcceleration.x/y/z "
                    + "(Core Motion), or acc.x/y/z (raw accelerometer); the header has \(header.count) columns: "
                    + header.prefix(12).map(Self.printable).joined(separator: ","))
            }
            self.columns = columns
            self.header = header
        }

        /// `name` as a message can show it: at most 40 characters, anything but printable ASCII and letters
        /// (control bytes, undecodable bytes) as `?`.
        static func printable(_ name: String) -> String {
            String(name.prefix(40).map { character -> Character in
                let ascii = character.unicodeScalars.allSatisfy { (0x20...0x7E).contains($0.value) }
                return ascii || (character.isLetter && character != "\u{FFFD}") ? character : "?"
            })
        }
    }

    /// Follows the recording until standard input ends (a file is followed until the command is interrupted).
    /// Returns the exit status: 0, or 65 when the input ended before one window.
    func run() throws(DataError) -> Int32 {
        let descriptor: Int32
        if path == "-" {
            descriptor = 0
        } else {
            descriptor = open(path, O_RDONLY)
            guard descriptor >= 0 else {
                let code = errno
                throw DataError(file: path, message: code == ENOENT ? "no such file" : "cannot be read: \(String(cString: strerror(code)))",
                                kind: code == ENOENT ? .missingFile : .unreadable)
            }
        }
        defer { if descriptor != 0 { close(descriptor) } }
        var stream = MotionStream(recognizer: recognizer, confirmations: confirmations)
        var columns: Columns?
        var lineNumber = 0, samples = 0, windows = 0
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var sawEnd = false
        while !sawEnd {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw DataError(file: path, message: "cannot be read: \(String(cString: strerror(errno)))", kind: .unreadable)
            }
            if count == 0 {
                // The end of standard input ends the run; a file may still grow.
                if path == "-" { sawEnd = true } else { usleep(useconds_t(poll * 1_000_000)); continue }
            }
            pending += buffer[0..<count]
            // Every whole line (and, at the end, the last one without a newline).
            var lineStart = 0
            for index in pending.indices where pending[index] == UInt8(ascii: "\n") || (sawEnd && index == pending.count - 1) {
                let end = pending[index] == UInt8(ascii: "\n") ? index : index + 1
                var line = String(decoding: pending[lineStart..<end], as: UTF8.self)
                lineStart = index + 1
                lineNumber += 1
                if line.hasSuffix("\r") { line.removeLast() }
                if lineNumber == 1, line.hasPrefix("\u{FEFF}") { line.removeFirst() }
                if line.trimmingCharacters(in: .whitespaces).isEmpty { continue }
                let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                guard let known = columns else {
                    columns = try Columns(header: fields.map { $0.trimmingCharacters(in: .whitespaces) }, file: path)
                    continue
                }
                let sample = try parse(fields, columns: known, line: lineNumber, index: samples)
                samples += 1
                let events: [MotionStreamEvent]
                do {
                    events = try stream.append(sample)
                } catch {
                    throw DataError(file: path, line: lineNumber, message: error.message)
                }
                let (count, written) = report(events)
                windows += count
                // Nobody can read what follows: stop, and let the exit say why (74, one line).
                guard written else { return 0 }
            }
            pending.removeFirst(lineStart)
        }
        windows += report(stream.pause()).windows
        guard columns != nil else { throw DataError(file: path, line: 1, message: "no header: the input is empty") }
        guard windows > 0 else {
            let windowing = recognizer.windowing
            throw DataError(file: path, message: "the input ended after \(samples) samples, before one window "
                            + String(format: "(%ld samples at %.0f Hz, %.2f s)", windowing.window, windowing.rate, Double(windowing.window) / windowing.rate))
        }
        return 0
    }

    /// One line's sample.
    func parse(_ fields: [String], columns: Columns, line: Int, index: Int) throws(DataError) -> MotionStreamSample {
        guard fields.count == columns.header.count else {
            throw DataError(file: path, line: line, message: "\(fields.count) fields; the header has \(columns.header.count)")
        }
        func number(_ column: Int) throws(DataError) -> Double {
            let text = fields[column].trimmingCharacters(in: .whitespaces)
            guard let value = Double(text), value.isFinite else {
                throw DataError(file: path, line: line, column: (column + 1, columns.header[column]),
                                message: "expected a finite number, got \"\(text.prefix(40))\"")
            }
            return value
        }
        let v = try columns.columns.values.map { column throws(DataError) in try number(column) }
        let s = try columns.columns.spins.map { column throws(DataError) in try number(column) }
        let spin = s.count == 3 ? (s[0], s[1], s[2]) : (0.0, 0.0, 0.0)
        let time = try columns.columns.time.map { column throws(DataError) in try number(column) } ?? Double(index) / assumedRate
        return columns.columns.coreMotion
            ? MotionStreamSample(time: time, gravity: (v[0], v[1], v[2]), userAcceleration: (v[3], v[4], v[5]), rotationRate: spin)
            : MotionStreamSample(time: time, acceleration: (v[0], v[1], v[2]), rotationRate: spin)
    }

    /// Prints each change at once (flushed: whoever reads the output sees it as it happens); returns how many
    /// windows `events` held, and `false` once standard output cannot be written.
    func report(_ events: [MotionStreamEvent]) -> (windows: Int, written: Bool) {
        var windows = 0, written = true
        for event in events {
            switch event {
            case .window:
                windows += 1
            case let .change(change):
                if json {
                    StandardStreams.write(jsonText(FollowJSON(change: change, model: recognizer.model)) + "\n")
                } else {
                    StandardStreams.write(String(format: "%8.2f s", change.time) + "  " + change.to.padding(toLength: 8, withPad: " ", startingAt: 0)
                                          + percentText(change.confidence) + String(format: "  (since %.2f s)\n", change.since))
                }
                written = StandardStreams.flush() && written
            }
        }
        return (windows, written)
    }
}

/// One state change as `--follow --json` prints it.
struct FollowJSON: Encodable {
    let time: Double
    let from: String?
    let to: String
    let since: Double
    let confidence: Double
    let model: String

    init(change: MotionStateChange, model: String) {
        time = (change.time * 1000).rounded() / 1000
        from = change.from
        to = change.to
        since = (change.since * 1000).rounded() / 1000
        confidence = change.confidence
        self.model = model
    }
}
