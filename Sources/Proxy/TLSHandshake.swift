import Config
import EventLoop

/// An accepted connection on a TLS listener until its handshake is done: it waits for the
/// socket's `.connected` (then hands the socket to a `ClientConnection`) or its failure, and
/// closes a client that has not finished within `timeouts.tls_handshake`. A failed handshake
/// is counted by reason and never logged line by line (a scan or a flood of broken
/// handshakes must not fill the logs).
///
/// Lives on its worker's loop thread; the worker keeps it alive until it reports.
final class TLSHandshake: BufferedSocketDelegate {
    /// Every `reason` label of `formgate_tls_handshake_failures_total`.
    static let failureReasons = TLSHandshakeError.allCases.map(\.rawValue) + [timeoutReason]
    /// The reason of a handshake the client did not finish in time.
    static let timeoutReason = "timeout"

    let socket: BufferedSocket
    let peer: SocketAddress
    /// The listener's HTTP/2 settings when it offers `h2` in ALPN.
    let http2: ListenerConfig.HTTP2Settings?
    private unowned let worker: Worker
    private var timer: Timer?

    /// Starts waiting for the handshake of `socket` (made by `BufferedSocket.accepted(base:fd:tls:)`),
    /// for at most `timeoutMilliseconds`.
    init(
        socket: BufferedSocket, peer: SocketAddress, http2: ListenerConfig.HTTP2Settings? = nil,
        worker: Worker,
        timeoutMilliseconds: Int64
    ) {
        self.socket = socket
        self.peer = peer
        self.http2 = http2
        self.worker = worker
        socket.delegate = self
        let timer = Timer(base: worker.base) { [unowned self] in self.finish(failure: Self.timeoutReason) }
        timer.schedule(milliseconds: timeoutMilliseconds)
        self.timer = timer
    }

    func socketReadable(_ socket: BufferedSocket) {}

    func socketWritable(_ socket: BufferedSocket) {}

    func socket(_ socket: BufferedSocket, events: SocketEvents) {
        if events.contains(.connected) {
            finish(failure: nil)
        } else {
            finish(failure: (socket.tlsHandshakeError ?? .closed).rawValue)
        }
    }

    /// Closes a handshake that has not finished (the worker drains or stops).
    func abandon() {
        finish(failure: nil, closing: true)
    }

    /// Reports to the worker once: the socket goes on to HTTP, or is closed and counted.
    private func finish(failure: String?, closing: Bool = false) {
        guard let timer else { return }
        timer.cancel()
        self.timer = nil
        socket.delegate = nil
        if let failure {
            socket.close()
            worker.handshakeFailed(self, reason: failure)
        } else if closing {
            socket.close()
            worker.handshakeFailed(self, reason: nil)
        } else {
            worker.handshakeFinished(self)
        }
    }
}
