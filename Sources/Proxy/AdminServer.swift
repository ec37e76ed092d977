import Config
import EventLoop
import HTTP1
import HTTPIO
import ProxyCore
import Synchronization

/// The admin listener (`admin:`) on its own thread: `/healthz` (the process answers),
/// `/readyz` (configuration loaded and the upstream accepts a TCP connection), `/metrics`
/// (Prometheus text format).
final class AdminServer: @unchecked Sendable {
    let base: EventBase
    let metrics: Metrics
    private var listener: Listener?
    private var connections: [ObjectIdentifier: AdminConnection] = [:]
    /// The upstream readiness is checked against (replaced on reload).
    let upstream: Mutex<UpstreamURL>

    init(address: SocketAddress, metrics: Metrics, upstream: UpstreamURL) throws(EventLoopError) {
        base = try EventBase()
        self.metrics = metrics
        self.upstream = Mutex(upstream)
        listener = try Listener(base: base, address: address, reusePort: false) { [unowned self] fd, _ in
            let socket: BufferedSocket
            do throws(EventLoopError) {
                socket = try BufferedSocket.accepted(base: self.base, fd: fd)
            } catch {
                return ErrorLog.shared.write(.warn, "admin: cannot take a connection: \(error)")
            }
            let connection = AdminConnection(socket: socket, server: self)
            self.connections[ObjectIdentifier(connection)] = connection
        }
    }

    var address: SocketAddress? { listener?.boundAddress }

    func closed(_ connection: AdminConnection) {
        connections[ObjectIdentifier(connection)] = nil
    }
}

/// One admin request: read the head, answer, close.
final class AdminConnection: BufferedSocketDelegate {
    let socket: BufferedSocket
    unowned let server: AdminServer
    var scanner = HeadScanner(limit: 8192)
    var probe: ReadinessProbe?
    var answered = false

    init(socket: BufferedSocket, server: AdminServer) {
        self.socket = socket
        self.server = server
        socket.delegate = self
        socket.setTimeouts(readMilliseconds: 5000, writeMilliseconds: 5000)
        socket.enable()
    }

    func socketReadable(_ socket: BufferedSocket) {
        guard !answered else { return }
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
        socket.setReading(false)
        switch head.path {
        case "/healthz":
            respond(200, "ok\n")
        case "/metrics":
            respond(200, server.metrics.render(), contentType: "text/plain; version=0.0.4; charset=utf-8")
        case "/readyz":
            let target = server.upstream.withLock { $0 }
            probe = ReadinessProbe(base: server.base, target: target) { [weak self] ready in
                self?.respond(ready ? 200 : 503, ready ? "ready\n" : "upstream \(target) unreachable\n")
                self?.probe = nil
            }
        default:
            respond(404, "not found: try /healthz, /readyz or /metrics\n")
        }
    }

    func socketWritable(_ socket: BufferedSocket) {
        if answered, probe == nil, socket.output.count == 0 { close() }
    }

    func socket(_ socket: BufferedSocket, events: SocketEvents) {
        close()
    }

    private func respond(_ status: Int, _ body: String, contentType: String = "text/plain; charset=utf-8") {
        answered = true
        socket.output.add(
            "HTTP/1.1 \(status) \(ProxyError.reasonPhrase(status == 503 ? 503 : status))\r\nContent-Type: \(contentType)\r\n"
                + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n")
        socket.output.add(body)
    }

    private func close() {
        probe = nil
        socket.close()
        server.closed(self)
    }
}

/// Checks that the upstream accepts a TCP connection within a second.
final class ReadinessProbe: BufferedSocketDelegate {
    private var socket: BufferedSocket?
    private var timer: Timer?
    private var done: ((Bool) -> Void)?

    init(base: EventBase, target: UpstreamURL, _ done: @escaping (Bool) -> Void) {
        self.done = done
        timer = Timer(base: base) { [weak self] in self?.finish(false) }
        timer?.schedule(milliseconds: 1000)
        do throws(EventLoopError) {
            socket = try BufferedSocket.connect(
                base: base, host: target.host, port: target.port, tls: nil, delegate: self)
        } catch {
            finish(false)
        }
    }

    func socketReadable(_ socket: BufferedSocket) {}
    func socketWritable(_ socket: BufferedSocket) {}

    func socket(_ socket: BufferedSocket, events: SocketEvents) {
        finish(events.contains(.connected))
    }

    private func finish(_ ready: Bool) {
        timer?.cancel()
        timer = nil
        socket?.close()
        socket = nil
        let callback = done
        done = nil
        callback?(ready)
    }
}
