internal import HTTPCore

/// What an `HTTP2ServerSession` keeps for one client stream: the header block being
/// collected, the request body not yet read by the caller, the response body not yet
/// taken by libnghttp2.
///
/// A class: the session mutates its buffers in place through the stream table (a struct
/// copied out of the dictionary and written back would copy a buffer of up to a window on
/// every DATA chunk).
final class HTTP2Stream {
    /// Where the request stands.
    enum Phase {
        /// Collecting the header block (in `builder`).
        case head
        /// A valid request: its DATA goes to `inbound`.
        case open
        /// Refused (malformed, too large): its DATA is consumed and dropped on arrival.
        case discarding
    }

    var phase = Phase.head
    /// The header block being collected; nil once it ended. Mutated in place (a copy out of
    /// an enum payload would copy the fields collected so far for every new field).
    var builder: HTTP2RequestHeadBuilder?
    /// Request body bytes the caller has not read (`readInbound`).
    var inbound = ByteQueue()
    /// Where DATA goes as it arrives, once the caller gave one (`deliverInbound`).
    var inboundSink: (any ByteSink)?
    /// Body bytes handed to the caller so far: read from `inbound` or written to the sink.
    var taken = 0
    /// Request body bytes received and not yet consumed: the stream window stays closed by
    /// this much. Always at least `inbound.count`.
    var unconsumed = 0
    /// Response body bytes libnghttp2 has not taken yet.
    var outbound = ByteQueue()
    /// The caller ended the response body (`endStream`).
    var outboundEnded = false
    /// libnghttp2 found `outbound` empty and waits for `resume` (NGHTTP2_ERR_DEFERRED).
    var deferred = false
    /// The RST_STREAM code to send once the response's END_STREAM is written
    /// (`resetWhenAnswered`).
    var resetAfterResponse: HTTP2ErrorCode?
    /// A final response was submitted (the stream no longer counts as a rapid reset).
    var responded = false
    /// The §6.5.2 size of the fields of blocks nobody reads (trailers, or a block on a
    /// refused stream), bounded like a request's.
    var ignoredListSize = 0
    /// A `.malformed` or `.headersTooLarge` was reported (reported once).
    var refusalReported = false
    /// The reason libnghttp2's invalid-header callback saw, for the `.malformed` event.
    var pendingReason: HTTP2MalformedReason?
    /// An RST_STREAM was received or submitted (a close with its code is not a refusal).
    var resetSeen = false
    /// libnghttp2 closed the stream; the record stays until the caller takes `.closed`.
    var closed = false

    init(maxHeaderListSize: Int) {
        builder = HTTP2RequestHeadBuilder(maxListSize: maxHeaderListSize)
    }
}
