public import HTTP1
public import UploadRules

/// A request-level check (authentication, a rate limit, an external service): it sees the
/// head before any body byte is read past it, before the upstream is connected and before a
/// token is minted, and admits, refuses, or holds the request until a verdict arrives.
///
/// A route's checks run in order, one at a time: a check that holds stops the sequence until
/// its verdict, and each check sees the identity the ones before it established. The route's
/// `rate_limit:` comes after them (`Route.rateLimiter`), and is the one step that hears when
/// the request ends.
public protocol RequestCheck: Sendable {
    /// Judges the request. A `hold` carries what the shell is to consult (`Consultation`): the
    /// exchange passes it on (`ProxyAction.consultCheck`), and the answer comes back as a
    /// `Verdict` through the connection's `verdict(_:_:…)` with the check's index as id.
    func check(_ request: CheckRequest) -> CheckAnswer
}

/// What a check sees of a request.
public struct CheckRequest: Sendable, Equatable {
    /// The request head, as received.
    public var head: RequestHead
    /// The route's name.
    public var route: String
    /// The client's numeric address.
    public var client: [UInt8]
    /// The identity an earlier check established.
    public var identity: Identity?
    /// Whether the request came over TLS.
    public var secure: Bool
    /// The monotonic clock, milliseconds.
    public var now: Int64

    public init(
        head: RequestHead, route: String, client: [UInt8], identity: Identity? = nil, secure: Bool = false,
        now: Int64
    ) {
        self.head = head
        self.route = route
        self.client = client
        self.identity = identity
        self.secure = secure
        self.now = now
    }
}

/// A check's first answer.
public enum CheckAnswer: Sendable, Equatable {
    /// The request may go on.
    case pass
    /// The client is authenticated as this identity; the request may go on.
    case identified(Identity)
    /// Refused (401, 403, 429, ...).
    case refuse(Refusal)
    /// The answer comes from outside (the shell executes `consultation`); the exchange waits
    /// at most `milliseconds` (then 503).
    case hold(Consultation, milliseconds: Int64)
}

/// A verdict that ends a hold.
public enum Verdict: Sendable, Equatable {
    /// Go on, as `identity` when the check established one; `tally` is what the metrics
    /// count (an auth service's `allowed`, or an `error` let through by `on_error: allow`).
    case release(Identity? = nil, tally: CheckTally? = nil)
    /// Refused.
    case refuse(Refusal)
    /// Drop the request: the upstream gets nothing more and the connection closes unanswered.
    case abort
    /// The outside service could not decide (Redis, for a shared rate limit under `on_error:
    /// local`): the route's own per-process limiter decides instead.
    case decideLocally
}

/// Why a check refused, and what the client gets: a status, a reason naming the rule (never
/// why a signature failed in detail, never a credential), response fields such as
/// `WWW-Authenticate` or `Retry-After`, and optionally a body relayed from an auth service.
public struct Refusal: Sendable, Equatable {
    /// A response field of a refusal.
    public struct Field: Sendable, Equatable {
        public var name: String
        public var value: String

        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A body to send instead of FormGate's own (an auth service's 401 or 403 body).
    public struct Body: Sendable, Equatable {
        public var contentType: String?
        public var bytes: [UInt8]

        public init(contentType: String?, bytes: [UInt8]) {
            self.contentType = contentType
            self.bytes = bytes
        }
    }

    /// The status the client gets.
    public var status: Int
    /// For the client and the log.
    public var reason: String
    /// Extra response fields.
    public var fields: [Field]
    /// A relayed body, if any.
    public var body: Body?
    /// What the metrics count.
    public var tally: CheckTally?

    public init(
        status: Int, reason: String, fields: [Field] = [], body: Body? = nil, tally: CheckTally? = nil
    ) {
        self.status = status
        self.reason = reason
        self.fields = fields
        self.body = body
        self.tally = tally
    }
}

/// What a check's decision adds to the metrics: `formgate_auth_total{route,result,reason}`
/// or `formgate_rate_limited_total{route,limit}`. Reasons come from fixed sets.
public enum CheckTally: Sendable, Equatable {
    /// `auth:` decided (`allowed`, `denied` or `error`, with a reason label).
    case auth(AuthResult, reason: String)
    /// A `rate_limit:` limit (`requests`, `bytes` or `concurrent`) refused the request.
    case rateLimited(limit: String)
}

/// The result label of `formgate_auth_total`.
public enum AuthResult: String, Sendable, Equatable {
    case allowed
    case denied
    case error
}

/// What a request's checks decided, for the metrics: at most an `auth:` decision and a
/// `rate_limit:` refusal (a route has one of each at most), held inline: a per-request array
/// cost an allocation on every authenticated request.
public struct CheckTallies: Sendable, Equatable {
    public private(set) var first: CheckTally?
    public private(set) var second: CheckTally?

    public init() {}

    /// Adds a decision (a third one, which no route can produce, replaces the second).
    public mutating func append(_ tally: CheckTally) {
        if first == nil { first = tally } else { second = tally }
    }

    /// The decisions in order.
    public var all: [CheckTally] { [first, second].compactMap { $0 } }

}
