import EventLoop
import HTTP1
import HTTPIO
import ProxyCore
import UploadRules

/// One client connection's I/O shell: it reports socket, upstream and timer events to its
/// `HTTP1ConnectionStateMachine` and executes the actions that come back. It decides nothing.
///
/// Lives on its worker's loop thread. The worker keeps it alive until `closeClient`.
final class ClientConnection: BufferedSocketDelegate {
    let socket: BufferedSocket
    unowned let worker: Worker
    /// The worker's loop, held here: `now` is read several times per event, and through
    /// `worker` (unowned) each read retained and released the worker and its base.
    let base: EventBase
    let peer: SocketAddress
    /// The peer's numeric address, formatted once (logs).
    let peerHost: String
    var machine: HTTP1ConnectionStateMachine<BodySink>
    var actions = ActionBuffer()
    /// The current exchange's upstream connection, staging buffer, spools and auth check.
    let io: ExchangeIO
    var timers: ConnectionTimers!
    var closed = false
    /// The settings of an internal connection (a tus delivery's); others use the worker's.
    private let ownSettings: ProxySettings?

    /// The settings the connection's next request starts with.
    var settings: ProxySettings { ownSettings ?? worker.settings }

    /// - Parameters:
    ///   - secure: whether `socket` runs TLS (its handshake done).
    ///   - settings: the settings of an internal connection (default: the worker's, as reloaded).
    init(
        socket: BufferedSocket, peer: SocketAddress, secure: Bool = false, worker: Worker,
        settings: ProxySettings? = nil
    ) {
        ownSettings = settings
        self.socket = socket
        self.peer = peer
        self.worker = worker
        self.base = worker.base
        self.peerHost = peer.host
        self.io = ExchangeIO(worker: worker)
        machine = HTTP1ConnectionStateMachine(
            settings: settings ?? worker.settings, client: Array(peerHost.utf8), secure: secure,
            tools: worker.ruleTools,
            now: worker.base.nowMilliseconds, actions: &actions)
        timers = ConnectionTimers(base: worker.base) { [unowned self] id in self.timerFired(id) }
        socket.delegate = self
        socket.setWatermarks(readHigh: self.settings.highWater, writeLow: 0)
        socket.enable()
        execute()
        // Bytes already read (a plain h2c listener sniffed them) are served now.
        if socket.input.count > 0 { socketReadable(socket) }
    }

    /// The buffer counts the state machine decides backpressure from.
    var levels: BufferLevels { io.levels(clientOutput: socket.output.count) }

    var now: Int64 { base.nowMilliseconds }

    /// A request body sink over this connection's buffers and spools.
    var sink: BodySink { BodySink(io) }

    // MARK: socket events

    func socketReadable(_ socket: BufferedSocket) {
        guard !closed else { return }
        machine.clientReadable(
            input: socket.input, sink: sink, levels: levels, settings: settings, now: now,
            actions: &actions)
        execute()
    }

    func socketWritable(_ socket: BufferedSocket) {
        guard !closed else { return }
        machine.clientDrained(levels: levels, now: now, actions: &actions)
        execute()
    }

    func socket(_ socket: BufferedSocket, events: SocketEvents) {
        guard !closed else { return }
        if events.contains(.endOfFile), !events.contains(.error) {
            machine.clientEndOfInput(
                input: socket.input, sink: sink, levels: levels, now: now, actions: &actions)
        } else {
            machine.clientFailed(now: now, actions: &actions)
        }
        execute()
    }

    private func timerFired(_ id: TimerID) {
        guard !closed else { return }
        machine.timer(id, levels: levels, now: now, actions: &actions)
        execute()
    }

    /// The worker drains: an idle connection closes now, a busy one after its exchange.
    func drain() {
        guard !closed else { return }
        machine.drain(levels: levels, now: now, actions: &actions)
        execute()
    }

    /// The worker's hashing queue reported progress.
    func hashingProgressed() {
        guard !closed else { return }
        machine.hashingProgressed(sink: sink, levels: levels, now: now, actions: &actions)
        execute()
    }

    /// A local responder's work progressed.
    func localProgressed() {
        guard !closed else { return }
        machine.localProgress(input: socket.input, levels: levels, now: now, actions: &actions)
        execute()
    }

    func publishLive() {
        guard !closed, let status = machine.exchange?.liveStatus else { return }
        worker.live.publish(status, client: peerHost, slot: &io.liveSlot, now: now)
    }

    /// Closes the connection (the worker stops).
    func close() {
        guard !closed else { return }
        machine.close(now: now, actions: &actions)
        execute()
    }
}

extension ClientConnection: ExchangeHost {
    var clientOutput: EvBuffer { socket.output }

    var isServing: Bool { !closed }

    func report(_ event: ExchangeIOEvent) {
        switch event {
        case .upstreamConnected:
            machine.upstreamConnected(levels: levels, now: now, actions: &actions)
        case .upstreamWritable:
            machine.upstreamWritable(levels: levels, now: now, actions: &actions)
        case .upstreamReadable:
            guard let upstream = io.upstream else { return }
            machine.upstreamReadable(
                input: upstream.socket.input, levels: levels, now: now, actions: &actions)
        case .upstreamFailed(let failure):
            if let upstream = io.upstream {
                machine.upstreamFailed(
                    failure, input: upstream.socket.input, levels: levels, now: now, actions: &actions)
            } else {
                machine.upstreamFailed(failure, input: NoBytes(), levels: levels, now: now, actions: &actions)
            }
        case .verdict(let index, let verdict):
            guard !closed else { return }
            machine.verdict(
                index, verdict, input: socket.input, sink: sink, levels: levels, now: now, actions: &actions)
        case .fileVerdict(let hold, let decision):
            guard !closed else { return }
            machine.fileVerdict(hold, decision, sink: sink, levels: levels, now: now, actions: &actions)
        }
    }
}
