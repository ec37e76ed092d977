import ProxyCore
import UploadRules

extension FakeShell {
    /// Logs `action` by its name (for assertions on the sequence).
    func note(_ action: ProxyAction) {
        log.append(String(describing: action).prefix { $0 != "(" }.description)
    }
}

/// The fake shell is a transport of the production executor (`ActionTransport.perform`): the
/// state-machine tests run the actions with the meaning the proxy gives them, on in-memory
/// buffers. `processClientInput` and `processUpstreamInput` call back into the harness's
/// state machine (`processClient`, `processUpstream`).
extension FakeShell: ActionTransport {
    func sendClient(_ range: Range<Int>) {
        if closed { sentAfterClose += 1 }
        clientOutput += actionBytes(range)
    }

    func respondClient(_ head: StreamResponseHead) {
        if closed { sentAfterClose += 1 }
        streamHeads.append(head)
    }

    func endClientStream() { streamEnds += 1 }
    func setClientReading(_ reading: Bool) { clientReading = reading }
    func processClientInput() { processClient() }
    func discardClientInput() { clientInput.bytes.removeAll() }

    func moveRequestBody(_ count: Int, to destination: BodyDestination) {
        if closed { sentAfterClose += 1 }
        // A move of more than the input holds: the exchange claimed bytes twice.
        if count > clientInput.count { overdrawn += 1 }
        let bytes = clientInput.remove(min(count, clientInput.count))
        if destination == .upstream { upstreamOutput += bytes } else { staging += bytes }
    }

    func shutdownClientWrite() { shutDown = true }
    func closeClient() { closed = true }

    func connectUpstream(_ target: UpstreamURL) {
        connects.append(target)
        upstream = .connecting
    }

    func sendUpstream(_ range: Range<Int>) {
        if closed { sentAfterClose += 1 }
        upstreamOutput += actionBytes(range)
    }

    func moveStagingToUpstream() {
        upstreamOutput += staging
        staging.removeAll()
    }

    func sendSpoolsUpstream(skip: Int64) {
        let body = (spool ?? []) + (fileSpool ?? [])
        upstreamOutput += body.dropFirst(Int(skip))
    }

    func moveResponseBody(_ count: Int) {
        if closed { sentAfterClose += 1 }
        clientOutput += upstreamInput.remove(count)
    }

    func setUpstreamReading(_ reading: Bool) { upstreamReading = reading }
    func processUpstreamInput() { processUpstream() }

    func releaseUpstream() {
        released += 1
        upstream = .none
        upstreamInput.bytes.removeAll()
    }

    func abortUpstream() {
        aborted += 1
        upstream = .none
        upstreamInput.bytes.removeAll()
    }

    func startTimer(_ id: TimerID, deadline: Int64) {
        timers[id] = deadline
        timersStarted += 1
    }

    func cancelTimer(_ id: TimerID) { timers[id] = nil }
    func consultCheck(_ index: Int, _ consultation: Consultation) {}
    func consultFile(_ request: FileVerdictRequest, _ inspection: any FileInspection) {}
    func exchangeStarted() { exchangesStarted += 1 }
    func finish() {
        if let record = finishedRecord() { records.append(record) }
    }
    func droppedUnderscoreFields(_ count: Int) {}
}
