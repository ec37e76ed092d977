public import TraceContext

/// What a connection and its exchanges run with: the compiled routes, the default upstream,
/// limits and timeouts. Immutable and shared; a reload builds a new one, and a request keeps
/// the one it started with.
public final class ProxySettings: Sendable {
    /// The routes, compiled for matching.
    public let routes: RouteTable
    /// Where requests that match no route (or a route without `upstream:`) go.
    public let upstream: UpstreamURL
    /// `limits:`
    public let limits: Limits
    /// `timeouts:`
    public let timeouts: Timeouts
    /// Whether request fields whose name contains `_` are forwarded.
    public let underscoresInHeaders: Bool
    /// Buffered bytes above which the side that fills the buffer is paused (backpressure).
    public let highWater: Int
    /// How long a lingering close reads and discards before closing.
    public let lingerMilliseconds: Int64
    /// `tracing:`'s sampler, when spans are exported.
    public let tracing: Sampler?

    /// Creates settings; the defaults are the proxy's.
    public init(
        routes: RouteTable = RouteTable(), upstream: UpstreamURL, limits: Limits = Limits(),
        timeouts: Timeouts = Timeouts(), underscoresInHeaders: Bool = false, highWater: Int = 256 * 1024,
        lingerMilliseconds: Int64 = 5_000, tracing: Sampler? = nil
    ) {
        self.tracing = tracing
        self.routes = routes
        self.upstream = upstream
        self.limits = limits
        self.timeouts = timeouts
        self.underscoresInHeaders = underscoresInHeaders
        self.highWater = highWater
        self.lingerMilliseconds = lingerMilliseconds
    }
}

/// The byte counts of the shell's buffers when it reports an event: backpressure is decided
/// from these (plus what the action buffer still holds), never in the shell.
public struct BufferLevels: Sendable, Equatable {
    /// Bytes queued for the client.
    public var clientOutput: Int
    /// Bytes queued for the upstream (0 without an upstream connection).
    public var upstreamOutput: Int
    /// Request body bytes staged while the upstream is not connected.
    public var staging: Int
    /// Bytes written to the spool (`request_body: buffer`).
    public var spool: Int64
    /// Bytes written to the file spool (`order: fields_first`).
    public var fileSpool: Int64

    /// Creates levels; all empty by default.
    public init(
        clientOutput: Int = 0, upstreamOutput: Int = 0, staging: Int = 0, spool: Int64 = 0,
        fileSpool: Int64 = 0
    ) {
        self.clientOutput = clientOutput
        self.upstreamOutput = upstreamOutput
        self.staging = staging
        self.spool = spool
        self.fileSpool = fileSpool
    }
}
