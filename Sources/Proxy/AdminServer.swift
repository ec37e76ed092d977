import Config
import EventLoop
import HTTP1
import HTTPIO
import ProxyCore
import Synchronization

/// The admin listener (`admin:`) on its own thread: `/healthz` (the process answers),
/// `/readyz` (configuration loaded and the upstream accepts a TCP connection), `/metrics`
/// (Prometheus text format), the live upload view (`/uploads`, `/uploads/events`, and the page
/// at `/`: `AdminPage`).
///
/// With `admin.token_file`, every request must carry the token (`Authorization: Bearer`, or
/// RFC 6750's `access_token` query parameter, which is how a browser opens the page): 401
/// otherwise, compared in constant time. `open_probes` lets `/healthz` and `/readyz` through.
final class AdminServer: @unchecked Sendable {
    /// What the admin requests are checked against (replaced on reload).
    struct Access: Sendable {
        var token: [UInt8]?
        var openProbes: Bool
    }

    let base: EventBase
    let metrics: Metrics
    private var listener: Listener?
    private var connections: [ObjectIdentifier: AdminConnection] = [:]
    /// The upstream readiness is checked against (replaced on reload).
    let upstream: Mutex<UpstreamURL>
    let access: Mutex<Access>
    /// The live view (made on the admin thread when it starts).
    private(set) var feed: LiveFeed?
    private let boards: [LiveBoard]

    init(
        address: SocketAddress, metrics: Metrics, upstream: UpstreamURL, access: Access, boards: [LiveBoard]
    ) throws(EventLoopError) {
        base = try EventBase()
        self.metrics = metrics
        self.upstream = Mutex(upstream)
        self.access = Mutex(access)
        self.boards = boards
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

    /// Runs the admin loop on the calling thread.
    func run() {
        feed = LiveFeed(base: base, boards: boards, clock: { monotonicMilliseconds() })
        base.run()
    }

    func closed(_ connection: AdminConnection) {
        connections[ObjectIdentifier(connection)] = nil
    }

    /// Whether `head` may see `path`: no token configured, an open probe, or the token.
    func authorized(_ head: RequestHead, path: Substring) -> Bool {
        let access = access.withLock { $0 }
        guard let token = access.token else { return true }
        if access.openProbes, path == "/healthz" || path == "/readyz" { return true }
        if let header = head.headers["Authorization"], header.count > 7,
            header.prefix(7).lowercased() == "bearer "
        {
            return Self.sameSecret(Array(header.utf8.dropFirst(7)), token)
        }
        if let query = head.target.firstIndex(of: "?").map({ head.target[head.target.index(after: $0)...] }) {
            for pair in query.split(separator: "&") where pair.hasPrefix("access_token=") {
                return Self.sameSecret(Array(pair.utf8.dropFirst(13)), token)
            }
        }
        return false
    }

    /// Compares in time that depends only on the expected token's length.
    static func sameSecret(_ presented: [UInt8], _ expected: [UInt8]) -> Bool {
        var difference = UInt8(presented.count == expected.count ? 0 : 1)
        for index in 0..<expected.count {
            let byte = index < presented.count ? presented[index] : 0
            difference |= byte ^ expected[index]
        }
        return difference == 0
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

extension AdminServer.Access {
    /// The access `config` asks for.
    init(_ config: ServerConfig) {
        self.init(token: config.adminToken.map { Array($0.utf8) }, openProbes: config.adminOpenProbes)
    }
}
