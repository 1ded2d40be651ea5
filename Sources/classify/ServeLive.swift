#if Serve
import DataFiles
import Foundation
import HTTPTypes
import Models
import Synchronization

/// The live motion sessions of `classify serve`: a page (or any client) sends a phone's samples as they arrive, a
/// few seconds at a time, and each answer says what `classify motion --follow --json` would have printed for them —
/// the same `MotionFeed` into the same `MotionStream`, so the events are the same objects byte for byte — with each
/// window's state. The work of an update is that of its own samples, whatever the session's length; a session holds
/// one stream (its windows' samples and at most `MotionStream.keptChanges` changes).
///
/// - `POST /v1/motion/live` opens a session (its body may hold the first samples);
///   `POST /v1/motion/live?session=ID` adds samples; `…&end=1` ends it with what the held samples still complete, as
///   `--follow` does at the end of its input. A body is `{"samples": [{"timestamp": s, "acc.x": g, …}, …]}`, the
///   rows of `/v1/motion`'s JSON: the first sample's keys are the session's columns, and every later sample (in any
///   update) has the same keys.
/// - At most `limit` sessions are open; one more is 503, saying so. A session that gets no update for `idle`
///   seconds ends (404 afterwards, saying why). Two updates of one session at once: the second is 409.
final class LiveMotionSessions: Sendable {
    let limit: Int
    /// Seconds without an update after which a session ends.
    let idle: Double
    private let table = Mutex<[String: Slot]>([:])

    private enum Slot {
        /// Waiting for its next update since `lastUsed`.
        case waiting(LiveMotionSession, lastUsed: ContinuousClock.Instant)
        /// Answering an update.
        case busy
    }

    init(limit: Int, idle: Double) {
        precondition(limit >= 1 && idle > 0, "LiveMotionSessions: limit \(limit) ≥ 1 and idle \(idle) > 0")
        (self.limit, self.idle) = (limit, idle)
    }

    /// How many sessions are open (waiting or answering).
    var count: Int { table.withLock { $0.count } }

    /// A new session's id, checked out to answer its first update; 503 when `limit` are open (after ending idle ones).
    func open(_ session: LiveMotionSession) throws(ServeAPI.Failure) -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        var generator = SystemRandomNumberGenerator()
        for i in bytes.indices { bytes[i] = generator.next() }
        let id = bytes.map { String(format: "%02x", $0) }.joined()
        let now = ContinuousClock.now
        try table.withLock { table throws(ServeAPI.Failure) in
            if table.count >= limit { endIdle(&table, now: now) }
            guard table.count < limit else {
                throw ServeAPI.Failure(
                    .serviceUnavailable,
                    "\(limit) live motion sessions are open already (--max-live-sessions); end one, or try again once one has "
                        + "been idle for \(Self.seconds(idle)) s",
                    exit: 75)
            }
            table[id] = .busy
        }
        return id
    }

    /// Session `id` to answer one update, until `checkIn`: 404 when there is none (never opened, ended, or idle too
    /// long), 409 when it is answering another update.
    func checkOut(_ id: String) throws(ServeAPI.Failure) -> LiveMotionSession {
        let now = ContinuousClock.now
        return try table.withLock { table throws(ServeAPI.Failure) in
            endIdle(&table, now: now)
            switch table[id] {
            case nil:
                throw ServeAPI.Failure(
                    .notFound,
                    "no live motion session \(String(reflecting: String(id.prefix(64)))): it ended (by its end=1, or after "
                        + "\(Self.seconds(idle)) s without an update), or never began; open a new one with POST /v1/motion/live")
            case .busy:
                throw ServeAPI.Failure(.conflict, "live motion session \(id) is answering another update; send one update at a time")
            case let .waiting(session, _):
                table[id] = .busy
                return session
            }
        }
    }

    /// Puts session `id` back after an update (`nil`: it ended).
    func checkIn(_ id: String, _ session: LiveMotionSession?) {
        let now = ContinuousClock.now
        table.withLock { table in table[id] = session.map { .waiting($0, lastUsed: now) } }
    }

    private func endIdle(_ table: inout [String: Slot], now: ContinuousClock.Instant) {
        let limit = Duration.milliseconds(Int64((idle * 1000).rounded(.up)))
        for (id, slot) in table {
            if case let .waiting(_, lastUsed) = slot, now - lastUsed > limit { table[id] = nil }
        }
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

/// One live session: its stream, its feed, and the columns its first sample named.
struct LiveMotionSession: Sendable {
    var stream: MotionStream
    var feed: MotionFeed?
    /// The first sample's keys, sorted: the session's columns.
    var columns: SampleColumns?
    var motionColumns: MotionColumns?
    /// Samples taken, and windows answered, so far.
    var samples = 0, windows = 0

    init(recognizer: MotionRecognizer) { stream = MotionStream(recognizer: recognizer) }
}

extension ServeAPI {
    /// `POST /v1/motion/live[?session=ID][&end=1]`: opens a session or adds samples to one, and answers
    /// `{"events": […], "notes": […], "samples": n, "session": ID, "state": s, "windows": […]}` — `events` the
    /// objects `--follow --json` prints for these samples, `notes` what the stream assumed (said once), `samples`
    /// the session's count, `state` the current state (`null` before the first), `windows` each window these samples
    /// completed (`start`, `end`, `label`, `confidence`, `uncertain`).
    func liveMotionJSON(_ body: Data, session requested: String?, end: Bool) throws(Failure) -> [UInt8] {
        let id: String
        var session: LiveMotionSession
        if let requested {
            id = requested
            session = try live.checkOut(requested)
        } else {
            session = LiveMotionSession(recognizer: motion)
            id = try live.open(session)
        }
        var ended = end
        defer { live.checkIn(id, ended ? nil : session) }
        var writer = JSONWriter(capacity: 1024)
        var windows: [MotionWindowPrediction] = []
        var notes: [String] = []
        writer.beginObject()
        writer.key("events")
        writer.beginArray()
        let weights = motionWeights
        let model = motion.model
        let deliver: MotionFeed.Delivery = { events, assumed in
            notes += assumed
            for case let .window(window) in events { windows.append(window) }
            for event in FollowJSON.printed(events) { FollowJSON(event, model: model, weights: weights)?.write(to: &writer) }
            return true
        }
        do {
            try addSamples(body, to: &session, deliver)
            if end, var feed = session.feed {
                _ = try feed.release(to: &session.stream, deliver)
                session.feed = feed
                // The end of the input is not a pause: what the held samples complete, without a `paused` event.
                _ = deliver(session.stream.pause().filter { if case .paused = $0 { false } else { true } }, [])
            }
        } catch let failure as Failure {
            // A body that is not samples (400, 422 before any sample was taken) leaves the session as it was; a
            // session it would have opened is not opened (its id was never given out).
            if requested == nil { ended = true }
            throw failure
        } catch let error as DataError {
            // The stream refused a sample (its time, its kind): the session cannot go on from here.
            ended = true
            throw Failure(.unprocessableContent, error.description + "; this live session has ended", exit: ExitStatus.code(for: error))
        } catch {
            ended = true
            throw Failure(.internalServerError, "\(error)", exit: ExitStatus.software)
        }
        session.windows += windows.count
        writer.endArray()
        writer.key("notes")
        writer.beginArray()
        for note in notes { writer.string(note) }
        writer.endArray()
        writer.key("samples")
        writer.number(session.samples)
        writer.member("session", id)
        writer.key("state")
        if let state = session.stream.state { writer.string(state) } else { writer.null() }
        writer.key("windows")
        writer.beginArray()
        for window in windows {
            writer.beginObject()
            writer.member("confidence", window.confidence)
            writer.member("end", (window.end * 1000).rounded() / 1000)
            writer.member("label", window.label)
            writer.member("start", (window.start * 1000).rounded() / 1000)
            writer.key("uncertain")
            writer.bool(window.uncertain)
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        return writer.result
    }

    /// The body's samples into `session` (its feed made from the first sample's keys), each handed to `deliver`. The
    /// whole body is read before any sample is fed: a body that is not JSON of samples changes nothing.
    private func addSamples(_ body: Data, to session: inout LiveMotionSession, _ deliver: MotionFeed.Delivery) throws {
        var rows: [(keys: [String], values: [Double])] = []
        do {
            _ = try Self.sampleRows(fromJSON: body, maximumSamples: MotionRecordingReader.maximumSamples) { keys, values, _ in
                rows.append((keys, values))
            }
        } catch let error as DataError {
            throw Failure(.unprocessableContent, error.description, exit: ExitStatus.code(for: error))
        }
        // Every row made a sample before any is fed: a body with a bad row changes nothing.
        var (sampleColumns, motionColumns) = (session.columns, session.motionColumns)
        var samples: [MotionStreamSample] = []
        samples.reserveCapacity(rows.count)
        for (i, (keys, values)) in rows.enumerated() {
            if motionColumns == nil {
                let first = SampleColumns(keys: keys)
                guard let found = MotionColumns(header: first.header) else {
                    throw Failure(
                        .unprocessableContent,
                        "request: samples[\(i)] has keys \(first.header); a recording needs gravity.x/y/z and userAcceleration.x/y/z "
                            + "(Core Motion), or acc.x/y/z (raw accelerometer)")
                }
                (sampleColumns, motionColumns) = (first, found)
            }
            guard let columns = motionColumns, let names = sampleColumns?.header else { break }
            var row: [Double] = []
            do {
                try sampleColumns?.append(keys, values, sample: i, to: &row)
            } catch {
                throw Failure(.unprocessableContent, error.description)
            }
            do {
                samples.append(
                    try MotionRecordingReader.sample(columns: columns, index: session.samples + i, assumedRate: assumedRate) {
                        column throws(DataError) in
                        row[column]
                    } refused: { problem, column in
                        DataError(file: "request", message: "samples[\(i)] \(names[column]): \(problem)")
                    })
            } catch {
                throw Failure(.unprocessableContent, error.description, exit: ExitStatus.code(for: error))
            }
        }
        guard let columns = motionColumns else { return }
        // The columns keep where the last keys went, for the next update.
        session.columns = sampleColumns
        if session.motionColumns == nil {
            session.motionColumns = columns
            session.feed = MotionFeed(source: "live session", assumedRate: columns.time == nil ? assumedRate : nil)
        }
        guard var feed = session.feed else { return }
        for sample in samples {
            session.samples += 1
            _ = try feed.add(sample, line: session.samples, to: &session.stream, deliver)
        }
        session.feed = feed
    }
}
#endif
