import Config
import EventLoop

/// A connection on a plain listener that takes h2c with prior knowledge, until its first
/// bytes say which protocol it speaks: the HTTP/2 connection preface (RFC 9113 §3.4) makes it
/// an `HTTP2Connection`, anything else an HTTP/1.1 `ClientConnection`. The bytes stay in the
/// socket's input for whichever takes it. A client silent for `timeouts.header` is closed.
final class PrefaceSniffer: BufferedSocketDelegate {
    /// `PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`.
    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    let socket: BufferedSocket
    let peer: SocketAddress
    let settings: ListenerConfig.HTTP2Settings
    private unowned let worker: Worker
    private var timer: Timer?

    init(socket: BufferedSocket, peer: SocketAddress, settings: ListenerConfig.HTTP2Settings, worker: Worker)
    {
        self.socket = socket
        self.peer = peer
        self.settings = settings
        self.worker = worker
        socket.delegate = self
        socket.enable()
        let timer = Timer(base: worker.base) { [unowned self] in self.finish(nil) }
        timer.schedule(milliseconds: worker.config.timeouts.header)
        self.timer = timer
    }

    /// What the first bytes are: HTTP/2's preface (`true`), not it (`false`), or too few to
    /// tell (`nil`).
    static func isPreface(_ bytes: [UInt8]) -> Bool? {
        let count = min(bytes.count, preface.count)
        guard bytes[..<count].elementsEqual(preface[..<count]) else { return false }
        return count == preface.count ? true : nil
    }

    func socketReadable(_ socket: BufferedSocket) {
        var first: [UInt8] = []
        socket.input.forEachChunk(limit: Self.preface.count) { chunk in
            first.append(contentsOf: chunk.prefix(Self.preface.count - first.count))
            return first.count < Self.preface.count
        }
        guard let http2 = Self.isPreface(first) else { return }
        finish(http2)
    }

    func socketWritable(_ socket: BufferedSocket) {}

    func socket(_ socket: BufferedSocket, events: SocketEvents) {
        finish(nil)
    }

    /// Closes a connection that has not spoken yet (the worker stops).
    func abandon() {
        finish(nil)
    }

    /// Hands the socket on once: to HTTP/2, to HTTP/1.1, or closes it (`nil`).
    private func finish(_ http2: Bool?) {
        guard let timer else { return }
        timer.cancel()
        self.timer = nil
        socket.delegate = nil
        worker.sniffed(self, http2: http2)
    }
}
