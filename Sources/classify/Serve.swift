#if Serve
import ArgumentParser
import DataFiles
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import Models
import NIOSSL
import WeightsFormat

/// `classify serve`: the draw page, the motion page and the JSON API on a local web server.
struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "A local web server: a page to draw on, a page for motion recordings, and a JSON API.",
        discussion: """
            Pages: / (draw a shape: the answer after every stroke, the confidence of each class, the fitted outline \
            and how neatly it was drawn) and /motion (open a recording and see its states over time; on a phone, \
            record from its motion sensors and save the recording as CSV).

            API: POST /v1/shape with JSON {"strokes": [[[x, y], [x, y, t], ...], ...]} or a drawing CSV \
            (Content-Type: text/csv); POST /v1/motion with a recording CSV (?rate=HZ when it has no timestamp \
            column) or JSON {"samples": [{"timestamp": s, "acc.x": g, ...}, ...]} (the CSV's columns as keys). \
            POST /v1/motion/live with such JSON samples opens a live session (answered with its id), \
            ?session=ID adds the next samples, &end=1 ends it: each answer holds the events `classify motion \
            --follow --json` prints for those samples, each window's state, and the current state; at most \
            --max-live-sessions are open, and one idle for --live-idle seconds ends. \
            Each answers what `classify shape|motion FILE --json` prints (the weights file named without its \
            folder). Bad input is a 4xx with the CLI's JSON error object ({"error": ..., "exit": 65, "input": \
            "request"}): 400 unreadable JSON (with its line and column), 413 a body over --max-body, 415 another \
            content type, 422 a drawing or recording the models refuse; 503 when --max-requests are already being \
            answered or the queue of large requests is full; 408 when a body takes longer than --timeout to arrive.

            Bound to 127.0.0.1 (this machine only) unless --host says otherwise; bound to loopback, it answers only \
            the Host names localhost, 127.x.x.x and [::1]. Requests a browser marks as from another origin get \
            403. Browsers give motion sensors only to secure pages: https (--tls-cert and --tls-key, PEM files) \
            or http://localhost; docs/serve.md says how to reach the server from a phone either way. --weights \
            names a shape or a motion model (the other comes from the usual lookup). Stops on Ctrl-C.

            Example: classify serve --port 8080   (then open http://127.0.0.1:8080/)
            """
    )

    @Option(help: "The address to listen on (0.0.0.0: every interface).")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on (0: any free port, printed at start).")
    var port = 8080

    @Option(name: .customLong("tls-cert"), help: "A PEM certificate chain: serve https (with --tls-key).")
    var tlsCert: String?

    @Option(name: .customLong("tls-key"), help: "The certificate's PEM private key.")
    var tlsKey: String?

    @Option(help: "The largest request body, in bytes.")
    var maxBody = 4 << 20

    @Option(help: "How many API requests (whose bodies have arrived) are answered at once; more get 503.")
    var maxRequests = 512

    @Option(
        name: .customLong("max-connections-per-client"),
        help: "How many connections one client address may hold open; more are answered 503 (this machine's own are not limited).")
    var maxConnectionsPerClient = 64

    @Option(help: "Seconds a request body may take to arrive (a connection may stay idle twice as long).")
    var timeout = 10.0

    @Option(name: .customLong("max-live-sessions"), help: "How many live motion sessions may be open at once; one more gets 503.")
    var maxLiveSessions = 128

    @Option(name: .customLong("live-idle"), help: "Seconds a live motion session may go without an update before it ends.")
    var liveIdle = 60.0

    @OptionGroup var chain: ChainOptions

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0–65535, got \(port)") }
        guard (tlsCert == nil) == (tlsKey == nil) else { throw ValidationError("--tls-cert and --tls-key go together: give both or neither") }
        guard maxBody >= 1024 && maxBody <= 1 << 30 else { throw ValidationError("--max-body must be 1024 to 1073741824 bytes, got \(maxBody)") }
        guard maxRequests >= 1 && maxRequests <= 100_000 else { throw ValidationError("--max-requests must be 1–100000, got \(maxRequests)") }
        guard maxConnectionsPerClient >= 1 && maxConnectionsPerClient <= 100_000 else {
            throw ValidationError("--max-connections-per-client must be 1–100000, got \(maxConnectionsPerClient)")
        }
        guard timeout >= 0.001 && timeout <= 3600 else {
            throw ValidationError("--timeout must be 0.001–3600 seconds, got \(timeout)")
        }
        guard maxLiveSessions >= 1 && maxLiveSessions <= 100_000 else {
            throw ValidationError("--max-live-sessions must be 1–100000, got \(maxLiveSessions)")
        }
        guard liveIdle >= 1 && liveIdle <= 86_400 else { throw ValidationError("--live-idle must be 1–86400 seconds, got \(liveIdle)") }
        if chain.json { throw ValidationError("serve always answers JSON: leave out --json") }
        if chain.jobs != nil { throw ValidationError("--jobs is for batches; serve answers each request as it comes (--max-requests)") }
    }

    func run() throws {
        let api = try loadAPI()
        let server = try httpServer()
        if loopbackHosts(boundTo: host) == nil {
            reportWarning(
                "serving on \(host), not only this machine: anyone who can reach this address can use the pages and the API "
                    + "(and the server answers any Host name); bind 127.0.0.1 unless that is what you want")
        }
        let scheme = tlsCert == nil ? "http" : "https"
        let host = host
        let app = Self.application(api, server: server, host: host, port: port, timeout: timeout) { bound in
            let shown = host.contains(":") ? "[\(host)]" : host
            StandardStreams.write(
                "classify serve: \(scheme)://\(shown):\(bound)/ (draw page), /motion (motion page), POST /v1/shape and /v1/motion (API); Ctrl-C stops\n"
            )
            StandardStreams.flush()
        }
        try runUntilStopped(app)
    }

    /// The server of `api` on `host`:`port` (0: any free port), with the gate before its router; `onRunning` is
    /// told the port it listens on.
    static func application(
        _ api: ServeAPI, server: HTTPServerBuilder, host: String, port: Int, timeout: Double, onRunning: @escaping @Sendable (Int) -> Void
    ) -> some ApplicationProtocol & Sendable {
        Application(
            responder: ServeGate(router: api.router().buildResponder(), hosts: loopbackHosts(boundTo: host), methods: api.methods, timeout: timeout),
            server: server,
            configuration: .init(address: .hostname(host, port: port), serverName: "classify"),
            onServerRunning: { channel in onRunning(channel.localAddress?.port ?? 0) },
            logger: Logger(label: "classify-serve") { ServeLogHandler(label: $0) }
        )
    }

    /// Both recognizers, loaded through the chain, and the API that answers with them. `--weights` names one model:
    /// the one whose task it holds; the other comes from the usual lookup.
    func loadAPI() throws -> ServeAPI {
        var shapeChain = chain, motionChain = chain
        if let weights = chain.weights {
            let task = (try? ModelFile(contentsOf: URL(fileURLWithPath: weights)))?.preprocessingKind?.task
            switch task {
            case .motion?: shapeChain.weights = nil
            case .shape?, nil: motionChain.weights = nil
            }
        }
        let shape = try shapeChain.load(ShapeRecognizer.self, for: [])
        let motion = try motionChain.load(MotionRecognizer.self, for: [])
        // Answers name the weights file without its folder: a page of another site that reached the API would
        // learn the user's name and folders from an absolute path.
        func fileName(_ weights: String?) -> String? { weights.map { URL(fileURLWithPath: $0).lastPathComponent } }
        return ServeAPI(
            shape: shape, shapeWeights: fileName(shapeChain.describe(shape.model, among: shapeChain.variants(of: .shape)).weights),
            motion: motion,
            motionWeights: fileName(motionChain.describe(motion.model, among: motionChain.variants(of: .motion)).weights),
            assumedRate: 50, limits: .init(maxBody: maxBody, maxRequests: maxRequests, timeout: timeout),
            live: LiveMotionSessions(limit: maxLiveSessions, idle: liveIdle))
    }

    /// The HTTP/1 server, with TLS when `--tls-cert` and `--tls-key` give it. A connection with nothing to read is
    /// closed after twice --timeout: a body that stops halfway gets its 408 (after --timeout) before its connection
    /// is closed.
    func httpServer() throws -> HTTPServerBuilder {
        let server: HTTPServerBuilder = .serve(
            .init(idleTimeout: .milliseconds(Int64((2 * timeout * 1000).rounded(.up)))), clients: ClientConnections(limit: maxConnectionsPerClient),
            maxBody: maxBody, bodyTimeout: timeout)
        guard let tlsCert, let tlsKey else { return server }
        do {
            return try .tls(server, tlsConfiguration: try Self.tlsConfiguration(certificate: tlsCert, key: tlsKey))
        } catch {
            throw failure(error)
        }
    }

    /// Runs `app` until it stops (Ctrl-C, SIGTERM); a server that cannot start is an error naming the address.
    func runUntilStopped(_ app: some ApplicationProtocol & Sendable) throws {
        let outcome = ServeOutcome()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do {
                try await app.runService()
            } catch {
                outcome.set(error)
            }
            done.signal()
        }
        done.wait()
        if let error = outcome.error {
            let text = "\(error)"
            let hint = text.contains("Address already in use") ? "; another program listens on port \(port): choose another with --port" : ""
            throw failure(DataError(file: "\(host):\(port)", message: "cannot serve: \(text)\(hint)", kind: .unreadable))
        }
    }
}

extension Serve {
    /// The TLS configuration of `certificate` and `key` (PEM files), checked before the server starts: each file
    /// must be a regular, readable file (a FIFO would hang the start), the key must have no passphrase and must
    /// belong to the certificate. Errors name the files: 66 missing, 74 unreadable, 65 unusable.
    static func tlsConfiguration(certificate: String, key: String) throws(DataError) -> TLSConfiguration {
        let certificateBytes = try pemBytes(certificate, what: "certificate")
        let keyBytes = try pemBytes(key, what: "private key")
        if String(decoding: keyBytes, as: UTF8.self).contains("ENCRYPTED") {
            throw DataError(
                file: key,
                message: "the private key is encrypted (it has a passphrase); give it without one, e.g. openssl pkey -in KEY -out plain-key.pem")
        }
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMBytes(certificateBytes)
        } catch {
            throw DataError(file: certificate, message: "is not a PEM certificate chain (-----BEGIN CERTIFICATE-----): \(error)")
        }
        guard !certificates.isEmpty else { throw DataError(file: certificate, message: "holds no PEM certificate (-----BEGIN CERTIFICATE-----)") }
        let privateKey: NIOSSLPrivateKey
        do {
            privateKey = try NIOSSLPrivateKey(bytes: keyBytes, format: .pem)
        } catch {
            throw DataError(file: key, message: "is not a PEM private key (-----BEGIN PRIVATE KEY-----): \(error)")
        }
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: certificates.map { .certificate($0) }, privateKey: .privateKey(privateKey))
        do {
            _ = try NIOSSLContext(configuration: configuration)
        } catch {
            throw DataError(file: "\(certificate), \(key)", message: "the private key does not belong to the certificate's public key (\(error))")
        }
        return configuration
    }

    /// The bytes of a PEM file (at most 1 MiB), or the error that names it.
    private static func pemBytes(_ path: String, what: String) throws(DataError) -> [UInt8] {
        var status = stat()
        guard stat(path, &status) == 0 else {
            let missing = errno == ENOENT
            throw DataError(
                file: path, message: missing ? "no such \(what) file" : "cannot be read: \(String(cString: strerror(errno)))",
                kind: missing ? .missingFile : .unreadable)
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw DataError(file: path, message: "is not a regular file (a FIFO, device or folder); give the \(what) as a PEM file")
        }
        guard status.st_size <= 1 << 20 else { throw DataError(file: path, message: "is \(status.st_size) bytes; a PEM \(what) is at most 1 MiB") }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw DataError(file: path, message: "cannot be read: \(String(cString: strerror(errno)))", kind: .unreadable)
        }
        defer { try? handle.close() }
        do {
            return Array(try handle.readToEnd() ?? Data())
        } catch {
            throw DataError(file: path, message: "cannot be read: \(error.localizedDescription)", kind: .unreadable)
        }
    }
}

/// How the server's run ended: its error, if any (set once, by the server's task, before the main thread reads it).
private final class ServeOutcome: @unchecked Sendable {
    private(set) var error: (any Error)?
    func set(_ error: any Error) { self.error = error }
}

/// Where Hummingbird's log lines go: at `.error` and above, one line each on standard error
/// (`classify-serve: error: MESSAGE key=value …`). Its metadata is kept as given and rendered only for a line written:
/// swift-log's `StreamLogHandler` renders its metadata text again each time a key is set, which Hummingbird does for
/// every request (about 5 µs of a request's CPU, in perf).
struct ServeLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .error
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(metadataProvider?.get() ?? [:]) { $1 }.merging(event.metadata ?? [:]) { $1 }
        StandardStreams.writeError(Self.line(label: label, event: event, metadata: all))
    }

    /// The line written for `event` with `metadata` (keys sorted).
    static func line(label: String, event: LogEvent, metadata: Logger.Metadata) -> String {
        let details = metadata.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
        let error = event.error.map { ": \($0)" } ?? ""
        return "\(label): \(event.level): \(event.message)\(error)\(details)\n"
    }
}
#endif
