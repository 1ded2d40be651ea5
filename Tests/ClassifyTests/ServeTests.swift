#if Serve
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `classify serve --port 0` started from the package root for one test, and ended (SIGTERM, then SIGKILL) when
/// the test is done.
final class ServerProcess: @unchecked Sendable {
    let process = Process()
    let base: URL
    private let output = Pipe(), errors = Pipe()

    init(_ arguments: [String] = []) throws {
        process.executableURL = CommandRun.builtClassify
        process.arguments = ["serve", "--port", "0"] + arguments
        process.currentDirectoryURL = packageRoot
        process.standardOutput = output
        process.standardError = errors
        _ = CommandRun.ignoreBrokenPipes
        try process.run()
        // The first line names the address: `classify serve: http://127.0.0.1:PORT/ (draw page), …`.
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let more = output.fileHandleForReading.availableData
            if more.isEmpty { break }
            line += more
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let match = text.firstMatch(of: /(https?:\/\/[^\/ ]+)\//), let url = URL(string: String(match.1)) else {
            process.stopAndWait()
            let problem = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "no address in \(text.debugDescription); stderr: \(problem)"])
        }
        base = url
    }

    deinit { process.stopAndWait() }

    /// Sends `body` to `path` and returns the status and the body of the answer.
    func post(_ path: String, _ body: Data, type: String? = "application/json") async throws -> (status: Int, body: String) {
        var request = URLRequest(url: base.appendingPathComponent(path))
        request.httpMethod = "POST"
        if let type { request.setValue(type, forHTTPHeaderField: "Content-Type") }
        request.httpBody = body
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? -1, String(decoding: data, as: UTF8.self))
    }

    func get(_ path: String) async throws -> (status: Int, body: String, type: String?) {
        let (data, response) = try await URLSession.shared.data(from: base.appendingPathComponent(path))
        let http = response as? HTTPURLResponse
        return (http?.statusCode ?? -1, String(decoding: data, as: UTF8.self), http?.value(forHTTPHeaderField: "Content-Type"))
    }
}

/// `--json` output as the server answers it: the weights file named without its folder.
func withoutWeightsFolder(_ json: String) -> String {
    json.replacing(/"weights":"[^"]*\/([^"\/]*)"/) { "\"weights\":\"\($0.1)\"" }
}

/// The JSON object of `text`.
func jsonObject(_ text: String) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text.prefix(300))")
}

/// `classify serve`: the API answers exactly what `--json` prints, refuses bad input with a 4xx and the CLI's
/// error object, and stays up; the pages are served.
@Suite("classify serve")
struct ServeTests {
    /// A circle of radius 100 round (300, 200), points every 6°, as JSON strokes.
    static let circleStrokes: Data = {
        let points = (0...60).map { i -> String in
            let angle = Double(i) * .pi / 30
            return "[\(300 + 100 * cos(angle)), \(200 + 100 * sin(angle))]"
        }
        return Data("{\"strokes\": [[\(points.joined(separator: ","))]]}".utf8)
    }()

    @Test func aDrawingCSVGetsExactlyWhatTheCLIPrints() async throws {
        let server = try ServerProcess()
        for example in ["star", "square", "other"] {
            let file = packageRoot.appendingPathComponent("Datasets/examples/\(example).csv")
            let answer = try await server.post("v1/shape", try Data(contentsOf: file), type: "text/csv")
            let cli = try CommandRun.classifyAtRoot(["shape", "Datasets/examples/\(example).csv", "--json"])
            #expect(answer.status == 200)
            #expect(answer.body == withoutWeightsFolder(cli.standardOutput))
        }
        let star = try jsonObject(
            try await server.post("v1/shape", Data(contentsOf: packageRoot.appendingPathComponent("Datasets/examples/star.csv")), type: "text/csv")
                .body)
        let fitted = try #require(star["fitted"] as? [String: Any])
        #expect(fitted["shape"] as? String == "star")
        #expect((fitted["points"] as? [[Double]])?.count == 10)
        let other = try jsonObject(
            try await server.post("v1/shape", Data(contentsOf: packageRoot.appendingPathComponent("Datasets/examples/other.csv")), type: "text/csv")
                .body)
        #expect(other["label"] as? String == "unknown")
        #expect(other["fitted"] == nil)
    }

    @Test func jsonStrokesGiveTheLabelAndTheFittedCircle() async throws {
        let server = try ServerProcess()
        let answer = try await server.post("v1/shape", Self.circleStrokes)
        #expect(answer.status == 200, "\(answer.body)")
        let object = try jsonObject(answer.body)
        #expect(object["label"] as? String == "circle")
        let fitted = try #require(object["fitted"] as? [String: Any])
        #expect(fitted["shape"] as? String == "ellipse")
        let centre = try #require(fitted["centre"] as? [Double]), radii = try #require(fitted["radii"] as? [Double])
        #expect(abs(centre[0] - 300) < 1 && abs(centre[1] - 200) < 1, "\(centre)")
        #expect(radii.allSatisfy { abs($0 - 100) < 1 }, "\(radii)")
        #expect(try #require(fitted["neatness"] as? Double) > 0.95)
        // curl's default type (-d) and no type at all are read by the body's first character.
        let untyped = try await server.post("v1/shape", Self.circleStrokes, type: nil)
        #expect(untyped.body == answer.body)
        let form = try await server.post("v1/shape", Self.circleStrokes, type: "application/x-www-form-urlencoded")
        #expect(form.body == answer.body)
    }

    @Test func badInputIsA4xxWithTheCLIsErrorObjectAndTheServerStaysUp() async throws {
        let server = try ServerProcess(["--max-body", "4096"])
        let cases: [(body: String, type: String?, status: Int, says: String)] = [
            ("{\"strokes\": [[[1, 2], [3", "application/json", 400, "not {\"strokes\""),
            ("{\"points\": []}", "application/json", 400, "strokes"),
            ("{\"strokes\": [[[1, 2], [3]]]}", "application/json", 422, "strokes[0][1] has 1 numbers"),
            ("{\"strokes\": [[[1, 2], [1e300, 5], [4, 9]]]}", "application/json", 422, "strokes[0][1] x"),
            ("{\"strokes\": []}", "application/json", 422, "no points"),
            ("{\"strokes\": [[[1, 1], [1, 1], [1, 1]]]}", "application/json", 422, "request"),
            ("x,y\n1,2\n3,nan\n", "text/csv", 422, "request:3: column 2 (y)"),
            ("a,b\n1,2\n", "text/csv", 422, "x"),
            ("GIF89a", "image/gif", 415, "Content-Type image/gif"),
            (String(repeating: "1,2\n", count: 2000), "text/csv", 413, "4096"),
        ]
        for item in cases {
            let answer = try await server.post("v1/shape", Data(item.body.utf8), type: item.type)
            #expect(answer.status == item.status, "\(item.body.prefix(40)): \(answer.body)")
            let object = try jsonObject(answer.body)
            #expect(object["input"] as? String == "request")
            #expect(object["exit"] as? Int == 65)
            #expect((object["error"] as? String)?.contains(item.says) == true, "\(answer.body)")
        }
        let motion = try await server.post("v1/motion", Data("timestamp,acc.x,acc.y,acc.z\n0,0,0,1\n0.02,0,0,1\n".utf8), type: "text/csv")
        #expect(motion.status == 422, "\(motion.body)")
        #expect((try jsonObject(motion.body)["error"] as? String)?.contains("window") == true, "\(motion.body)")
        // `?name=` (the motion page sends an uploaded file's name) names the body in its errors, without a folder;
        // a name that is not printable stays `request`.
        for (name, shown) in [("walk%20copy.csv", "walk copy.csv"), ("..%2F..%2Fetc%2Fpasswd", "passwd"), ("a%0Ab.csv", "request")] {
            var request = URLRequest(url: try #require(URL(string: server.base.absoluteString + "/v1/motion?name=" + name)))
            (request.httpMethod, request.httpBody) = ("POST", Data("timestamp,acc.x\n0,1\n".utf8))
            request.setValue("text/csv", forHTTPHeaderField: "Content-Type")
            let (data, _) = try await URLSession.shared.data(for: request)
            let error = try jsonObject(String(decoding: data, as: UTF8.self))["error"] as? String
            #expect(error?.hasPrefix("\(shown):1: missing columns") == true, "\(name): \(error ?? "nil")")
        }
        // Still answering.
        #expect(try await server.post("v1/shape", Self.circleStrokes).status == 200)
        #expect(server.process.isRunning)
    }

    @Test func aRecordingGetsExactlyWhatTheCLIPrintsAsCSVOrJSONSamples() async throws {
        let server = try ServerProcess()
        let file = packageRoot.appendingPathComponent("Datasets/examples/walking.csv")
        let answer = try await server.post("v1/motion", try Data(contentsOf: file), type: "text/csv")
        let cli = try CommandRun.classifyAtRoot(["motion", "Datasets/examples/walking.csv", "--json"])
        #expect(answer.status == 200)
        #expect(answer.body == withoutWeightsFolder(cli.standardOutput))
        // The same rows as JSON samples, keyed by the CSV's columns.
        let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
        let header = lines[0].split(separator: ",").map(String.init)
        let samples = lines.dropFirst().map { line in
            "{" + zip(header, line.split(separator: ",")).map { "\"\($0)\": \($1)" }.joined(separator: ", ") + "}"
        }
        let json = try await server.post("v1/motion", Data("{\"samples\": [\(samples.joined(separator: ","))]}".utf8))
        #expect(json.status == 200, "\(json.body.prefix(300))")
        let object = try jsonObject(json.body)
        #expect(object["label"] as? String == "walking")
        #expect((object["windows"] as? [Any])?.count == (try jsonObject(cli.standardOutput)["windows"] as? [Any])?.count)
    }

    @Test func manyRequestsAtOnceAreEachAnswered() async throws {
        let server = try ServerProcess()
        let expected = try await server.post("v1/shape", Self.circleStrokes).body
        let answers = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for _ in 0..<64 { group.addTask { try await server.post("v1/shape", Self.circleStrokes) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.count == 64)
        #expect(answers.allSatisfy { $0.0 == 200 && $0.1 == expected })
    }

    @Test func thePagesAreServed() async throws {
        let server = try ServerProcess()
        let draw = try await server.get("")
        #expect(draw.status == 200 && draw.type?.hasPrefix("text/html") == true)
        #expect(draw.body.contains("<canvas id=\"pad\"") && draw.body.contains("aria-live=\"polite\""))
        let motion = try await server.get("motion")
        #expect(motion.status == 200 && motion.body.contains("type=\"file\""))
        for script in ["draw.js", "motion.js"] {
            let page = try await server.get(script)
            #expect(page.status == 200 && page.type?.hasPrefix("text/javascript") == true && page.body.contains("fetch(\"/v1/"))
        }
        #expect(try await server.get("no-such-page").status == 404)
        // What the pages read of the served models: their names and classes (no `unknown`).
        let models = try await server.get("v1/models")
        #expect(models.status == 200 && models.type?.hasPrefix("application/json") == true)
        #expect(
            models.body
                == "{\"maxBody\":4194304,\"motion\":{\"labels\":[\"walking\",\"running\",\"still\"],\"model\":\"motion-state.int8\",\"weights\":\"motion-state.int8.weights\"},"
                + "\"shape\":{\"labels\":[\"circle\",\"triangle\",\"square\",\"star\"],\"model\":\"shape-classifier.int8\",\"weights\":\"shape-classifier.int8.weights\"}}",
            "\(models.body)")
    }

    @Test func badOptionsAreUsageErrors() throws {
        for arguments in [["--port", "70000"], ["--tls-cert", "a.pem"], ["--json"], ["--max-body", "10"]] {
            let run = try CommandRun.classifyAtRoot(["serve"] + arguments)
            #expect(run.status == 64, "\(arguments): \(run.standardError)")
        }
        let missing = try CommandRun.classifyAtRoot(["serve", "--port", "0", "--tls-cert", "no.pem", "--tls-key", "no.key"])
        #expect(missing.status == 66, "\(missing.standardError)")
        #expect(missing.standardError.contains("no.pem"))
    }
}

/// A plain TCP connection to 127.0.0.1, for requests no HTTP client sends (a body that stops halfway).
final class RawConnection {
    let descriptor: Int32

    init(port: Int, address: String = "127.0.0.1") throws {
        #if canImport(Glibc)
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        let host = address
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr(host)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard descriptor >= 0, connected == 0 else {
            close(descriptor)
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot connect to port \(port)"])
        }
    }

    deinit { close(descriptor) }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    /// What arrives until `marker` has arrived, the server closes the connection, or 30 s pass without a byte.
    func receive(until marker: String) -> String {
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received: [UInt8] = [], buffer = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: received, as: UTF8.self).contains(marker) {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// What arrives until the server closes the connection or 30 s pass without a byte.
    func receive() -> String {
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received: [UInt8] = [], buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            received += buffer[0..<count]
            if String(decoding: received, as: UTF8.self).contains("\"input\":\"request\"}") { break }
        }
        return String(decoding: received, as: UTF8.self)
    }
}
#endif
