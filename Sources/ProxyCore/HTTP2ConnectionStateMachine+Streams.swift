public import HTTP1
public import HTTPCore
import UploadRules

/// A request's head as an HTTP/2 stream carries it: the pseudo-header fields and the rest.
public struct HTTP2Request: Sendable {
    public var method: String
    /// `:path`, as received.
    public var path: String
    /// `:authority`, if any.
    public var authority: String?
    /// The regular fields, as received.
    public var fields: HeaderFields
    /// Whether the HEADERS frame ended the stream.
    public var endStream: Bool

    /// Creates a request head.
    public init(method: String, path: String, authority: String?, fields: HeaderFields, endStream: Bool) {
        self.method = method
        self.path = path
        self.authority = authority
        self.fields = fields
        self.endStream = endStream
    }
}

extension HTTP2ConnectionStateMachine {
    /// A request's head arrived on stream `id`: translated to the HTTP/1.1 head the exchange
    /// reads (or refused before one), then its exchange starts. The shell already hands the
    /// stream's DATA to its input (`streams`). An END_STREAM the HEADERS carried ends the
    /// request at once.
    public mutating func requestHead(
        _ id: Int32, _ request: HTTP2Request, streams io: some HTTP2Streams<Sink>,
        settings newest: ProxySettings,
        now: Int64, actions: inout ActionBuffer
    ) {
        guard phase != .closed, !streams.contains(id) else { return }
        settings = newest
        guard let (head, framing) = translate(id, request, now: now, &actions) else { return }
        streams.insert(
            StreamState(
                exchange: Exchange<Sink>(
                    head: head, framing: framing, settings: settings,
                    requestID: Hex.random(words: 2, using: &random), client: client, secure: secure,
                    clientProtocol: .http2(streamID: id), now: now)),
            for: id)
        activeCount += 1
        let date = currentDate(now)
        let tools = tools
        onStream(id, taken: io.takenCount(id), &actions) {
            let (input, sink, levels) = (io.input(id), io.sink(id), io.levels(id))
            $0.start(
                input: input, sink: sink, levels: levels, tools: tools, date: date, now: now, actions: &$1)
            guard request.endStream else { return }
            $0.clientFinishedSending(
                input: input, sink: sink, levels: levels, date: date, now: now, actions: &$1)
        }
    }

    /// DATA arrived on stream `id` (the session wrote it into its input): the exchange reads it
    /// unless it paused; a stream whose exchange ended drops it.
    public mutating func dataArrived(
        _ id: Int32, streams io: some HTTP2Streams<Sink>, now: Int64, actions: inout ActionBuffer
    ) {
        guard phase != .closed else { return }
        // In place (`update`): a read copies the stream's whole state out of the table.
        let running = streams.update(id) { state -> (active: Bool, paused: Bool) in
            if let taken = io.takenCount(id) { state.taken = Int64(taken) }
            return (state.phase == .active, state.exchange.client.readsPaused)
        }
        guard let running else { return }
        guard running.active else { return actions.append(.discardStreamInput(id)) }
        guard !running.paused else { return }
        processInput(id, streams: io, now: now, actions: &actions)
    }

    /// The exchange of stream `id` reads its input (`processClientInput`).
    public mutating func processInput(
        _ id: Int32, streams io: some HTTP2Streams<Sink>, now: Int64, actions: inout ActionBuffer
    ) {
        let date = currentDate(now)
        onStream(id, taken: io.takenCount(id), &actions) {
            $0.clientReadable(
                input: io.input(id), sink: io.sink(id), levels: io.levels(id), date: date, now: now,
                actions: &$1)
        }
    }

    /// The client ended stream `id` (END_STREAM).
    public mutating func endStream(
        _ id: Int32, streams io: some HTTP2Streams<Sink>, now: Int64, actions: inout ActionBuffer
    ) {
        let date = currentDate(now)
        onStream(id, taken: io.takenCount(id), &actions) {
            $0.clientFinishedSending(
                input: io.input(id), sink: io.sink(id), levels: io.levels(id), date: date, now: now,
                actions: &$1)
        }
    }

    /// The client reset stream `id`, or the session could not take its response (it is gone).
    public mutating func streamReset(_ id: Int32, now: Int64, actions: inout ActionBuffer) {
        onStream(id, taken: nil, &actions) { $0.clientGone(now: now, actions: &$1) }
    }

    /// The session found stream `id` malformed: after its head (DATA past its
    /// `content-length`, bad trailers) its exchange ends as malformed; before, there is none
    /// and the refusal is logged.
    public mutating func malformed(_ id: Int32, detail: String, now: Int64, actions: inout ActionBuffer) {
        guard phase != .closed else { return }
        guard streams.contains(id) else {
            return logRefused(id, ProxyError(.badRequest, detail: detail), now: now, &actions)
        }
        onStream(id, taken: nil, &actions) { $0.clientStreamMalformed(detail, now: now, actions: &$1) }
    }

    /// Stream `id`'s header list is over `limits.header_bytes`: 431, as on HTTP/1.1.
    public mutating func headersTooLarge(_ id: Int32, now: Int64, actions: inout ActionBuffer) {
        guard phase != .closed else { return }
        let error = ProxyError(
            .headTooLarge, detail: "request header section too large", limit: "header_bytes")
        answerRefused(id, error, now: now, &actions)
    }

    /// The session forgot stream `id`: an exchange still running ends as the client's leaving,
    /// what its input holds is dropped and given back, and the shell drops the stream.
    public mutating func streamClosed(_ id: Int32, now: Int64, actions: inout ActionBuffer) {
        guard phase != .closed else { return }
        onStream(id, taken: nil, settle: false, &actions) { $0.clientGone(now: now, actions: &$1) }
        guard let (rest, running) = streams.update(id, { ($0.taken - $0.consumed, $0.phase == .active) })
        else {
            return
        }
        if running { activeCount -= 1 }
        streams.remove(id)
        actions.append(.discardStreamInput(id))
        if rest > 0 { actions.append(.consumeWindow(id, Int(rest))) }
        actions.append(.closeStream(id))
        updateIdleTimer(now: now, reset: false, &actions)
    }

    // MARK: exchange events routed by stream id

    /// Stream `id`'s exchange I/O reported `event` (`upstream`: what its upstream connection
    /// holds unread, if it has one).
    public mutating func exchangeIO(
        _ id: Int32, _ event: ExchangeIOEvent, upstream: (some ByteSource)?,
        streams io: some HTTP2Streams<Sink>,
        now: Int64, actions: inout ActionBuffer
    ) {
        let (date, tools) = (currentDate(now), tools)
        onStream(id, taken: nil, &actions) {
            switch event {
            case .upstreamConnected: $0.upstreamConnected(levels: io.levels(id), now: now, actions: &$1)
            case .upstreamWritable: $0.upstreamWritable(levels: io.levels(id), now: now, actions: &$1)
            case .upstreamReadable:
                guard let upstream else { return }
                $0.upstreamReadable(
                    input: upstream, levels: io.levels(id), date: date, now: now, actions: &$1)
            case .upstreamFailed(let failure):
                guard let upstream else {
                    return $0.upstreamFailed(
                        failure, input: NoBytes(), levels: io.levels(id), date: date, now: now, actions: &$1)
                }
                $0.upstreamFailed(
                    failure, input: upstream, levels: io.levels(id), date: date, now: now, actions: &$1)
            case .verdict(let index, let verdict):
                $0.verdict(
                    index, verdict, input: io.input(id), sink: io.sink(id), levels: io.levels(id),
                    tools: tools,
                    date: date, now: now, actions: &$1)
            case .fileVerdict(let hold, let decision):
                $0.fileVerdict(
                    hold, decision, sink: io.sink(id), levels: io.levels(id), date: date, now: now,
                    actions: &$1)
            }
        }
    }

    /// Stream `id`'s local responder progressed (`Exchange.localProgress`).
    public mutating func localProgress(
        _ id: Int32, streams io: some HTTP2Streams<Sink>, now: Int64, actions: inout ActionBuffer
    ) {
        let date = currentDate(now)
        onStream(id, taken: nil, &actions) {
            $0.localProgress(input: io.input(id), date: date, now: now, actions: &$1)
        }
    }

    /// Local responders' work progressed (a store thread finished a job): every running
    /// exchange with a local responder hears of it.
    public mutating func localProgressed(
        streams io: some HTTP2Streams<Sink>, now: Int64, actions: inout ActionBuffer
    ) {
        let date = currentDate(now)
        everyRunningExchange(localOnly: true, &actions) { id, exchange, actions in
            exchange.localProgress(input: io.input(id), date: date, now: now, actions: &actions)
        }
    }

    /// The loop's hashing queue reported progress: every running exchange hears of it.
    public mutating func hashingProgressed(
        streams io: some HTTP2Streams<Sink>, now: Int64, actions: inout ActionBuffer
    ) {
        let date = currentDate(now)
        everyRunningExchange(&actions) { id, exchange, actions in
            exchange.hashingProgressed(
                sink: io.sink(id), levels: io.levels(id), date: date, now: now, actions: &actions)
        }
    }

    /// Runs `event` on every running exchange (with `localOnly`, those a local responder
    /// answers), each followed by a `settleStream`, then re-arms the streams' timer to the
    /// earliest deadline they set.
    private mutating func everyRunningExchange(
        localOnly: Bool = false, _ actions: inout ActionBuffer,
        _ event: (Int32, inout Exchange<Sink>, inout ActionBuffer) -> Void
    ) {
        guard phase != .closed else { return }
        var armed: Int64?
        streams.forEachStream { id, state in
            guard state.phase == .active, !localOnly || state.exchange.isLocal else { return }
            armed = Self.earliest(armed, state.run(id, &actions) { event(id, &$0, &$1) })
            actions.append(.settleStream(id))
        }
        armStreamsTimer(armed, &actions)
    }

    // MARK: running a stream's exchange

    /// Runs `event` on stream `id`'s running exchange (in place), its actions after a
    /// `stream(id)`, then (with `settle`) a `settleStream(id)` to hear what its input holds.
    mutating func onStream(
        _ id: Int32, taken: Int?, settle: Bool = true, _ actions: inout ActionBuffer,
        _ event: (inout Exchange<Sink>, inout ActionBuffer) -> Void
    ) {
        guard phase != .closed else { return }
        var armed: Int64?
        let ran = streams.update(id) { state -> Bool in
            if let taken { state.taken = Int64(taken) }
            guard state.phase == .active else { return false }
            armed = state.run(id, &actions, event)
            if settle { actions.append(.settleStream(id)) }
            return true
        }
        guard ran == true else { return }
        armStreamsTimer(armed, &actions)
    }
}
