public import HTTP1
import HTTPCore
import MultipartParsing
import TraceContext
import UploadRules

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
    /// How the exchange ended, for its host (see `ExchangeOutcome`).
    public typealias Outcome = ExchangeOutcome

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
    let clientAddress: [UInt8]
    /// Whether the client came over TLS.
    let secure: Bool
    /// The request's body and where it stands.
    var request: ExchangeRequest<Sink>
    /// The route's checks: the identity they established, a pending verdict, the limiter's
    /// ticket.
    var checks = ExchangeChecks()
    var upstream = ExchangeUpstream()
    var response = ExchangeResponse()
    /// A route answered inside FormGate: its responder for this request (`Exchange+Local`),
    /// boxed, so a copy of the exchange is a retain.
    var local: LocalResponderBox?
    /// Timers this exchange has armed and not seen fire or cancelled.
    var timers = TimerSet()
    /// Whether this exchange has paused the upstream's reads (the client's output is over the
    /// high watermark): it reads on after `clientDrained`.
    public internal(set) var upstreamReadsPaused = false
    /// The client's reads, whether it may send more, and its connection.
    public var client: ExchangeClient
    var record: AccessRecord
    /// The request's trace, when `tracing:` samples it.
    public internal(set) var trace: ExchangeTrace?
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
        self.clientAddress = client
        self.client = ExchangeClient(http2: clientProtocol.isHTTP2)
        self.secure = secure
        // Matched into the stored property and read from it: a local copy kept alive beside it
        // was a second copy of the route per request.
        self.route = settings.routes.match(head)
        self.requestID =
            head.headers["X-Request-Id"].flatMap { $0.isEmpty || $0.count > 200 ? nil : $0 } ?? requestID
        self.target = self.route?.upstream ?? settings.upstream
        self.request = ExchangeRequest(framing: framing)
        self.record = AccessRecord(
            requestID: self.requestID, method: head.method, path: String(head.path), route: self.route?.name,
            startedAt: now)
        self.record.clientProtocol = clientProtocol
        if let sampler = settings.tracing {
            var generator = IDGenerator()
            self.trace = ExchangeTrace.start(head.headers, sampler: sampler, generator: &generator)
        }
        // HEADERS with END_STREAM, or a content-length of 0: nothing more may come.
        if clientProtocol.isHTTP2, framing == .none { self.client.sending = .finished }
    }

    /// Whether the exchange still runs.
    public var isActive: Bool { outcome == nil }

    /// Whether a local responder answers the exchange (`Exchange+Local`).
    public var isLocal: Bool { local != nil }

    /// Whether the exchange is reading the client's body (and wants its bytes).
    public var readsBody: Bool { outcome == nil && request.phase == .reading }

    /// Whether the response has begun (after which an error can only cut it off).
    public var hasResponded: Bool { response.hasBegun }

    /// Where request body bytes go next: the spool, the upstream's output once the head is
    /// queued, or the staging buffer (unframed) before.
    var destination: BodyDestination {
        if request.spooled { return .spool }
        return upstream.carries ? .upstream : .staging
    }

    /// Whether bytes written to `destination` are framed as chunks.
    var chunksDestination: Bool {
        destination == .upstream && request.upstreamFraming == .chunked
    }

    /// Whether `id` is one of this exchange's armed timers.
    public func owns(_ id: TimerID) -> Bool { timers.contains(id) }

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
