import EventLoop
import HTTP2
import HTTPCore
import HTTPIO
import ProxyCore

/// The connection as the executor's transport: the client is the stream the last `stream`
/// action named (`current`), its input the stream's DATA, its output the session's queue
/// for it; stream 0 is the connection, whose socket reading pauses.
extension HTTP2Connection: ExchangeTransport {
    /// Executes the queued actions, then lets the session write (later on this iteration).
    func execute() {
        run()
        flush()
    }

    /// Executes the queued actions in order (actions that report back queue more).
    func run() {
        while let action = actions.next() {
            if closed { continue }
            perform(action)
        }
    }

    var currentHost: (any ExchangeHost)? { streams[current] }
    var currentInput: EvBuffer? { streams[current]?.input.buffer }

    func sendClient(_ range: Range<Int>) {
        let id = current
        actions.withBytes(range) { session.send(streamID: id, bytes: $0) }
    }

    /// The response head goes into the session: HEADERS (with END_STREAM when no body
    /// follows), or an interim 1xx. A stream the session no longer has is gone for its
    /// exchange too.
    func respondClient(_ head: StreamResponseHead) {
        if head.status < 200 {
            try? session.informational(streamID: current, status: head.status, fields: head.headers)
            return
        }
        do throws(HTTP2Error) {
            try session.respond(
                streamID: current, status: head.status, fields: head.headers, hasBody: !head.endsStream)
        } catch {
            machine.streamReset(current, now: now, actions: &actions)
        }
    }

    func endClientStream() { session.endStream(streamID: current) }

    /// Stream 0: the socket. A stream's DATA is handed to its exchange as the exchange's own
    /// view says (`client.readsPaused`), and its window opens only as bytes are handed on.
    func setClientReading(_ reading: Bool) {
        if current == 0 { socket.setReading(reading) }
    }

    func processClientInput() { machine.processInput(current, streams: self, now: now, actions: &actions) }

    /// A stream is ended by its outcome (the machine's resets), never by a connection close.
    func shutdownClientWrite() {}

    func closeClient() {
        guard !closed else { return }
        closed = true
        timers.stop()
        flushCall?.cancel()
        flushCall = nil
        for stream in streams.values { stream.close() }
        streams.removeAll()
        socket.close()
        worker.closed(self)
    }

    func sendUpstream(_ range: Range<Int>) {
        guard let upstream = streams[current]?.io.upstream else { return }
        actions.withBytes(range) { upstream.socket.output.add($0) }
    }

    /// Hands the response bytes moved from the upstream to the session's queue for the stream.
    func responseBodyMoved() {
        let buffer = streamOutput.buffer
        guard buffer.count > 0 else { return }
        let id = current
        buffer.forEachChunk { chunk in
            session.send(streamID: id, bytes: chunk)
            return true
        }
        buffer.drain(buffer.count)
    }

    func startTimer(_ id: TimerID, deadline: Int64) { timers.start(id, deadline: deadline) }

    func cancelTimer(_ id: TimerID) { timers.cancel(id) }

    func finish(_ record: AccessRecord) {
        let io = record.clientProtocol.streamID.flatMap { streams[$0]?.io }
        log(record, io: io, peer: peer, peerHost: peerHost)
    }

    // MARK: the connection's own

    func selectStream(_ id: Int32) { current = id }

    func settleStream(_ id: Int32) { machine.streamSettled(id, streams: self, now: now, actions: &actions) }

    func consumeWindow(_ id: Int32, _ count: Int) { session.consume(streamID: id, count: count) }

    func resetStream(_ id: Int32, _ code: StreamResetCode, afterAnswer: Bool) {
        let errorCode = HTTP2ErrorCode(rawValue: code.rawValue)
        if afterAnswer {
            try? session.resetWhenAnswered(streamID: id, code: errorCode)
        } else {
            try? session.reset(streamID: id, code: errorCode)
        }
    }

    /// Stops delivering `id`'s DATA, drops what its input holds (the machine gives it back to
    /// the window), and drops what the session still queues for it, given back at once.
    func discardStreamInput(_ id: Int32) {
        session.deliverInbound(streamID: id, to: nil)
        if let stream = streams[id] { stream.input.buffer.drain(stream.input.buffer.count) }
        let count = session.inboundCount(streamID: id)
        guard count > 0 else { return }
        var discard = CountingSink()
        _ = session.readInbound(streamID: id, into: &discard)
        session.consume(streamID: id, count: count)
    }

    func closeStream(_ id: Int32) { streams.removeValue(forKey: id)?.close() }

    func goAway(_ code: GoAwayCode) { try? session.goAway(code: HTTP2ErrorCode(rawValue: code.rawValue)) }

    func shutdownSession() { try? session.shutdown() }

    func flushSession() { writeSession() }
}
