import Config
import EventLoop
import HTTP2
import HTTPIO
import ProxyCore

/// One HTTP/2 client connection (ALPN `h2`, or h2c with prior knowledge): the socket's bytes go
/// into the nghttp2 session (the frame codec), the session's events go to the
/// `HTTP2ConnectionStateMachine`, and the actions that come back are executed
/// (`+Actions`). It decides nothing.
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
    let session: HTTP2ServerSession
    var machine: HTTP2ConnectionStateMachine<BodySink>
    var actions = ActionBuffer()
    /// The streams' I/O (input, upstream), by id.
    var streams = StreamTable<HTTP2StreamHost>()
    /// Response bytes moved from an upstream on their way into the session (empty between
    /// actions, so one serves every stream).
    let streamOutput = OwnedEvBuffer()
    /// The stream the client actions being executed belong to (`ProxyAction.stream`).
    var current: Int32 = 0
    var timers: ConnectionTimers!
    /// The session's output is written once per loop iteration, after every stream that had
    /// something to send on it (`flush()`).
    var flushCall: DeferredCall?
    var closed = false
    var flushing = false
    /// A flush was asked for while one ran.
    var flushAgain = false

    init(
        socket: BufferedSocket, peer: SocketAddress, secure: Bool, settings: ListenerConfig.HTTP2Settings,
        worker: Worker
    ) throws(HTTP2Error) {
        self.socket = socket
        self.peer = peer
        self.peerHost = peer.host
        self.worker = worker
        self.base = worker.base
        var sessionSettings = HTTP2Settings()
        sessionSettings.maxConcurrentStreams = UInt32(settings.maxConcurrentStreams)
        sessionSettings.initialStreamWindow = Int32(settings.streamWindow)
        sessionSettings.connectionWindow = Int32(settings.connectionWindow)
        sessionSettings.maxHeaderListSize = UInt32(clamping: worker.settings.limits.headerBytes)
        session = try HTTP2ServerSession(settings: sessionSettings)
        machine = HTTP2ConnectionStateMachine(
            settings: worker.settings, client: Array(peer.host.utf8), secure: secure, tools: worker.ruleTools,
            now: worker.base.nowMilliseconds, actions: &actions)
        timers = ConnectionTimers(base: base) { [unowned self] id in self.timerFired(id) }
        flushCall = DeferredCall(base: base) { [unowned self] in self.flushNow() }
        socket.delegate = self
        socket.setWatermarks(readHigh: Self.readHigh, writeLow: 0)
        socket.enable()
        execute()
        // Bytes read before the hand-over (the preface a plain listener sniffed).
        if socket.input.count > 0 { socketReadable(socket) }
    }

    var now: Int64 { base.nowMilliseconds }

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
            let flood = failure.code == HTTP2Error.flooded || failure.code == HTTP2Error.tooManyContinuations
            machine.receiveFailed(
                flood: flood, socketOutput: socket.output.count, now: now, actions: &actions)
        }
        machine.received(headerBlockOpen: session.receivingHeaderBlock, now: now, actions: &actions)
        execute()
    }

    func socketWritable(_ socket: BufferedSocket) {
        guard !closed else { return }
        machine.socketDrained(socketOutput: socket.output.count, now: now, actions: &actions)
        execute()
    }

    func socket(_ socket: BufferedSocket, events: SocketEvents) {
        guard !closed else { return }
        machine.close(now: now, actions: &actions)
        execute()
    }

    private func timerFired(_ id: TimerID) {
        guard !closed else { return }
        machine.timer(id, now: now, actions: &actions)
        execute()
    }

    /// Reports the session's events to the machine, each one's actions executed before the
    /// next (an event reads the stream's input as the previous actions left it).
    func dispatchEvents() {
        while !closed, let event = session.nextEvent() {
            switch event {
            case .request(let id, let head, let endStream):
                startStream(id, head, endStream: endStream)
            case .malformed(let id, let reason):
                machine.malformed(
                    id, detail: "malformed HTTP/2 request: \(reason)", now: now, actions: &actions)
            case .headersTooLarge(let id):
                machine.headersTooLarge(id, now: now, actions: &actions)
            case .data(let id, _):
                guard let stream = streams[id] else { continue }
                machine.dataArrived(
                    id, input: stream.input.buffer, taken: stream.taken, sink: stream.sink,
                    levels: stream.levels,
                    now: now, actions: &actions)
            case .endStream(let id):
                guard let stream = streams[id] else { continue }
                machine.endStream(
                    id, input: stream.input.buffer, taken: stream.taken, sink: stream.sink,
                    levels: stream.levels,
                    now: now, actions: &actions)
            case .reset(let id, _):
                machine.streamReset(id, now: now, actions: &actions)
            case .closed(let id, _):
                streamClosed(id)
            case .goaway(let lastStreamID, _):
                machine.goAwayReceived(lastStreamID: lastStreamID)
            case .terminating:
                machine.sessionTerminating(now: now, actions: &actions)
            }
            run()
        }
    }

    /// A request's head arrived: its stream's DATA goes straight into the stream's input from
    /// now on, and the machine starts its exchange (or refuses it).
    private func startStream(_ id: Int32, _ head: HTTP2RequestHead, endStream: Bool) {
        let stream = HTTP2StreamHost(id: id, connection: self)
        streams[id] = stream
        let request = HTTP2Request(
            method: head.method, path: head.path, authority: head.authority, fields: head.fields,
            endStream: endStream)
        machine.requestHead(
            id, request, input: stream.input.buffer, taken: stream.taken, sink: stream.sink,
            levels: stream.levels,
            settings: worker.settings, now: now, actions: &actions)
        guard endStream else { return }
        run()
        machine.endStream(
            id, input: stream.input.buffer, taken: stream.taken, sink: stream.sink, levels: stream.levels,
            now: now, actions: &actions)
    }

    private func streamClosed(_ id: Int32) {
        if let stream = streams[id] {
            machine.streamClosed(
                id, input: stream.input.buffer, taken: stream.taken, now: now, actions: &actions)
        } else {
            machine.streamClosed(id, input: NoBytes(), taken: nil, now: now, actions: &actions)
        }
    }

    // MARK: output and lifetime

    /// Asks for the session's output to be written later on this loop iteration: the answers
    /// of the streams that became ready on one iteration go out together (one pass of the
    /// session, one `writev`). A flush asked for while one runs makes that one go round again.
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
            let held = machine.holdsOutput(socketOutput: socket.output.count, actions: &actions)
            run()
            if held || closed { break }
            guard writeSession() else { return }
            // Frames sent can close streams (libnghttp2's own RST_STREAM for DATA past a
            // `content-length`): their exchanges hear of it now, not at the next read.
            dispatchEvents()
            machine.sessionWrote(now: now, actions: &actions) { [session] in
                session.outboundCount(streamID: $0)
            }
            run()
        } while flushAgain && !closed
        guard !closed else { return }
        machine.flushed(
            socketOutput: socket.output.count, sessionDone: !session.wantsRead && !session.wantsWrite,
            queuedOutbound: session.queuedOutboundCount, now: now, actions: &actions
        ) { [session] id in
            session.outboundCount(streamID: id) > 0 && session.isPeerWindowClosed(streamID: id)
        }
        run()
    }

    /// Writes the session's frames into the socket's output; `false` when the session broke
    /// (the connection is closed).
    @discardableResult
    func writeSession() -> Bool {
        var output = socket.output
        do throws(HTTP2Error) {
            _ = try session.writeOutput(into: &output)
            return true
        } catch {
            machine.close(now: now, actions: &actions)
            run()
            return false
        }
    }

    /// The worker drains: a graceful GOAWAY; open streams finish.
    func drain() {
        guard !closed else { return }
        machine.drain(now: now, actions: &actions)
        execute()
    }

    func hashingProgressed() {
        guard !closed else { return }
        for stream in streams.values {
            machine.hashingProgressed(
                stream.id, sink: stream.sink, levels: stream.levels, now: now, actions: &actions)
            run()
        }
        flush()
    }

    /// Closes the connection (the worker stops).
    func close() {
        guard !closed else { return }
        machine.close(now: now, actions: &actions)
        execute()
    }
}
