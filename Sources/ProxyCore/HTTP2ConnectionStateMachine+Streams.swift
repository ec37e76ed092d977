public import HTTP1
public import HTTPCore
public import UploadRules

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
    /// stream's DATA to `input`; `taken` is how much (the session's count). An END_STREAM the
    /// HEADERS carried is reported next, as `endStream`.
    public mutating func requestHead(
        _ id: Int32, _ request: HTTP2Request, input: some ByteSource, taken: Int?, sink: Sink,
        levels: BufferLevels, settings newest: ProxySettings, now: Int64, actions: inout ActionBuffer
    ) {
        guard phase != .closed, !streams.contains(id) else { return }
        settings = newest
        guard let (head, framing) = translate(id, request, now: now, &actions) else { return }
        let exchange = Exchange<Sink>(
            head: head, framing: framing, settings: settings,
            requestID: Hex.random(words: 2, using: &random), client: client, secure: secure,
            clientProtocol: .http2(streamID: id), now: now)
        streams.insert(StreamState(exchange: exchange), for: id)
        activeCount += 1
        let date = currentDate(now)
        let tools = tools
        onStream(id, taken: taken, &actions) {
            $0.start(
                input: input, sink: sink, levels: levels, tools: tools, date: date, now: now, actions: &$1)
        }
    }

    /// DATA arrived on stream `id` (the session wrote it into `input`): the exchange reads it
    /// unless it paused; a stream whose exchange ended drops it.
    public mutating func dataArrived(
        _ id: Int32, input: some ByteSource, taken: Int?, sink: Sink, levels: BufferLevels, now: Int64,
        actions: inout ActionBuffer
    ) {
        guard phase != .closed else { return }
        let running = streams.update(id) { state -> Bool in
            if let taken { state.taken = Int64(taken) }
            return state.phase == .active
        }
        guard let running else { return }
        guard running else { return actions.append(.discardStreamInput(id)) }
        guard streams.read(id, { !$0.exchange.clientReadsPaused }) == true else { return }
        processInput(id, input: input, taken: taken, sink: sink, levels: levels, now: now, actions: &actions)
    }

    /// The exchange of stream `id` reads its input (`processClientInput`).
    public mutating func processInput(
        _ id: Int32, input: some ByteSource, taken: Int?, sink: Sink, levels: BufferLevels, now: Int64,
        actions: inout ActionBuffer
    ) {
        let date = currentDate(now)
        onStream(id, taken: taken, &actions) {
            $0.clientReadable(input: input, sink: sink, levels: levels, date: date, now: now, actions: &$1)
        }
    }

    /// The client ended stream `id` (END_STREAM).
    public mutating func endStream(
        _ id: Int32, input: some ByteSource, taken: Int?, sink: Sink, levels: BufferLevels, now: Int64,
        actions: inout ActionBuffer
    ) {
        let date = currentDate(now)
        onStream(id, taken: taken, &actions) {
            $0.clientFinishedSending(
                input: input, sink: sink, levels: levels, date: date, now: now, actions: &$1)
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
    public mutating func streamClosed(
        _ id: Int32, input: some ByteSource, taken: Int?, now: Int64, actions: inout ActionBuffer
    ) {
        guard phase != .closed else { return }
        onStream(id, taken: taken, settle: false, &actions) { $0.clientGone(now: now, actions: &$1) }
        guard let (rest, running) = streams.read(id, { ($0.taken - $0.consumed, $0.phase == .active) }) else {
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

    /// Stream `id`'s upstream connection is ready.
    public mutating func upstreamConnected(
        _ id: Int32, levels: BufferLevels, now: Int64, actions: inout ActionBuffer
    ) {
        onStream(id, taken: nil, &actions) { $0.upstreamConnected(levels: levels, now: now, actions: &$1) }
    }

    /// Stream `id`'s upstream drained its output.
    public mutating func upstreamWritable(
        _ id: Int32, levels: BufferLevels, now: Int64, actions: inout ActionBuffer
    ) {
        onStream(id, taken: nil, &actions) { $0.upstreamWritable(levels: levels, now: now, actions: &$1) }
    }

    /// Stream `id`'s upstream sent bytes.
    public mutating func upstreamReadable(
        _ id: Int32, input: some ByteSource, levels: BufferLevels, now: Int64, actions: inout ActionBuffer
    ) {
        let date = currentDate(now)
        onStream(id, taken: nil, &actions) {
            $0.upstreamReadable(input: input, levels: levels, date: date, now: now, actions: &$1)
        }
    }

    /// Stream `id`'s upstream connection failed or closed.
    public mutating func upstreamFailed(
        _ id: Int32, _ failure: UpstreamFailure, input: some ByteSource, levels: BufferLevels, now: Int64,
        actions: inout ActionBuffer
    ) {
        let date = currentDate(now)
        onStream(id, taken: nil, &actions) {
            $0.upstreamFailed(failure, input: input, levels: levels, date: date, now: now, actions: &$1)
        }
    }

    /// The verdict for hold `index` of stream `id`'s exchange arrived.
    public mutating func verdict(
        _ id: Int32, _ index: Int, _ verdict: Verdict, input: some ByteSource, sink: Sink,
        levels: BufferLevels,
        now: Int64, actions: inout ActionBuffer
    ) {
        let date = currentDate(now)
        let tools = tools
        onStream(id, taken: nil, &actions) {
            $0.verdict(
                index, verdict, input: input, sink: sink, levels: levels, tools: tools, date: date, now: now,
                actions: &$1)
        }
    }

    /// The verdict on an inspected file of stream `id`'s exchange arrived.
    public mutating func fileVerdict(
        _ id: Int32, _ hold: HoldID, _ decision: HoldDecision?, sink: Sink, levels: BufferLevels, now: Int64,
        actions: inout ActionBuffer
    ) {
        let date = currentDate(now)
        onStream(id, taken: nil, &actions) {
            $0.fileVerdict(hold, decision, sink: sink, levels: levels, date: date, now: now, actions: &$1)
        }
    }

    /// Stream `id`'s local responder progressed (`Exchange.localProgress`).
    public mutating func localProgress(
        _ id: Int32, input: some ByteSource, now: Int64, actions: inout ActionBuffer
    ) {
        let date = currentDate(now)
        onStream(id, taken: nil, &actions) {
            $0.localProgress(input: input, date: date, now: now, actions: &$1)
        }
    }

    /// The loop's hashing queue reported progress, told to stream `id`.
    public mutating func hashingProgressed(
        _ id: Int32, sink: Sink, levels: BufferLevels, now: Int64, actions: inout ActionBuffer
    ) {
        let date = currentDate(now)
        onStream(id, taken: nil, &actions) {
            $0.hashingProgressed(sink: sink, levels: levels, date: date, now: now, actions: &$1)
        }
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
