import Config
import EventLoop
import HTTP1
import HTTP2
import HTTPCore
import HTTPIO
import ProxyCore

/// One HTTP/2 client connection (ALPN `h2`, or h2c with prior knowledge): the socket's bytes
/// go into the nghttp2 session, its events start and feed one `HTTP2StreamHost` per stream,
/// and what the session has to send goes back to the socket.
///
/// Lives on its worker's loop thread; the worker keeps it alive until it closes.
final class HTTP2Connection: BufferedSocketDelegate, ServedConnection {
    /// Bytes read per wake-up before the session takes them: a large upload sends one
    /// WINDOW_UPDATE per wake-up, half as many as with HTTP/1.1's 256 KiB (about as many as
    /// nginx h2). The upstream `writev`s stay bounded by the exchange's watermark.
    static let readHigh = 512 * 1024

    let socket: BufferedSocket
    unowned let worker: Worker
    let base: EventBase
    let peer: SocketAddress
    let peerHost: String
    /// `peerHost`'s bytes, as each stream's exchange takes them.
    let peerHostBytes: [UInt8]
    let secure: Bool
    let session: HTTP2ServerSession
    /// The response bytes of the stream acting now, on their way into the session: empty
    /// between actions (`HTTP2StreamHost.pushOutput`), so one serves every stream.
    let streamOutput = OwnedEvBuffer()
    var random = SecureRandom()
    /// Action buffers of closed streams, for the next ones (two allocations per stream fewer).
    private var spareActions: [ActionBuffer] = []
    private var httpDate = HTTPDate()
    private var streams = StreamTable<HTTP2StreamHost>()
    /// Streams whose exchange ended but which the session still holds (their answer goes).
    private var finishing = StreamTable<HTTP2StreamHost>()
    private var idleTimer: Timer?
    private var stallTimer: Timer?
    /// The one timer of all the streams' deadlines, armed for the earliest
    /// (`streamDeadline`); a deadline cancelled meanwhile makes it fire for nothing once.
    private var deadlineTimer: Timer?
    private var deadlineArmedFor: Int64?
    /// The session's output is written once per loop iteration, after every stream that had
    /// something to send on it (`flush()`).
    private var flushCall: DeferredCall?
    /// When the client's window last closed on a response that waits to go.
    private var stalledSince: Int64?
    /// When the header block in progress began (`armIdleTimer`).
    private var headerBlockSince: Int64?
    private var closed = false
    private var flushing = false
    /// A flush was asked for while one ran.
    private var flushAgain = false
    /// The session is done: the socket closes once its output is written.
    private var closing = false
    /// Reading stopped because the client does not take what was written (`holdOutput`).
    private var readingPaused = false

    init(
        socket: BufferedSocket, peer: SocketAddress, secure: Bool, settings: ListenerConfig.HTTP2Settings,
        worker: Worker
    ) throws(HTTP2Error) {
        self.socket = socket
        self.peer = peer
        self.peerHost = peer.host
        self.peerHostBytes = Array(peerHost.utf8)
        self.secure = secure
        self.worker = worker
        self.base = worker.base
        var sessionSettings = HTTP2Settings()
        sessionSettings.maxConcurrentStreams = UInt32(settings.maxConcurrentStreams)
        sessionSettings.initialStreamWindow = Int32(settings.streamWindow)
        sessionSettings.connectionWindow = Int32(settings.connectionWindow)
        sessionSettings.maxHeaderListSize = UInt32(clamping: worker.settings.limits.headerBytes)
        session = try HTTP2ServerSession(settings: sessionSettings)
        idleTimer = Timer(base: base) { [unowned self] in self.idleTimedOut() }
        stallTimer = Timer(base: base) { [unowned self] in self.stallTimedOut() }
        deadlineTimer = Timer(base: base) { [unowned self] in self.deadlinesDue() }
        flushCall = DeferredCall(base: base) { [unowned self] in self.flushNow() }
        socket.delegate = self
        socket.setWatermarks(readHigh: Self.readHigh, writeLow: 0)
        socket.enable()
        flush()
        // Bytes read before the hand-over (the preface a plain listener sniffed).
        if socket.input.count > 0 { socketReadable(socket) }
        armIdleTimer()
    }

    /// The `Date` value for a response sent now.
    func date(_ now: Int64) -> [UInt8] { httpDate.value(at: now / 1000) }

    // MARK: socket events

    func socketReadable(_ socket: BufferedSocket) {
        guard !closed else { return }
        var failure: HTTP2Error?
        socket.input.forEachChunk { chunk in
            do throws(HTTP2Error) {
                try session.receive(chunk)
                return true
            } catch {
                failure = error
                return false
            }
        }
        socket.input.drain(socket.input.count)
        dispatchEvents()
        if let failure {
            // A connection error (a flood, a protocol violation): nghttp2 queued its GOAWAY,
            // or one is sent now; it goes out, then the connection closes.
            let flood = failure.code == HTTP2Error.flooded || failure.code == HTTP2Error.tooManyContinuations
            try? session.goAway(code: flood ? .enhanceYourCalm : .protocolError)
            for stream in streams.values { stream.clientGone() }
            closing = true
            // A client that left this much unread will not read the GOAWAY either.
            if outputHeld { return closeConnection() }
        }
        flush()
        armIdleTimer()
    }

    func socketWritable(_ socket: BufferedSocket) {
        guard !closed else { return }
        if closing, socket.output.count == 0 { return closeConnection() }
        // The output drained: the session's frames go on, and reading resumes (`holdOutput`).
        // Held output the client took is progress: a slow reader of a large response is not
        // stalled (`watchForStall` starts the clock again if it still is).
        if readingPaused {
            stallTimer?.cancel()
            stalledSince = nil
        }
        flush()
    }

    func socket(_ socket: BufferedSocket, events: SocketEvents) {
        guard !closed else { return }
        closeConnection()
    }

    // MARK: session events

    private func dispatchEvents() {
        while let event = session.nextEvent() {
            switch event {
            case .request(let id, let head, let endStream):
                startStream(id, head, endStream: endStream)
            case .malformed(let id, let reason):
                // After its head (DATA past its content-length, bad trailers) the stream's
                // exchange ends as malformed; before, there is none: the refusal is logged.
                if let stream = streams[id] {
                    stream.malformed("malformed HTTP/2 request: \(reason)")
                } else {
                    logRefused(id, status: 400, detail: "malformed HTTP/2 request: \(reason)")
                }
            case .headersTooLarge(let id):
                // Over `limits.header_bytes`: 431, as on HTTP/1.1.
                answerRefused(
                    id,
                    ProxyError(
                        .headTooLarge, detail: "request header section too large", limit: "header_bytes"))
            case .data(let id, _):
                streams[id]?.dataArrived()
            case .endStream(let id):
                streams[id]?.endOfStream()
            case .reset(let id, _):
                streams[id]?.clientGone()
            case .closed(let id, _):
                let stream = streams.removeValue(forKey: id) ?? finishing.removeValue(forKey: id)
                stream?.streamClosed()
            case .goaway, .terminating:
                break
            }
        }
    }

    /// A request's head arrived: its stream host starts the exchange.
    private func startStream(_ id: Int32, _ http2Head: HTTP2RequestHead, endStream: Bool) {
        // `:path` is normalised (or refused) as an HTTP/1.1 request line's target is: routes
        // see, and the upstream gets, the one spelling whatever the transport.
        let target: String
        do throws(HTTP1Error) {
            target = try RequestTarget.forwarded(http2Head.path.utf8, method: http2Head.method)
        } catch {
            return answerRefused(id, ProxyError(error))
        }
        var head = RequestHead(
            method: http2Head.method, target: target, version: .http2, headers: Self.http1Fields(http2Head))
        let dropped = worker.settings.underscoresInHeaders ? 0 : head.removeUnderscoreFields()
        if dropped > 0 {
            worker.metrics.update { $0.ruleActions["drop_underscore_header", default: 0] += dropped }
        }
        let framing: BodyFraming
        do throws(HTTP1Error) {
            framing = try MessageFraming.http2Request(head, endsStream: endStream)
        } catch {
            try? session.reset(streamID: id, code: .protocolError)
            return logRefused(id, status: 400, detail: "content-length is invalid")
        }
        let stream = HTTP2StreamHost(id: id, head: head, framing: framing, connection: self)
        if stream.finished {
            finishing[id] = stream
        } else {
            streams[id] = stream
        }
        if endStream { stream.endOfStream() }
    }

    /// The fields an HTTP/1.1 upstream reads: `Host` from `:authority` (unless a `host`
    /// field came), and the `cookie` crumbs joined with "; " (RFC 9113 §8.2.3). The received
    /// list is changed in place: a copy of every field cost 2 % of an h2 request's instructions.
    static func http1Fields(_ head: HTTP2RequestHead) -> HeaderFields {
        var fields = head.fields
        if fields.count(of: "cookie") > 1 {
            var cookie: [UInt8] = []
            fields.forEachField { name, value in
                guard name.elementsEqual("cookie".utf8) else { return }
                if !cookie.isEmpty { cookie += "; ".utf8 }
                cookie += value
            }
            fields.removeAll(named: "cookie")
            fields.append(name: "cookie".utf8, value: cookie)
        }
        if let authority = head.authority, !fields.contains("host") {
            fields.prepend(name: "Host".utf8, value: authority.utf8)
        }
        return fields
    }

    /// An action buffer for a new stream: a closed stream's, or a new one.
    func takeActionBuffer() -> ActionBuffer {
        spareActions.popLast() ?? ActionBuffer()
    }

    /// Keeps a closed stream's action buffer for a later stream, when every action in it was
    /// taken (a buffer with actions left would hand them to the next stream).
    func giveBack(_ actions: ActionBuffer) {
        guard actions.isEmpty, spareActions.count < 32 else { return }
        spareActions.append(actions)
    }

    /// A stream's exchange ended; the session still sends its answer.
    func streamFinished(_ stream: HTTP2StreamHost) {
        guard streams.removeValue(forKey: stream.id) != nil else { return }
        finishing[stream.id] = stream
    }

    /// A request refused before its exchange (a header list too large, a target that cannot be
    /// normalised): its error answer, then RST_STREAM once it went (the client may still be
    /// sending), and its log line.
    private func answerRefused(_ id: Int32, _ error: ProxyError) {
        let answer = ErrorResponse.make(error, request: nil, requestID: nil, date: date(base.nowMilliseconds))
        do throws(HTTP2Error) {
            try session.respond(streamID: id, status: answer.status, fields: answer.headers, hasBody: true)
            answer.body.withUnsafeBytes { session.send(streamID: id, bytes: $0) }
            session.endStream(streamID: id)
            try session.resetWhenAnswered(streamID: id)
        } catch {}
        logRefused(id, status: error.status, detail: error.detail, error: error)
    }

    /// A request refused before its exchange: its log line.
    private func logRefused(_ id: Int32, status: Int, detail: String, error: ProxyError? = nil) {
        var record = AccessRecord(
            early: error ?? ProxyError(.badRequest, detail: detail), now: base.nowMilliseconds)
        record.clientProtocol = .http2(streamID: id)
        record.status = status
        worker.log(record, client: peer)
    }

    // MARK: output and lifetime

    /// Asks for the session's output to be written later on this loop iteration: every stream
    /// event ends in a flush, and the answers of the streams that became ready on one
    /// iteration go out together (one pass of the session, one `writev`). A flush asked for
    /// while one runs (a stream that read on queued more) makes that one go round again.
    func flush() {
        guard !closed else { return }
        guard !flushing else {
            if session.wantsWrite { flushAgain = true }
            return
        }
        flushCall?.schedule()
    }

    /// Writes what the session has to send; streams whose answer drained may read on.
    private func flushNow() {
        guard !closed else { return }
        flushCall?.cancel()
        flushing = true
        defer { flushing = false }
        repeat {
            flushAgain = false
            if holdOutput() { break }
            var output = socket.output
            do throws(HTTP2Error) {
                _ = try session.writeOutput(into: &output)
            } catch {
                return closeConnection()
            }
            // Frames sent can close streams (libnghttp2's own RST_STREAM for DATA past a
            // `content-length`): their exchanges hear of it now, not at the next read.
            dispatchEvents()
            guard !closed else { return }
            var drained: [HTTP2StreamHost] = []
            streams.forEachValue { stream in if stream.waitsForClientDrain { drained.append(stream) } }
            for stream in drained { stream.outputDrained() }
        } while flushAgain && !closed
        guard !closed else { return }
        _ = holdOutput()
        if !session.wantsRead, !session.wantsWrite, streams.isEmpty { closing = true }
        if closing, socket.output.count == 0 { return closeConnection() }
        watchForStall()
    }

    /// Whether the socket holds more unwritten output than the high watermark
    /// (`ProxySettings.highWater`): the client is not reading.
    private var outputHeld: Bool { socket.output.count > worker.settings.highWater }

    /// While the socket's output is above the high watermark the session's frames stay in the
    /// session and the socket is not read; returns whether they do. What a client provokes
    /// without reading is then bounded by libnghttp2 (SETTINGS and PING acknowledgements by
    /// `HTTP2Settings.maxOutboundAcks`, past which `receive` throws `flooded`), by the streams'
    /// windows and by the kernel's buffers, not by what the proxy would write for it. The
    /// write callback (output drained) pulls again and reading resumes; streams that wait
    /// for their answer to drain are woken only by a pull; the stall timer closes a
    /// connection held this way after `timeouts.idle`.
    private func holdOutput() -> Bool {
        let held = outputHeld
        if held != readingPaused {
            readingPaused = held
            socket.setReading(!held)
        }
        return held
    }

    /// A response that cannot go because the client keeps its window closed, or output the
    /// client does not read: after `timeouts.idle` without the window opening or the output
    /// draining, the connection closes (a client that never reads must not hold a stream, an
    /// upstream connection and their buffers forever).
    private func watchForStall() {
        let isStalled = { [session] (stream: HTTP2StreamHost) in
            session.outboundCount(streamID: stream.id) > 0 && session.isPeerWindowClosed(streamID: stream.id)
        }
        // Nothing queued (the common case after a write): nothing can be stalled.
        let stalled =
            outputHeld
            || (session.queuedOutboundCount > 0
                && (streams.contains(where: isStalled) || finishing.contains(where: isStalled)))
        if !stalled {
            stallTimer?.cancel()
            stalledSince = nil
        } else if stalledSince == nil {
            stalledSince = base.nowMilliseconds
            stallTimer?.schedule(milliseconds: worker.config.timeouts.idle)
        }
    }

    private func stallTimedOut() {
        guard !closed, stalledSince != nil else { return }
        try? session.goAway(code: .noError)
        closing = true
        flushNow()
        if !closed { closeConnection() }
    }

    /// A stream armed a timer for `deadline`: the connection's timer fires by then.
    func streamDeadline(_ deadline: Int64) {
        if let armed = deadlineArmedFor, armed <= deadline { return }
        deadlineArmedFor = deadline
        deadlineTimer?.schedule(milliseconds: max(0, deadline - base.nowMilliseconds))
    }

    /// The connection's deadline timer fired: the streams report what is due, and it is armed
    /// again for the earliest deadline left.
    private func deadlinesDue() {
        guard !closed else { return }
        deadlineArmedFor = nil
        let now = base.nowMilliseconds
        var next: Int64?
        for stream in streams.values {
            if let deadline = stream.expireTimers(now: now) { next = min(next ?? deadline, deadline) }
        }
        if let next { streamDeadline(next) }
    }

    /// The connection's own timer: `timeouts.header` from the start of a header block that has
    /// not ended (as for a partial HTTP/1.1 head; the connection can carry nothing else until
    /// it ends), else `timeouts.idle` while no stream is open (each stream times its own
    /// silence).
    private func armIdleTimer() {
        if session.receivingHeaderBlock {
            guard headerBlockSince == nil else { return }
            headerBlockSince = base.nowMilliseconds
            idleTimer?.schedule(milliseconds: worker.config.timeouts.header)
            return
        }
        headerBlockSince = nil
        guard streams.isEmpty else {
            idleTimer?.cancel()
            return
        }
        idleTimer?.schedule(milliseconds: worker.config.timeouts.idle)
    }

    private func idleTimedOut() {
        guard !closed, streams.isEmpty || headerBlockSince != nil else { return }
        try? session.goAway(code: .noError)
        flushNow()
        closeConnection()
    }

    /// The worker drains: a graceful GOAWAY; open streams finish.
    func drain() {
        guard !closed else { return }
        try? session.shutdown()
        flush()
    }

    func hashingProgressed() {
        for stream in streams.values { stream.hashingProgressed() }
    }

    /// Closes the connection (the worker stops).
    func close() {
        closeConnection()
    }

    private func closeConnection() {
        guard !closed else { return }
        closed = true
        idleTimer?.cancel()
        idleTimer = nil
        stallTimer?.cancel()
        stallTimer = nil
        deadlineTimer?.cancel()
        deadlineTimer = nil
        flushCall?.cancel()
        flushCall = nil
        for stream in streams.values + finishing.values { stream.streamClosed() }
        streams.removeAll()
        finishing.removeAll()
        socket.close()
        worker.closed(self)
    }
}
