public import HTTP1

/// The events and queries only an exchange on an HTTP/2 stream has: the end of the client's
/// stream, and DATA that disagrees with the request's `content-length` (RFC 9113 §8.1.1).
extension Exchange {
    /// The client ended its stream (END_STREAM): the input holds the rest of the body. A body
    /// that ends with its stream now has the length the input holds; one whose
    /// `content-length` the input does not match exactly is malformed (`Outcome.malformed`,
    /// logged as 400, the upstream aborted before it had a whole request). Otherwise the body
    /// is read on, as `clientReadable` would.
    public mutating func clientEndStream(
        input: some ByteSource, sink: Sink, levels: BufferLevels, date: [UInt8], now: Int64,
        actions: inout ActionBuffer
    ) {
        guard outcome == nil, !clientStreamEnded else { return }
        clientStreamEnded = true
        decoder.endStream(remaining: input.count)
        if let remaining = decoder.remainingLength, Int64(input.count) < remaining {
            return refuseMalformed(
                "the stream ended before the request's content-length", now: now, actions: &actions)
        }
        clientReadable(input: input, sink: sink, levels: levels, date: date, now: now, actions: &actions)
    }

    /// Whether the request body may take more DATA than `input` holds: its stream has not
    /// ended and its `content-length`, if any, is not covered by what was read and what the
    /// input holds. DATA beyond that is malformed: the next `clientReadable` or
    /// `clientEndStream` ends the exchange as `Outcome.malformed`.
    public func wantsMoreBody(input: some ByteSource) -> Bool {
        guard !clientStreamEnded, !decoder.isComplete else { return false }
        if let remaining = decoder.remainingLength { return Int64(input.count) < remaining }
        return true
    }

    /// HTTP/2: the RST_STREAM the shell sends once the exchange ended, after what it queued
    /// (`nil`: none, the stream ends with END_STREAM both ways, or the client already reset
    /// it). See `Outcome`.
    public var streamReset: StreamResetCode? {
        guard clientProtocol.isHTTP2, let outcome else { return nil }
        switch outcome {
        case .complete(_, let linger): return linger ? .noError : nil
        case .refused: return clientStreamEnded ? nil : .noError
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
