/// What happened on an HTTP/2 connection, in order; `HTTP2ServerSession.nextEvent()` hands
/// them out after `receive` (and after writing output, where streams close).
///
/// The caller drains the queue between calls, so nothing it does in reaction re-enters
/// libnghttp2 from inside a callback.
public enum HTTP2Event: Equatable, Sendable {
    /// A complete, valid request header block (HEADERS and its CONTINUATIONs); `endStream`
    /// when it also ended the request (no body follows).
    case request(streamID: Int32, head: HTTP2RequestHead, endStream: Bool)
    /// A request that breaks RFC 9113 §8: the session has already answered RST_STREAM
    /// PROTOCOL_ERROR; the caller only logs it (a `.closed` follows).
    case malformed(streamID: Int32, reason: HTTP2MalformedReason)
    /// A request header list beyond `HTTP2Settings.maxHeaderListSize`: its fields were
    /// dropped; the caller answers 431 (`respond`) or resets the stream. Its DATA, if any,
    /// is discarded. A list that went past twice the limit was not decoded to its end: the
    /// session has reset the stream (ENHANCE_YOUR_CALM) and an answer is not sent.
    case headersTooLarge(streamID: Int32)
    /// `count` bytes of the request body were appended to the stream's inbound buffer
    /// (`readInbound`); the window stays closed for them until `consume`.
    case data(streamID: Int32, count: Int)
    /// The client ended the request body (END_STREAM on DATA).
    case endStream(streamID: Int32)
    /// The client reset the stream (RST_STREAM with `code`).
    case reset(streamID: Int32, code: HTTP2ErrorCode)
    /// The stream is over (both sides ended, or a reset either way); taking this event
    /// drops the stream's buffers, unread inbound bytes included.
    case closed(streamID: Int32, code: HTTP2ErrorCode)
    /// The client sent GOAWAY: streams above `lastStreamID` were not processed by it.
    case goaway(lastStreamID: Int32, code: HTTP2ErrorCode)
    /// The session ended the connection itself with GOAWAY `code` (an abuse limit or a
    /// connection error of the client): it reads nothing more; the caller flushes the
    /// output and closes once `wantsWrite` is false.
    case terminating(code: HTTP2ErrorCode)
}
