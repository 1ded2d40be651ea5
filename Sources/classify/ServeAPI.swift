import DataFiles
import Foundation
import Hummingbird
import Models
import Synchronization

/// What one request may cost the server.
struct ServeLimits: Sendable {
    /// The largest body, in bytes.
    let maxBody: Int
    /// How many API requests are answered at once.
    let maxRequests: Int
    /// Seconds a body may take to arrive.
    let timeout: Double
}

/// The routes of `classify serve`: the pages, and the JSON API that answers exactly what `--json` prints.
struct ServeAPI: Sendable {
    let shape: ShapeRecognizer
    /// The shape weights' path or `built-in`, as `--json` names them.
    let shapeWeights: String?
    let motion: MotionRecognizer
    let motionWeights: String?
    /// Samples per second of a recording without timestamps, unless the request's `?rate=` says otherwise.
    let assumedRate: Double
    let limits: ServeLimits
    /// API requests being answered now.
    private let inFlight = InFlight()

    init(
        shape: ShapeRecognizer, shapeWeights: String?, motion: MotionRecognizer, motionWeights: String?, assumedRate: Double,
        limits: ServeLimits
    ) {
        (self.shape, self.shapeWeights, self.motion, self.motionWeights) = (shape, shapeWeights, motion, motionWeights)
        (self.assumedRate, self.limits) = (assumedRate, limits)
    }

    /// A failed request: its HTTP status and the CLI's JSON error object.
    struct Failure: Error {
        let status: HTTPResponse.Status
        let message: String
        let exit: Int32

        init(_ status: HTTPResponse.Status, _ message: String, exit: Int32 = ExitStatus.dataError) {
            (self.status, self.message, self.exit) = (status, message, exit)
        }
    }

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        let pages: [(path: RouterPath, bytes: [UInt8], type: String)] = [
            ("/", PackageResources.draw_html, "text/html; charset=utf-8"),
            ("/motion", PackageResources.motion_html, "text/html; charset=utf-8"),
            ("/style.css", PackageResources.style_css, "text/css; charset=utf-8"),
            ("/draw.js", PackageResources.draw_js, "text/javascript; charset=utf-8"),
            ("/motion.js", PackageResources.motion_js, "text/javascript; charset=utf-8"),
        ]
        for page in pages {
            let body = ByteBuffer(bytes: page.bytes)
            router.get(page.path) { _, _ in
                Response(
                    status: .ok,
                    headers: [
                        .contentType: page.type, .cacheControl: "no-cache",
                        .contentSecurityPolicy: "default-src 'self'; img-src 'self' data:; object-src 'none'; frame-ancestors 'none'",
                        .init("X-Content-Type-Options")!: "nosniff",
                    ],
                    body: .init(byteBuffer: body))
            }
        }
        router.post("/v1/shape") { request, _ in await answer(request) { body, isCSV, _ in try shapeJSON(body, isCSV: isCSV) } }
        router.post("/v1/motion") { request, _ in
            await answer(request) { body, isCSV, query in try motionJSON(body, isCSV: isCSV, rate: query) }
        }
        return router
    }

    /// Reads the body within the limits, answers it with `work` (body, whether it is CSV, `?rate=`), and turns any
    /// failure into its status and JSON error object.
    private func answer(
        _ request: Request, _ work: @Sendable (Data, Bool, String?) throws -> String
    ) async -> Response {
        guard inFlight.enter(limit: limits.maxRequests) else {
            return response(Failure(.serviceUnavailable, "the server is answering \(limits.maxRequests) requests already; try again", exit: 75))
        }
        defer { inFlight.leave() }
        do {
            let type = request.headers[.contentType]?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            // No type, or curl's default for -d: JSON when the body starts with `{`, else CSV.
            var isCSV: Bool?
            switch type {
            case "text/csv", "text/plain": isCSV = true
            case "application/json": isCSV = false
            case nil, "application/x-www-form-urlencoded": isCSV = nil
            case let other?: throw Failure(.unsupportedMediaType, "Content-Type \(other) is not read: send application/json or text/csv")
            }
            if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limits.maxBody {
                throw Failure(.contentTooLarge, "the body is \(length) bytes; at most \(limits.maxBody) are read (--max-body)")
            }
            let body = try await collect(request.body)
            let first = body.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
            let csv = isCSV ?? (first != UInt8(ascii: "{"))
            let rate = request.uri.queryParameters.get("rate")
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: try work(body, csv, rate) + "\n")))
        } catch let failure as Failure {
            return response(failure)
        } catch {
            return response(Failure(.internalServerError, "\(error)", exit: ExitStatus.software))
        }
    }

    /// The body, up to `maxBody` bytes, within `timeout` seconds.
    private func collect(_ body: RequestBody) async throws(Failure) -> Data {
        let (maxBody, timeout) = (limits.maxBody, limits.timeout)
        do {
            return try await withThrowingTaskGroup(of: Data?.self) { group in
                group.addTask {
                    var buffer = try await body.collect(upTo: maxBody)
                    return buffer.readData(length: buffer.readableBytes) ?? Data()
                }
                group.addTask {
                    try await Task.sleep(nanoseconds: UInt64(timeout * 1e9))
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let data = first else {
                    throw Failure(.requestTimeout, "the body did not arrive within \(timeout) s (--timeout)")
                }
                return data
            }
        } catch let failure as Failure {
            throw failure
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            throw Failure(.contentTooLarge, "the body is over \(maxBody) bytes (--max-body)")
        } catch {
            throw Failure(.badRequest, "the body could not be read: \(error)")
        }
    }

    private func response(_ failure: Failure) -> Response {
        var headers: HTTPFields = [.contentType: "application/json"]
        if failure.status == .serviceUnavailable { headers[.retryAfter] = "1" }
        let json = jsonText(ErrorLineJSON(input: "request", error: failure.message, exit: failure.exit))
        return Response(status: failure.status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: json + "\n")))
    }

    // MARK: Shapes

    /// `{"strokes": [[[x, y], [x, y, t], …], …]}`.
    struct ShapeRequest: Decodable {
        let strokes: [[[Double]]]
    }

    /// The drawing in the body (JSON strokes or a drawing CSV), answered as `classify shape FILE --json` prints it.
    func shapeJSON(_ body: Data, isCSV: Bool) throws(Failure) -> String {
        let drawing: Drawing
        do {
            if isCSV {
                drawing = try DrawingReader.read(csv: body, name: "request")
            } else {
                drawing = try Self.drawing(fromJSON: body)
            }
            if let problem = ShapeRecognizer.problem(with: drawing) { throw DataError(file: "request", message: problem) }
        } catch let error as Failure {
            throw error
        } catch let error as DataError {
            throw Failure(.unprocessableContent, error.description, exit: ExitStatus.code(for: error))
        } catch {
            throw Failure(.badRequest, "\(error)")
        }
        let answer: ShapeAnswer
        do {
            answer = try shape.recognize(drawing)
        } catch {
            throw Failure(.unprocessableContent, error.description, exit: ExitStatus.code(for: error))
        }
        return ShapeJSON(answer, fitted: answer.fitted(to: drawing), weights: shapeWeights).text
    }

    /// The drawing of a JSON body, checked point by point as a drawing file is.
    static func drawing(fromJSON body: Data) throws -> Drawing {
        let request: ShapeRequest
        do {
            request = try JSONDecoder().decode(ShapeRequest.self, from: body)
        } catch {
            throw Failure(.badRequest, "the body is not {\"strokes\": [[[x, y], …], …]}: \(jsonProblem(error))")
        }
        var strokes: [[DrawingPoint]] = []
        var count = 0
        for (s, stroke) in request.strokes.enumerated() where !stroke.isEmpty {
            var points: [DrawingPoint] = []
            for (p, point) in stroke.enumerated() {
                guard point.count == 2 || point.count == 3 else {
                    throw DataError(file: "request", message: "strokes[\(s)][\(p)] has \(point.count) numbers; a point is [x, y] or [x, y, t]")
                }
                for (name, value) in zip(["x", "y"], point.prefix(2)) {
                    if let problem = Drawing.coordinateProblem(value) {
                        throw DataError(file: "request", message: "strokes[\(s)][\(p)] \(name): \(problem)")
                    }
                }
                points.append(DrawingPoint(x: point[0], y: point[1], t: point.count == 3 ? point[2] : nil))
            }
            count += points.count
            if count > DrawingReader.maximumPoints {
                throw DataError(file: "request", message: "more than \(DrawingReader.maximumPoints) points; is this one drawing?")
            }
            strokes.append(points)
        }
        guard count > 0 else { throw DataError(file: "request", message: "no points: give at least one stroke with points") }
        return Drawing(strokes: strokes)
    }

    // MARK: Motion

    /// `{"samples": [{"timestamp": s, "acc.x": g, …}, …]}`: a recording file's rows, its columns as keys.
    struct MotionRequest: Decodable {
        let samples: [[String: Double]]
    }

    /// The recording in the body (CSV, or JSON samples turned into that CSV's rows), answered as
    /// `classify motion FILE --json` prints it.
    func motionJSON(_ body: Data, isCSV: Bool, rate rateText: String?) throws(Failure) -> String {
        var rate = assumedRate
        if let rateText {
            guard let value = Double(rateText), value > 0, value <= 10_000 else {
                throw Failure(.badRequest, "?rate=\(rateText) is not a sample rate between 0 and 10000 Hz")
            }
            rate = value
        }
        let csv: Data
        if isCSV {
            csv = body
        } else {
            csv = try Self.csv(fromJSON: body)
        }
        let windowing = motion.windowing
        do {
            let recording = try MotionRecordingReader.read(
                csv: csv, name: isCSV ? "request" : "request (samples[i] is line i+2)", assumedRate: rate, rate: windowing.rate,
                window: windowing.window)
            let timeline = try motion.recognize(recording)
            return MotionJSON(timeline: timeline, model: motion.model, weights: motionWeights, attempts: motion.attempts, notes: recording.notes)
                .text
        } catch {
            throw Failure(.unprocessableContent, error.description, exit: ExitStatus.code(for: error))
        }
    }

    /// JSON samples as the CSV a recording file holds: the first sample's keys are the header (every sample has
    /// the same keys).
    static func csv(fromJSON body: Data) throws(Failure) -> Data {
        let request: MotionRequest
        do {
            request = try JSONDecoder().decode(MotionRequest.self, from: body)
        } catch {
            throw Failure(.badRequest, "the body is not {\"samples\": [{\"timestamp\": s, \"acc.x\": g, …}, …]}: \(jsonProblem(error))")
        }
        guard let first = request.samples.first else { throw Failure(.unprocessableContent, "request: no samples") }
        let columns = first.keys.sorted()
        var text = columns.joined(separator: ",") + "\n"
        for (i, sample) in request.samples.enumerated() {
            guard sample.count == columns.count, columns.allSatisfy({ sample[$0] != nil }) else {
                throw Failure(
                    .unprocessableContent, "request: samples[\(i)] has keys \(sample.keys.sorted()); every sample needs \(columns)")
            }
            text += columns.map { "\(sample[$0] ?? 0)" }.joined(separator: ",") + "\n"
        }
        return Data(text.utf8)
    }
}

/// What JSONDecoder found wrong, in a line: where and what.
private func jsonProblem(_ error: any Error) -> String {
    guard let error = error as? DecodingError else { return "\(error)" }
    func path(_ context: DecodingError.Context) -> String {
        let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return keys.isEmpty ? "" : "at \(keys): "
    }
    switch error {
    case let .typeMismatch(_, context), let .valueNotFound(_, context), let .keyNotFound(_, context), let .dataCorrupted(context):
        return path(context) + context.debugDescription
    @unknown default: return "\(error)"
    }
}

/// A count of requests being answered, with a ceiling.
private final class InFlight: Sendable {
    private let count = Mutex(0)

    /// Counts one more request, unless `limit` are being answered already.
    func enter(limit: Int) -> Bool {
        count.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
    }

    func leave() { count.withLock { $0 -= 1 } }
}
