#if Serve
import Foundation
import Models
import SignalTask
import Testing

@testable import classify

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The third task (Tests/SignalTask) served by `classify serve`'s own server, in this process: its route is one value
/// in `ServeAPI`'s list (`APIRoute.json`), behind the same gate, limits and error objects as the built-in tasks'.
@Suite("A third task served")
struct ThirdTaskServeTests {
    /// The route answers a signal as the library does, refuses a body that is not its input (400), an input the
    /// recognizer refuses (422, its error) and CSV (415); the built-in routes answer beside it, and the gate knows
    /// the new path (GET is 405, not 404).
    @Test func itsRouteAnswersAsTheLibraryDoes() async throws {
        let recognizer = try SignalRecognizer.load(source: SignalModel.Source(files: ["signal-waves.int8": try SignalModel.files().int8]))
        let serve = try Serve.parse(["--port", "0", "--timeout", "5"])
        let api = ServeAPI(
            shape: .ruleOnly, shapeWeights: nil, motion: .ruleOnly, motionWeights: nil, assumedRate: 50,
            limits: .init(maxBody: 1 << 20, maxRequests: 4, timeout: 5), live: LiveMotionSessions(limit: 1, idle: 60),
            otherRoutes: [.json("/v1/signal", recognizer)])
        #expect(api.methods["/v1/signal"] == [.post] && api.routes.map(\.path) == ["/v1/shape", "/v1/motion", "/v1/motion/live", "/v1/signal"])
        let (ports, portFound) = AsyncStream<Int>.makeStream()
        let app = Serve.application(api, server: try serve.httpServer(), host: "127.0.0.1", port: 0, timeout: 5) { portFound.yield($0) }
        // A server that cannot start ends the stream: the test fails at once instead of waiting for a port.
        let server = Task {
            do { try await app.runService() } catch { portFound.finish() }
        }
        defer { server.cancel() }
        var next = ports.makeAsyncIterator()
        let port = try #require(await next.next(), "the server did not start")
        let base = try #require(URL(string: "http://127.0.0.1:\(port)"))

        func post(_ path: String, _ body: String, type: String = "application/json") async throws -> (status: Int, body: String) {
            var request = URLRequest(url: base.appendingPathComponent(path))
            request.httpMethod = "POST"
            request.setValue(type, forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(body.utf8)
            let (data, response) = try await URLSession.shared.data(for: request)
            return ((response as? HTTPURLResponse)?.statusCode ?? -1, String(decoding: data, as: UTF8.self))
        }

        for (label, signal) in SignalModel.testSignals(count: 2, seed: 51) {
            let answered = try await post("/v1/signal", "{\"input\": [\(signal.map { "\($0)" }.joined(separator: ","))]}")
            let expected = try recognizer.recognize(signal)
            #expect(answered.status == 200, "\(answered.body)")
            #expect(answered.body == jsonText(expected) + "\n")
            #expect(expected.label == label, "\(expected)")
        }
        let short = try await post("/v1/signal", "{\"input\": [1, 2, 3]}")
        #expect(short.status == 422 && short.body.contains("the signal has 3 samples; one window needs 32"), "\(short.body)")
        let notInput = try await post("/v1/signal", "{\"signal\": [1, 2, 3]}")
        #expect(notInput.status == 400 && notInput.body.contains("no member \\\"input\\\" (at the top level)"), "\(notInput.body)")
        let wrongType = try await post("/v1/signal", "{\"input\": [1, \"two\"]}")
        #expect(wrongType.status == 400 && wrongType.body.contains("(at .input[1])"), "\(wrongType.body)")
        let csv = try await post("/v1/signal", "1\n2\n", type: "text/csv")
        #expect(csv.status == 415, "\(csv.body)")
        let shape = try await post("/v1/shape", String(decoding: ServeTests.circleStrokes, as: UTF8.self))
        #expect(shape.status == 200 && shape.body.contains("\"label\":\"circle\""), "\(shape.body)")
        let (_, get) = try await URLSession.shared.data(from: base.appendingPathComponent("/v1/signal"))
        #expect((get as? HTTPURLResponse)?.statusCode == 405)
    }
}
#endif
