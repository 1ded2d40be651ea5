#if Serve
import DataFiles
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Models
import Synchronization
import Tensor

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
    /// API requests being answered now (their bodies arrived).
    private let inFlight = InFlight()
    /// Where large bodies are parsed and recognized: a worker per core, and a line of two per core.
    private let queue = ServeQueue(workers: Parallel.defaultThreads, waiting: 2 * Parallel.defaultThreads)
    /// The live motion sessions (`POST /v1/motion/live`).
    let live: LiveMotionSessions
    /// Routes of other tasks, served after the built-in ones.
    let otherRoutes: [APIRoute]

    init(
        shape: ShapeRecognizer, shapeWeights: String?, motion: MotionRecognizer, motionWeights: String?, assumedRate: Double,
        limits: ServeLimits, live: LiveMotionSessions, otherRoutes: [APIRoute] = []
    ) {
        (self.shape, self.shapeWeights, self.motion, self.motionWeights) = (shape, shapeWeights, motion, motionWeights)
        (self.assumedRate, self.limits, self.live, self.otherRoutes) = (assumedRate, limits, live, otherRoutes)
        let paths = getPaths.map(\.path) + routes.map(\.path)
        precondition(Set(paths).count == paths.count, "ServeAPI: a route repeats a path of \(paths)")
        // The gate looks paths up as written; the router would read `:x`, `*` and `{x}` as parameters.
        for path in paths {
            precondition(path.hasPrefix("/") && !path.contains(where: { ":*{}".contains($0) }), "ServeAPI: route path \(path) is not a literal path")
        }
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

    /// `X-Max-Body`: `--max-body`, in every API answer.
    private static let maxBodyField = fieldName("X-Max-Body")

    /// `X-Content-Type-Options`.
    private static let contentTypeOptions = fieldName("X-Content-Type-Options")

    /// The header field `name`, which must be a valid field name (a literal of this file).
    private static func fieldName(_ name: String) -> HTTPField.Name {
        guard let field = HTTPField.Name(name) else { preconditionFailure("\(name) is not an HTTP field name") }
        return field
    }

    /// The pages: path, bytes and content type.
    private static let pages: [(path: String, bytes: [UInt8], type: String)] = [
        ("/", PackageResources.draw_html, "text/html; charset=utf-8"),
        ("/motion", PackageResources.motion_html, "text/html; charset=utf-8"),
        ("/style.css", PackageResources.style_css, "text/css; charset=utf-8"),
        ("/draw.js", PackageResources.draw_js, "text/javascript; charset=utf-8"),
        ("/motion.js", PackageResources.motion_js, "text/javascript; charset=utf-8"),
    ]

    /// The API: the built-in tasks' routes, then `otherRoutes`.
    var routes: [APIRoute] {
        [
            APIRoute(path: "/v1/shape") { body, isCSV, uri in
                try shapeJSON(body, isCSV: isCSV, name: Self.bodyName(uri.queryParameters.get("name")))
            },
            APIRoute(path: "/v1/motion") { body, isCSV, uri in
                let query = uri.queryParameters
                return Array(try motionJSON(body, isCSV: isCSV, rate: query.get("rate"), name: Self.bodyName(query.get("name"))).utf8)
            },
            APIRoute(path: "/v1/motion/live") { body, isCSV, uri in
                guard !isCSV else { throw Failure(.unsupportedMediaType, "a live session takes JSON samples: send application/json") }
                let query = uri.queryParameters
                let end = query.get("end").map { $0 == "1" || $0 == "true" } ?? false
                return try liveMotionJSON(body, session: query.get("session"), end: end)
            },
        ] + otherRoutes
    }

    /// What the pages show of the served models and read of the server: `GET /v1/models`, so that a page of a
    /// model trained on other classes asks for those, and a file over `--max-body` is refused before it is sent
    /// (`{"maxBody": n, "motion": {"labels": […], "model": …, "weights": …}, "shape": {…}}`; the labels are the
    /// classes, without `unknown`).
    var modelsJSON: String {
        func entry(_ model: String, _ weights: String?, _ labels: [String]) -> ServedModelsJSON.Model {
            .init(model: modelName(model), weights: weights, labels: labels.filter { $0 != DecisionRule.unknownLabel })
        }
        return jsonText(
            ServedModelsJSON(
                shape: entry(shape.model, shapeWeights, shape.answerLabels), motion: entry(motion.model, motionWeights, motion.answerLabels),
                maxBody: limits.maxBody))
    }

    /// The pages, and what the pages read (`/v1/models`): path, bytes and content type.
    var getPaths: [(path: String, bytes: [UInt8], type: String)] {
        Self.pages + [("/v1/models", Array(modelsJSON.utf8), "application/json")]
    }

    /// The paths the router serves and the methods each takes (the gate answers others with 405).
    var methods: [String: [HTTPRequest.Method]] {
        Dictionary(uniqueKeysWithValues: getPaths.map { ($0.path, [.get]) } + routes.map { ($0.path, [.post]) })
    }

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        for page in getPaths {
            let body = ByteBuffer(bytes: page.bytes)
            router.get(RouterPath(page.path)) { _, _ in
                Response(
                    status: .ok,
                    headers: [
                        .contentType: page.type, .cacheControl: "no-cache",
                        .contentSecurityPolicy: "default-src 'self'; img-src 'self' data:; object-src 'none'; frame-ancestors 'none'",
                        Self.contentTypeOptions: "nosniff",
                    ],
                    body: .init(byteBuffer: body))
            }
        }
        for route in routes {
            router.post(RouterPath(route.path)) { request, _ in await answer(request, route.answer) }
        }
        return router
    }

    /// Reads the body within the limits, answers it with `work` (body, whether it is CSV, `?rate=`), and turns any
    /// failure into its status and JSON error object.
    ///
    /// A request counts against `--max-requests` only once its body has arrived: connections that trickle a body
    /// in hold no slot (they get 408 after `--timeout`). A body over `lightBody` bytes is parsed and recognized on
    /// the `queue`'s workers, off the tasks that serve every connection; when they are all busy and their line is
    /// full, 503 at once.
    private func answer(
        _ request: Request, _ work: @escaping @Sendable (Data, Bool, URI) throws -> [UInt8]
    ) async -> Response {
        var response = await reply(request, work)
        // Every answer says how large a body may be, for clients that send large ones.
        response.headers[Self.maxBodyField] = "\(limits.maxBody)"
        return response
    }

    /// `answer`'s response, without the header every answer carries.
    private func reply(
        _ request: Request, _ work: @escaping @Sendable (Data, Bool, URI) throws -> [UInt8]
    ) async -> Response {
        do {
            let type = request.headers[.contentType].map(Self.mediaType)
            // No type, or curl's default for -d: JSON when the body starts with `{`, else CSV.
            var isCSV: Bool?
            switch type {
            case "text/csv", "text/plain": isCSV = true
            case "application/json": isCSV = false
            case nil, "application/x-www-form-urlencoded": isCSV = nil
            case let other?: throw Failure(.unsupportedMediaType, "Content-Type \(other) is not read: send application/json or text/csv")
            }
            if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limits.maxBody {
                return tooLarge(request, length: length)
            }
            let body = try await collect(request.body)
            guard inFlight.enter(limit: limits.maxRequests) else {
                throw Failure(.serviceUnavailable, "the server is answering \(limits.maxRequests) requests already; try again", exit: 75)
            }
            defer { inFlight.leave() }
            let first = body.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
            let csv = isCSV ?? (first != UInt8(ascii: "{"))
            let uri = request.uri
            let answer: @Sendable () -> Result<[UInt8], Failure> = {
                do {
                    return .success(try work(body, csv, uri))
                } catch let failure as Failure {
                    return .failure(failure)
                } catch {
                    return .failure(Failure(.internalServerError, "\(error)", exit: ExitStatus.software))
                }
            }
            let result: Result<[UInt8], Failure>
            if body.count <= Self.lightBody {
                result = answer()
            } else if let queued = await queue.run(answer) {
                result = queued
            } else {
                throw Failure(
                    .serviceUnavailable,
                    "the server is busy with \(queue.workers + queue.waiting) large requests; try again", exit: 75)
            }
            var bytes = ByteBuffer(bytes: try result.get())
            bytes.writeInteger(UInt8(ascii: "\n"))
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: bytes))
        } catch let failure as Failure {
            return response(failure)
        } catch {
            return response(Failure(.internalServerError, "\(error)", exit: ExitStatus.software))
        }
    }

    /// The media type of a `Content-Type` value, lowercased: `text/csv` of ` Text/CSV; charset=utf-8`.
    static func mediaType(_ value: String) -> String {
        let type = value.utf8.prefix { $0 != UInt8(ascii: ";") }
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = type.firstIndex(where: { !isSpace($0) }), let last = type.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(decoding: type[first...last], as: UTF8.self).lowercased()
    }

    /// The largest body answered on the task that read it (a drawing of a few thousand points: well under a
    /// millisecond of work); larger ones wait for the queue.
    static let lightBody = 64 << 10

    /// The 413 for a body that says it is over `--max-body`: answered at once, the body dropped after it
    /// (`ServeGate.closing`).
    private func tooLarge(_ request: Request, length: Int) -> Response {
        let refusal = ServeReply.failure(
            .contentTooLarge, "the body is \(length) bytes; at most \(limits.maxBody) are read (--max-body)")
        return ServeReply.closing(refusal.response, json: refusal.json, request: request, timeout: limits.timeout)
    }

    /// The body, up to `maxBody` bytes, within `timeout` seconds (which the connection's `BodyDeadline` keeps).
    private func collect(_ body: RequestBody) async throws(Failure) -> Data {
        let maxBody = limits.maxBody
        do {
            var buffer = try await body.collect(upTo: maxBody)
            return buffer.readData(length: buffer.readableBytes) ?? Data()
        } catch let error as BodyDeadline.TimedOut {
            throw Failure(.requestTimeout, error.description)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            throw Failure(.contentTooLarge, "the body is over \(maxBody) bytes (--max-body)")
        } catch let error as ChunkSizeGuard.ChunkTooLarge {
            throw Failure(.contentTooLarge, error.description)
        } catch {
            throw Failure(.badRequest, "the body could not be read: \(error)")
        }
    }

    private func response(_ failure: Failure) -> Response {
        var response = ServeReply.failure(failure.status, failure.message, exit: failure.exit).response
        if failure.status == .serviceUnavailable { response.headers[.retryAfter] = "1" }
        // A body refused part way (over --max-body as it arrived, or a chunk that says it is) is not read on: the
        // connection cannot carry another request.
        if failure.status == .contentTooLarge { response.headers[.connection] = "close" }
        return response
    }

    /// The name a CSV body's errors give it: `?name=` (the uploaded file's name, which the pages send), without a
    /// folder, printable and at most 100 characters; `request` otherwise.
    static func bodyName(_ given: String?) -> String {
        guard let given else { return "request" }
        let name = String(given.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last ?? "")
        let printable = name.unicodeScalars.allSatisfy { $0.properties.generalCategory != .control && $0 != ":" }
        return !name.isEmpty && name.count <= 100 && printable ? name : "request"
    }

    /// A body that could not be read as a drawing or recording: a `Failure` as it is, a `DataError` as 422 (with
    /// the CLI's exit status), anything else as 400.
    private static func failure(reading error: any Error) -> Failure {
        switch error {
        case let failure as Failure: failure
        case let error as DataError: Failure(.unprocessableContent, error.description, exit: ExitStatus.code(for: error))
        default: Failure(.badRequest, "\(error)")
        }
    }

    // MARK: Shapes

    /// The drawing in the body (JSON strokes or a drawing CSV), answered as `classify shape FILE --json` prints it.
    func shapeJSON(_ body: Data, isCSV: Bool, name: String = "request") throws(Failure) -> [UInt8] {
        let drawing: Drawing
        do {
            if isCSV {
                drawing = try DrawingReader.read(csv: body, name: name)
            } else {
                drawing = try Self.drawing(fromJSON: body)
            }
            if let problem = ShapeRecognizer.problem(with: drawing) { throw DataError(file: "request", message: problem) }
        } catch {
            throw Self.failure(reading: error)
        }
        let answer: ShapeAnswer
        do {
            answer = try shape.recognize(drawing)
        } catch {
            throw Failure(.unprocessableContent, error.description, exit: ExitStatus.code(for: error))
        }
        var writer = JSONWriter()
        ShapeJSON(answer, fitted: answer.fitted(to: drawing), weights: shapeWeights).write(to: &writer)
        return writer.result
    }

    // MARK: Motion

    /// The recording in the body (CSV, or JSON samples read as that CSV's rows would be), answered as
    /// `classify motion FILE --json` prints it.
    func motionJSON(_ body: Data, isCSV: Bool, rate rateText: String?, name: String = "request") throws(Failure) -> String {
        var rate = assumedRate
        if let rateText {
            guard let value = Double(rateText), value > 0, value <= 10_000 else {
                throw Failure(.badRequest, "?rate=\(rateText) is not a sample rate between 0 and 10000 Hz")
            }
            rate = value
        }
        let windowing = motion.windowing
        let records: SampleRecords?
        do {
            records = isCSV ? nil : try Self.records(fromJSON: body)
        } catch {
            throw Self.failure(reading: error)
        }
        do {
            let recording =
                if let records {
                    try MotionRecordingReader.readSignals(records, assumedRate: rate, rate: windowing.rate, window: windowing.window)
                } else {
                    try MotionRecordingReader.readSignals(
                        csv: body, name: name, assumedRate: rate, rate: windowing.rate, window: windowing.window)
                }
            let timeline = try motion.recognize(recording)
            return MotionJSON(timeline: timeline, model: motion.model, weights: motionWeights, attempts: motion.attempts, notes: recording.notes)
                .text
        } catch {
            throw Failure(.unprocessableContent, error.description, exit: ExitStatus.code(for: error))
        }
    }
}

/// `GET /v1/models`: the served models and the largest body the server reads.
struct ServedModelsJSON: Encodable {
    /// One served model.
    struct Model: Encodable {
        let model: String
        /// The weights file's name, or `built-in`; absent for a rule.
        let weights: String?
        let labels: [String]
    }
    let shape: Model, motion: Model
    /// `--max-body`, in bytes.
    let maxBody: Int
}

/// One API path of `classify serve` and how it answers: the built-in tasks' and any other task's, in the one list
/// the router and the gate read (`ServeAPI.routes`).
struct APIRoute: Sendable {
    /// The path, `/v1/…`; it takes POST.
    let path: String
    /// The answer's bytes (JSON, without the final newline) for a body, whether it is CSV, and the request's URI; a
    /// `ServeAPI.Failure` is the refusal's status and error object.
    let answer: @Sendable (Data, Bool, URI) throws -> [UInt8]
}

extension APIRoute {
    /// The route of a task whose input is JSON and whose answer is `Encodable`, as an app's own task is served: the
    /// body is `{"input": …}` (the recognizer's input as it decodes), the answer the recognizer's, encoded as
    /// `--json` output is (sorted keys). A body that is not such an object is 400 saying what was expected and
    /// where; an input the recognizer refuses is 422 with its error, and a CSV body is 415.
    static func json<R: Recognizer>(_ path: String, _ recognizer: R) -> APIRoute where R.Input: Decodable, R.Answer: Encodable {
        APIRoute(path: path) { body, isCSV, _ in
            guard !isCSV else { throw ServeAPI.Failure(.unsupportedMediaType, "\(path) takes JSON, {\"input\": …}: send application/json") }
            let input: R.Input
            do {
                input = try JSONDecoder().decode(Envelope<R.Input>.self, from: body).input
            } catch {
                throw ServeAPI.Failure(.badRequest, "the body is not {\"input\": …} of \(recognizer.model): \(Self.decodingProblem(error))")
            }
            let answer: R.Answer
            do throws(DataError) {
                answer = try recognizer.recognize(input)
            } catch {
                throw ServeAPI.Failure(.unprocessableContent, error.description, exit: ExitStatus.code(for: error))
            }
            do {
                return Array(try encodedJSON(answer).utf8)
            } catch {
                throw ServeAPI.Failure(
                    .internalServerError, "\(recognizer.model)'s answer could not be written as JSON: \(error)", exit: ExitStatus.software)
            }
        }
    }

    /// The body of a `json` route.
    private struct Envelope<Input: Decodable>: Decodable {
        let input: Input
    }

    /// What a decoder wanted and where, in one line.
    private static func decodingProblem(_ error: any Error) -> String {
        func place(_ path: [any CodingKey]) -> String {
            path.isEmpty ? "the top level" : path.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        }
        switch error as? DecodingError {
        case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?, .dataCorrupted(let context)?:
            return "\(context.debugDescription) (at \(place(context.codingPath)))"
        case .keyNotFound(let key, let context)?:
            return "no member \"\(key.stringValue)\" (at \(place(context.codingPath)))"
        default:
            return "\(error)"
        }
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
#endif
