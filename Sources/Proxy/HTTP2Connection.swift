import Config
import EventLoop
import HTTP2
import HTTPCore
import HTTPIO
import ProxyCore

/// One HTTP/2 client connection (ALPN `h2`, or h2c with prior knowledge): the socket's bytes go
/// into the nghttp2 session (the frame codec), the session's events go to the
/// `HTTP2ConnectionStateMachine`, and the actions that come back are executed (by its
/// `HTTP2Transport`). It decides nothing.
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
    /// The machine's actions, queued until `transport` executes them.
    var actions = ActionBuffer()
    /// Executes the actions; it holds the connection, so `tearDown()` lets it go.
    private(set) var transport: HTTP2Transport?
    /// The streams' I/O (input, upstream), by id: made when the session has a request's head.
    var streams = StreamTable<HTTP2StreamHost>()
    /// The socket's reads, which the streams' inputs refer to rather than copy: as long as
    /// they hold at most four reads of memory.
    let reads = PinnedReads(limit: 4 * readHigh)
    /// Response bytes moved from an upstream on their way into the session (empty between
    /// actions, so one serves every stream); and the input of a stream the shell has none for.
    let streamOutput = OwnedEvBuffer()
    let noInput = OwnedEvBuffer()
    var timers: ConnectionTimers!
    /// The session's output is written once per loop iteration, after every stream that had
    /// something to send on it (`flush()`).
    var flushCall: DeferredCall?
    var closed = false

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
        transport = HTTP2Transport(connection: self)
        timers = ConnectionTimers(base: base) { [unowned self] id in self.timerFired(id) }
        flushCall = DeferredCall(base: base) { [unowned self] in self.flushNow() }
        session.inboundSinks = { [unowned self] id in self.openStream(id) }
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
        let failure = reads.feed(socket.input, footprint: socket.inputFootprint, to: session.receive)
        dispatchEvents()
        if let failure {
            machine.receiveFailed(
                flood: failure.isFlood, socketOutput: socket.output.count, now: now, actions: &actions)
        }
        machine.received(headerBlockOpen: session.receivingHeaderBlock, now: now, actions: &actions)
        execute()
    }

    func socketWritable(_ socket: BufferedSocket) {
        handle { $0.socketDrained(socketOutput: socket.output.count, now: $1, actions: &$2) }
    }

    func socket(_ socket: BufferedSocket, events: SocketEvents) { close() }

    private func timerFired(_ id: TimerID) { handle { $0.timer(id, now: $1, actions: &$2) } }

    /// Reports an event of the connection's own to the machine, then executes its actions.
    private func handle(
        _ event: (inout HTTP2ConnectionStateMachine<BodySink>, Int64, inout ActionBuffer) -> Void
    ) {
        guard !closed else { return }
        event(&machine, now, &actions)
        execute()
    }

    /// A request's head is complete: its stream's DATA goes into the stream's input from now on.
    private func openStream(_ id: Int32) -> any ByteSink {
        let stream = HTTP2StreamHost(id: id, connection: self)
        streams[id] = stream
        return PinnedReadSink(stream.input, reads: reads)
    }

    /// Reports the session's events to the machine, each one's actions executed before the
    /// next (an event reads the stream's input as the previous actions left it).
    func dispatchEvents() {
        while !closed, let event = session.nextEvent() {
            switch event {
            case .request(let id, let head, let endStream):
                let request = HTTP2Request(
                    method: head.method, path: head.path, authority: head.authority, fields: head.fields,
                    endStream: endStream)
                machine.requestHead(
                    id, request, streams: self, settings: worker.settings, now: now, actions: &actions)
            case .malformed(let id, let reason):
                machine.malformed(
                    id, detail: "malformed HTTP/2 request: \(reason)", now: now, actions: &actions)
            case .headersTooLarge(let id): machine.headersTooLarge(id, now: now, actions: &actions)
            case .data(let id, _): machine.dataArrived(id, streams: self, now: now, actions: &actions)
            case .endStream(let id): machine.endStream(id, streams: self, now: now, actions: &actions)
            case .reset(let id, _): machine.streamReset(id, now: now, actions: &actions)
            case .closed(let id, _): machine.streamClosed(id, now: now, actions: &actions)
            case .goaway(let lastStreamID, _): machine.goAwayReceived(lastStreamID: lastStreamID)
            case .terminating: machine.sessionTerminating(now: now, actions: &actions)
            }
            transport?.run()
        }
    }

    // MARK: output and lifetime

    /// Executes the queued actions, then lets the session write (later on this iteration).
    func execute() {
        transport?.run()
        flush()
    }

    /// Asks for the session's output to be written later on this loop iteration: the answers
    /// of the streams that became ready on one iteration go out together (one pass of the
    /// session, one `writev`). Asked while a pass runs, it makes another pass follow.
    func flush() {
        if !closed { flushCall?.schedule() }
    }

    /// Writes what the session has to send, unless the machine holds it back; streams whose
    /// answer drained may read on.
    private func flushNow() {
        guard !closed else { return }
        let held = machine.holdsOutput(socketOutput: socket.output.count, actions: &actions)
        transport?.run()
        if !held, !closed {
            writeSession()
            // Frames sent can close streams (libnghttp2's own RST_STREAM for DATA past a
            // `content-length`): their exchanges hear of it now, not at the next read.
            dispatchEvents()
            machine.sessionWrote(streams: self, now: now, actions: &actions)
            transport?.run()
        }
        guard !closed else { return }
        machine.flushed(
            socketOutput: socket.output.count, sessionDone: session.isDone,
            queuedOutbound: session.queuedOutboundCount, streams: self, now: now, actions: &actions)
        transport?.run()
    }

    /// Writes the session's frames into the socket's output; a session that broke closes the
    /// connection.
    func writeSession() {
        var output = socket.output
        do throws(HTTP2Error) {
            try session.writeOutput(into: &output)
        } catch {
            machine.close(now: now, actions: &actions)
            transport?.run()
        }
    }

    /// The worker drains: a graceful GOAWAY; open streams finish.
    func drain() { handle { $0.drain(now: $1, actions: &$2) } }

    func hashingProgressed() { handle { $0.hashingProgressed(streams: self, now: $1, actions: &$2) } }

    func localProgressed() { handle { $0.localProgressed(streams: self, now: $1, actions: &$2) } }

    func publishLive() {
        guard !closed else { return }
        streams.forEachValue { stream in
            guard let status = machine.liveStatus(stream.id) else { return }
            worker.live.publish(status, client: peerHost, slot: &stream.io.liveSlot, now: now)
        }
    }

    /// Closes the connection (the socket failed or ended, or the worker stops).
    func close() { handle { $0.close(now: $1, actions: &$2) } }

    /// The machine closed the connection (`closeClient`): its timers, streams, transport and
    /// socket go, and the worker lets it go.
    func tearDown() {
        guard !closed else { return }
        closed = true
        timers.stop()
        flushCall?.cancel()
        flushCall = nil
        for stream in streams.values { stream.close() }
        streams.removeAll()
        transport = nil
        socket.close()
        worker.closed(self)
    }
}
