/// How an exchange ended, for its host (`Exchange.Outcome`).
///
/// On an HTTP/2 stream (RFC 9113) the connection goes on whatever the outcome:
/// - `complete`: the stream is done (its END_STREAM is queued); `keepAlive` is always
///   `false`, and `linger` says the client may still be sending a body the exchange did not
///   read (an early answer): RST_STREAM NO_ERROR after the response (§8.1).
/// - `refused`: an error answer is queued (head, body, END_STREAM); when the client had not
///   ended its stream, RST_STREAM NO_ERROR after it (§8.1).
/// - `closeNow`: RST_STREAM CANCEL when a verdict aborted, INTERNAL_ERROR when the response
///   broke off, none when the client left (it reset the stream, or the connection ended).
/// - `malformed`: RST_STREAM PROTOCOL_ERROR, unanswered (§8.1.1).
/// `Exchange.streamReset` gives the code for the outcome reached.
public enum ExchangeOutcome: Sendable, Equatable {
    /// The response is complete; the connection may carry another request when
    /// `keepAlive`, else it closes (lingering when the client may still be sending).
    case complete(keepAlive: Bool, linger: Bool)
    /// An error response was queued: flush it, then close with a lingering close.
    case refused
    /// Close now, unanswered (the client left, the response broke off, a verdict aborted).
    case closeNow
    /// HTTP/2 only: the request is malformed (RFC 9113 §8.1.1: its DATA disagreed with its
    /// `content-length`): reset the stream with PROTOCOL_ERROR; logged as 400, the upstream
    /// aborted before it had a whole request.
    case malformed
}
