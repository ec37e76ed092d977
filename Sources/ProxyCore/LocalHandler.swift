public import HTTP1
public import HTTPCore
public import UploadRules

/// A route answered inside FormGate instead of by an upstream (`Route.local`): resumable
/// uploads, the live view, an admin endpoint. The exchange runs the route's checks as for any
/// route, then hands the handler the request; the body follows as it arrives, with
/// backpressure (the responder takes what it has `room` for, the rest waits in the client's
/// input and reading pauses); the responder's answer goes to the client as the exchange's
/// response, through the same actions as an upstream's (a head and body on HTTP/1.1; HEADERS,
/// DATA and END_STREAM on HTTP/2). Nothing goes upstream.
///
/// Class-bound: a route (and so every exchange on it) holds it as one reference. An opaque
/// existential held inline made every copy of an `Exchange` call a value witness the
/// optimizer cannot remove.
public protocol LocalHandler: AnyObject, Sendable {
    /// The responder for one request the route's checks admitted.
    func responder(for request: LocalRequest) -> any LocalResponder
}

/// What a local handler sees of a request.
public struct LocalRequest: Sendable {
    /// The request head (after the connection's field checks).
    public var head: RequestHead
    /// The route's name.
    public var route: String
    /// The identity the route's checks established.
    public var identity: Identity?
    /// The client's numeric address.
    public var client: [UInt8]
    /// Whether the client came over TLS.
    public var secure: Bool
    /// The request's id (`X-Request-Id`).
    public var requestID: String
    /// The monotonic clock, milliseconds.
    public var now: Int64

    public init(
        head: RequestHead, route: String, identity: Identity?, client: [UInt8], secure: Bool,
        requestID: String, now: Int64
    ) {
        self.head = head
        self.route = route
        self.identity = identity
        self.client = client
        self.secure = secure
        self.requestID = requestID
        self.now = now
    }
}

/// One request's handling inside FormGate: a value its exchange holds and drives. Events come
/// in order: `body` while the request has body bytes (never more than `room` at once), then
/// `end` once; `answer` is read after each, and the first answer ends the exchange (an answer
/// before the body ended leaves the rest of it unread: the connection lingers, or the stream
/// is reset with NO_ERROR after the answer).
public protocol LocalResponder {
    /// How many body bytes it takes now; 0 pauses the client until the shell reports progress
    /// (`Exchange.localProgress`).
    var room: Int { get }
    /// The answer, once decided.
    var answer: LocalAnswer? { get }
    /// Request body bytes (de-framed), at most `room`.
    mutating func body(_ bytes: UnsafeRawBufferPointer, now: Int64)
    /// The body ended (or there was none).
    mutating func end(now: Int64)
    /// The access log's `tus` object while no answer carries one (a request that ended
    /// unanswered: the client left, a timeout).
    var tusLog: TusLog? { get }
    /// The upload it takes, for the live view (a tus PATCH), once known.
    var live: LocalLive? { get }
}

extension LocalResponder {
    public var tusLog: TusLog? { nil }
    public var live: LocalLive? { nil }
}

/// A local handler's answer: a complete response.
public struct LocalAnswer: Sendable, Equatable {
    public var status: Int
    /// Fields besides `Content-Length`, `Date` and `X-Request-Id`, which the exchange adds.
    public var headers: HeaderFields
    public var body: [UInt8]
    /// The access log's `tus` object, on a tus route.
    public var tus: TusLog?
    /// The access log's `error`, for a refusal.
    public var error: String?

    public init(
        status: Int, headers: HeaderFields = HeaderFields(), body: [UInt8] = [], tus: TusLog? = nil,
        error: String? = nil
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.tus = tus
        self.error = error
    }
}

/// The access log's `tus` object: the upload, where it stands, and what the request did.
public struct TusLog: Sendable, Equatable {
    /// What a tus request did (`created`, `patched`, `completed`, `terminated`, `expired`;
    /// nil for a HEAD, an OPTIONS or a refusal).
    public var event: String?
    public var id: String?
    public var offset: Int64?
    public var length: Int64?

    public init(event: String?, id: String?, offset: Int64? = nil, length: Int64? = nil) {
        self.event = event
        self.id = id
        self.offset = offset
        self.length = length
    }
}
