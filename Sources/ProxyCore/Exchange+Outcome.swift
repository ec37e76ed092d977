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
        record.bytesOut += ExchangeResponse.answerError(
            error, request: head, requestID: requestID, http2: clientProtocol.isHTTP2, date: date,
            actions: &actions)
        finish(status: error.status, now: now, actions: &actions)
        outcome = .refused
    }

    /// The client closed (or reset) before the exchange ended: the upstream gets nothing
    /// more; logged as 499.
    public mutating func clientGone(now: Int64, actions: inout ActionBuffer) {
        guard outcome == nil else { return }
        client.closeNowReset = nil
        endUnanswered(
            .closeNow, status: 499, error: "client closed the connection", now: now, actions: &actions)
    }

    /// Ends the exchange unanswered with `outcome`, logged as `status` with `error`; the
    /// upstream, if any, is aborted.
    mutating func endUnanswered(
        _ outcome: Outcome, status: Int, error: String, now: Int64, actions: inout ActionBuffer
    ) {
        record.error = error
        endUpstream(reusable: false, &actions)
        finish(status: status, now: now, actions: &actions)
        self.outcome = outcome
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
        client.finishedSending()
        guard outcome == nil, request.phase == .reading else { return }
        readBody(input: input, sink: sink, levels: levels, date: date, now: now, actions: &actions)
    }

    /// The upstream connection failed or closed. A close-delimited response ends here.
    public mutating func upstreamFailed(
        _ failure: UpstreamFailure, input: some ByteSource, levels: BufferLevels, date: [UInt8], now: Int64,
        actions: inout ActionBuffer
    ) {
        guard outcome == nil, upstream.held else { return }
        if case .closed = failure, response.endsAtClose {
            relayResponse(
                input: input, levels: levels, ignoringWatermark: true, date: date, now: now, actions: &actions
            )
            return completeResponse(reusable: false, now: now, actions: &actions)
        }
        let error = failure.error(connecting: upstream.phase == .connecting)
        fail(error, date: date, now: now, actions: &actions)
    }

    /// A timer of this exchange fired: the upstream's response timer is re-armed lazily
    /// (progress only moves the deadline; a paused upstream is not silent), the idle timer
    /// judges the client (`clientIdleTimedOut`), the others end the exchange with their error.
    public mutating func timer(_ id: TimerID, date: [UInt8], now: Int64, actions: inout ActionBuffer) {
        guard timers.fired(id), outcome == nil else { return }
        switch id {
        case .upstreamResponse:
            if upstreamReadsPaused { upstream.activity = now }
            let due = upstream.activity + settings.timeouts.upstreamResponse
            guard now >= due else { return timers.start(.upstreamResponse, at: due, &actions) }
        case .idle:
            return clientIdleTimedOut(date: date, now: now, actions: &actions)
        case .bodyTotal:
            // The body ended (or was abandoned) as this fired.
            if request.phase.bodyRead { return }
        default:
            break
        }
        if let error = id.exchangeExpiry { fail(error, date: date, now: now, actions: &actions) }
    }
}

extension TimerID {
    /// The error an exchange ends with when this timer expires (`nil`: not an exchange's, or
    /// judged by the exchange itself).
    var exchangeExpiry: ProxyError? {
        switch self {
        case .upstreamConnect: ProxyError(.upstreamTimeout, detail: "upstream connect timed out")
        case .upstreamResponse: ProxyError(.upstreamTimeout, detail: "upstream did not answer in time")
        case .verdict: ProxyError(.verdictTimeout, detail: "a request check did not answer in time")
        case .fileVerdict: ProxyError(.verdictTimeout, detail: "a file inspection did not answer in time")
        case .bodyTotal:
            ProxyError(
                .requestTimeout, detail: "request body not received within timeouts.body_total",
                limit: "body_total")
        case .header, .idle, .linger, .stall, .streams: nil
        }
    }
}
