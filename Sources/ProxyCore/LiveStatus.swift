/// Where an upload in flight stands, for the admin's live view (`GET /uploads`): what the
/// worker publishes for each exchange with a body, read on the loop from the exchange
/// (`Exchange.liveStatus`) a few times a second.
public struct LiveStatus: Sendable, Equatable {
    /// What the upload waits for (DESIGN.md's `stage`).
    public enum Stage: UInt8, Sendable, Equatable, CaseIterable {
        /// The client's body is being read.
        case receiving
        /// The body (or its end) waits for a file's verdict (a virus scan).
        case heldScan
        /// The body's end waits for a digest computed off the loop.
        case heldDigest
        /// Request-level checks (authentication, a shared limit) have not answered yet.
        case heldAuth
        /// The whole body is in; it is on its way upstream (a spool sent, a tus delivery).
        case delivering
        /// The request went upstream whole; its response is awaited (or relayed).
        case waitingUpstream

        /// The contract's name.
        public var name: String {
            switch self {
            case .receiving: "receiving"
            case .heldScan: "held:scan"
            case .heldDigest: "held:digest"
            case .heldAuth: "held:auth"
            case .delivering: "delivering"
            case .waitingUpstream: "waiting_upstream"
            }
        }
    }

    /// The request id (the access log's `id`).
    public var requestID: String
    /// The matched route's name, if any.
    public var route: String?
    /// Whether the request came over HTTP/2.
    public var http2: Bool
    /// The clock reading (milliseconds) when the head was read.
    public var startedAt: Int64
    /// What the upload waits for.
    public var stage: Stage
    /// Body bytes read from the client so far.
    public var bytesIn: Int64
    /// The body's declared length, if the client declared one.
    public var bytesExpected: Int64?
    /// The part being read (its name and filename), when the rules parse the body.
    public var partName: String?
    public var partFilename: String?
    /// Who sent it (a subject or key name, never a credential), once the checks said.
    public var identity: String?
    /// A resumable upload's offset (this request's bytes included) and length.
    public var tusOffset: Int64?
    public var tusLength: Int64?

    public init(
        requestID: String, route: String?, http2: Bool, startedAt: Int64, stage: Stage, bytesIn: Int64
    ) {
        self.requestID = requestID
        self.route = route
        self.http2 = http2
        self.startedAt = startedAt
        self.stage = stage
        self.bytesIn = bytesIn
    }
}

/// What a local responder tells the live view about its upload (a tus PATCH).
public struct LocalLive: Sendable, Equatable {
    /// The upload's offset when this request began.
    public var offset: Int64
    /// `Upload-Length`, unless deferred.
    public var length: Int64?
    /// Whether the complete upload is being delivered upstream.
    public var delivering: Bool

    public init(offset: Int64, length: Int64?, delivering: Bool) {
        self.offset = offset
        self.length = length
        self.delivering = delivering
    }
}
