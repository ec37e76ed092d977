import EventLoop
import HTTP2
import HTTPCore
import HTTPIO
import ProxyCore

extension HTTP2Connection {
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

    private func perform(_ action: ProxyAction) {
        switch action {
        case .stream(let id): current = id
        case .settleStream(let id): settle(id)
        case .consumeWindow(let id, let count): session.consume(streamID: id, count: count)
        case .resetStream(let id, let code, let afterAnswer): reset(id, code, afterAnswer: afterAnswer)
        case .discardStreamInput(let id): discardInput(id)
        case .closeStream(let id): streams.removeValue(forKey: id)?.close()
        case .goAway(let code): try? session.goAway(code: HTTP2ErrorCode(rawValue: code.rawValue))
        case .shutdownSession: try? session.shutdown()
        case .flushSession: writeSession()
        case .closeClient: closeConnection()
        case .startTimer(let id, let deadline): timers.start(id, deadline: deadline)
        case .cancelTimer(let id): timers.cancel(id)
        case .exchangeStarted: worker.exchangeStarted()
        case .finish(let record): finish(record)
        case .droppedUnderscoreFields(let count):
            worker.metrics.update { $0.ruleActions["drop_underscore_header", default: 0] += count }
        case .pauseClientReads where current == 0: socket.setReading(false)
        case .resumeClientReads where current == 0: socket.setReading(true)
        default: performOnStream(action)
        }
    }

    /// An action of the current stream's exchange.
    private func performOnStream(_ action: ProxyAction) {
        let id = current
        switch action {
        case .sendClient(let range):
            actions.withBytes(range) { session.send(streamID: id, bytes: $0) }
        case .respondClient(let head):
            respond(id, head)
        case .endClientStream:
            session.endStream(streamID: id)
        case .pauseClientReads, .resumeClientReads, .shutdownClientWrite, .closeClient:
            // A stream's DATA is read as its exchange's own view says (`clientReadsPaused`);
            // its window opens only as the bytes are handed on (`consumeWindow`).
            break
        default:
            guard let stream = streams[id] else { return }
            performWithIO(action, stream)
        }
    }

    private func performWithIO(_ action: ProxyAction, _ stream: HTTP2StreamHost) {
        switch action {
        case .processClientInput:
            machine.processInput(
                stream.id, input: stream.input.buffer, taken: stream.taken, sink: stream.sink,
                levels: stream.levels,
                now: now, actions: &actions)
        case .discardClientInput:
            stream.input.buffer.drain(stream.input.buffer.count)
        case .moveRequestBody(let count, let destination):
            if destination == .upstream, let upstream = stream.io.upstream {
                stream.input.buffer.move(count, to: upstream.socket.output)
            } else {
                stream.input.buffer.move(count, to: stream.io.staging.buffer)
            }
        case .consultCheck(let index):
            stream.consult(check: index)
        case .sendUpstream(let range):
            actions.withBytes(range) { stream.io.upstream?.socket.output.add($0) }
        case .moveResponseBody:
            _ = stream.io.performUpstream(action, host: stream)
            pushOutput(stream.id)
        default:
            _ = stream.io.performUpstream(action, host: stream)
        }
    }

    /// The response head goes into the session: HEADERS (with END_STREAM when no body
    /// follows), or an interim 1xx. A stream the session no longer has is gone for its
    /// exchange too.
    private func respond(_ id: Int32, _ head: StreamResponseHead) {
        if head.status < 200 {
            try? session.informational(streamID: id, status: head.status, fields: head.headers)
            return
        }
        do throws(HTTP2Error) {
            try session.respond(
                streamID: id, status: head.status, fields: head.headers, hasBody: !head.endsStream)
        } catch {
            machine.streamReset(id, now: now, actions: &actions)
        }
    }

    /// Hands the response bytes moved from the upstream to the session's queue for `id`.
    private func pushOutput(_ id: Int32) {
        let buffer = streamOutput.buffer
        guard buffer.count > 0 else { return }
        buffer.forEachChunk { chunk in
            session.send(streamID: id, bytes: chunk)
            return true
        }
        buffer.drain(buffer.count)
    }

    private func settle(_ id: Int32) {
        guard let stream = streams[id] else { return }
        machine.streamSettled(
            id, input: stream.input.buffer, taken: stream.taken, sink: stream.sink, levels: stream.levels,
            now: now,
            actions: &actions)
    }

    private func reset(_ id: Int32, _ code: StreamResetCode, afterAnswer: Bool) {
        let errorCode = HTTP2ErrorCode(rawValue: code.rawValue)
        if afterAnswer {
            try? session.resetWhenAnswered(streamID: id, code: errorCode)
        } else {
            try? session.reset(streamID: id, code: errorCode)
        }
    }

    /// Stops delivering `id`'s DATA, drops what its input holds (the machine gives it back to
    /// the window), and drops what the session still queues for it, given back at once.
    private func discardInput(_ id: Int32) {
        session.deliverInbound(streamID: id, to: nil)
        if let stream = streams[id] { stream.input.buffer.drain(stream.input.buffer.count) }
        let count = session.inboundCount(streamID: id)
        guard count > 0 else { return }
        var discard = CountingSink()
        _ = session.readInbound(streamID: id, into: &discard)
        session.consume(streamID: id, count: count)
    }

    /// An exchange's log record (or a refusal's): the access log and metrics; the error log
    /// for a 5xx.
    private func finish(_ record: AccessRecord) {
        let id = record.clientProtocol.streamID ?? 0
        if let failure = record.failure, failure.status >= 500 {
            ErrorLog.shared.write(
                .warn,
                "\(failure.status) for \(peerHost) \(record.method ?? "-") \(record.path ?? "-") (h2 stream \(id)): \(failure.detail)"
            )
        }
        worker.log(record, client: peer)
        streams[id]?.io.exchangeFinished()
    }

    private func closeConnection() {
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
}
