public import UploadRules

/// One access-log line's content (DESIGN.md's fields), produced exactly once per exchange, or
/// once for a request refused before an exchange could start (then `requestID` is `nil`).
public struct AccessRecord: Sendable {
    /// One forwarded (or dropped) part.
    public typealias Part = PartLogRecord

    /// What the multipart rules saw and did.
    public struct Multipart: Sendable {
        /// The parts in order (dropped ones included).
        public var parts: [Part]
        /// Names of injected fields.
        public var injected: [String]
        /// The upload-credential providers that ran (`qiniu`, `s3_post`, …).
        public var providers: [String] = []
        /// The object key injected (the value of a `key` field FormGate added), if any.
        public var objectKey: String?
        /// The parser's anomaly flags.
        public var anomalies: [String]
        /// File parts seen.
        public var files: Int
    }

    /// The request's id (`X-Request-Id`); `nil` for a request refused before its head parsed.
    public var requestID: String?
    /// The request method, as received.
    public var method: String?
    /// The request path.
    public var path: String?
    /// The status the client got (499: it left; 444: dropped unanswered).
    public var status: Int
    /// The upstream's status, if it answered.
    public var upstreamStatus: Int?
    /// Request body bytes read (after de-chunking).
    public var bytesIn: Int64 = 0
    /// Bytes sent to the client (heads included; HTTP/2: body bytes only, the shell encodes
    /// the heads).
    public var bytesOut: Int64 = 0
    /// The clock reading (milliseconds) when the head was read.
    public var startedAt: Int64
    /// The clock reading at the end.
    public var finishedAt: Int64
    /// From connecting (or taking a pooled connection) to the response head.
    public var upstreamMilliseconds: Int64?
    /// The route's name.
    public var route: String?
    /// The transport the request came over (the log's `protocol` and, for HTTP/2, stream id).
    public var clientProtocol = ClientProtocol.http1
    /// What went wrong, if anything (never a secret).
    public var error: String?
    /// How the exchange failed, for metrics.
    public var failure: ProxyError?
    /// The multipart body, when the rules ran.
    public var multipart: Multipart?
    /// A tus request's upload and event.
    public var tus: TusLog?
    /// Who sent the request (a subject or key name, never a credential), when `auth:` ran.
    public var identity: String?
    /// What the request-level checks decided, for the metrics.
    public var tallies = CheckTallies()
    /// The request's trace, when it was sampled (`tracing:`).
    public var trace: ExchangeTrace?

    /// A record for a request that failed before an exchange started.
    public init(early error: ProxyError, now: Int64) {
        status = error.status
        startedAt = now
        finishedAt = now
        self.error = error.detail
        failure = error
    }

    /// A record for an exchange.
    public init(requestID: String, method: String, path: String, route: String?, startedAt: Int64) {
        self.requestID = requestID
        self.method = method
        self.path = path
        self.route = route
        self.startedAt = startedAt
        self.finishedAt = startedAt
        self.status = 0
    }
}
