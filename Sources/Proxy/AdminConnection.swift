import EventLoop
import HTTP1
import HTTPIO
import ProxyCore

#if canImport(Glibc)
    import Glibc
#endif

/// One admin request: read the head, check the token, answer, close — or, for
/// `/uploads/events`, stay open as an event stream reader (`LiveFeed`).
final class AdminConnection: BufferedSocketDelegate, LiveReader {
    let socket: BufferedSocket
    unowned let server: AdminServer
    var scanner = HeadScanner(limit: 8192)
    var probe: ReadinessProbe?
    var answered = false
    /// Whether the connection is an event stream reader.
    private var streaming = false
    /// Whether the request was a HEAD (the answer has no body).
    private var headOnly = false

    /// Fields every admin answer carries: nothing cached, nothing sniffed, no referrer.
    static let commonFields =
        "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n"
    /// The page's policy: its own inline script and style, requests to this origin only.
    static let pagePolicy =
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; "
        + "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    init(socket: BufferedSocket, server: AdminServer) {
        self.socket = socket
        self.server = server
        socket.delegate = self
        socket.setTimeouts(readMilliseconds: 5000, writeMilliseconds: 5000)
        socket.enable()
    }

    func socketReadable(_ socket: BufferedSocket) {
        guard !answered else {
            // A reader sends nothing more; what it does send is dropped.
            return socket.input.drain(socket.input.count)
        }
        let bytes: [UInt8]
        do throws(HTTP1Error) {
            guard let head = try socket.input.takeHead(&scanner) else { return }
            bytes = head
        } catch {
            return respond(400, "bad request\n")
        }
        guard let head = try? HeadParser.parseRequest(bytes), head.method == "GET" || head.method == "HEAD"
        else {
            return respond(400, "bad request\n")
        }
        answered = true
        headOnly = head.method == "HEAD"
        let path = head.path.prefix { $0 != "?" }
        guard server.authorized(head, path: path) else {
            return respond(
                401, "unauthorized: this admin listener needs its token (Authorization: Bearer)\n",
                extra: "WWW-Authenticate: Bearer realm=\"formgate admin\"\r\n")
        }
        route(path)
    }

    private func route(_ path: Substring) {
        switch path {
        case "/":
            respond(
                200, AdminPage.html, contentType: "text/html; charset=utf-8",
                extra: "Content-Security-Policy: \(Self.pagePolicy)\r\nX-Frame-Options: DENY\r\n")
        case "/healthz":
            respond(200, "ok\n")
        case "/metrics":
            respond(
                200, server.metrics.render() + (server.feed?.renderMetrics() ?? ""),
                contentType: "text/plain; version=0.0.4; charset=utf-8")
        case "/uploads":
            guard let feed = server.feed else { return respond(503, "starting\n") }
            feed.tick()
            respond(200, String(decoding: feed.snapshot(), as: UTF8.self), contentType: "application/json")
        case "/uploads/events":
            guard let feed = server.feed else { return respond(503, "starting\n") }
            guard !headOnly else { return respond(200, "", contentType: "text/event-stream") }
            guard feed.readerCount < LiveFeed.maxReaders else {
                return respond(503, "too many readers of the event stream (\(LiveFeed.maxReaders))\n")
            }
            streaming = true
            // The kernel's share of a slow reader's backlog is bounded too (64 KiB asked for).
            var sendBuffer: Int32 = 64 * 1024
            setsockopt(socket.fd, SOL_SOCKET, SO_SNDBUF, &sendBuffer, socklen_t(MemoryLayout<Int32>.size))
            socket.setTimeouts(readMilliseconds: 0, writeMilliseconds: 10_000)
            socket.output.add(
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\(Self.commonFields)Connection: close\r\n\r\n"
            )
            feed.add(self)
        case "/readyz":
            let target = server.upstream.withLock { $0 }
            probe = ReadinessProbe(base: server.base, target: target) { [weak self] ready in
                self?.respond(ready ? 200 : 503, ready ? "ready\n" : "upstream unreachable\n")
                self?.probe = nil
            }
        default:
            respond(404, "not found: try /, /uploads, /uploads/events, /healthz, /readyz or /metrics\n")
        }
    }

    func send(_ bytes: [UInt8]) {
        guard streaming else { return }
        guard socket.output.count + bytes.count <= LiveFeed.readerLimit else {
            // A reader that does not keep up is dropped, not buffered.
            streaming = false
            server.feed?.dropped(self)
            return close()
        }
        socket.output.add(bytes)
    }

    func socketWritable(_ socket: BufferedSocket) {
        if answered, !streaming, probe == nil, socket.output.count == 0 { close() }
    }

    func socket(_ socket: BufferedSocket, events: SocketEvents) {
        close()
    }

    private func respond(
        _ status: Int, _ body: String, contentType: String = "text/plain; charset=utf-8", extra: String = ""
    ) {
        answered = true
        socket.setReading(false)
        socket.output.add(
            "HTTP/1.1 \(status) \(ProxyError.reasonPhrase(status))\r\nContent-Type: \(contentType)\r\n"
                + Self.commonFields + extra
                + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n")
        if !headOnly { socket.output.add(body) }
    }

    private func close() {
        if streaming {
            streaming = false
            server.feed?.remove(self)
        }
        probe = nil
        socket.close()
        server.closed(self)
    }
}
