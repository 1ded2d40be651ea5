import Foundation
import Testing

/// `classify motion --follow`: a recording read as it grows, each change of state printed as it is confirmed.
@Suite("classify motion --follow")
struct MotionFollowTests {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Datasets/examples")

    /// The bundled walking and running examples played one after the other with a phone lying still after each,
    /// 50 Hz, as one CSV: its text and when each activity begins.
    static func walkStopRunStop() throws -> (csv: String, activities: [(label: String, start: Double)]) {
        var lines: [String] = []
        var header: [String] = []
        var time = 0.0
        var activities: [(String, Double)] = []
        var noise: UInt64 = 12345
        func small() -> Double {
            noise = noise &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return (Double(noise >> 11) / Double(1 << 53) - 0.5) * 0.004
        }
        var lastGravity = ["0", "0", "-1"]
        for name in ["walking", "running"] {
            let text = try String(contentsOf: examples.appendingPathComponent("\(name).csv"), encoding: .utf8)
            let rows = text.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
            header = rows[0]
            if lines.isEmpty { lines.append(header.joined(separator: ",")) }
            let timeColumn = header.firstIndex(of: "timestamp") ?? 0
            let gravity = ["gravity.x", "gravity.y", "gravity.z"].compactMap { header.firstIndex(of: $0) }
            activities.append((name, time))
            for var row in rows.dropFirst().prefix(1300) {
                row[timeColumn] = String(format: "%.3f", time)
                lines.append(row.joined(separator: ","))
                lastGravity = gravity.map { row[$0] }
                time += 0.02
            }
            activities.append(("still", time))
            for _ in 0..<600 {
                var row = [String](repeating: "0", count: header.count)
                row[timeColumn] = String(format: "%.3f", time)
                for (axis, column) in gravity.enumerated() { row[column] = String(format: "%.4f", (Double(lastGravity[axis]) ?? 0) + small()) }
                for name in ["userAcceleration.x", "userAcceleration.y", "userAcceleration.z"] {
                    if let column = header.firstIndex(of: name) { row[column] = String(format: "%.4f", small()) }
                }
                lines.append(row.joined(separator: ","))
                time += 0.02
            }
        }
        return (lines.joined(separator: "\n") + "\n", activities)
    }

    /// An example recording's text (`Datasets/examples/NAME.csv`).
    static func example(_ name: String) throws -> String {
        try String(contentsOf: examples.appendingPathComponent("\(name).csv"), encoding: .utf8)
    }

    /// `text` written to `live.csv` in `folder`, and `classify motion --follow` started on it (`startFollowing`).
    static func startFollowing(_ text: String, in folder: URL) throws -> (file: URL, process: Process, output: Pipe, error: Pipe) {
        let file = folder.appendingPathComponent("live.csv")
        try Data(text.utf8).write(to: file)
        let (process, output, error) = try startFollowing(file.path)
        return (file, process, output, error)
    }

    /// `classify motion --follow PATH` started, its standard output and error each a pipe; the caller stops it.
    static func startFollowing(_ path: String) throws -> (process: Process, output: Pipe, error: Pipe) {
        let process = Process()
        process.executableURL = CommandRun.builtClassify
        process.arguments = ["motion", "--follow", path]
        let output = Pipe(), error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        return (process, output, error)
    }

    /// Waits until `process` has read `file` to its end (its descriptor's offset, from /proc, is the file's size), the
    /// process ends, or a minute passes: what the follower has read, observed rather than assumed after a sleep.
    /// Returns whether it got there.
    @discardableResult
    static func waitUntilRead(_ file: URL, by process: Process) -> Bool {
        let deadline = Date().addingTimeInterval(60)
        let target = file.resolvingSymlinksInPath().path
        let folder = "/proc/\(process.processIdentifier)/fd"
        while process.isRunning && Date() < deadline {
            let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? -1
            for fd in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
                guard (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\(fd)")) == target,
                    let info = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/fdinfo/\(fd)", encoding: .utf8),
                    let line = info.split(separator: "\n").first(where: { $0.hasPrefix("pos:") }),
                    let position = Int(line.dropFirst(4).trimmingCharacters(in: .whitespaces))
                else { continue }
                if position == size { return true }
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return false
    }

    /// Adds what `process` writes to `output` to `seen` until it holds `word`, the process ends, or two minutes
    /// pass (waiting at most a second for each read, so the deadline holds when the command prints nothing).
    static func read(_ output: Pipe, of process: Process, until word: String, into seen: inout String) {
        read(output, of: process, until: { $0.contains(word) }, into: &seen)
    }

    /// Adds what `process` writes to `output` to `seen` until `done(seen)`, as `read(_:of:until:into:)` does.
    static func read(_ output: Pipe, of process: Process, until done: (String) -> Bool, into seen: inout String) {
        let deadline = Date().addingTimeInterval(120)
        while !done(seen) && Date() < deadline && process.isRunning {
            var ready = pollfd(fd: output.fileHandleForReading.fileDescriptor, events: Int16(POLLIN), revents: 0)
            if poll(&ready, 1, 1000) == 0 { continue }
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            seen += String(decoding: data, as: UTF8.self)
        }
    }

    /// From standard input: walking, still, running, still — each once, in order, each soon after it began.
    @Test func standardInputPrintsEachChangeOnceSoonAfterIt() throws {
        let (csv, activities) = try Self.walkStopRunStop()
        let run = try CommandRun.run(CommandRun.builtClassify, ["motion", "--follow", "-", "--json"], input: csv)
        #expect(run.status == 0, "\(run.standardError)")
        let changes = run.standardOutput.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(changes.compactMap { $0["to"] as? String } == activities.map(\.label), "\(run.standardOutput)")
        for (change, activity) in zip(changes, activities) {
            let latency = (change["time"] as? Double ?? .infinity) - activity.start
            #expect(latency >= 0 && latency <= 5.12 + 2 * 1.28 + 0.05, "\(activity.label) printed \(latency) s after it began")
        }
        let text = try CommandRun.run(CommandRun.builtClassify, ["motion", "--follow", "-"], input: csv)
        #expect(text.standardOutput.split(separator: "\n").count == activities.count, "\(text.standardOutput)")
        #expect(text.standardOutput.contains("walking") && text.standardOutput.contains("(since "), "\(text.standardOutput)")
    }

    /// Walking, 60 s without samples, walking again: the gap is printed as `paused` when the samples come back,
    /// and the walk as `resumed` (before, the second walk printed nothing: the state had not changed).
    @Test func aGapIsPrintedAsAPauseAndTheWalkAsResumed() throws {
        let text = try Self.example("walking")
        let rows = text.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        let timeColumn = rows[0].firstIndex(of: "timestamp") ?? 0
        var lines = [rows[0].joined(separator: ",")]
        var time = 0.0
        for pass in 0..<2 {
            if pass == 1 { time += 60 }
            for var row in rows.dropFirst().prefix(1300) {
                row[timeColumn] = String(format: "%.3f", time)
                lines.append(row.joined(separator: ","))
                time += 0.02
            }
        }
        let csv = lines.joined(separator: "\n") + "\n"
        let run = try CommandRun.run(CommandRun.builtClassify, ["motion", "--follow", "-", "--json"], input: csv)
        #expect(run.status == 0, "\(run.standardError)")
        let events = run.standardOutput.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(events.compactMap { $0["event"] as? String } == ["change", "paused", "resumed"], "\(run.standardOutput)")
        #expect(events.count == 3 && events[1]["from"] as? String == "walking" && events[2]["to"] as? String == "walking")
        let lastBefore = Double(min(1300, rows.count - 1) - 1) * 0.02
        if events.count == 3 {
            #expect(abs((events[1]["time"] as? Double ?? 0) - lastBefore) < 0.01, "\(run.standardOutput)")
            #expect((events[2]["since"] as? Double ?? 0) >= lastBefore + 60, "\(run.standardOutput)")
        }
        let plain = try CommandRun.run(CommandRun.builtClassify, ["motion", "--follow", "-"], input: csv)
        #expect(plain.standardOutput.contains("paused") && plain.standardOutput.contains("(resumed; since "), "\(plain.standardOutput)")
    }

    /// A file is followed as it grows: a change in lines written after the command started is printed.
    @Test func aGrowingFileIsFollowed() throws {
        let (csv, _) = try Self.walkStopRunStop()
        let lines = csv.split(separator: "\n", omittingEmptySubsequences: false)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("follow-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("live.csv")
        // The walking part first; the rest once the command has printed `walking`.
        let firstPart = lines.prefix(1400).joined(separator: "\n") + "\n"
        try Data(firstPart.utf8).write(to: file)
        let (process, output, _) = try Self.startFollowing(file.path)
        // `--follow` on a file never ends by itself: stop it and wait for it on every path (a failed `#expect`, a
        // thrown write error). A terminate without a wait, or none at all when a test stopped early, left a
        // `classify motion --follow` running after the suite, following a file in a deleted folder.
        defer { process.stopAndWait() }
        var seen = ""
        func read(until word: String) { Self.read(output, of: process, until: word, into: &seen) }
        read(until: "walking")
        #expect(seen.contains("walking"), "before the file grew: \(seen)")
        let handle = try FileHandle(forWritingTo: file)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data((lines.dropFirst(1400).joined(separator: "\n")).utf8))
        try handle.close()
        read(until: "running")
        #expect(seen.contains("still") && seen.contains("running"), "after the file grew: \(seen)")
        #expect(process.isRunning, "a followed file keeps being followed")
    }

    /// Real people walking, standing, jogging, standing and walking again (MotionSense, 30 s of each of their
    /// trials, one after the other, phone in the same pocket), followed from standard input: after the first 20 s
    /// (where people really stand before setting off), exactly the four real changes are printed — no brief state
    /// between two (before: `walking 62.1%` showed between running and still) — each within 8 s of it.
    @Test(.enabled(if: hasRealMotion && hasRealStillAndWatch, "needs ../shared/realdata/motion-*-dev.csv (or $ONDEVICEML_REALDATA)"))
    func realWalkStandRunStandWalkChangesOnlyAtTheRealChanges() throws {
        // Each session's rows: the twelve Core Motion columns (after session, label, timestamp).
        var sessions: [Substring: [Substring]] = [:]
        var header = ""
        for file in [realMotion, realStill] {
            let lines = try String(contentsOf: file, encoding: .utf8).split(whereSeparator: \.isNewline)
            header = lines[0].split(separator: ",")[3..<15].joined(separator: ",")
            for line in lines.dropFirst() {
                let fields = line.split(separator: ",", maxSplits: 3)
                let rest = fields[3].split(separator: ",")
                sessions[fields[0], default: []].append(rest[0..<12].joined(separator: ",")[...])
            }
        }
        let parts = [("wlk7", "walking"), ("std6", "still"), ("jog9", "running"), ("std14", "still"), ("wlk7", "walking")]
        for subject in 1...12 {
            let name = String(format: "sub%02d", subject)
            var csv = "timestamp," + header + "\n", sample = 0
            for (index, part) in parts.enumerated() {
                let rows = try #require(sessions[Substring("\(name)-\(part.0)")], "\(name)-\(part.0)")
                let start = index == 4 ? 1500 : 0  // the second walk: the trial's next 30 s
                #expect(rows.count >= start + 1500, "\(name)-\(part.0): \(rows.count) rows")
                for row in rows[start..<(start + 1500)] {
                    csv += String(format: "%.2f,", Double(sample) / 50) + row + "\n"
                    sample += 1
                }
            }
            let run = try CommandRun.run(CommandRun.builtClassify, ["motion", "--follow", "-"], input: csv)
            #expect(run.status == 0, "\(name): \(run.standardError)")
            let changes = run.standardOutput.split(separator: "\n").compactMap { line -> (time: Double, label: String)? in
                let fields = line.split(separator: " ")
                guard fields.count >= 3, let time = Double(fields[0]) else { return nil }
                return (time, String(fields[2]))
            }.filter { $0.time >= 20 }
            #expect(changes.map(\.label) == parts.dropFirst().map(\.1), "\(name): \(run.standardOutput)")
            for (change, truth) in zip(changes, [30.0, 60, 90, 120]) {
                #expect(change.time >= truth && change.time <= truth + 8, "\(name): \(change.label) at \(change.time) s, the change at \(truth) s")
            }
        }
    }

    /// A followed file is followed by name, as `tail -F` does: truncated and rewritten shorter, rewritten longer
    /// from its start, and rotated (renamed, a new file in its place), it is read again from its start as a new
    /// recording, each time with a `paused` line and a note. Before: a file rewritten shorter was waited on silently
    /// forever, one rewritten longer was read from the middle of a line (exit 65 naming a line it does not have),
    /// and a rotated one was followed under its old name forever.
    @Test func aTruncatedRewrittenOrRotatedFileIsFollowedByName() throws {
        let walking = try Self.example("walking")
        let running = try Self.example("running")
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (file, process, output, error) = try Self.startFollowing(walking, in: folder)
        defer { process.stopAndWait() }
        var seen = ""
        func read(until word: String, count: Int) {
            Self.read(output, of: process, until: { $0.components(separatedBy: word).count - 1 >= count }, into: &seen)
        }
        func occurrences(_ word: String) -> Int { seen.components(separatedBy: word).count - 1 }
        read(until: "walking", count: 1)
        // Truncated and rewritten shorter than what was read: 400 rows of running (8 s).
        let shorter = running.split(separator: "\n").prefix(401).joined(separator: "\n") + "\n"
        #expect(shorter.utf8.count < walking.utf8.count)
        try Data(shorter.utf8).write(to: file)
        read(until: "running", count: 1)
        #expect(occurrences("running") == 1 && occurrences("paused") == 1, "\(seen)")
        // Rewritten longer than what was read, in place.
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data(walking.utf8))
        try handle.close()
        read(until: "walking", count: 3)  // the first walk, its pause line, the new walk
        // Rotated: renamed, and a new file in its place.
        try FileManager.default.moveItem(at: file, to: folder.appendingPathComponent("live.csv.1"))
        try Data(running.utf8).write(to: file)
        read(until: "running", count: 3)  // the first run, its pause line, the new run
        #expect(occurrences("paused") == 3, "\(seen)")
        #expect(process.isRunning, "\(seen)")
        process.stopAndWait()
        let notes = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
        #expect(notes.count == 3, "\(notes)")
        #expect(notes.first == "note: \(file.path) was truncated; following it from its start as a new recording", "\(notes)")
        #expect(
            notes.dropFirst().first.map { $0.contains("was truncated") || $0.contains("was rewritten from its start") } == true, "\(notes)")
        #expect(notes.last == "note: \(file.path) was replaced by a new file of that name; following it from its start as a new recording")
    }

    /// A file rewritten in place that begins as the old one did (its first 4 KiB) and has grown past what was read
    /// before the follower looks again is noticed by the bytes just before where reading would go on: read again
    /// from its start, with a note. Before: reading went on in the middle of a line of the new file (exit 65, or
    /// wrong samples).
    @Test func aRewriteThatBeginsAsTheOldFileDidIsNoticed() throws {
        let walking = try Self.example("walking")
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (file, process, output, error) = try Self.startFollowing(walking, in: folder)
        defer { process.stopAndWait() }
        var seen = ""
        Self.read(output, of: process, until: "walking", into: &seen)
        #expect(Self.waitUntilRead(file, by: process), "the follower reads the whole file and waits at its end")
        // The same first 8 KiB, then every value with one more digit: the same samples, longer lines, one write.
        let bytes = Array(walking.utf8)
        let kept = bytes.prefix(8192).lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
        let rest = String(decoding: bytes[kept...], as: UTF8.self).replacingOccurrences(of: ",", with: "0,")
        let rewritten = Data(bytes[..<kept]) + Data(rest.utf8)
        let handle = try FileHandle(forWritingTo: file)
        try handle.write(contentsOf: rewritten)
        try handle.close()
        Self.read(output, of: process, until: { $0.components(separatedBy: "walking").count - 1 >= 3 }, into: &seen)
        #expect(process.isRunning, "\(seen)")
        process.stopAndWait()
        let notes = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(notes == "note: \(file.path) was rewritten from its start; following it from its start as a new recording\n", "\(notes)")
    }

    /// A restart after less than a second of samples (still held for the rate check) pauses them too: the
    /// `paused` line comes with the note (before: the note alone).
    @Test func aRestartAfterAFewSamplesIsAPauseToo() throws {
        let running = try Self.example("running")
        let walking = try Self.example("walking")
        let lines = walking.split(separator: "\n")
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (file, process, output, _) = try Self.startFollowing(lines.prefix(41).joined(separator: "\n") + "\n", in: folder)
        defer { process.stopAndWait() }
        #expect(Self.waitUntilRead(file, by: process), "the follower reads its 40 samples and waits")
        try Data(running.utf8).write(to: file)
        var seen = ""
        Self.read(output, of: process, until: "running", into: &seen)
        #expect(seen.hasPrefix("    0.80 s  paused") && seen.contains("running"), "\(seen)")
    }

    /// A file that does not exist yet is waited for, as `tail -F` does (before: exit 66 at once), saying so once;
    /// one in a folder that does not exist is an error.
    @Test func aFileThatDoesNotExistYetIsWaitedFor() throws {
        let (csv, _) = try Self.walkStopRunStop()
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("later.csv")
        let (process, output, error) = try Self.startFollowing(file.path)
        defer { process.stopAndWait() }
        // Its note that it waits, read as it comes (not a sleep that assumes it has come).
        var waiting = ""
        Self.read(error, of: process, until: "waiting for it to appear\n", into: &waiting)
        #expect(process.isRunning, "it waits for the file")
        try Data(csv.utf8).write(to: file)
        var seen = ""
        Self.read(output, of: process, until: "running", into: &seen)
        #expect(seen.contains("walking") && seen.contains("running"), "\(seen)")
        process.stopAndWait()
        let note = waiting + String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(note == "note: \(file.path) does not exist yet; waiting for it to appear\n", "\(note)")
        let nowhere = try CommandRun.run(CommandRun.builtClassify, ["motion", "--follow", folder.path + "/missing/x.csv"])
        #expect(nowhere.status == 66 && nowhere.standardError.contains("no such file, and no folder"), "\(nowhere.standardError)")
    }

    /// A rate the file command refuses is refused by `--follow` too, with the same message and nothing printed:
    /// 5 Hz (before: exit 0 with no output) and timestamps in milliseconds (before: no hint).
    @Test func tooSlowOrMillisecondRecordingsAreRefusedAsByTheFileCommand() throws {
        let text = try Self.example("running")
        let rows = text.split(separator: "\n").map(String.init)
        let header = rows[0].split(separator: ",").map(String.init)
        let timeColumn = try #require(header.firstIndex(of: "timestamp"))
        let fiveHertz = ([rows[0]] + rows.dropFirst().enumerated().filter { $0.offset % 10 == 0 }.map(\.element)).joined(separator: "\n") + "\n"
        let milliseconds =
            ([rows[0]]
            + rows.dropFirst().map { row in
                var fields = row.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                fields[timeColumn] = String(format: "%.1f", (Double(fields[timeColumn]) ?? 0) * 1000)
                return fields.joined(separator: ",")
            }).joined(separator: "\n") + "\n"
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        for (name, csv, expected) in [("five", fiveHertz, "5 Hz, too slow"), ("ms", milliseconds, "look like milliseconds")] {
            let file = folder.appendingPathComponent("\(name).csv")
            try csv.write(to: file, atomically: true, encoding: .utf8)
            let whole = try CommandRun.run(CommandRun.builtClassify, ["motion", file.path])
            let follow = try CommandRun.run(CommandRun.builtClassify, ["motion", "--follow", "-"], input: csv)
            #expect(whole.status == 65 && follow.status == 65, "\(name): \(whole.status) \(follow.status) \(follow.standardOutput)")
            #expect(follow.standardOutput.isEmpty, "\(name): \(follow.standardOutput)")
            #expect(follow.standardError.contains(expected), "\(name): \(follow.standardError)")
            // The same message, the input named as each command names it.
            #expect(
                follow.standardError.replacingOccurrences(of: "error: -: ", with: "")
                    == whole.standardError.replacingOccurrences(of: "error: \(file.path): ", with: ""), "\(name)")
        }
    }

    /// A pipe named by path (`/dev/stdin`) or a FIFO ends when its writer does, as `-` does (before: followed
    /// forever, so the "ended before one window" check never ran).
    @Test func pipesAndFIFOsNamedByPathEndAtTheEndOfInput() throws {
        let (csv, activities) = try Self.walkStopRunStop()
        let piped = try CommandRun.run(CommandRun.builtClassify, ["motion", "--follow", "/dev/stdin"], input: csv)
        #expect(piped.status == 0 && piped.standardOutput.split(separator: "\n").count == activities.count, "\(piped.standardOutput)")
        let short = try CommandRun.run(
            CommandRun.builtClassify, ["motion", "--follow", "/dev/stdin"],
            input: csv.split(separator: "\n").prefix(100).joined(separator: "\n") + "\n")
        #expect(short.status == 65 && short.standardError.contains("before one window"), "\(short.standardError)")
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = folder.appendingPathComponent("live.fifo")
        #expect(mkfifo(fifo.path, 0o644) == 0)
        let (process, output, _) = try Self.startFollowing(fifo.path)
        defer { process.stopAndWait() }
        let writer = try #require(FileHandle(forWritingAtPath: fifo.path))
        try writer.write(contentsOf: Data(csv.utf8))
        try writer.close()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(!process.isRunning, "a FIFO whose writer closed is still followed")
        #expect(printed.split(separator: "\n").count == activities.count, "\(printed)")
    }

    /// A followed file whose changes cannot be written (a full disk) stops following: 74, not forever.
    @Test func anUnwritableOutputStopsTheFollow() throws {
        let (csv, _) = try Self.walkStopRunStop()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("follow-full-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("live.csv")
        try Data(csv.utf8).write(to: file)
        let process = Process()
        process.executableURL = CommandRun.builtClassify
        process.arguments = ["motion", "--follow", file.path]
        process.standardOutput = try #require(FileHandle(forWritingAtPath: "/dev/full"))
        let error = Pipe()
        process.standardError = error
        try process.run()
        defer { process.stopAndWait() }
        let deadline = Date().addingTimeInterval(120)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        let stillRunning = process.isRunning
        process.stopAndWait()
        #expect(!stillRunning, "still following a file whose output cannot be written")
        #expect(process.terminationStatus == 74)
        let message = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(message.contains("standard output could not be written"), "\(message)")
    }

    @Test func badInputStopsWithWhereAndWhat() throws {
        let (csv, _) = try Self.walkStopRunStop()
        var lines = csv.split(separator: "\n").map(String.init)
        var fields = lines[400].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        fields[5] = "north"
        lines[400] = fields.joined(separator: ",")
        let run = try CommandRun.run(CommandRun.builtClassify, ["motion", "--follow", "-"], input: lines.joined(separator: "\n"))
        #expect(run.status == 65, "\(run.standardError)")
        #expect(run.standardError.contains("-:401: column 6 ("), "\(run.standardError)")
        // The same words as `classify motion` gives for the same row: one reader for both.
        #expect(run.standardError.contains("'north' is not a number"), "\(run.standardError)")
        let whole = try CommandRun.run(CommandRun.builtClassify, ["motion", "-"], input: lines.joined(separator: "\n"))
        #expect(whole.status == 65 && whole.standardError == run.standardError, "\(whole.standardError)")

        let short = lines.prefix(100).joined(separator: "\n")
        let shortRun = try CommandRun.run(CommandRun.builtClassify, ["motion", "--follow", "-"], input: short)
        #expect(shortRun.status == 65 && shortRun.standardError.contains("before one window"), "\(shortRun.standardError)")

        // A header of control bytes and undecodable ones: 65, and the message shows them as `?`.
        let garbage = try CommandRun.run(
            CommandRun.builtClassify, ["motion", "--follow", "-"],
            input: String(decoding: [0x01, 0x1B, 0xFF, 0x41, 0x2C, 0x07, 0x0A, 0x31, 0x0A], as: UTF8.self))
        #expect(garbage.status == 65 && garbage.standardError.contains("missing columns"), "\(garbage.standardError)")
        #expect(!garbage.standardError.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || $0 == "\u{FFFD}" }, "\(garbage.standardError)")

        let backwards = [lines[0], lines[2], lines[1]].joined(separator: "\n")
        let backRun = try CommandRun.run(CommandRun.builtClassify, ["motion", "--follow", "-"], input: backwards)
        // Where is said once: the input's line, then the problem (not the stream's own count of samples as well).
        #expect(
            backRun.status == 65 && backRun.standardError.hasPrefix("error: -:3: time ") && backRun.standardError.contains("times must increase"),
            "\(backRun.standardError)")
    }

    @Test func optionsThatCannotFollowAreUsageErrors() throws {
        for (arguments, expected) in [
            (["--follow", "-", "--smooth", "2"], "--smooth"), (["--follow", "a.csv", "b.csv"], "one recording"),
            (["-", "--confirm", "3"], "--follow only"), (["--follow", "-", "--confirm", "0"], "between 1 and 20"),
        ] {
            let run = try CommandRun.classify(["motion"] + arguments)
            #expect(run.status == 64 && run.standardError.contains(expected), "\(arguments): \(run.standardError)")
        }
    }

    /// A fully quoted copy of a recording (as some spreadsheets export) is the same recording to `--follow` as to
    /// `classify motion`: the same CSV reader reads both.
    @Test func aQuotedRecordingFollowsAsItClassifies() throws {
        let text = try Self.example("walking")
        let quoted =
            text.split(separator: "\n").map { line in
                line.split(separator: ",", omittingEmptySubsequences: false).map { "\"\($0)\"" }.joined(separator: ",")
            }.joined(separator: "\r\n") + "\r\n"
        let whole = try CommandRun.run(CommandRun.builtClassify, ["motion", "-", "--json"], input: quoted)
        #expect(whole.status == 0, "\(whole.standardError)")
        let label = try #require(try JSONSerialization.jsonObject(with: Data(whole.standardOutput.utf8)) as? [String: Any])["label"] as? String
        #expect(label == "walking")
        let followed = try CommandRun.run(CommandRun.builtClassify, ["motion", "--follow", "-", "--json"], input: quoted)
        #expect(followed.status == 0, "\(followed.standardError)")
        let states = followed.standardOutput.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["to"] as? String
        }
        #expect(states == ["walking"], "\(followed.standardOutput)")
    }

    /// `kill` stops a follow even when whoever started it blocks the stop signals, which a child inherits (this test
    /// runner's `Process` hands down nearly all): before classify unblocked them, such a follow outlived its parent.
    @Test func terminateStopsAFollowStartedWithTheSignalsBlocked() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("follow-stop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("live.csv")
        try Data("timestamp,acc.x,acc.y,acc.z\n".utf8).write(to: file)
        // Block SIGTERM in this thread while the child is spawned, so the child starts with it blocked whatever the
        // runner does.
        var blocked = sigset_t(), previous = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        let process = Process()
        process.executableURL = CommandRun.builtClassify
        process.arguments = ["motion", "--follow", file.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let started = Result { try process.run() }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
        try started.get()
        defer { process.stopAndWait() }
        #expect(Self.waitUntilRead(file, by: process), "it reads the header and waits at the file's end")
        #expect(process.isRunning, "a followed file keeps being followed")
        process.terminate()
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        #expect(!process.isRunning, "SIGTERM did not stop classify motion --follow")
        if !process.isRunning { #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGTERM) }
    }

    /// A raw accelerometer in m/s² at 25 Hz (the bundled walk, as such a sensor records it): what was assumed is said
    /// once each as a `note:` (not a warning), by the file command and by `--follow` alike, and the units note names the
    /// magnitude it measured (the whole acceleration here, not gravity) (issue 33, item 6).
    @Test func assumptionsAreNotesForAFileAndAFollowedStreamAlike() throws {
        let walking = try String(contentsOf: packageRoot.appendingPathComponent("Datasets/examples/walking.csv"), encoding: .utf8)
        let lines = walking.split(separator: "\n")
        let header = lines[0].split(separator: ",").map(String.init)
        func column(_ name: String) throws -> Int { try #require(header.firstIndex(of: name)) }
        let (time, gravity, user) = (try column("timestamp"), try column("gravity.x"), try column("userAcceleration.x"))
        var raw = ["timestamp,acc.x,acc.y,acc.z"]
        for line in lines.dropFirst().enumerated().filter({ $0.offset % 2 == 0 }).map(\.element) {
            let v = line.split(separator: ",").compactMap { Double($0) }
            let a = (0..<3).map { String(format: "%.4f", 9.80665 * (v[gravity + $0] + v[user + $0])) }
            raw.append("\(v[time]),\(a.joined(separator: ","))")
        }
        let csv = raw.joined(separator: "\n") + "\n"
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("raw.csv")
        try csv.write(to: file, atomically: true, encoding: .utf8)
        let once = try CommandRun.classify(["motion", file.path])
        #expect(once.status == 0 && once.standardOutput.hasPrefix("walking "), "\(once.standardError)")
        #expect(!once.standardError.contains("warning:"), "\(once.standardError)")
        #expect(once.standardError.contains("note: \(file.path): accelerations look like m/s² (median acceleration magnitude "))
        #expect(once.standardError.contains("note: \(file.path): raw accelerometer: gravity estimated by a 0.3 Hz low-pass filter\n"))
        #expect(once.standardError.contains("note: \(file.path): resampled from 25.0 Hz to 50 Hz\n"))
        let followed = try CommandRun.run(CommandRun.builtClassify, ["motion", "--follow", "-"], input: csv)
        #expect(followed.status == 0, "\(followed.standardError)")
        let notes = followed.standardError.split(separator: "\n").filter { $0.hasPrefix("note: -: ") }
        #expect(notes.count == 2 && notes[0].contains("accelerations look like m/s² (median acceleration magnitude "), "\(followed.standardError)")
        #expect(notes.last == "note: -: raw accelerometer: gravity estimated by a 0.3 Hz low-pass filter")
        #expect(!followed.standardError.contains("warning:"), "\(followed.standardError)")
        let quiet = try CommandRun.classify(["motion", file.path, "--quiet"])
        #expect(quiet.status == 0 && quiet.standardError.isEmpty, "\(quiet.standardError)")
    }

    /// A recording that walks and then runs: the text lists its segments before its windows, and JSON has them under
    /// `segments` (issue 33, item 7); a one-state recording's text stays its headline and windows.
    @Test func aMixedRecordingIsToldAsSegments() throws {
        func rows(_ example: String) throws -> [Substring] {
            try String(contentsOf: packageRoot.appendingPathComponent("Datasets/examples/\(example).csv"), encoding: .utf8).split(separator: "\n")
        }
        let walking = try rows("walking"), running = try rows("running")
        // The running rows after the walking ones, their times shifted to follow on.
        let shifted = running.dropFirst().map { line -> String in
            let fields = line.split(separator: ",", maxSplits: 1)
            return String(format: "%.3f", 40 + (Double(fields[0]) ?? 0)) + "," + fields[1]
        }
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("walk-run.csv")
        try ((walking.map(String.init) + shifted).joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
        let text = try CommandRun.classify(["motion", file.path])
        #expect(text.status == 0, "\(text.standardError)")
        let lines = text.standardOutput.split(separator: "\n")
        #expect(
            lines.count > 3 && lines[1].hasPrefix("  walking   0.00–") && lines.dropFirst(2).contains { $0.hasPrefix("  running   ") },
            "\(text.standardOutput)")
        let json = try CommandRun.classify(["motion", file.path, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        let segments = try #require(object["segments"] as? [[String: Any]])
        #expect(segments.first?["label"] as? String == "walking" && segments.last?["label"] as? String == "running", "\(segments)")
        #expect(segments.map { $0["windows"] as? Int ?? 0 }.reduce(0, +) == (object["windows"] as? [Any])?.count)
        let single = try CommandRun.classify(["motion", packageRoot.appendingPathComponent("Datasets/examples/walking.csv").path])
        #expect(single.standardOutput.split(separator: "\n").dropFirst().first?.hasPrefix("     0.00–   5.12 s  walking ") == true)
    }
}
