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
        guard outcome == nil, client.sending == .open else { return }
        client.sending = .finished
        timers.cancel(.idle, &actions)
        request.decoder.endStream(remaining: input.count)
        if let remaining = request.decoder.remainingLength, Int64(input.count) < remaining {
            return clientStreamMalformed(
                "the stream ended before the request's content-length", now: now, actions: &actions)
        }
        clientReadable(input: input, sink: sink, levels: levels, date: date, now: now, actions: &actions)
    }

    /// Whether the request body may take more DATA than `input` holds: its stream has not
    /// ended and its `content-length`, if any, is not covered by what was read and what the
    /// input holds. DATA beyond that is malformed: the next `clientReadable` or
    /// `clientFinishedSending` ends the exchange as `Outcome.malformed`.
    public func wantsMoreBody(input: some ByteSource) -> Bool {
        client.sending == .open && request.wantsMore(than: input.count)
    }

    /// HTTP/2: the stream's idle timer fired (`timeouts.idle`, armed by `start` as an HTTP/1.1
    /// connection arms its own). It is re-armed lazily: DATA only moves `client.activity`. The
    /// silence is not the client's while the exchange does not wait for it (reads paused for a
    /// slow upstream, so its window is shut; a verdict pending; the response under way), and
    /// after END_STREAM it has nothing more to send. A client silent for the whole period gets
    /// 408 (RST_STREAM NO_ERROR follows) and the upstream, which has a partial request, is
    /// aborted.
    mutating func clientIdleTimedOut(date: [UInt8], now: Int64, actions: inout ActionBuffer) {
        let waitedFor = request.phase == .reading
        guard let due = client.idleDue(now: now, waitedFor: waitedFor, idle: settings.timeouts.idle) else {
            return
        }
        guard now >= due else { return timers.start(.idle, at: due, &actions) }
        fail(ProxyError(.requestTimeout, detail: "client too slow"), date: date, now: now, actions: &actions)
    }

    /// HTTP/2: the RST_STREAM the shell sends once the exchange ended, after what it queued
    /// (`nil`: none; see `ExchangeClient.streamReset`).
    public var streamReset: StreamResetCode? { outcome.flatMap { client.streamReset($0) } }

    /// HTTP/2: the request is malformed (DATA that disagrees with its `content-length`, found
    /// here or by the frame codec, or trailers it refuses): the exchange ends unanswered as
    /// `malformed` (the shell resets the stream with PROTOCOL_ERROR), logged as 400 with
    /// `detail`; the upstream, which cannot have had the whole request, is aborted.
    public mutating func clientStreamMalformed(_ detail: String, now: Int64, actions: inout ActionBuffer) {
        guard outcome == nil else { return }
        record.failure = ProxyError(.badRequest, detail: detail)
        endUnanswered(.malformed, status: 400, error: detail, now: now, actions: &actions)
    }
}
