/// The limits and windows of one HTTP/2 server connection.
///
/// The defaults are sized for uploads: a stream may have 1 MiB in flight (the protocol's
/// 64 KiB default caps one stream at 64 KiB per round trip), the connection 16 MiB. Memory
/// the session holds for a stream's request body is bounded by `initialStreamWindow`: bytes
/// the caller has not `consume`d keep the window closed.
public struct HTTP2Settings: Equatable, Sendable {
    /// SETTINGS_INITIAL_WINDOW_SIZE: the bytes of DATA a client may send on one stream
    /// beyond what the caller consumed. Default 1 MiB; at most 2^31-1.
    public var initialStreamWindow: Int32 = 1 << 20
    /// The connection's receive window (all streams together), announced with a
    /// WINDOW_UPDATE on stream 0. Default 16 MiB; at most 2^31-1.
    public var connectionWindow: Int32 = 16 << 20
    /// SETTINGS_MAX_CONCURRENT_STREAMS: streams beyond it are refused (RST_STREAM
    /// REFUSED_STREAM by libnghttp2). Default 128.
    public var maxConcurrentStreams: UInt32 = 128
    /// SETTINGS_MAX_HEADER_LIST_SIZE: the largest request header list (RFC 9113 §6.5.2:
    /// names, values and 32 bytes per field). A larger one is reported as
    /// `HTTP2Event.headersTooLarge` and its fields are not kept. Default 64 KiB.
    public var maxHeaderListSize: UInt32 = 64 << 10
    /// CONTINUATION frames accepted after one HEADERS frame; one more is a connection error
    /// (CVE-2024-27316 class). Default 8 (libnghttp2's).
    public var maxContinuations: Int = 8
    /// Entries accepted in one SETTINGS frame; more end the connection with GOAWAY
    /// ENHANCE_YOUR_CALM. Default 32 (libnghttp2's).
    public var maxSettingsEntries: Int = 32
    /// Frames the session may have queued for the peer that it generated itself (PING and
    /// SETTINGS acknowledgements, RST_STREAM); a peer that provokes more without reading is a
    /// flood and `receive` throws `HTTP2Error.flooded`. Default 1000 (libnghttp2's).
    public var maxOutboundAcks: Int = 1000
    /// libnghttp2's token bucket for streams the client resets (CVE-2023-44487): `burst`
    /// resets at once, refilled at `rate` per second; when it runs dry the connection ends
    /// with GOAWAY. Defaults 1000 and 33 (libnghttp2's).
    public var resetBurst: UInt64 = 1000
    /// See `resetBurst`.
    public var resetRate: UInt64 = 33
    /// FormGate's own rapid-reset budget, independent of time: each stream the client
    /// resets before its response started costs one, each stream answered to its end earns
    /// one back (up to this value). Below zero the connection ends with GOAWAY
    /// ENHANCE_YOUR_CALM. Default 200.
    public var unansweredResetBudget: Int = 200
    /// FormGate's budget for frames that cost the session work and move no request or
    /// response on (RFC 9113 §10.5): PING and SETTINGS (not their ACKs), PRIORITY,
    /// WINDOW_UPDATE, and DATA with no bytes that does not end its stream. Each costs one;
    /// each frame that carries a request or response on earns one back, up to this value: DATA
    /// with bytes from the client, a response's HEADERS or DATA to it. Below zero the connection
    /// ends with GOAWAY ENHANCE_YOUR_CALM. This bounds a flood from a client that reads its
    /// ACKs, which `maxOutboundAcks` does not. Default 1000.
    public var unproductiveFrameBudget: Int = 1000

    /// Creates the defaults.
    public init() {}
}
