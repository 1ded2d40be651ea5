#if Serve
import Foundation
import Models
import Testing

@testable import classify

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `POST /v1/motion/live`: a recording sent in updates of any size gives, across its answers, exactly the events
/// `classify motion --follow - --json` prints for the same rows (byte for byte, the weights named without their
/// folder) and the windows `classify motion --json` answers; the session limit, the idle end, and bodies that are
/// refused without changing the session.
@Suite("classify serve: live motion sessions")
struct ServeLiveTests {
    /// `POST /v1/motion/live` with `query`; the status and the body.
    func live(_ server: ServerProcess, _ query: String = "", _ body: String) async throws -> (status: Int, body: String) {
        guard let url = URL(string: server.base.absoluteString + "/v1/motion/live" + query) else { throw CocoaError(.fileReadUnknown) }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(body.utf8)
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? -1, String(decoding: data, as: UTF8.self))
    }

    /// The rows of a recording CSV as JSON samples, keyed by its header.
    static func samples(_ csv: String) -> [String] {
        let lines = csv.split(separator: "\n")
        let header = lines[0].split(separator: ",").map(String.init)
        return lines.dropFirst().map { line in
            "{" + zip(header, line.split(separator: ",")).map { "\"\($0)\": \($1)" }.joined(separator: ", ") + "}"
        }
    }

    /// The event objects of an answer, as the text the server wrote them in (events hold no nested objects).
    static func events(_ answer: String) -> [String] {
        guard let start = answer.range(of: "{\"events\":["), let end = answer.range(of: "],\"notes\":[") else { return [] }
        let inside = answer[start.upperBound..<end.lowerBound]
        guard !inside.isEmpty else { return [] }
        return inside.components(separatedBy: "},{").enumerated().map { index, part in
            var text = part
            if index > 0 { text = "{" + text }
            if !text.hasSuffix("}") { text += "}" }
            return text
        }
    }

    /// Walking, then running 30 s later (a pause: longer than a window), then still: the examples with their times
    /// moved on, as one recording.
    static func threeStates() throws -> String {
        var lines: [String] = []
        var offset = 0.0
        for name in ["walking", "running", "still"] {
            let text = try String(contentsOf: packageRoot.appendingPathComponent("Datasets/examples/\(name).csv"), encoding: .utf8)
            let rows = text.split(separator: "\n")
            if lines.isEmpty { lines.append(String(rows[0])) }
            var last = 0.0
            for row in rows.dropFirst() {
                var fields = row.split(separator: ",").map(String.init)
                let time = (Double(fields[0]) ?? 0) + offset
                fields[0] = String(format: "%.3f", time)
                last = time
                lines.append(fields.joined(separator: ","))
            }
            offset = last + (name == "walking" ? 30 : 0.02)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test func updatesOfAnySizeGiveWhatFollowPrints() async throws {
        let csv = try Self.threeStates()
        let follow = try CommandRun.run(CommandRun.builtClassify, ["motion", "--follow", "-", "--json"], input: csv)
        #expect(follow.status == 0, "\(follow.standardError)")
        let expected = follow.standardOutput.split(separator: "\n").map { withoutWeightsFolder(String($0)) }
        #expect(expected.count >= 4 && expected.contains { $0.contains("\"event\":\"resumed\"") }, "\(expected)")
        let whole = try CommandRun.classifyAtRoot(["motion", "-", "--json"], input: csv)
        let windows = (try jsonObject(whole.standardOutput)["windows"] as? [Any])?.count ?? -1

        // No session goes idle here however slowly a loaded machine runs the test (the default is 60 s).
        let server = try ServerProcess(["--live-idle", "3600"])
        let samples = Self.samples(csv)
        var generator = SystemRandomNumberGenerator()
        for sizes in [[1, 7, 50], [100], [2000]] {
            var events: [String] = [], windowCount = 0, session: String?, index = 0
            while index < samples.count {
                let size = sizes.randomElement(using: &generator) ?? 100
                let part = samples[index..<min(samples.count, index + size)]
                let answer = try await live(server, session.map { "?session=\($0)" } ?? "", "{\"samples\": [\(part.joined(separator: ","))]}")
                #expect(answer.status == 200, "\(answer.body.prefix(300))")
                guard answer.status == 200 else { return }
                let object = try jsonObject(answer.body)
                session = object["session"] as? String
                events += Self.events(answer.body)
                windowCount += (object["windows"] as? [Any])?.count ?? 0
                #expect(object["samples"] as? Int == index + part.count)
                index += part.count
            }
            let end = try await live(server, "?session=\(session ?? "")&end=1", "{\"samples\": []}")
            #expect(end.status == 200, "\(end.body.prefix(300))")
            events += Self.events(end.body)
            windowCount += (try jsonObject(end.body)["windows"] as? [Any])?.count ?? 0
            #expect(try jsonObject(end.body)["state"] as? String == "still")
            #expect(events == expected, "sizes \(sizes)")
            #expect(windowCount == windows, "sizes \(sizes)")
            // Ended: gone.
            let after = try await live(server, "?session=\(session ?? "")", "{\"samples\": []}")
            #expect(after.status == 404 && after.body.contains("no live motion session"), "\(after.body)")
        }
    }

    @Test func sessionsAreLimited() async throws {
        let server = try ServerProcess(["--max-live-sessions", "2", "--live-idle", "3600"])
        for _ in 0..<2 {
            let opened = try await live(server, "", "{\"samples\": []}")
            #expect(opened.status == 200, "\(opened.body)")
        }
        let third = try await live(server, "", "{\"samples\": []}")
        #expect(third.status == 503 && third.body.contains("2 live motion sessions are open already (--max-live-sessions)"), "\(third.body)")
    }

    /// Two updates of one session at once: the second is 409 and changes nothing; once the first is in, the next
    /// update goes on (the table itself: two requests cannot be made to overlap on cue).
    @Test func aSecondUpdateWhileOneIsAnsweredIs409() throws {
        let bytes = try Array(Data(contentsOf: packageRoot.appendingPathComponent("Weights/motion-state.int8.weights")))
        let sessions = LiveMotionSessions(limit: 4, idle: 3600)
        var session = LiveMotionSession(recognizer: try MotionRecognizer(weights: bytes))
        let id = try sessions.open(session)
        // Opened, it is answering its first update: a second one now is refused.
        do {
            _ = try sessions.checkOut(id)
            Issue.record("a session answering an update was checked out again")
        } catch {
            #expect(error.status == .conflict && error.message.contains("is answering another update"), "\(error.message)")
        }
        session.samples = 7
        sessions.checkIn(id, session)
        let next = try sessions.checkOut(id)
        #expect(next.samples == 7)
        #expect(throws: ServeAPI.Failure.self) { try sessions.checkOut(id) }
        sessions.checkIn(id, nil)
        do {
            _ = try sessions.checkOut(id)
            Issue.record("an ended session was checked out")
        } catch {
            #expect(error.status == .notFound, "\(error.message)")
        }
        #expect(sessions.count == 0)
    }

    @Test func aFirstUpdateThatFailsOpensNoSession() async throws {
        let server = try ServerProcess(["--max-live-sessions", "1", "--live-idle", "3600"])
        for body in [
            "{\"samples\": [{\"timestamp\": 1, \"foo\": 2}]}", "{\"samples\": [",
            "{\"samples\": [{\"timestamp\": 1, \"acc.x\": 0, \"acc.y\": 0, \"acc.z\": 1e9}]}",
        ] {
            let refused = try await live(server, "", body)
            #expect(refused.status == 422 || refused.status == 400, "\(refused.body)")
        }
        // The one place is still free.
        let opened = try await live(server, "", "{\"samples\": []}")
        #expect(opened.status == 200, "\(opened.body)")
    }

    @Test func idleSessionsEndAndFreeTheirPlace() async throws {
        let server = try ServerProcess(["--max-live-sessions", "1", "--live-idle", "1"])
        let first = try jsonObject(try await live(server, "", "{\"samples\": []}").body)["session"] as? String
        try await Task.sleep(nanoseconds: 1_600_000_000)
        // The one place is free again: the idle session ended.
        let again = try await live(server, "", "{\"samples\": []}")
        #expect(again.status == 200, "\(again.body)")
        let gone = try await live(server, "?session=\(first ?? "")", "{\"samples\": []}")
        #expect(gone.status == 404 && gone.body.contains("after 1 s without an update"), "\(gone.body)")
    }

    @Test func refusedBodiesLeaveTheSessionAsItWas() async throws {
        let server = try ServerProcess(["--live-idle", "3600"])
        let samples = Self.samples(try String(contentsOf: packageRoot.appendingPathComponent("Datasets/examples/walking.csv"), encoding: .utf8))
        let opened = try await live(server, "", "{\"samples\": [\(samples[0..<100].joined(separator: ","))]}")
        let session = try jsonObject(opened.body)["session"] as? String ?? ""
        let syntax = try await live(server, "?session=\(session)", "{\"samples\": [\(samples[100]),")
        #expect(syntax.status == 400, "\(syntax.body)")
        let keys = try await live(server, "?session=\(session)", "{\"samples\": [\(samples[100]), {\"timestamp\": 99, \"acc.x\": 1}]}")
        #expect(keys.status == 422 && keys.body.contains("samples[1] has keys"), "\(keys.body)")
        let csv = try await server.post("v1/motion/live?session=\(session)", Data("timestamp,acc.x\n".utf8), type: "text/csv")
        #expect(csv.status == 415 || csv.status == 404, "\(csv.body)")
        let next = try await live(server, "?session=\(session)", "{\"samples\": [\(samples[100..<200].joined(separator: ","))]}")
        let taken = try jsonObject(next.body)["samples"] as? Int
        #expect(next.status == 200 && taken == 200, "\(next.body.prefix(200))")
        // A sample whose time goes back cannot be taken: the session ends, and says so.
        let back = try await live(server, "?session=\(session)", "{\"samples\": [\(samples[5])]}")
        #expect(back.status == 422 && back.body.contains("this live session has ended"), "\(back.body)")
        let gone = try await live(server, "?session=\(session)", "{\"samples\": []}")
        #expect(gone.status == 404)
    }
}
#endif
