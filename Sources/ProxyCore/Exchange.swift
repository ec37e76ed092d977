public import HTTP1
import HTTPCore
import MultipartParsing
public import UploadRules

/// One request from its head to the end of its response, whatever the transport: route,
/// request-level verdicts, body through the rule pipeline, upstream head and body, response
/// head and body, errors and timeouts.
///
/// A value-type state machine: its `mutating` methods take an event (with the clock reading
/// `now`, in milliseconds) and append what the shell must do to an `ActionBuffer`. It knows
/// nothing of connection management; its host (`HTTP1ConnectionStateMachine`, or the HTTP/2
/// transport, one exchange per stream) reads `outcome` after each event. What differs between
/// the two (the response head, 100-continue, keep-alive, the end of the body) follows
/// `clientProtocol`; the HTTP/2 events are in `Exchange+HTTP2`. Bytes it parses or rewrites
/// come from a `ByteSource` and go to the shell's `Sink`; bytes it forwards untouched move as
/// actions.
public struct Exchange<Sink: RequestBodySink> {
    /// How the exchange ended, for its host.
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
    /// `streamReset` gives the code for the outcome reached.
    public enum Outcome: Sendable, Equatable {
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

    /// Where the request stands.
    enum RequestPhase: Equatable {
        /// Request-level verdicts are pending: body bytes stay in the client's input.
        case held
        /// Body bytes are read and forwarded.
        case reading
        /// The whole body was read; its end is not in the sinks yet.
        case ending(BodyEnd)
        /// The whole body was read and is in the sinks (or it was abandoned after an early
        /// answer).
        case done

        /// Whether the client's body has been read to its end (or abandoned).
        var bodyRead: Bool {
            switch self {
            case .held, .reading: false
            case .ending, .done: true
            }
        }
    }

    /// What the end of a body that was read whole waits for.
    enum BodyEnd: Equatable {
        /// The rules hold part of their output (a digest computed off the loop, a file's
        /// verdict): the body is whole in the sinks once they release it.
        case rules
        /// The spooled body is written, but some writes are still in flight off the loop: the
        /// upstream connect waits for the shell's progress signal.
        case spoolWrites
    }

    /// Where a rewritten body waits before it goes upstream.
    enum BodyStore: Equatable {
        /// Nowhere: it streams (chunked, or under a declared length).
        case none
        /// The spool (and file spool) of `request_body: buffer`, then sent with a length.
        case spool
    }

    /// Where the upstream connection stands.
    enum UpstreamPhase: Equatable {
        case none
        case connecting
        /// Connected; the head waits for the body's length (`pendingLength`).
        case ready
        /// Connected; the head (and what was staged) is queued.
        case sending
        /// The whole request is queued; the response is awaited (or arriving).
        case sent
        /// Released or aborted.
        case finished
    }

    enum ResponsePhase {
        case awaitingHead(ResponseHeadReader)
        /// The head went to the client; the body is relayed (`framing` as the client gets it).
        case body(keepAlive: Bool, decoder: BodyDecoder, framing: ClientBodyFraming)
        case done
    }

    /// How the response body reaches the client.
    enum ClientBodyFraming: Equatable {
        /// As the upstream's body is de-framed (a length, or HTTP/2 DATA ended by
        /// `endClientStream`).
        case plain
        /// HTTP/1.1: re-framed as chunks (the upstream's were chunked or ended at close).
        case chunked
        /// HTTP/2: there is none: the response head ended the stream.
        case endedWithHead
    }

    /// The request head (after the connection's field checks).
    public let head: RequestHead
    /// The transport the request came over.
    public let clientProtocol: ClientProtocol
    /// The matched route, if any.
    public let route: Route?
    /// The request id (`X-Request-Id`).
    public let requestID: String
    let target: UpstreamURL
    let settings: ProxySettings
    /// The client's numeric address (for `X-Forwarded-For`).
    let client: [UInt8]
    /// Whether the client came over TLS.
    let secure: Bool
    /// The request body, de-framed.
    var decoder: BodyDecoder
    /// How the body is framed upstream.
    var upstreamFraming: BodyFraming
    var multipart: MultipartBody<Sink>?
    /// The re-encoded body's boundary, kept apart from `multipart`: reading it through
    /// `multipart?.` copied the whole body (parser and rules) when the head was sent.
    var multipartBoundary: [UInt8]?
    /// Where the rewritten body waits before it goes upstream (`request_body:`).
    var bodyStore = BodyStore.none
    /// A `stream` body whose length is declared upstream once the file's head is re-encoded,
    /// until it is (see `Exchange+DeclaredLength`).
    var pendingLength: PendingLength?
    /// A request refused while setting up (reported by `start`).
    var setupError: ProxyError?
    var requestPhase = RequestPhase.reading
    /// The route's check whose verdict is pending (it answered `hold`).
    var heldCheck: Int?
    /// The route's rate limiter admitted the request with this ticket (ended once, at the end).
    var limiterTicket: ClientLimiter.Ticket?
    /// Who sent the request, once a check established it.
    public internal(set) var identity: Identity?
    /// The multipart type of a body the route rewrites (read from the head).
    var bodyType: MediaType?
    var upstream = UpstreamPhase.none
    /// A route answered inside FormGate: its responder for this request (`Exchange+Local`),
    /// boxed, so a copy of the exchange is a retain.
    var local: LocalResponderBox?
    var response = ResponsePhase.awaitingHead(ResponseHeadReader(limit: 64 * 1024))
    var upstreamStartedAt: Int64 = 0
    /// The last upstream progress (for the lazily re-armed response timer).
    var upstreamActivity: Int64 = 0
    /// Timers this exchange has armed and not seen fire or cancelled.
    var timers = TimerSet()
    /// Whether this exchange has paused the client's reads (backpressure, a held request; the
    /// host sets it when its reads were paused before the exchange began). A flow state, read
    /// by the hosts on every event: stored, so reading it through the host's optional never
    /// copies the exchange.
    public internal(set) var clientReadsPaused = false
    /// Whether this exchange has paused the upstream's reads (the client's output is over the
    /// high watermark): it reads on after `clientDrained`.
    public internal(set) var upstreamReadsPaused = false
    /// Whether the client may send more of the request (set by the host when the client had
    /// finished before the exchange began; see `clientFinishedSending`).
    public var clientSending = ClientSending.open
    /// HTTP/2: when the client last sent DATA (or its reads resumed), for the stream's lazily
    /// re-armed idle timer (`Exchange+HTTP2`).
    var clientActivity: Int64 = 0
    /// HTTP/2: the reset an outcome of `closeNow` calls for (none when the client left).
    var closeNowReset: StreamResetCode? = .internalError
    /// Set by the host: the connection cannot carry another request (draining, half-closed).
    /// HTTP/1 only.
    public var connectionMayPersist = true
    var record: AccessRecord
    /// How the exchange ended; `nil` while it runs.
    public internal(set) var outcome: Outcome?

    /// Prepares an exchange for `head` whose body is framed as `framing`; `start` runs it.
    ///
    /// - Parameters:
    ///   - requestID: the id to use when the client sent none (or an unusable one).
    ///   - client: the client's numeric address.
    ///   - secure: whether the connection is TLS.
    ///   - clientProtocol: the transport; an HTTP/2 stream's `head` is built from its HEADERS
    ///     (version `.http2`, `:authority` as `Host`) and `framing` is
    ///     `MessageFraming.http2Request`'s.
    public init(
        head: RequestHead, framing: BodyFraming, settings: ProxySettings, requestID: String, client: [UInt8],
        secure: Bool = false, clientProtocol: ClientProtocol = .http1, now: Int64
    ) {
        self.head = head
        self.clientProtocol = clientProtocol
        self.settings = settings
        self.client = client
        self.secure = secure
        // Matched into the stored property and read from it: a local copy kept alive beside it
        // was a second copy of the route per request.
        self.route = settings.routes.match(
            path: head.routingPath, host: head.headers.firstValue("Host") ?? [])
        self.requestID =
            head.headers["X-Request-Id"].flatMap { $0.isEmpty || $0.count > 200 ? nil : $0 } ?? requestID
        self.target = self.route?.upstream ?? settings.upstream
        self.decoder = BodyDecoder(framing)
        // A body that ends with its stream has no length to declare: chunks, or the spool.
        self.upstreamFraming = framing == .untilEndOfStream ? .chunked : framing
        self.record = AccessRecord(
            requestID: self.requestID, method: head.method, path: String(head.path), route: self.route?.name,
            startedAt: now)
        self.record.clientProtocol = clientProtocol
        // HEADERS with END_STREAM, or a content-length of 0: nothing more may come.
        if clientProtocol.isHTTP2, framing == .none { self.clientSending = .finished }
    }

    /// Whether the exchange still runs.
    public var isActive: Bool { outcome == nil }

    /// Whether the exchange is reading the client's body (and wants its bytes).
    public var readsBody: Bool { outcome == nil && requestPhase == .reading }

    /// Whether the response has begun (after which an error can only cut it off).
    public var hasResponded: Bool {
        if case .awaitingHead = response { return false }
        return true
    }

    /// Whether the whole body is in the sinks (read, and nothing held by the rules; spool
    /// writes may still be landing).
    var bodyInSinks: Bool { requestPhase == .done || requestPhase == .ending(.spoolWrites) }

    /// Whether the whole request is queued upstream.
    var requestSent: Bool { upstream == .sent }

    /// Whether the upstream connection is up and carries this exchange's request.
    var upstreamCarries: Bool { upstream == .sending || upstream == .sent }

    /// Whether the rules want the client paused: the hashing queue is backed up.
    var rulesWantPause: Bool { multipart?.rewriter.wantsPause ?? false }

    /// Where request body bytes go next: the spool, the upstream's output once the head is
    /// queued, or the staging buffer (unframed) before.
    var destination: BodyDestination {
        if spooled { return .spool }
        return upstreamCarries ? .upstream : .staging
    }

    /// Whether bytes written to `destination` are framed as chunks.
    var chunksDestination: Bool {
        destination == .upstream && upstreamFraming == .chunked
    }

    // MARK: timers

    /// Whether `id` is one of this exchange's armed timers.
    public func owns(_ id: TimerID) -> Bool { timers.contains(id) }

    // MARK: client reads

    /// Whether the client sends nothing more, on HTTP/1.1 (its FIN: there is nothing to
    /// resume reading). An HTTP/2 stream that ended may still hold DATA to read.
    var clientInputClosed: Bool { clientSending == .finished && !clientProtocol.isHTTP2 }

    /// Whether the rewritten body is spooled (`request_body: buffer`, or a store that needs a
    /// length the stream cannot declare in time).
    var spooled: Bool { bodyStore == .spool }

    mutating func pauseClientReads(_ actions: inout ActionBuffer) {
        guard !clientReadsPaused else { return }
        clientReadsPaused = true
        actions.append(.pauseClientReads)
    }

    /// Resumes reading the client; its silence counts from `now` (HTTP/2: its window was shut).
    mutating func resumeClientReads(now: Int64, _ actions: inout ActionBuffer) {
        guard clientReadsPaused, !clientInputClosed else { return }
        clientReadsPaused = false
        clientActivity = now
        actions.append(.resumeClientReads)
    }
}

/// Whether the client may send more of a request: the one name, on both transports, for the
/// client having finished (an HTTP/1.1 FIN, an HTTP/2 END_STREAM).
public enum ClientSending: Sendable, Equatable {
    /// More may come.
    case open
    /// Nothing more comes: on HTTP/1.1 the connection half-closed; on HTTP/2 the stream ended
    /// (its input holds the rest of the body).
    case finished
}
