import CLibevent
import EventLoop
import HTTPIO
import ProxyCore

#if canImport(Glibc)
    import Glibc
#endif

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
            if destination == .upstream, let upstream {
                socket.input.move(count, to: upstream.socket.output)
            } else {
                socket.input.move(count, to: staging.buffer)
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
        case .consultCheck(let index):
            consult(check: index)
        case .finish(let record):
            finish(record)
        case .droppedUnderscoreFields(let count):
            worker.metrics.update { $0.ruleActions["drop_underscore_header", default: 0] += count }
        default:
            performUpstream(action)
        }
    }

    private func performUpstream(_ action: ProxyAction) {
        switch action {
        case .connectUpstream(let target):
            connect(target)
        case .sendUpstream(let range):
            actions.withBytes(range) { upstream?.socket.output.add($0) }
        case .moveStagingToUpstream:
            if let upstream { staging.buffer.moveAll(to: upstream.socket.output) }
        case .sendSpoolsUpstream(let skip):
            sendSpools(skip: skip)
        case .moveResponseBody(let count):
            upstream?.socket.input.move(count, to: socket.output)
        case .pauseUpstreamReads:
            upstream?.socket.setReading(false)
        case .resumeUpstreamReads:
            upstream?.socket.setReading(true)
        case .processUpstreamInput:
            if let upstream {
                machine.upstreamReadable(
                    input: upstream.socket.input, levels: levels, now: now, actions: &actions)
            }
        case .releaseUpstream:
            if let upstream {
                upstream.requestsServed += 1
                worker.pool.release(upstream)
            }
            upstream = nil
        case .abortUpstream:
            if let upstream { worker.pool.discard(upstream) }
            upstream = nil
        default:
            break
        }
    }

    /// Takes a pooled connection or opens one; the machine hears when it is ready.
    private func connect(_ target: UpstreamURL) {
        do throws(ProxyError) {
            let connection = try worker.pool.acquire(target, owner: self)
            upstream = connection
            connection.socket.setWatermarks(readHigh: worker.settings.highWater, writeLow: 0)
            if connection.isConnected {
                machine.upstreamConnected(levels: levels, now: now, actions: &actions)
            }
        } catch {
            machine.upstreamFailed(
                .unreachable(error.detail), input: NoBytes(), levels: levels, now: now, actions: &actions
            )
        }
    }

    /// Queues the spool, then the file spool, less `skip` leading bytes (`evbuffer_add_file`
    /// takes each descriptor).
    private func sendSpools(skip: Int64) {
        guard let output = upstream?.socket.output else { return }
        var skip = skip
        for part in [spool, fileSpool].compactMap({ $0 }) {
            let fd = part.takeDescriptor()
            let offset = min(skip, part.size)
            skip -= offset
            guard part.size - offset > 0 else {
                _ = Glibc.close(fd)
                continue
            }
            guard evbuffer_add_file(output.raw, fd, offset, part.size - offset) == 0 else {
                spool = nil
                fileSpool = nil
                machine.upstreamFailed(
                    .spoolSend, input: NoBytes(), levels: levels, now: now, actions: &actions)
                return
            }
        }
        spool = nil
        fileSpool = nil
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
        staging.buffer.drain(staging.buffer.count)
        spool = nil
        fileSpool = nil
    }

    private func closeSocket() {
        closed = true
        timers.stop()
        if let upstream { worker.pool.discard(upstream) }
        upstream = nil
        spool = nil
        fileSpool = nil
        socket.close()
        worker.closed(self)
    }
}
