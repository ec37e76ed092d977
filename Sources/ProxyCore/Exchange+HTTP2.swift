public import HTTP1

/// The events and queries only an exchange on an HTTP/2 stream has: the end of the client's
/// stream, and DATA that disagrees with the request's `content-length` (RFC 9113 §8.1.1).
extension Exchange {
    /// HTTP/2: the client ended its stream (END_STREAM): the input holds the rest of the body.
    /// A body that ends with its stream now has the length the input holds; one whose
    /// `content-length` the input does not match exactly is malformed (`Outcome.malformed`,
    /// logged as 400, the upstream aborted before it had a whole request). Otherwise the body
    /// is read on, as `clientReadable` would.
    mutating func clientEndedStream(
        input: some ByteSource, sink: Sink, levels: BufferLevels, date: [UInt8], now: Int64,
        actions: inout ActionBuffer
    ) {
        guard outcome == nil, clientSending == .open else { return }
        clientSending = .finished
        timers.cancel(.idle, &actions)
        decoder.endStream(remaining: input.count)
        if let remaining = decoder.remainingLength, Int64(input.count) < remaining {
            return refuseMalformed(
                "the stream ended before the request's content-length", now: now, actions: &actions)
        }
        clientReadable(input: input, sink: sink, levels: levels, date: date, now: now, actions: &actions)
    }

    /// HTTP/2: the client has not ended its stream, so the body may not be whole yet.
    var awaitsEndStream: Bool { clientProtocol.isHTTP2 && clientSending == .open }

    /// How many of the `count` input bytes the body may take now. On an HTTP/2 stream that has
    /// not ended, a `content-length` body's final byte stays in the input until END_STREAM: the
    /// upstream never holds a whole request whose DATA may yet disagree with its length (RFC
    /// 9113 §8.1.1); one more byte, or no END_STREAM, and it is aborted incomplete.
    func readableBodyBytes(_ count: Int) -> Int {
        guard awaitsEndStream, let remaining = decoder.remainingLength else { return count }
        return Int(min(Int64(count), remaining - 1))
    }

    /// Whether the request body may take more DATA than `input` holds: its stream has not
    /// ended and its `content-length`, if any, is not covered by what was read and what the
    /// input holds. DATA beyond that is malformed: the next `clientReadable` or
    /// `clientFinishedSending` ends the exchange as `Outcome.malformed`.
    public func wantsMoreBody(input: some ByteSource) -> Bool {
        guard clientSending == .open, !decoder.isComplete else { return false }
        if let remaining = decoder.remainingLength { return Int64(input.count) < remaining }
        return true
    }

    /// HTTP/2: the stream's idle timer fired (`timeouts.idle`, armed by `start` as an HTTP/1.1
    /// connection arms its own). It is re-armed lazily: DATA only moves `clientActivity`. The
    /// silence is not the client's while the exchange does not wait for it (reads paused for a
    /// slow upstream, so its window is shut; a verdict pending; the response under way), and
    /// after END_STREAM it has nothing more to send. A client silent for the whole period gets
    /// 408 (RST_STREAM NO_ERROR follows) and the upstream, which has a partial request, is
    /// aborted.
    mutating func clientIdleTimedOut(date: [UInt8], now: Int64, actions: inout ActionBuffer) {
        guard awaitsEndStream else { return }
        if clientReadsPaused || requestPhase != .reading { clientActivity = now }
        let due = clientActivity + settings.timeouts.idle
        guard now >= due else { return timers.start(.idle, at: due, &actions) }
        fail(ProxyError(.requestTimeout, detail: "client too slow"), date: date, now: now, actions: &actions)
    }

    /// HTTP/2: the RST_STREAM the shell sends once the exchange ended, after what it queued
    /// (`nil`: none, the stream ends with END_STREAM both ways, or the client already reset
    /// it). See `Outcome`.
    public var streamReset: StreamResetCode? {
        guard clientProtocol.isHTTP2, let outcome else { return nil }
        switch outcome {
        case .complete(_, let linger): return linger ? .noError : nil
        case .refused: return clientSending == .finished ? nil : .noError
        case .closeNow: return closeNowReset
        case .malformed: return .protocolError
        }
    }

    /// HTTP/2: whether the input holds more than the body has left (its stream's input holds
    /// nothing but its DATA; on HTTP/1 the next request may follow the body).
    func inputOverflowsBody(_ input: some ByteSource) -> Bool {
        guard clientProtocol.isHTTP2, input.count > 0 else { return false }
        if decoder.isComplete { return true }
        if let remaining = decoder.remainingLength { return Int64(input.count) > remaining }
        return false
    }

    /// HTTP/2: the transport found the stream malformed (its frame codec reset it for DATA
    /// past the `content-length`, or trailers it refuses): the exchange ends as `malformed`,
    /// logged as 400 with `detail`, its upstream aborted.
    public mutating func clientStreamMalformed(_ detail: String, now: Int64, actions: inout ActionBuffer) {
        refuseMalformed(detail, now: now, actions: &actions)
    }

    /// Ends a malformed request unanswered: the shell resets the stream with PROTOCOL_ERROR;
    /// the upstream, which cannot have had the whole request, is aborted.
    mutating func refuseMalformed(_ detail: String, now: Int64, actions: inout ActionBuffer) {
        guard outcome == nil else { return }
        let error = ProxyError(.badRequest, detail: detail)
        endUpstream(reusable: false, &actions)
        record.error = error.detail
        record.failure = error
        finish(status: error.status, now: now, actions: &actions)
        outcome = .malformed
    }
}
