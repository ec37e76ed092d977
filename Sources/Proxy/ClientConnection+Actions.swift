import EventLoop
import HTTPIO
import ProxyCore

extension ClientConnection {
    /// Executes the queued actions in order (actions that report back queue more).
    func execute() {
        while let action = actions.next() {
            if closed { continue }
            perform(action)
        }
    }

    private func perform(_ action: ProxyAction) {
        switch action {
        case .sendClient(let range):
            actions.withBytes(range) { socket.output.add($0) }
        case .pauseClientReads:
            socket.setReading(false)
        case .resumeClientReads:
            socket.setReading(true)
        case .processClientInput:
            machine.clientReadable(
                input: socket.input, sink: sink, levels: levels, settings: worker.settings, now: now,
                actions: &actions)
        case .discardClientInput:
            socket.input.drain(socket.input.count)
        case .moveRequestBody(let count, let destination):
            if destination == .upstream, let upstream = io.upstream {
                socket.input.move(count, to: upstream.socket.output)
            } else {
                socket.input.move(count, to: io.staging.buffer)
            }
        case .shutdownClientWrite:
            socket.shutdownWrite()
        case .closeClient:
            closeSocket()
        case .startTimer(let id, let deadline):
            timers.start(id, deadline: deadline)
        case .cancelTimer(let id):
            timers.cancel(id)
        case .exchangeStarted:
            worker.exchangeStarted()
        case .consultCheck(let index, let consultation):
            consult(check: index, consultation)
        case .consultFile(let request, let inspection):
            consult(file: request, inspection)
        case .finish(let record):
            finish(record)
        case .droppedUnderscoreFields(let count):
            worker.metrics.update { $0.ruleActions["drop_underscore_header", default: 0] += count }
        default:
            performUpstream(action)
        }
    }

    private func performUpstream(_ action: ProxyAction) {
        if case .sendUpstream(let range) = action {
            actions.withBytes(range) { io.upstream?.socket.output.add($0) }
        } else {
            _ = io.performUpstream(action, host: self)
        }
    }

    /// The exchange's log record: the access log, metrics, and the error log for 5xx.
    private func finish(_ record: AccessRecord) {
        if let failure = record.failure, failure.status >= 500 {
            ErrorLog.shared.write(
                .warn,
                "\(failure.status) for \(peerHost) \(record.method ?? "-") \(record.path ?? "-"): \(failure.detail)"
            )
        }
        worker.log(record, client: peer)
        io.exchangeFinished()
    }

    private func closeSocket() {
        closed = true
        timers.stop()
        io.close()
        socket.close()
        worker.closed(self)
    }
}
