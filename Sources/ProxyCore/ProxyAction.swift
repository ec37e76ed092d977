public import UploadRules

/// Where request body bytes go: what the shell's `RequestBodySink` writes into, and the
/// destination of a zero-copy move.
public enum BodyDestination: Sendable, Equatable {
    /// The upstream connection's output.
    case upstream
    /// A buffer that holds body bytes until the upstream connection is ready (unframed).
    case staging
    /// The spool file of `request_body: buffer`.
    case spool
    /// With `order: fields_first`, the spool that holds the file parts.
    case fileSpool
}

/// The timers a connection and its exchange arm. The shell maps them to libevent timers;
/// each fires at most once per start, and a start replaces the earlier deadline of the same id.
public enum TimerID: Hashable, Sendable {
    /// The request head must be complete by then (`timeouts.header`).
    case header
    /// The client has been silent (or has not drained its output) for `timeouts.idle`.
    case idle
    /// The end of a lingering close.
    case linger
    /// Connecting to the upstream (`timeouts.upstream_connect`).
    case upstreamConnect
    /// The upstream has been silent for `timeouts.upstream_response` after the request.
    case upstreamResponse
    /// The deadline of request-level verdict `id`.
    case verdict(Int)
    /// The deadline of the verdict on an inspected file (its hold's number).
    case fileVerdict(Int)
    /// The whole request body must have arrived by then (`timeouts.body_total`).
    case bodyTotal
    /// HTTP/2: the connection's output has been held, or a response stuck behind a closed
    /// window, for `timeouts.idle`.
    case stall
    /// HTTP/2: the earliest deadline of the streams' exchanges (kept by the connection's
    /// state machine, one shell timer for all).
    case streams
}

/// The error code of a GOAWAY an HTTP/2 connection sends (RFC 9113 §7); raw values are the
/// protocol's.
public enum GoAwayCode: UInt32, Sendable, Equatable {
    /// An orderly close (idle, stalled).
    case noError = 0x0
    /// The client broke the protocol.
    case protocolError = 0x1
    /// The client flooded the connection (frames it provokes without reading, too many
    /// CONTINUATION frames).
    case enhanceYourCalm = 0xb
}

/// What the I/O shell must do. The state machines return these in order; the shell executes
/// each, in that order, and makes no decision of its own.
///
/// For an exchange on an HTTP/2 stream, "the client" is that stream: its input is the stream's
/// DATA (one buffer per stream), its output the stream's response body, and the head goes as
/// `respondClient`, never as bytes.
public enum ProxyAction: Sendable {
    /// Write `bytes` of the action buffer's byte store to the client (HTTP/2: response body
    /// bytes of the stream, sent as DATA).
    case sendClient(Range<Int>)
    /// Stop reading the client (backpressure, a held request, a closing connection). HTTP/2:
    /// stop consuming the stream's DATA, so its flow-control window is not reopened.
    case pauseClientReads
    /// Read the client again (HTTP/2: consume the stream's DATA again).
    case resumeClientReads
    /// HTTP/2: send `head` on the stream as a HEADERS frame, ahead of the body bytes that
    /// follow. (Boxed, as `finish` is: the fields would make every action large.)
    indirect case respondClient(StreamResponseHead)
    /// HTTP/2: the response body is complete: END_STREAM after the body bytes queued before
    /// it. Follows every `respondClient` of a final head that did not itself end the stream.
    case endClientStream
    /// Run the client's buffered input through the state machine again (after actions that
    /// had to be executed first).
    case processClientInput
    /// Discard everything the client sent that is still buffered.
    case discardClientInput
    /// Move this many request body bytes from the client's input to `destination` (zero-copy).
    case moveRequestBody(Int, to: BodyDestination)
    /// Send a FIN to the client once its output is written (`shutdown(SHUT_WR)`).
    case shutdownClientWrite
    /// Close the client connection (and drop anything still queued).
    case closeClient

    /// Take a pooled connection to `target` or start connecting one.
    case connectUpstream(UpstreamURL)
    /// Write `bytes` of the action buffer's byte store to the upstream.
    case sendUpstream(Range<Int>)
    /// Move the staged body bytes to the upstream's output (zero-copy).
    case moveStagingToUpstream
    /// Append the spool, then the file spool, to the upstream's output (`evbuffer_add_file`),
    /// leaving out the first `skip` bytes; a failure is reported as `spoolFailed`.
    case sendSpoolsUpstream(skip: Int64)
    /// Move this many response body bytes from the upstream's input to the client (zero-copy;
    /// HTTP/2: to the stream's output).
    case moveResponseBody(Int)
    /// Stop reading the upstream (the client does not drain).
    case pauseUpstreamReads
    /// Read the upstream again.
    case resumeUpstreamReads
    /// Run the upstream's buffered input through the state machine again.
    case processUpstreamInput
    /// The exchange is done with its upstream connection, which may carry another request.
    case releaseUpstream
    /// Close the upstream connection without completing its exchange.
    case abortUpstream

    /// Arm (or re-arm) timer `id` to fire at `deadline` (milliseconds on the injected clock).
    case startTimer(TimerID, deadline: Int64)
    /// Disarm timer `id`.
    case cancelTimer(TimerID)

    /// Check `index` of the exchange's route answered `hold`: the shell executes the
    /// consultation (asks the auth service) and reports its `Verdict` with the index as id.
    /// (Boxed: the consultation carries the request head.)
    indirect case consultCheck(Int, Consultation)
    /// An inspected file ended: the shell asks `FileInspection` about it and reports the
    /// `HoldDecision` for the request's hold (`Exchange.fileVerdict`).
    indirect case consultFile(FileVerdictRequest, any FileInspection)
    /// A request started (for the in-flight gauge).
    case exchangeStarted
    /// The exchange (or a request refused before one started) is over: its one access-log line,
    /// the record `ActionBuffer.takeFinishedRecord()` gives next. (Kept beside the actions, not
    /// in them: inline, the record made every action ~250 bytes, copied on each append and
    /// take; boxed, it cost an allocation per request.)
    case finish
    /// Request fields dropped because their name contains `_` (a rule-action counter).
    case droppedUnderscoreFields(Int)

    // HTTP/2 connections (`HTTP2ConnectionStateMachine`).

    /// The client actions that follow, up to the next `stream`, are stream `id`'s: its DATA is
    /// the client's input, its response the client's output. `0` is the connection itself:
    /// `pauseClientReads` and `resumeClientReads` then stop and resume reading the socket.
    case stream(Int32)
    /// Report stream `id`'s input (what is left of the DATA taken from the session) back to the
    /// machine (`streamSettled`), once the actions before this one have moved what they move.
    case settleStream(Int32)
    /// Give `count` request body bytes of stream `id` back to its flow-control window and the
    /// connection's: they were handed on (or dropped).
    case consumeWindow(Int32, Int)
    /// Send RST_STREAM with `code` on stream `id`; with `afterAnswer`, once the answer queued
    /// on it has gone (its END_STREAM), so the reset does not overtake it.
    case resetStream(Int32, StreamResetCode, afterAnswer: Bool)
    /// Stop handing stream `id`'s DATA over and drop what it holds; DATA that the session
    /// still queues for it is dropped and given back to the windows at once.
    case discardStreamInput(Int32)
    /// The stream is over for the shell: what it holds for it (its exchange's I/O) goes.
    case closeStream(Int32)
    /// Send GOAWAY with `code`; the connection closes once it is written.
    case goAway(GoAwayCode)
    /// Begin a graceful shutdown (a GOAWAY notice, then the final GOAWAY); open streams finish.
    case shutdownSession
    /// Write what the session has to send into the client's output now (before a close).
    case flushSession
}
