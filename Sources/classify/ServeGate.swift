#if Serve
import DataFiles
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// What every request to `classify serve` passes before a route answers it: HTTP as RFC 9110/9112 has it, and the
/// checks that keep other web pages away from a server on this machine.
///
/// - One `Host` header (400 without one, or with two).
/// - Bound to a loopback address, the server answers only the names of this machine (`localhost`, `127.x.x.x`,
///   `[::1]` and the `--host` given): a page whose name was made to resolve to 127.0.0.1 (DNS rebinding) gets 403
///   instead of the pages' answers.
/// - A request that a browser marks as coming from another origin (`Origin` not this server, or `Sec-Fetch-Site`
///   other than `same-origin`/`none`) gets 403 before its body is read: another page cannot make the server work,
///   whatever its content type (a `text/plain` or form post needs no preflight). Clients that are not browsers
///   (curl, scripts) send neither header and are answered as before.
/// - A known path with another method gets 405 and `Allow`; `HEAD` of a page gets its headers.
/// - `Transfer-Encoding` other than `chunked` is 501, a `Content-Encoding` other than `identity` 415 (the body would
///   be read as what it is not), and a `Content-Length` too large for any body 413 at once.
/// - `Connection: close` (as HTTP/1.0 without keep-alive implies it) is answered with `Connection: close`, and the
///   connection is closed after the answer.
struct ServeGate<Router: HTTPResponder>: HTTPResponder where Router.Context == BasicRequestContext {
    typealias Context = BasicRequestContext

    let router: Router
    /// The host names this server answers to, lowercased, or `nil` for any (bound beyond loopback).
    let hosts: Set<String>?
    /// Paths and the methods each takes.
    let methods: [String: [HTTPRequest.Method]]
    /// Seconds a refused request's body may take to be read and dropped (`--timeout`).
    let timeout: Double

    func respond(to request: Request, context: Context) async throws -> Response {
        var response: Response
        if let refusal = refusal(of: request) {
            response = ServeReply.closing(refusal.response, json: refusal.json, request: request, timeout: timeout)
        } else if request.method == .head, methods[request.uri.path]?.contains(.get) == true {
            var head = request.head
            head.method = .get
            let page = try await router.respond(to: Request(head: head, body: request.body), context: context)
            response = Response(status: page.status, headers: page.headers)
            if let length = page.body.contentLength { response.headers[.contentLength] = "\(length)" }
        } else {
            response = try await router.respond(to: request, context: context)
        }
        if request.headers[.connection]?.lowercased() == "close" { response.headers[.connection] = "close" }
        return response
    }

    /// The answer to a request that goes no further (with its JSON body), or `nil`.
    func refusal(of request: Request) -> (response: Response, json: ByteBuffer)? {
        // The first Host header is the request's authority; a second one stays among the fields.
        let moreHosts = request.headers.contains { $0.name.canonicalName == "host" }
        guard let authority = request.head.authority, !moreHosts else {
            return ServeReply.failure(.badRequest, moreHosts ? "the request has more than one Host header" : "the request has no Host header")
        }
        let host = Self.hostName(authority)
        if let hosts, !hosts.contains(host) && !host.hasPrefix("127.") {
            return ServeReply.failure(
                .forbidden,
                "Host \(String(reflecting: authority)) is not this server: bound to a loopback address, it answers only "
                    + "localhost, 127.0.0.1 and [::1] (another name may be a page rebinding its address to this machine); "
                    + "to be reached by another name, start it with --host")
        }
        if let origin = request.headers[.origin], !Self.sameOrigin(origin, authority: authority, scheme: request.head.scheme ?? "http") {
            return ServeReply.failure(
                .forbidden, "requests from another origin (\(String(reflecting: origin))) are refused: use the pages this server serves")
        }
        let site = request.headers.first { $0.name.canonicalName == "sec-fetch-site" }?.value.lowercased()
        if let site, site != "same-origin" && site != "none" {
            return ServeReply.failure(
                .forbidden, "requests from another site (Sec-Fetch-Site: \(site)) are refused: use the pages this server serves")
        }
        if let allowed = methods[request.uri.path], !allowed.contains(request.method), !(request.method == .head && allowed.contains(.get)) {
            var refusal = ServeReply.failure(
                .methodNotAllowed, "\(request.uri.path) takes \(allowed.map(\.rawValue).joined(separator: " and ")), not \(request.method)")
            let methods = allowed.contains(.get) ? allowed + [.head] : allowed
            refusal.response.headers[.allow] = methods.map(\.rawValue).joined(separator: ", ")
            return refusal
        }
        if let coding = request.headers[.transferEncoding], coding.lowercased() != "chunked" {
            return ServeReply.failure(
                .notImplemented, "Transfer-Encoding \(String(reflecting: coding)) is not supported: send the body as it is, or chunked")
        }
        if let coding = request.headers[.contentEncoding], coding.lowercased() != "identity" {
            return ServeReply.failure(.unsupportedMediaType, "Content-Encoding \(String(reflecting: coding)) is not read: send the body uncompressed")
        }
        if let length = request.headers[.contentLength], Int(length) == nil {
            let digits = !length.isEmpty && length.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
            return digits
                ? ServeReply.failure(.contentTooLarge, "the body is \(length) bytes, more than any body this server reads (--max-body)")
                : ServeReply.failure(.badRequest, "Content-Length \(String(reflecting: length)) is not a number of bytes")
        }
        return nil
    }

    /// `example.com` of `Example.com:8080`, `::1` of `[::1]:8080`.
    static func hostName(_ authority: String) -> String {
        let lower = authority.lowercased()
        if lower.hasPrefix("["), let end = lower.firstIndex(of: "]") {
            return String(lower[lower.index(after: lower.startIndex)..<end])
        }
        if let colon = lower.lastIndex(of: ":") { return String(lower[..<colon]) }
        return lower
    }

    /// Whether `origin` (`http://host:port`) is the server that `authority` (the Host header) names over `scheme`.
    static func sameOrigin(_ origin: String, authority: String, scheme: String) -> Bool {
        let lower = origin.lowercased()
        guard let separator = lower.range(of: "://") else { return false }
        let originScheme = String(lower[..<separator.lowerBound])
        let defaultPort = originScheme == "https" ? ":443" : ":80"
        func withPort(_ text: String) -> String {
            let hasPort = text.hasPrefix("[") ? text.contains("]:") : text.contains(":")
            return hasPort ? text : text + defaultPort
        }
        return originScheme == scheme && withPort(String(lower[separator.upperBound...])) == withPort(authority.lowercased())
    }

}

/// The API's refusals: the CLI's JSON error object with a status.
enum ServeReply {
    /// A refusal as the API's JSON error object (the response, and its body's bytes).
    static func failure(_ status: HTTPResponse.Status, _ message: String, exit: Int32 = ExitStatus.dataError) -> (
        response: Response, json: ByteBuffer
    ) {
        let json = ByteBuffer(string: jsonText(ErrorLineJSON(input: "request", error: message, exit: exit)) + "\n")
        return (Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: json)), json)
    }

    /// `response` (whose body is `json`) with `Connection: close`, for a request whose body is not read. The answer
    /// goes out at once (a client that waits for `100 Continue` sends no body), then the body is read and dropped,
    /// up to `drainLimit` bytes within `timeout` seconds, so that a client that sends its whole body before it
    /// reads (Python's urllib, URLSession) sees the answer instead of a broken pipe; then the connection is closed.
    static func closing(_ response: Response, json: ByteBuffer, request: Request, timeout: Double) -> Response {
        var headers = response.headers
        headers[.connection] = "close"
        let body = request.body
        // A body that says it is longer than could be dropped, or does not say a length it could have: not waited for.
        let declared = request.headers[.contentLength].map { Int($0) ?? Int.max } ?? 0
        let drains = declared <= drainLimit && (declared > 0 || request.headers[.transferEncoding] != nil)
        return Response(
            status: response.status, headers: headers,
            body: ResponseBody(contentLength: json.readableBytes) { (writer: inout any ResponseBodyWriter) in
                try await writer.write(json)
                guard drains else { return try await writer.finish(nil) }
                _ = try? await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        var dropped = 0
                        for try await part in body {
                            dropped += part.readableBytes
                            if dropped > drainLimit { break }
                        }
                    }
                    group.addTask { try await Task.sleep(nanoseconds: UInt64(timeout * 1e9)) }
                    defer { group.cancelAll() }
                    try await group.next()
                }
                try await writer.finish(nil)
            })
    }

    /// The most bytes of a refused body read and dropped before its connection is closed.
    static let drainLimit = 64 << 20
}

/// The host names a server bound to `address` answers to: `nil` (any) unless it is a loopback address.
func loopbackHosts(boundTo address: String) -> Set<String>? {
    let name = address.lowercased()
    guard name == "localhost" || name.hasPrefix("127.") || name == "::1" else { return nil }
    return ["localhost", name, "::1", "127.0.0.1"]
}

/// HTTP/1.1 as Hummingbird's `HTTP1Channel` serves it, with `Connection: close` kept both ways: a request that asks
/// for no keep-alive (HTTP/1.0 without `Connection: keep-alive`) is marked `Connection: close` (and an HTTP/1.0
/// request without `Host` gets the address it reached as its host), and an answer that
/// says `Connection: close` (that one, or an early 413 whose body was not read) closes the connection once it is
/// written, instead of leaving it open until the idle timeout.
///
/// It also limits the connections one client address may hold open (`ClientConnections`): one more is answered 503
/// and closed before any request is read.
struct ServeChannel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = HTTP1Channel.Value
    let inner: HTTP1Channel
    let clients: ClientConnections
    /// `--max-body`: a chunk that says it is larger fails its request at once (`ChunkSizeGuard`).
    let maxBody: Int
    /// `--timeout`: a body that has not ended this many seconds after its head fails (`BodyDeadline`).
    let bodyTimeout: Double

    var responder: HTTPChannelHandler.Responder { inner.responder }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let (clients, maxBody, bodyTimeout) = (clients, maxBody, bodyTimeout)
        return inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let decoder = try channel.pipeline.syncOperations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            let close = ConnectionClose(maxBody: maxBody)
            try channel.pipeline.syncOperations.addHandler(close, position: .after(decoder))
            try channel.pipeline.syncOperations.addHandler(BodyDeadline(timeout: bodyTimeout), position: .after(close))
            try channel.pipeline.syncOperations.addHandler(ChunkSizeGuard(limit: maxBody), position: .before(decoder))
            // Nearer the socket than NIO's encoder, so that its raw answer reaches the socket (or TLS) as it is.
            let encoder = try channel.pipeline.syncOperations.handler(type: HTTPResponseEncoder.self)
            try channel.pipeline.syncOperations.addHandler(LimitPerClient(clients), position: .before(encoder))
            return value
        }
    }

    /// Counts the connection against its client address's limit while it is open; past the limit, answers 503
    /// (as raw bytes: no request has been read) and closes it.
    final class LimitPerClient: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = NIOAny
        typealias OutboundOut = ByteBuffer

        private let clients: ClientConnections
        private var counted: String?
        private var checked = false

        init(_ clients: ClientConnections) { self.clients = clients }

        func handlerAdded(context: ChannelHandlerContext) {
            if context.channel.isActive { check(context) }
        }

        func channelActive(context: ChannelHandlerContext) {
            check(context)
            context.fireChannelActive()
        }

        func channelInactive(context: ChannelHandlerContext) {
            if let counted { clients.close(counted) }
            counted = nil
            context.fireChannelInactive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            context.fireChannelRead(data)
        }

        private func check(_ context: ChannelHandlerContext) {
            guard !checked else { return }
            checked = true
            guard let address = context.channel.remoteAddress?.ipAddress else { return }
            switch clients.open(address) {
            case .exempt: return
            case .counted: counted = address
            case .refused:
                let json =
                    jsonText(
                        ErrorLineJSON(
                            input: "request",
                            error: "\(address) has \(clients.limit) connections open already (--max-connections-per-client); try again",
                            exit: 75)) + "\n"
                let head =
                    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\n"
                    + "Content-Length: \(json.utf8.count)\r\n\r\n"
                context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: head + json)), promise: nil)
                context.close(promise: nil)
            }
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }

    /// Between NIO's HTTP/1 parts and Hummingbird's: marks a request head that does not keep its connection alive
    /// with `Connection: close`, and closes the connection after an answer that says `Connection: close`.
    ///
    /// It also answers `Expect: 100-continue` (RFC 9110 §10.1.1): an HTTP/1.1 request that says it waits for
    /// `100 Continue` before its body gets one as soon as the answers to the requests before it on the connection
    /// are written (at once, as a rule), unless its `Content-Length` is over `--max-body` (its 413 comes instead).
    /// curl waits so for any body over 1 MiB, and without the `100` it waited a second before sending.
    final class ConnectionClose: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias InboundOut = HTTPServerRequestPart
        typealias OutboundIn = HTTPServerResponsePart
        typealias OutboundOut = HTTPServerResponsePart

        private let maxBody: Int
        private var closing = false
        /// The requests read and not yet answered, in order: whether each still waits for `100 Continue`.
        private var unanswered: [Bool] = []

        init(maxBody: Int) { self.maxBody = maxBody }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .head(var head) = unwrapInboundIn(data) else { return context.fireChannelRead(data) }
            unanswered.append(waitsForContinue(head))
            if unanswered.count == 1 { continueIfWaiting(context) }
            if !head.isKeepAlive, head.headers["connection"].first != "close" {
                head.headers.replaceOrAdd(name: "connection", value: "close")
            }
            // HTTP/1.0 has no Host header of its own (HTTP/1.1 requires one): the request is for the address it reached.
            if head.version == .http1_0, head.headers["host"].isEmpty, let address = context.channel.localAddress,
                let ip = address.ipAddress, let port = address.port
            {
                head.headers.add(name: "host", value: ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)")
            }
            context.fireChannelRead(wrapInboundOut(.head(head)))
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            switch unwrapOutboundIn(data) {
            case let .head(head):
                closing = head.headers[canonicalForm: "connection"].contains { $0.lowercased() == "close" }
                context.write(data, promise: promise)
            case .body:
                context.write(data, promise: promise)
            case .end:
                // This request is answered; the next one's client may be waiting for its `100 Continue`.
                if !unanswered.isEmpty { unanswered.removeFirst() }
                guard closing else {
                    context.write(data, promise: promise)
                    return continueIfWaiting(context)
                }
                closing = false
                let written = context.eventLoop.makePromise(of: Void.self)
                written.futureResult.cascade(to: promise)
                context.writeAndFlush(data, promise: written)
                let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
                written.futureResult.whenComplete { _ in bound.value.close(promise: nil) }
            }
        }

        /// Whether `head` waits for `100 Continue` before a body this server will read.
        private func waitsForContinue(_ head: HTTPRequestHead) -> Bool {
            guard head.version == .http1_1, head.headers["expect"].contains(where: { $0.lowercased() == "100-continue" }) else { return false }
            if let length = head.headers["content-length"].first.flatMap({ Int($0) }) { return length > 0 && length <= maxBody }
            return head.headers["transfer-encoding"].contains { $0.lowercased().contains("chunked") }
        }

        /// Sends `100 Continue` to the oldest unanswered request when it waits for one.
        private func continueIfWaiting(_ context: ChannelHandlerContext) {
            guard unanswered.first == true else { return }
            unanswered[0] = false
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .continue))), promise: nil)
        }
    }
}

/// The time a request's body may take to arrive, kept on the connection's event loop: when a request's head has
/// come and its end has not `timeout` seconds later, its body fails with `BodyDeadline.TimedOut` (answered 408 by
/// `ServeAPI`), and the connection reads no more requests. A timer per request on the event loop, instead of a
/// task racing each body's reading: an answer costs no extra tasks or thread hops.
final class BodyDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    /// The error the late body fails with.
    struct TimedOut: Error, CustomStringConvertible {
        let timeout: Double
        var description: String { "the body did not arrive within \(timeout) s (--timeout)" }
    }

    private let timeout: Double
    private var timer: Scheduled<Void>?

    init(timeout: Double) { self.timeout = timeout }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            timer?.cancel()
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            let timeout = timeout
            timer = context.eventLoop.scheduleTask(in: .nanoseconds(Int64(timeout * 1e9))) {
                bound.value.fireErrorCaught(TimedOut(timeout: timeout))
            }
        case .body: break
        case .end:
            timer?.cancel()
            timer = nil
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }
}

/// How many connections each client address has open, and the most one address may have: one program (or one
/// machine) cannot hold every connection the server can take. This machine's own addresses (127.0.0.0/8, ::1) are
/// not limited: on loopback every client has the same address, and the programs there are the user's own.
final class ClientConnections: Sendable {
    let limit: Int
    private let open = Mutex<[String: Int]>([:])

    /// What `open(_:)` did with a connection.
    enum Outcome: Equatable { case counted, exempt, refused }

    init(limit: Int) {
        precondition(limit >= 1, "ClientConnections: limit \(limit) ≥ 1")
        self.limit = limit
    }

    /// Counts a connection from `address` (an IP address), unless it is this machine's or has `limit` open already.
    func open(_ address: String) -> Outcome {
        if Self.isLoopback(address) { return .exempt }
        return open.withLock { open in
            let count = open[address, default: 0]
            guard count < limit else { return .refused }
            open[address] = count + 1
            return .counted
        }
    }

    /// Ends the count of one connection from `address` that `open(_:)` counted.
    func close(_ address: String) {
        open.withLock { open in
            let count = (open[address] ?? 1) - 1
            open[address] = count > 0 ? count : nil
        }
    }

    /// How many connections `address` has open (as counted).
    func count(_ address: String) -> Int { open.withLock { $0[address, default: 0] } }

    /// 127.0.0.0/8, ::1, and IPv4 loopback written as IPv6 (::ffff:127.x.x.x).
    static func isLoopback(_ address: String) -> Bool {
        let lower = address.lowercased()
        return lower.hasPrefix("127.") || lower == "::1" || lower.hasPrefix("::ffff:127.")
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 as `ServeChannel` serves it, with `clients` limiting each address's connections, `maxBody`
    /// the largest chunk a body may say it has, and `bodyTimeout` the seconds a body may take.
    static func serve(
        _ configuration: HTTP1Channel.Configuration, clients: ClientConnections, maxBody: Int, bodyTimeout: Double
    ) -> HTTPServerBuilder {
        .init { responder in
            ServeChannel(
                inner: HTTP1Channel(responder: responder, configuration: configuration), clients: clients, maxBody: maxBody,
                bodyTimeout: bodyTimeout)
        }
    }
}
#endif
