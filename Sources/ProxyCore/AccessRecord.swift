public import UploadRules

/// One access-log line's content (DESIGN.md's fields), produced exactly once per exchange, or
/// once for a request refused before an exchange could start (then `requestID` is `nil`).
public struct AccessRecord: Sendable {
    /// One forwarded (or dropped) part.
    public typealias Part = PartLogRecord

    /// What the multipart rules saw and did.
    public struct Multipart: Sendable {
        public var parts: [Part]
        /// Names of injected fields.
        public var injected: [String]
        /// The parser's anomaly flags.
        public var anomalies: [String]
        /// File parts seen.
        public var files: Int
    }

    /// The request's id (`X-Request-Id`); `nil` for a request refused before its head parsed.
    public var requestID: String?
    public var method: String?
    public var path: String?
    public var status: Int
    public var upstreamStatus: Int?
    public var bytesIn: Int64 = 0
    public var bytesOut: Int64 = 0
    /// Clock readings (milliseconds) at the head and at the end.
    public var startedAt: Int64
    public var finishedAt: Int64
    /// From connecting (or taking a pooled connection) to the response head.
    public var upstreamMilliseconds: Int64?
    /// The route's name.
    public var route: String?
    /// What went wrong, if anything (never a secret).
    public var error: String?
    /// How the exchange failed, for metrics.
    public var failure: ProxyError?
    public var multipart: Multipart?

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
