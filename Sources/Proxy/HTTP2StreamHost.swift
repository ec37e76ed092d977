import EventLoop
import HTTP1
import HTTP2
import HTTPCore
import HTTPIO
import ProxyCore

/// One HTTP/2 stream's shell: its `Exchange`, the request body as it arrives from the
/// session, the response on its way into the session, and the exchange's I/O. It reports
/// events to the exchange and executes the actions that come back; it decides nothing.
///
/// Flow control is the backpressure: DATA is taken from the session at once (the stream's
/// window bounds it), and given back to the window (`consume`) only as the exchange hands the
/// bytes on, so a stream whose upstream is slow stalls alone.
final class HTTP2StreamHost {
    let id: Int32
    /// Strong (the connection drops its streams when they close, or when it does): an
    /// unowned reference cost a checked retain on every access, 1% of the proxy's CPU.
    let connection: HTTP2Connection
    var exchange: Exchange<BodySink>
    /// Taken from the connection's spares, given back when the stream closes.
    var actions: ActionBuffer
    let io: ExchangeIO
    /// Request body bytes taken from the session and not yet handed on by the exchange.
    let input = OwnedEvBuffer()
    /// Response bytes the exchange queued, on their way into the session's stream queue: the
    /// connection's one buffer, which each action that fills it empties (`pushOutput`).
    var output: OwnedEvBuffer { connection.streamOutput }
    /// The exchange's armed timers. They cost no libevent timer of their own: the connection's
    /// one timer is armed for the earliest deadline of all its streams (`streamDeadline`), and
    /// a cancelled deadline is only forgotten here (a per-stream timer was 4 allocations and 4
    /// heap operations per h2 request).
    private var deadlines = Deadlines()
    /// Request bytes taken from the session, and those given back to its window.
    private var taken: Int64 = 0
    private var consumed: Int64 = 0
    /// The exchange's outcome was acted on.
    private(set) var finished = false
    /// A response head went into the session (a reset then waits for the answer's end).
    var responded = false
    /// The stream closed in the session: nothing more is sent on it.
    private(set) var closed = false

    init(id: Int32, head: RequestHead, framing: BodyFraming, connection: HTTP2Connection) {
        self.id = id
        self.connection = connection
        actions = connection.takeActionBuffer()
        let worker = connection.worker
        io = ExchangeIO(worker: worker)
        let now = connection.base.nowMilliseconds
        exchange = Exchange(
            head: head, framing: framing, settings: worker.settings,
            requestID: Hex.random(words: 2, using: &connection.random),
            client: connection.peerHostBytes,
            secure: connection.secure, clientProtocol: .http2(streamID: id), now: now)
        // DATA goes straight into `input` from now on (and what came before the head was
        // handled, now), not through the session's queue.
        connection.session.deliverInbound(streamID: id, to: input)
        syncTaken()
        exchange.start(
            input: input.buffer, sink: sink, levels: levels, tools: worker.ruleTools,
            date: connection.date(now), now: now, actions: &actions)
        execute()
    }

    var now: Int64 { connection.base.nowMilliseconds }
    var sink: BodySink { BodySink(io) }
    var levels: BufferLevels {
        io.levels(clientOutput: output.buffer.count + connection.session.outboundCount(streamID: id))
    }

    // MARK: events from the connection

    /// DATA arrived (the session wrote it into `input`): the exchange reads it unless it paused.
    func dataArrived() {
        guard !finished else { return discardInbound() }
        syncTaken()
        guard !exchange.clientReadsPaused else { return }
        exchange.clientReadable(
            input: input.buffer, sink: sink, levels: levels, date: connection.date(now), now: now,
            actions: &actions)
        execute()
    }

    /// The client ended its stream (END_STREAM).
    func endOfStream() {
        guard !finished else { return }
        exchange.clientEndStream(
            input: input.buffer, sink: sink, levels: levels, date: connection.date(now), now: now,
            actions: &actions)
        execute()
    }

    /// The session found the stream malformed after its head: libnghttp2 reset it (DATA past
    /// its `content-length`, trailers it refuses) before the exchange saw the offending bytes.
    func malformed(_ detail: String) {
        guard !finished else { return }
        exchange.clientStreamMalformed(detail, now: now, actions: &actions)
        execute()
    }

    /// The client reset the stream, or the connection went away under it.
    func clientGone() {
        guard !finished else { return }
        exchange.clientGone(now: now, actions: &actions)
        execute()
    }

    /// The exchange paused its upstream's reads for this stream's queued response.
    var waitsForClientDrain: Bool { !finished && exchange.upstreamReadsPaused }

    /// The session sent some of the stream's response: the exchange may read its upstream again.
    func outputDrained() {
        guard !finished,
            connection.session.outboundCount(streamID: id) <= connection.worker.settings.highWater
        else { return }
        exchange.clientDrained(now: now, actions: &actions)
        execute()
    }

    /// The worker's hashing queue reported progress.
    func hashingProgressed() {
        guard !finished else { return }
        exchange.hashingProgressed(
            sink: sink, levels: levels, date: connection.date(now), now: now, actions: &actions)
        execute()
    }

    /// The session forgot the stream: everything it held goes.
    func streamClosed() {
        if !finished { clientGone() }
        connection.session.deliverInbound(streamID: id, to: nil)
        closed = true
        deadlines.removeAll()
        io.close()
        connection.giveBack(actions)
        actions = ActionBuffer(actionCapacity: 0, byteCapacity: 0)
    }

    // MARK: timers

    /// Arms `id` for `deadline`, replacing an earlier deadline of the same id.
    func startTimer(_ id: TimerID, deadline: Int64) {
        deadlines.start(id, at: deadline)
        connection.streamDeadline(deadline)
    }

    /// Disarms `id`.
    func cancelTimer(_ id: TimerID) {
        deadlines.cancel(id)
    }

    /// Reports every timer due at `now` to the exchange, earliest first; returns the earliest
    /// deadline left.
    func expireTimers(now: Int64) -> Int64? {
        while !finished, let id = deadlines.takeDue(now: now) { timerFired(id) }
        return deadlines.earliest
    }

    private func timerFired(_ timer: TimerID) {
        guard !finished else { return }
        exchange.timer(timer, date: connection.date(now), now: now, actions: &actions)
        execute()
    }

    /// What the session has written into `input` so far.
    private func syncTaken() {
        if let count = connection.session.takenCount(streamID: id) { taken = Int64(count) }
    }

    /// Bytes that arrive after the exchange ended are read and given back at once.
    private func discardInbound() {
        let count = connection.session.inboundCount(streamID: id)
        guard count > 0 else { return }
        var discard = CountingSink()
        _ = connection.session.readInbound(streamID: id, into: &discard)
        connection.session.consume(streamID: id, count: count)
    }

    // MARK: after each event

    /// Gives back to the stream's window what the exchange handed on, and acts on its outcome.
    func settle() {
        let handedOn = taken - Int64(input.buffer.count) - consumed
        if handedOn > 0 {
            connection.session.consume(streamID: id, count: Int(handedOn))
            consumed += handedOn
        }
        guard !finished, exchange.outcome != nil else { return }
        finished = true
        deadlines.removeAll()
        if let code = exchange.streamReset {
            let errorCode = HTTP2ErrorCode(rawValue: code.rawValue)
            // After an answer the reset waits for its END_STREAM (RFC 9113 §8.1).
            if responded, code == .noError {
                try? connection.session.resetWhenAnswered(streamID: id, code: errorCode)
            } else {
                try? connection.session.reset(streamID: id, code: errorCode)
            }
        }
        // What is left of the body is dropped, and given back to the window with what comes.
        connection.session.deliverInbound(streamID: id, to: nil)
        syncTaken()
        input.buffer.drain(input.buffer.count)
        if taken > consumed {
            connection.session.consume(streamID: id, count: Int(taken - consumed))
            consumed = taken
        }
        discardInbound()
        connection.streamFinished(self)
    }
}
