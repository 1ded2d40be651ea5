#if Serve
import DataFiles
import Foundation
import Logging
import Tensor
import Testing

@testable import classify

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The JSON bodies of `classify serve`, read value by value: a syntax error says where, a repeated key is refused,
/// and a limit stops the reading where it is passed (issue 46, H2 and L5).
@Suite("classify serve: request bodies")
struct ServeBodyTests {
    /// The 400 message of `body` read as strokes, or `nil` when it is not a syntax failure.
    static func syntaxMessage(_ body: String) -> String? {
        do {
            _ = try ServeAPI.drawing(fromJSON: Data(body.utf8))
        } catch let failure as ServeAPI.Failure {
            return failure.status == .badRequest ? failure.message : nil
        } catch {
            return nil
        }
        return nil
    }

    @Test func syntaxErrorsSayWhereAndWhat() {
        let cases: [(body: String, says: String)] = [
            ("{\"strokes\":[[[0,0],[10,0],[10,10],[0,10] ]}", "request:1: column 43 (byte 42): expected ',' or ']' after an element, found '}'"),
            ("{\"strokes\":[[[NaN,0],[1,1]]]}", "column 15 (byte 14): expected a number, found 'N'"),
            ("{\"strokes\":[[[1e400,0],[1,1]]]}", "expected a number within ±1.8e308 (a Double), found 1e400"),
            ("{\"strokes\":[[[0,0],[1,1]]]} xyz", "expected the end of the body after its value, found 'x'"),
            (
                "{\"strokes\":[[[0,0],\n[1,1]]],\n\"strokes\":[]}",
                "request:3: column 1 (byte 29): expected each key once in an object, found \"strokes\" again"
            ),
            (
                "{\"strokes\":[[[0,0],[1,1]]],\"x\":" + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}",
                "expected at most 32 levels of nested objects and arrays"
            ),
            ("{\"points\":[]}", "it has no \"strokes\" member"),
            ("[]", "expected an object {\"strokes\": [[[x, y], …], …]}, found '['"),
        ]
        for item in cases {
            let message = Self.syntaxMessage(item.body)
            #expect(message?.contains(item.says) == true, "\(item.body.prefix(60)): \(message ?? "no 400")")
            #expect(message?.hasPrefix("the body is not {\"strokes\"") == true, "\(message ?? "no 400")")
        }
    }

    /// Hummingbird's log lines: errors only, one line each with the metadata set on the logger and given with the
    /// event, keys sorted.
    @Test func theServersLogLinesKeepTheirLevelAndMetadata() {
        struct Broken: Error, CustomStringConvertible { var description: String { "the socket broke" } }
        var logger = Logger(label: "classify-serve") { ServeLogHandler(label: $0) }
        logger[metadataKey: "hb.request.id"] = "7"
        #expect(logger.logLevel == .error && logger[metadataKey: "hb.request.id"] == "7")
        var handler = ServeLogHandler(label: "classify-serve")
        handler[metadataKey: "hb.request.id"] = "7"
        let event = LogEvent(
            level: .error, message: "connection failed", error: Broken(), metadata: ["a": "1"], source: nil, file: "", function: "", line: 0)
        let line = ServeLogHandler.line(label: handler.label, event: event, metadata: handler.metadata.merging(["a": "1"]) { $1 })
        #expect(line == "classify-serve: error: connection failed: the socket broke a=1 hb.request.id=7\n")
    }

    @Test func aContentTypeIsReadAsItsMediaType() {
        #expect(ServeAPI.mediaType("application/json") == "application/json")
        #expect(ServeAPI.mediaType(" Text/CSV ; charset=utf-8") == "text/csv")
        #expect(ServeAPI.mediaType("\tapplication/JSON;") == "application/json")
        #expect(ServeAPI.mediaType("") == "")
        #expect(ServeAPI.mediaType(" ;text/csv") == "")
    }

    @Test func aDrawingReadsAsItsPointsWithOtherMembersSkipped() throws {
        let drawing = try ServeAPI.drawing(
            fromJSON: Data("{\"name\": {\"a\": [1, \"x\", null, true]}, \"strokes\": [[[0, 0], [10, 0, 5]], [], [[3.5, -2e1]]]}".utf8))
        #expect(drawing.strokes.count == 2)
        #expect(drawing.strokes[0].map(\.x) == [0, 10] && drawing.strokes[0].map(\.t) == [nil, 5])
        #expect(drawing.strokes[1].map(\.y) == [-20])
    }

    @Test func thePointLimitStopsTheReadingWhereItIsPassed() {
        // Five points are allowed; the sixth is refused although the body goes on (and ends badly).
        let body = "{\"strokes\": [[[0,0],[1,0],[2,0]], [[3,0],[4,0],[5,0],[6,0] this is never read"
        #expect {
            _ = try ServeAPI.drawing(fromJSON: Data(body.utf8), maximumPoints: 5)
        } throws: { error in
            (error as? DataError)?.message == "more than 5 points; is this one drawing?"
        }
        #expect(throws: DataError.self) { _ = try ServeAPI.drawing(fromJSON: Data("{\"strokes\": [[[0,0],[1]]]}".utf8)) }
    }

    @Test func samplesBecomeTheirRecordingsRowsWithinTheLimit() throws {
        var records = try ServeAPI.records(fromJSON: Data("{\"samples\": [{\"b\": 2, \"a\": 1}, {\"a\": 3, \"b\": 4.5}]}".utf8))
        #expect(records.header == ["a", "b"] && records.values == [1, 2, 3, 4.5])
        var read: [[Double]] = []
        while records.advance() { read.append([Double(records.lineNumber), records.number(column: 0), records.number(column: 1)]) }
        #expect(read == [[2, 1, 2], [3, 3, 4.5]], "line, a, b")
        let three = "{\"samples\": [" + Array(repeating: "{\"a\": 1}", count: 3).joined(separator: ",") + ", {\"a\": nonsense"
        #expect {
            _ = try ServeAPI.records(fromJSON: Data(three.utf8), maximumSamples: 3)
        } throws: { error in
            (error as? DataError)?.message.hasPrefix("more than 3 samples") == true
        }
        #expect {
            _ = try ServeAPI.records(fromJSON: Data("{\"samples\": [{\"a\": 1}, {\"a\": 1, \"b\": 2}]}".utf8))
        } throws: { error in
            (error as? DataError)?.message == "samples[1] has keys [\"a\", \"b\"]; every sample needs [\"a\"]"
        }
        #expect {
            _ = try ServeAPI.records(fromJSON: Data("{\"samples\": [{\"a,b\": 1}]}".utf8))
        } throws: { error in
            (error as? DataError)?.message.contains("which is no column name") == true
        }
        #expect {
            _ = try ServeAPI.records(fromJSON: Data("{\"samples\": [{\"a\": 1, \"a\": 2}]}".utf8))
        } throws: { error in
            (error as? ServeAPI.Failure)?.message.contains("each key once in an object") == true
        }
    }

    /// Samples read their keys as the previous sample's when they are written the same way: the keys, the refusals
    /// and the rows are those of reading each key anew — in another order, escaped, repeated after the expected
    /// ones, longer or shorter.
    @Test func samplesOfThePreviousKeysReadAsAnyOthers() throws {
        var rows: [[String]] = []
        let body =
            #"{"samples": [{"t": 1, "acc.x": 2}, {"t": 3, "acc.x": 4}, {"acc.x": 5, "t": 6}, {"t": 7, "acc\u002ex": 8}, "#
            + #"{"t": 9, "acc.xy": 10}, {"t": 11, "acc.": 12}, {"t": 13}, {"t": 14, "acc.x": 15, "g": 16}]}"#
        let count = try ServeAPI.sampleRows(fromJSON: Data(body.utf8), maximumSamples: 100) { keys, values, _ in
            rows.append(zip(keys, values).map { "\($0)=\($1)" })
        }
        #expect(count == 8)
        #expect(
            rows == [
                ["t=1.0", "acc.x=2.0"], ["t=3.0", "acc.x=4.0"], ["acc.x=5.0", "t=6.0"], ["t=7.0", "acc.x=8.0"], ["t=9.0", "acc.xy=10.0"],
                ["t=11.0", "acc.=12.0"], ["t=13.0"], ["t=14.0", "acc.x=15.0", "g=16.0"],
            ])
        // A key repeated right after the keys the previous sample had, and one repeated out of order.
        for repeated in [#"{"t": 1, "a": 2}, {"t": 3, "a": 4, "t": 5}"#, #"{"t": 1, "a": 2}, {"a": 3, "t": 4, "a": 5}"#] {
            #expect {
                _ = try ServeAPI.sampleRows(fromJSON: Data(#"{"samples": [\#(repeated)]}"#.utf8), maximumSamples: 100) { _, _, _ in }
            } throws: { error in
                (error as? ServeAPI.Failure)?.message.contains("each key once in an object") == true
            }
        }
        // The records of samples whose keys come in another order are those of the keys in one order.
        let records = try ServeAPI.records(
            fromJSON: Data(#"{"samples": [{"b": 2, "a": 1}, {"b": 4, "a": 3}, {"a": 5, "b": 6}, {"b": 8, "a": 7}]}"#.utf8))
        #expect(records.header == ["a", "b"] && records.values == [1, 2, 3, 4, 5, 6, 7, 8])
    }
}

/// The queue of large requests: a worker per slot, a line behind them, and a refusal once both are full.
@Suite("classify serve: work queue")
struct ServeQueueTests {
    @Test func jobsBeyondTheWorkersAndTheLineAreRefusedAtOnce() async throws {
        let queue = ServeQueue(workers: 1, waiting: 1)
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let first = Task {
            await queue.run {
                started.signal()
                release.wait()
                return 1
            }
        }
        waitFor(started)
        let second = Task { await queue.run { 2 } }
        // The second waits in line (its one place); then a third finds the worker busy and the line full.
        for _ in 0..<5000 where queue.inLine == 0 { try await Task.sleep(nanoseconds: 1_000_000) }
        #expect(queue.inLine == 1)
        #expect(await queue.run { 3 } == nil)
        release.signal()
        #expect(await first.value == 1)
        #expect(await second.value == 2)
        #expect(queue.inLine == 0)
        #expect(await queue.run { 4 } == 4)
    }
}

/// Blocks until `semaphore` is signalled (outside an async context, where `wait()` is not allowed).
private func waitFor(_ semaphore: DispatchSemaphore) { semaphore.wait() }

/// HTTP as the RFCs and browsers' security model have it (issue 46: M2, M5, L1–L4).
@Suite("classify serve: hostile requests")
struct ServeHostileRequestTests {
    static let square = "{\"strokes\": [[[0,0],[10,0],[10,10],[0,10],[0,0]]]}"

    /// `request` (a head whose body follows), sent raw; returns what came back and whether the server closed.
    static func raw(_ server: ServerProcess, _ head: String, body: String = "") throws -> (reply: String, closed: Bool) {
        let connection = try RawConnection(port: try #require(server.base.port))
        connection.send(head + body)
        return connection.receiveUntilClosed()
    }

    /// A drawing's head that says `length` bytes follow.
    static func head(length: String) -> String {
        "POST /v1/shape HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(length)\r\n\r\n"
    }

    static func post(_ headers: String, body: String = square) -> String {
        "POST /v1/shape HTTP/1.1\r\n\(headers)Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
    }

    @Test func hostAndOriginAreChecked() async throws {
        let server = try ServerProcess()
        let port = try #require(server.base.port)
        let cases: [(head: String, status: String, says: String)] = [
            (Self.post("Connection: close\r\n"), "400", "no Host header"),
            (Self.post("Host: 127.0.0.1\r\nHost: evil.example\r\nConnection: close\r\n"), "400", "more than one Host header"),
            (Self.post("Host: evil.example:\(port)\r\nConnection: close\r\n"), "403", "is not this server"),
            (Self.post("Host: 127.0.0.1:\(port)\r\nOrigin: http://127.0.0.1:9\r\nConnection: close\r\n"), "403", "another origin"),
            (Self.post("Host: 127.0.0.1:\(port)\r\nSec-Fetch-Site: same-site\r\nConnection: close\r\n"), "403", "another site"),
            (Self.post("Host: localhost:\(port)\r\nOrigin: http://localhost:\(port)\r\nConnection: close\r\n"), "200", "\"label\":\"square\""),
            (Self.post("Host: [::1]:\(port)\r\nConnection: close\r\n"), "200", "\"label\":\"square\""),
        ]
        for item in cases {
            let (reply, closed) = try Self.raw(server, item.head, body: Self.square)
            #expect(reply.hasPrefix("HTTP/1.1 \(item.status)"), "\(item.head): \(reply.prefix(300))")
            #expect(reply.contains(item.says), "\(item.head): \(reply.prefix(300))")
            #expect(closed, "\(item.head): the connection stayed open after Connection: close")
        }
        // The answer names the weights file, not the folders it is in.
        let answer = try jsonObject(try await server.post("v1/shape", Data(Self.square.utf8)).body)
        let weights = try #require(answer["weights"] as? String)
        #expect(!weights.contains("/") && weights.hasSuffix(".weights"), "\(weights)")
    }

    @Test func methodsFramingAndCodingsAreHTTPs() throws {
        let server = try ServerProcess(["--max-body", "4096"])
        let head = try Self.raw(server, "HEAD / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        #expect(
            head.reply.hasPrefix("HTTP/1.1 200") && head.reply.contains("text/html") && !head.reply.contains("<canvas"), "\(head.reply.prefix(300))")
        let delete = try Self.raw(server, "DELETE /v1/shape HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        #expect(delete.reply.hasPrefix("HTTP/1.1 405") && delete.reply.lowercased().contains("allow: post"), "\(delete.reply.prefix(300))")
        // HTTP/1.0 without keep-alive: answered, then closed (not held until the idle timeout).
        let old = try Self.raw(server, "GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(old.reply.hasPrefix("HTTP/1.1 200") && old.reply.contains("<canvas"), "\(old.reply.prefix(300))")
        #expect(old.closed)
        let cases: [(head: String, body: String, status: String)] = [
            (
                "POST /v1/shape HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n",
                "5\r\nhello\r\n0\r\n\r\n", "501"
            ),
            (Self.post("Host: 127.0.0.1\r\nContent-Encoding: gzip\r\nConnection: close\r\n"), Self.square, "415"),
            (Self.head(length: "9223372036854775808"), "{", "413"),
            (Self.head(length: "100000"), "{", "413"),
        ]
        for item in cases {
            let (reply, closed) = try Self.raw(server, item.head, body: item.body)
            #expect(reply.hasPrefix("HTTP/1.1 \(item.status)"), "\(item.head.prefix(120)): \(reply.prefix(300))")
            #expect(closed, "\(item.head.prefix(120)): left open")
        }
    }

    /// A chunk that says it is larger than `--max-body` is answered 413 at once (not 408 after `--timeout`), and
    /// chunked bodies within it, with extensions and trailers, pipelined behind a body of known length, are
    /// answered as before (`ChunkSizeGuard` only watches the bytes).
    @Test func aChunkOverTheLimitIsRefusedAtOnce() throws {
        let server = try ServerProcess(["--max-body", "4096", "--timeout", "120"])
        let chunked = "POST /v1/shape HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        let sizes = [
            ("ffffffffffffffff", "18446744073709551615 bytes"), ("1001", "4097 bytes"), ("100000000000000000000", "over 2^64 bytes"),
        ]
        for (size, said) in sizes {
            let (reply, closed) = try Self.raw(server, chunked, body: size + "\r\n" + Self.square)
            #expect(reply.hasPrefix("HTTP/1.1 413") && reply.contains("says it is \(said)"), "chunk size \(size): \(reply.prefix(300))")
            #expect(reply.lowercased().contains("connection: close"), "chunk size \(size): \(reply.prefix(300))")
            #expect(closed, "chunk size \(size): left open")
        }
        let (first, second) = (Self.square.prefix(20), Self.square.dropFirst(20))
        let pipelined =
            Self.post("Host: 127.0.0.1\r\n", body: Self.square) + Self.square + chunked
            + String(first.utf8.count, radix: 16) + ";note=1\r\n\(first)\r\n" + String(second.utf8.count, radix: 16) + "\r\n\(second)\r\n"
            + "0\r\nX-Trailer: yes\r\n\r\n" + "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        let (reply, closed) = try Self.raw(server, pipelined)
        #expect(reply.components(separatedBy: "HTTP/1.1 200").count == 4 && reply.contains("\"square\"") && closed, "\(reply.prefix(600))")
    }

    /// `ChunkSizeGuard` follows framing it must never get wrong: 40 pipelined requests on one connection, bodies of
    /// known length and chunked ones (random chunk sizes, extensions, trailers), some whose bytes look like a huge
    /// chunk size, sent in pieces of 1–40 bytes. Each is answered in order with its own status: none is 413 but a
    /// last one whose chunk is too large (a guard that lost the framing would let it wait for `--timeout`: 408).
    @Test func pipelinedFramingIsFollowedInPieces() throws {
        let server = try ServerProcess(["--max-body", "4096", "--timeout", "5"])
        var generator = SeededGenerator(seed: 46)
        let lookalike = "ffffffffffffffff\r\n0\r\n\r\n"
        var requests = "", expected: [String] = []
        for index in 0..<40 {
            let good = Int.random(in: 0..<3, using: &generator) > 0
            let body = good ? Self.square : lookalike
            if Bool.random(using: &generator) {
                requests += Self.post("Host: 127.0.0.1\r\n", body: body) + body
            } else {
                requests +=
                    "POST /v1/shape HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                var rest = Substring(body)
                while !rest.isEmpty {
                    let piece = rest.prefix(Int.random(in: 1...20, using: &generator))
                    rest = rest.dropFirst(piece.count)
                    let extensions = Bool.random(using: &generator) ? ";n=\(index)" : ""
                    requests += String(piece.utf8.count, radix: 16) + extensions + "\r\n" + piece + "\r\n"
                }
                requests += "0\r\n" + (Bool.random(using: &generator) ? "X-Note: \(index)\r\n" : "") + "\r\n"
            }
            expected.append(good ? "200" : "400")
        }
        // Last, a chunk too large: refused at once only if the guard followed every request before it.
        requests +=
            "POST /v1/shape HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "ffffffffffffffff\r\n" + Self.square
        expected.append("413")
        let connection = try RawConnection(port: try #require(server.base.port))
        var bytes = Substring(requests)
        while !bytes.isEmpty {
            let piece = bytes.prefix(Int.random(in: 1...40, using: &generator))
            bytes = bytes.dropFirst(piece.count)
            connection.send(String(piece))
            usleep(200)
        }
        let reply = connection.receiveUntilClosed().reply
        let statuses = reply.components(separatedBy: "HTTP/1.1 ").dropFirst().map { String($0.prefix(3)) }
        #expect(statuses == expected, "\(statuses.count) answers for \(expected.count) requests: \(statuses)")
    }

    /// `Expect: 100-continue` (curl's way with any body over 1 MiB): the head alone gets `100 Continue`, then the
    /// body its answer; a body the server will not read gets its 413 and no `100`; HTTP/1.0 gets no `100`; a second
    /// request on the connection gets its `100` after the first one's answer, never inside it.
    @Test func aClientThatWaitsForContinueGetsItBeforeItsBody() throws {
        let server = try ServerProcess(["--max-body", "4096"])
        let port = try #require(server.base.port)
        let expecting = { (length: Int, version: String) in
            "POST /v1/shape HTTP/\(version)\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Expect: 100-continue\r\nContent-Length: \(length)\r\n\r\n"
        }
        let waiting = try RawConnection(port: port)
        waiting.send(expecting(Self.square.utf8.count, "1.1"))
        let interim = waiting.receive(until: "\r\n\r\n")
        #expect(interim.hasPrefix("HTTP/1.1 100 Continue\r\n"), "\(interim)")
        waiting.send(Self.square)
        let answer = waiting.receive(until: "\"weights\"")
        #expect(answer.hasPrefix("HTTP/1.1 200 OK") && answer.contains("\"label\":\"square\""), "\(answer)")

        let large = try RawConnection(port: port)
        large.send(expecting(600_000, "1.1"))
        let refused = large.receive(until: "\"input\":\"request\"}")
        #expect(refused.hasPrefix("HTTP/1.1 413"), "\(refused)")
        #expect(!refused.contains("100 Continue"), "\(refused)")

        let old = try RawConnection(port: port)
        old.send(expecting(Self.square.utf8.count, "1.0") + Self.square)
        let (reply, _) = old.receiveUntilClosed()
        #expect(reply.hasPrefix("HTTP/1.1 200 OK") && !reply.contains("100 Continue"), "\(reply)")

        // A second request sent behind the first one's body: its 100 follows the first one's whole answer.
        let pipelined = try RawConnection(port: port)
        pipelined.send(expecting(Self.square.utf8.count, "1.1") + Self.square + expecting(Self.square.utf8.count, "1.1"))
        let continued = "HTTP/1.1 100 Continue\r\n\r\n"
        var replies = pipelined.receive(until: "}\n" + continued)
        #expect(replies.hasPrefix(continued + "HTTP/1.1 200 OK") && replies.hasSuffix("}\n" + continued), "\(replies)")
        #expect(replies.components(separatedBy: continued).count == 3, "\(replies)")
        pipelined.send(Self.square)
        replies = pipelined.receive(until: "\"weights\"")
        #expect(replies.hasPrefix("HTTP/1.1 200 OK"), "\(replies)")
    }

    /// A client that sends its whole body before it reads (Python's urllib, URLSession) sees the 413, not a
    /// broken pipe: the server reads and drops the body after answering.
    @Test func aBodyOverTheLimitIsAnsweredAndDrained() async throws {
        let server = try ServerProcess(["--max-body", "4096"])
        let answer = try await server.post("v1/shape", Data(repeating: UInt8(ascii: "1"), count: 600_000), type: "text/csv")
        #expect(answer.status == 413, "\(answer.body)")
        #expect(answer.body.contains("at most 4096 are read"), "\(answer.body)")
        #expect(try await server.post("v1/shape", Data(Self.square.utf8)).status == 200)
    }

    /// Bodies that trickle in hold no slot of `--max-requests`: a request whose body has arrived is answered
    /// meanwhile, and the trickling ones get 408 after `--timeout`.
    @Test func stalledBodiesHoldNoSlot() async throws {
        let server = try ServerProcess(["--max-requests", "1", "--timeout", "1"])
        let port = try #require(server.base.port)
        let head = "POST /v1/shape HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"strokes\""
        let stalled = try (0..<3).map { _ in try RawConnection(port: port) }
        for connection in stalled { connection.send(head) }
        let answer = try await server.post("v1/shape", Data(Self.square.utf8))
        #expect(answer.status == 200, "\(answer.body)")
        for connection in stalled {
            let reply = connection.receive()
            #expect(reply.hasPrefix("HTTP/1.1 408") && reply.contains("did not arrive within 1.0 s"), "\(reply.prefix(200))")
        }
    }

    @Test func optionsAndTLSFilesAreCheckedBeforeTheServerStarts() throws {
        for timeout in ["0", "0.0004", "1e-9"] {
            let run = try CommandRun.classifyAtRoot(["serve", "--port", "0", "--timeout", timeout])
            #expect(run.status == 64, "\(timeout): \(run.standardError)")
            #expect(run.standardError.contains("--timeout must be 0.001–3600 seconds"), "\(run.standardError)")
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("serve-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for name in ["a", "b"] {
            let openssl = Process()
            openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            openssl.arguments = [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=\(name)",
                "-keyout", folder.appendingPathComponent("\(name)-key.pem").path, "-out", folder.appendingPathComponent("\(name)-cert.pem").path,
            ]
            openssl.standardError = FileHandle.nullDevice
            try openssl.run()
            openssl.waitUntilExit()
            #expect(openssl.terminationStatus == 0)
        }
        let fifo = folder.appendingPathComponent("fifo.pem").path
        #expect(mkfifo(fifo, 0o644) == 0)
        let path = { (name: String) in folder.appendingPathComponent(name).path }
        let cases: [(cert: String, key: String, status: Int32, says: String)] = [
            (fifo, path("a-key.pem"), 65, "is not a regular file"),
            (path("a-cert.pem"), fifo, 65, "is not a regular file"),
            (path("missing.pem"), path("a-key.pem"), 66, "no such certificate file"),
            (path("a-cert.pem"), path("b-key.pem"), 65, "does not belong to the certificate"),
        ]
        for item in cases {
            let run = try CommandRun.classifyAtRoot(["serve", "--port", "0", "--tls-cert", item.cert, "--tls-key", item.key])
            #expect(run.status == item.status, "\(item.says): \(run.standardError)")
            #expect(run.standardError.contains(item.says), "\(run.standardError)")
        }
    }
}

extension RawConnection {
    /// What arrives until the server closes the connection (`closed`) or 30 s pass without a byte.
    func receiveUntilClosed() -> (reply: String, closed: Bool) {
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received: [UInt8] = [], buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return (String(decoding: received, as: UTF8.self), true) }
            if count < 0 { return (String(decoding: received, as: UTF8.self), errno == ECONNRESET) }
            received += buffer[0..<count]
        }
    }
}

/// This machine's first IPv4 address that is not loopback (a connection to it comes from it, not from 127.0.0.1),
/// or `nil` when it has none.
let nonLoopbackAddress: String? = {
    var list: UnsafeMutablePointer<ifaddrs>?
    guard getifaddrs(&list) == 0, let first = list else { return nil }
    defer { freeifaddrs(list) }
    var entry: UnsafeMutablePointer<ifaddrs>? = first
    while let current = entry {
        defer { entry = current.pointee.ifa_next }
        guard let address = current.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) else { continue }
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { ipv4 in
            var inAddress = ipv4.pointee.sin_addr
            _ = inet_ntop(AF_INET, &inAddress, &text, socklen_t(INET_ADDRSTRLEN))
        }
        let name = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if !name.hasPrefix("127.") { return name }
    }
    return nil
}()

/// One client address holds at most `--max-connections-per-client` connections (issue 46, M2); this machine's own
/// loopback clients are not limited.
@Suite("classify serve: connections per client")
struct ServeClientLimitTests {
    @Test func theCountOfEachAddressIsKept() {
        let clients = ClientConnections(limit: 2)
        #expect(clients.open("192.0.2.7") == .counted)
        #expect(clients.open("192.0.2.7") == .counted)
        #expect(clients.open("192.0.2.7") == .refused)
        #expect(clients.open("192.0.2.8") == .counted)
        #expect(clients.open("127.0.0.1") == .exempt && clients.open("::1") == .exempt && clients.open("::ffff:127.0.0.2") == .exempt)
        clients.close("192.0.2.7")
        #expect(clients.count("192.0.2.7") == 1)
        #expect(clients.open("192.0.2.7") == .counted)
    }

    @Test(.enabled(if: nonLoopbackAddress != nil, "no address but loopback"))
    func oneMoreConnectionFromAnAddressIsAnswered503() throws {
        let address = try #require(nonLoopbackAddress)
        let server = try ServerProcess(["--host", "0.0.0.0", "--max-connections-per-client", "2"])
        let port = try #require(server.base.port)
        let held = try (0..<2).map { _ in try RawConnection(port: port, address: address) }
        // The server counts a connection once it has taken it; a request on each makes sure it has.
        for connection in held {
            connection.send("GET / HTTP/1.1\r\nHost: \(address)\r\n\r\n")
            #expect(connection.receive(until: "</html>").hasPrefix("HTTP/1.1 200"))
        }
        let third = try RawConnection(port: port, address: address)
        third.send("GET / HTTP/1.1\r\nHost: \(address)\r\n\r\n")
        let refused = third.receiveUntilClosed()
        #expect(refused.reply.hasPrefix("HTTP/1.1 503") && refused.reply.contains("has 2 connections open already"), "\(refused.reply.prefix(300))")
        // Loopback is this machine's own: not limited.
        let local = try RawConnection(port: port)
        local.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        #expect(local.receiveUntilClosed().reply.hasPrefix("HTTP/1.1 200"))
    }
}
#endif
