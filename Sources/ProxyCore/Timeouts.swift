/// `timeouts:` in milliseconds.
public struct Timeouts: Sendable, Equatable {
    /// A client's request head must arrive within this.
    public var header: Int64 = 10_000
    /// A connection may be silent this long (between requests, or mid-body).
    public var idle: Int64 = 60_000
    /// Connecting to the upstream (TCP and TLS).
    public var upstreamConnect: Int64 = 5_000
    /// From the end of the request until the upstream's response head; also the longest
    /// silence in the response body.
    public var upstreamResponse: Int64 = 60_000
    /// On SIGTERM, how long requests in flight may take to finish before FormGate exits.
    public var drain: Int64 = 30_000
    /// A client on a TLS listener must finish its handshake within this (from the accept);
    /// after it, the connection is closed and counted, without an access log line.
    public var tlsHandshake: Int64 = 10_000
    /// A request body must arrive whole within this, counted from the request's head,
    /// however steadily it trickles (0: no such limit, the default). Past it: 408, the
    /// upstream aborted.
    public var bodyTotal: Int64 = 0

    public init() {}
}
