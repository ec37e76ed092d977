import ProxyCore

extension FakeShell {
    /// Logs `action` by its name (for assertions on the sequence).
    func note(_ action: ProxyAction) {
        log.append(String(describing: action).prefix { $0 != "(" }.description)
    }

    /// Executes `action` on the buffers, as the real shell does on evbuffers and sockets
    /// (`processClientInput` and `processUpstreamInput` are the harness's: they call back into
    /// the state machine).
    func perform(_ action: ProxyAction, in actions: ActionBuffer) {
        switch action {
        case .sendClient(let range):
            if closed { sentAfterClose += 1 }
            actions.withBytes(range) { clientOutput.append(contentsOf: $0) }
        case .pauseClientReads: clientReading = false
        case .resumeClientReads: clientReading = true
        case .respondClient(let head):
            if closed { sentAfterClose += 1 }
            streamHeads.append(head)
        case .endClientStream: streamEnds += 1
        case .discardClientInput: clientInput.bytes.removeAll()
        case .moveRequestBody(let count, let destination):
            if closed { sentAfterClose += 1 }
            let bytes = clientInput.remove(count)
            if destination == .upstream { upstreamOutput += bytes } else { staging += bytes }
        case .shutdownClientWrite: shutDown = true
        case .closeClient: closed = true
        case .startTimer(let id, let deadline):
            timers[id] = deadline
            timersStarted += 1
        case .cancelTimer(let id): timers[id] = nil
        case .exchangeStarted: exchangesStarted += 1
        case .finish(let record): records.append(record)
        default: performUpstream(action, in: actions)
        }
    }

    private func performUpstream(_ action: ProxyAction, in actions: ActionBuffer) {
        switch action {
        case .connectUpstream(let target):
            connects.append(target)
            upstream = .connecting
        case .sendUpstream(let range):
            if closed { sentAfterClose += 1 }
            actions.withBytes(range) { upstreamOutput.append(contentsOf: $0) }
        case .moveStagingToUpstream:
            upstreamOutput += staging
            staging.removeAll()
        case .sendSpoolsUpstream(let skip):
            let body = (spool ?? []) + (fileSpool ?? [])
            upstreamOutput += body.dropFirst(Int(skip))
        case .moveResponseBody(let count):
            if closed { sentAfterClose += 1 }
            clientOutput += upstreamInput.remove(count)
        case .pauseUpstreamReads: upstreamReading = false
        case .resumeUpstreamReads: upstreamReading = true
        case .releaseUpstream:
            released += 1
            upstream = .none
            upstreamInput.bytes.removeAll()
        case .abortUpstream:
            aborted += 1
            upstream = .none
            upstreamInput.bytes.removeAll()
        default: break
        }
    }
}
