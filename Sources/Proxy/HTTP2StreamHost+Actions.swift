import EventLoop
import HTTP2
import HTTPIO
import ProxyCore
import UploadRules

extension HTTP2StreamHost {
    /// Executes the queued actions in order (actions that report back queue more), then
    /// settles the stream's window and outcome, and lets the connection write.
    func execute() {
        while true {
            while let action = actions.next() {
                if closed { continue }
                perform(action)
            }
            // DATA that arrived while the exchange was paused is read once it reads again: no
            // other frame may come to wake it while the stream's window is shut.
            let waiting = input.buffer.count
            guard !closed, waiting > 0, exchange.readsBody, !exchange.clientReadsPaused else { break }
            exchange.clientReadable(
                input: input.buffer, sink: sink, levels: levels, date: connection.date(now), now: now,
                actions: &actions)
            if actions.isEmpty, input.buffer.count == waiting { break }
        }
        settle()
        connection.flush()
    }

    private func perform(_ action: ProxyAction) {
        switch action {
        case .sendClient(let range):
            actions.withBytes(range) { output.buffer.add($0) }
            pushOutput()
        case .respondClient(let head):
            respond(head)
        case .endClientStream:
            pushOutput()
            connection.session.endStream(streamID: id)
        case .resumeClientReads:
            // DATA held while paused is read now: no new frame may come while the window is shut.
            if input.buffer.count > 0 {
                exchange.clientReadable(
                    input: input.buffer, sink: sink, levels: levels, date: connection.date(now), now: now,
                    actions: &actions)
            }
        case .pauseClientReads, .shutdownClientWrite, .closeClient:
            // The exchange's own view (`clientReadsPaused`) decides whether DATA is read; a
            // stream is closed by its outcome (`settle`), never by the connection's close.
            break
        case .processClientInput:
            exchange.clientReadable(
                input: input.buffer, sink: sink, levels: levels, date: connection.date(now), now: now,
                actions: &actions)
        case .discardClientInput:
            input.buffer.drain(input.buffer.count)
        case .moveRequestBody(let count, let destination):
            if destination == .upstream, let upstream = io.upstream {
                input.buffer.move(count, to: upstream.socket.output)
            } else {
                input.buffer.move(count, to: io.staging.buffer)
            }
        case .startTimer(let timer, let deadline):
            startTimer(timer, deadline: deadline)
        case .cancelTimer(let timer):
            cancelTimer(timer)
        case .exchangeStarted:
            connection.worker.exchangeStarted()
        case .consultCheck(let index, let consultation):
            consult(check: index, consultation)
        case .consultFile(let request, let inspection):
            consult(file: request, inspection)
        case .finish(let record):
            finish(record)
        case .droppedUnderscoreFields(let count):
            connection.worker.metrics.update { $0.ruleActions["drop_underscore_header", default: 0] += count }
        case .sendUpstream(let range):
            actions.withBytes(range) { io.upstream?.socket.output.add($0) }
        case .moveResponseBody:
            _ = io.performUpstream(action, host: self)
            pushOutput()
        default:
            _ = io.performUpstream(action, host: self)
        }
    }

    /// The response head goes into the session: HEADERS (with END_STREAM when no body
    /// follows), or an interim 1xx.
    private func respond(_ head: StreamResponseHead) {
        if head.status < 200 {
            try? connection.session.informational(streamID: id, status: head.status, fields: head.headers)
            return
        }
        do throws(HTTP2Error) {
            try connection.session.respond(
                streamID: id, status: head.status, fields: head.headers, hasBody: !head.endsStream)
            responded = true
        } catch {
            // The stream is gone in the session (the client reset it meanwhile).
            exchange.clientGone(now: now, actions: &actions)
        }
    }

    /// Hands the queued response bytes to the session's queue for this stream.
    func pushOutput() {
        let buffer = output.buffer
        guard buffer.count > 0 else { return }
        buffer.forEachChunk { chunk in
            connection.session.send(streamID: id, bytes: chunk)
            return true
        }
        buffer.drain(buffer.count)
    }

    /// The exchange's log record: the access log and metrics; the error log for a 5xx.
    private func finish(_ record: AccessRecord) {
        if let failure = record.failure, failure.status >= 500 {
            ErrorLog.shared.write(
                .warn,
                "\(failure.status) for \(connection.peerHost) \(record.method ?? "-") \(record.path ?? "-") (h2 stream \(id)): \(failure.detail)"
            )
        }
        connection.worker.log(record, client: connection.peer)
        io.exchangeFinished()
    }

    func reportFileVerdict(_ hold: HoldID, _ decision: HoldDecision?) {
        guard !finished else { return }
        exchange.fileVerdict(
            hold, decision, sink: sink, levels: levels, date: connection.date(now), now: now,
            actions: &actions)
    }

    func reportVerdict(_ index: Int, _ verdict: Verdict) {
        guard !finished else { return }
        exchange.verdict(
            index, verdict, input: input.buffer, sink: sink, levels: levels,
            tools: connection.worker.ruleTools,
            date: connection.date(now), now: now, actions: &actions)
    }
}

extension HTTP2StreamHost: ExchangeHost {
    var clientOutput: EvBuffer { output.buffer }

    func reportUpstreamConnected() {
        exchange.upstreamConnected(levels: levels, now: now, actions: &actions)
    }

    func reportUpstreamReadable() {
        guard let upstream = io.upstream else { return }
        exchange.upstreamReadable(
            input: upstream.socket.input, levels: levels, date: connection.date(now), now: now,
            actions: &actions)
    }

    func reportUpstreamFailed(_ failure: UpstreamFailure) {
        if let upstream = io.upstream {
            exchange.upstreamFailed(
                failure, input: upstream.socket.input, levels: levels, date: connection.date(now), now: now,
                actions: &actions)
        } else {
            exchange.upstreamFailed(
                failure, input: NoBytes(), levels: levels, date: connection.date(now), now: now,
                actions: &actions)
        }
    }

    var isServing: Bool { !finished }

    func reportUpstreamWritable() {
        exchange.upstreamWritable(levels: levels, now: now, actions: &actions)
    }
}
