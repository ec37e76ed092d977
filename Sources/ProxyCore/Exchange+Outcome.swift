public import HTTP1

extension Exchange {
    /// Answers with an error when no response has started (the host then closes with a
    /// lingering close; HTTP/2: head, body and END_STREAM, no `Connection: close`), or cuts the
    /// response off; logs the exchange.
    public mutating func fail(_ error: ProxyError, date: [UInt8], now: Int64, actions: inout ActionBuffer) {
        guard outcome == nil else { return }
        endUpstream(reusable: false, &actions)
        record.error = error.detail
        record.failure = error
        if hasResponded {
            finish(status: record.upstreamStatus ?? error.status, now: now, actions: &actions)
            outcome = .closeNow
            return
        }
        if clientProtocol.isHTTP2 {
            let answer = ErrorResponse.make(error, request: head, requestID: requestID, date: date)
            let bodiless = answer.body.isEmpty
            actions.append(
                .respondClient(
                    StreamResponseHead(status: answer.status, headers: answer.headers, endsStream: bodiless)))
            if !bodiless {
                record.bytesOut += Int64(
                    actions.sendClient { out in answer.body.withUnsafeBytes { out.write($0) } })
                actions.append(.endClientStream)
            }
        } else {
            record.bytesOut += Int64(
                actions.sendClient {
                    ErrorResponse.write(error, request: head, requestID: requestID, date: date, into: &$0)
                })
        }
        finish(status: error.status, now: now, actions: &actions)
        outcome = .refused
    }

    /// The client closed (or reset) before the exchange ended: the upstream gets nothing
    /// more; logged as 499.
    public mutating func clientGone(now: Int64, actions: inout ActionBuffer) {
        guard outcome == nil else { return }
        record.error = "client closed the connection"
        closeNowReset = nil
        endUpstream(reusable: false, &actions)
        finish(status: 499, now: now, actions: &actions)
        outcome = .closeNow
    }

    /// The client finished sending, on either transport: an HTTP/2 END_STREAM (the input
    /// holds the rest of the body: `clientEndedStream`), or an HTTP/1.1 FIN (what it sent
    /// before counts; a body cut short by it is the client leaving).
    public mutating func clientFinishedSending(
        input: some ByteSource, sink: Sink, levels: BufferLevels, date: [UInt8], now: Int64,
        actions: inout ActionBuffer
    ) {
        if clientProtocol.isHTTP2 {
            return clientEndedStream(
                input: input, sink: sink, levels: levels, date: date, now: now, actions: &actions)
        }
        clientSending = .finished
        connectionMayPersist = false
        clientReadsPaused = true
        guard outcome == nil, requestPhase == .reading else { return }
        readBody(input: input, sink: sink, levels: levels, date: date, now: now, actions: &actions)
    }

    /// The upstream connection failed or closed. A close-delimited response ends here.
    public mutating func upstreamFailed(
        _ failure: UpstreamFailure, input: some ByteSource, levels: BufferLevels, date: [UInt8], now: Int64,
        actions: inout ActionBuffer
    ) {
        guard outcome == nil, upstream == .connecting || upstream == .ready || upstreamCarries else {
            return
        }
        if case .closed = failure, case .body(_, let decoder, _) = response, decoder.endsAtClose {
            relayResponse(
                input: input, levels: levels, ignoringWatermark: true, date: date, now: now, actions: &actions
            )
            return completeResponse(reusable: false, now: now, actions: &actions)
        }
        let error = failure.error(connecting: upstream == .connecting)
        fail(error, date: date, now: now, actions: &actions)
    }

    /// A timer of this exchange fired.
    public mutating func timer(_ id: TimerID, date: [UInt8], now: Int64, actions: inout ActionBuffer) {
        guard timers.fired(id), outcome == nil else { return }
        switch id {
        case .upstreamConnect:
            fail(
                ProxyError(.upstreamTimeout, detail: "upstream connect timed out"), date: date, now: now,
                actions: &actions)
        case .upstreamResponse:
            // Re-armed lazily: progress only moves the deadline; a paused upstream is not silent.
            if upstreamReadsPaused { upstreamActivity = now }
            let due = upstreamActivity + settings.timeouts.upstreamResponse
            guard now >= due else { return timers.start(.upstreamResponse, at: due, &actions) }
            fail(
                ProxyError(.upstreamTimeout, detail: "upstream did not answer in time"), date: date, now: now,
                actions: &actions)
        case .verdict:
            fail(
                ProxyError(.verdictTimeout, detail: "a request check did not answer in time"), date: date,
                now: now,
                actions: &actions)
        case .fileVerdict:
            fail(
                ProxyError(.verdictTimeout, detail: "a file inspection did not answer in time"), date: date,
                now: now, actions: &actions)
        case .idle:
            clientIdleTimedOut(date: date, now: now, actions: &actions)
        case .header, .linger, .stall, .streams:
            break
        }
    }
}
