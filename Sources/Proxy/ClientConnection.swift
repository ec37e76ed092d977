import Config
import EventLoop
import HTTP1
import HTTPCore
import HTTPIO
import MultipartEncoding
import MultipartParsing
import ProxyCore

/// One client connection: reads requests in order (keep-alive, pipelining), forwards each
/// through an upstream connection and relays the response, with backpressure both ways.
///
/// Lives on its worker's loop thread. The worker keeps it alive until `close()`.
final class ClientConnection: BufferedSocketDelegate {
    /// Buffers above this stop the reading side (libevent watermarks).
    static let highWater = 256 * 1024

    let socket: BufferedSocket
    unowned let worker: Worker
    /// The configuration of the current request (taken from the worker when it starts).
    var config: ServerConfig
    let peer: SocketAddress
    /// The peer's numeric address, formatted once (X-Forwarded-For, logs).
    lazy var peerHost = peer.host
    var scanner: HeadScanner
    var exchange: Exchange?
    var closing = false
    var closed = false
    var clientHalfClosed = false
    /// After an error answer while the client may still be sending: FIN sent, the rest read
    /// and discarded until the client closes or `lingerMilliseconds` pass (nginx's
    /// lingering close), so the client reads the answer instead of a reset.
    var lingerAfterFlush = false
    var headerTimer: Timer?
    /// Set while lingering: closes the connection when the time is up.
    var lingerTimer: Timer?
    static let lingerMilliseconds: Int64 = 5_000

    init(socket: BufferedSocket, peer: SocketAddress, worker: Worker) {
        self.socket = socket
        self.peer = peer
        self.worker = worker
        self.config = worker.config
        self.scanner = HeadScanner(limit: worker.config.limits.headerBytes, requireCRLF: true)
        socket.delegate = self
        socket.setWatermarks(readHigh: Self.highWater, writeLow: 0)
        socket.setTimeouts(readMilliseconds: config.timeouts.idle, writeMilliseconds: config.timeouts.idle)
        headerTimer = Timer(base: worker.base) { [unowned self] in self.headerTimedOut() }
        socket.enable()
    }

    // MARK: socket events

    func socketReadable(_ socket: BufferedSocket) {
        if closing {
            socket.input.drain(socket.input.count)
            return
        }
        if exchange == nil {
            readRequests()
        } else {
            pumpRequestBody()
        }
    }

    func socketWritable(_ socket: BufferedSocket) {
        if closing {
            if socket.output.count == 0 { finishClosing() }
            return
        }
        resumeResponse()
    }

    func socket(_ socket: BufferedSocket, events: SocketEvents) {
        if lingerTimer != nil { return close() }
        if events.contains(.timeout) {
            if events.contains(.reading), let exchange, exchange.clientBodyRead {
                // The whole request is in: a silent client is waiting for its answer (the
                // upstream's timeouts govern). libevent stopped reading; go on.
                resumeReading()
                return
            }
            if let exchange, !exchange.responseStarted {
                fail(ProxyError(.requestTimeout, detail: "client too slow"))
            } else if exchange == nil, scanner.scanned > 0 || socket.input.count > 0 {
                fail(ProxyError(.requestTimeout, detail: "request header not received in time"))
            } else {
                close()
            }
            return
        }
        if events.contains(.endOfFile), !events.contains(.error) {
            // The client half-closed: it may still read. What it sent before the FIN counts;
            // a response being written (or an error being flushed) still goes out.
            clientHalfClosed = true
            socket.setReading(false)
            guard let exchange else { return flushAndClose() }
            if !exchange.clientBodyRead { pumpRequestBody() }
            return
        }
        clientGone()
    }

    /// The client closed (or reset) before its request was whole: the upstream gets nothing
    /// more, the exchange is logged as 499.
    func clientGone() {
        if let exchange {
            exchange.error = "client closed the connection"
            abortUpstream()
            worker.log(exchange, status: 499, client: peer)
        }
        close()
    }

    /// Reads from the client again, unless it has half-closed (nothing more will come).
    func resumeReading() {
        if !clientHalfClosed { socket.setReading(true) }
    }

    // MARK: reading requests

    func readRequests() {
        guard !closing, exchange == nil else { return }
        let input = socket.input
        if input.count == 0 { return }
        if scanner.scanned == 0 { config = worker.config }
        if scanner.scanned == 0 { headerTimer?.schedule(milliseconds: config.timeouts.header) }
        let headBytes: [UInt8]
        do throws(HTTP1Error) {
            guard let bytes = try input.takeHead(&scanner) else { return }
            headBytes = bytes
        } catch {
            return fail(ProxyError(error))
        }
        headerTimer?.cancel()
        scanner = HeadScanner(limit: config.limits.headerBytes, requireCRLF: true)
        var head: RequestHead
        do throws(HTTP1Error) {
            head = try HeadParser.parseRequest(headBytes)
        } catch {
            return fail(ProxyError(error))
        }
        dropUnderscoreFields(&head)
        startExchange(head)
    }

    private func headerTimedOut() {
        guard exchange == nil, !closing else { return }
        fail(ProxyError(.requestTimeout, detail: "request header not received in time"))
    }

    // MARK: errors and the end of a connection

    /// Answers with an error (when no response has started) and closes the connection.
    func fail(_ error: ProxyError) {
        guard !closed else { return }
        abortUpstream()
        if error.status >= 500 {
            ErrorLog.shared.write(
                .warn,
                "\(error.status) for \(peerHost) \(exchange?.head.method ?? "-") \(exchange.map { String($0.head.path) } ?? "-"): \(error.detail)"
            )
        }
        if let exchange {
            exchange.error = error.detail
            exchange.failure = error
            if exchange.responseStarted {
                worker.log(exchange, status: exchange.upstreamStatus ?? error.status, client: peer)
                return close()
            }
        }
        let accept = exchange?.head.headers["Accept"] ?? ""
        let body: String
        let contentType: String
        if accept.contains("application/json") {
            body = "{\"status\":\(error.status),\"error\":\(jsonString(error.detail))}\n"
            contentType = "application/json"
        } else {
            body = "\(error.status) \(ProxyError.reasonPhrase(error.status)): \(error.detail)\n"
            contentType = "text/plain; charset=utf-8"
        }
        var response = "HTTP/1.1 \(error.status) \(ProxyError.reasonPhrase(error.status))\r\n"
        response +=
            "Content-Type: \(contentType)\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n"
        response += "Date: \(String(decoding: responseDate(), as: UTF8.self))\r\n"
        if let id = exchange?.requestID { response += "X-Request-Id: \(id)\r\n" }
        response += "\r\n"
        socket.output.add(response)
        if exchange?.head.method != "HEAD" { socket.output.add(body) }
        if let exchange {
            exchange.bytesOut += Int64(response.utf8.count + body.utf8.count)
            worker.log(exchange, status: error.status, client: peer)
        } else {
            worker.logEarly(status: error.status, client: peer, error: error)
        }
        // The client may still be sending the request (or its body): linger.
        exchange = nil
        flushAndClose(linger: true)
    }

    /// The worker drains: an idle connection closes now, a busy one after its exchange.
    func drain() {
        if exchange == nil { flushAndClose() }
    }

    /// Stops reading, sends what is queued, then closes; with `linger`, the client's unread
    /// bytes are discarded for a while first (see `lingerAfterFlush`).
    func flushAndClose(linger: Bool = false) {
        closing = true
        lingerAfterFlush = linger && !clientHalfClosed
        socket.setReading(false)
        socket.input.drain(socket.input.count)
        if socket.output.count == 0 {
            finishClosing()
        }
    }

    /// The output is flushed: close, or half-close and linger.
    private func finishClosing() {
        if lingerTimer != nil { return }
        guard lingerAfterFlush else { return close() }
        socket.shutdownWrite()
        socket.setReading(true)
        lingerTimer = Timer(base: worker.base) { [unowned self] in self.close() }
        lingerTimer?.schedule(milliseconds: Self.lingerMilliseconds)
    }

    /// Drops the upstream side of the current exchange without completing its request.
    func abortUpstream() {
        guard let exchange, let upstream = exchange.upstream else { return }
        exchange.upstream = nil
        worker.pool.discard(upstream)
    }

    func close() {
        guard !closed else { return }
        closed = true
        headerTimer?.cancel()
        headerTimer = nil
        lingerTimer?.cancel()
        lingerTimer = nil
        abortUpstream()
        exchange = nil
        socket.close()
        worker.closed(self)
    }
}
