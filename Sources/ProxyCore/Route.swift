public import UploadRules

/// `request_body:` how a rewritten body travels upstream.
public enum RequestBodyMode: String, Sendable, Equatable {
    /// Chunked, as it is produced.
    case stream
    /// Spooled to a temp file, then sent with an exact Content-Length.
    case buffer
}

/// One `routes:` entry at run time: what it matches, where it forwards, and its compiled
/// rules. Built once by the configuration loader; the request path only reads it.
public struct Route: Sendable {
    /// A name for logs and metrics (default: the path prefix).
    public var name: String
    /// `match.path`: a path prefix.
    public var pathPrefix: String
    /// `match.host`: when set, the request's Host (without port) must equal it.
    public var host: String?
    /// `match.methods`: when non-empty, other methods get 405.
    public var methods: [String]
    /// `upstream:` overrides the default.
    public var upstream: UpstreamURL?
    /// `request_body:`
    public var requestBody: RequestBodyMode
    /// `multipart:` present (even empty) when multipart bodies are rewritten on this route.
    public var rewritesMultipart: Bool
    /// The compiled `multipart:` rules.
    public var rules = RuleSet()
    /// `headers.set` and `headers.remove`.
    public var setHeaders: [(String, String)]
    public var removeHeaders: [String]
    /// Request-level checks run on every request of the route before its body is forwarded
    /// (none by default); set at run time.
    public var checks: [any RequestCheck] = []
    /// `rate_limit:`: the per-client limits, shared by every worker (after the checks admit).
    public var rateLimiter: ClientLimiter?
    /// With `auth:`: which request fields never go upstream as sent, and what the identity sets.
    public var authForwarding: AuthForwarding?
    /// `auth:` in a word (`jwt`, `api_keys`, `request`), for `formgate check` and logs.
    public var authMethod: String?
    /// When set, the route is answered inside FormGate by this handler, never upstream.
    public var local: (any LocalHandler)?

    public init(
        name: String? = nil, pathPrefix: String, host: String? = nil, methods: [String] = [],
        upstream: UpstreamURL? = nil,
        requestBody: RequestBodyMode = .stream, rewritesMultipart: Bool = false,
        setHeaders: [(String, String)] = [],
        removeHeaders: [String] = []
    ) {
        self.name = name ?? pathPrefix
        self.pathPrefix = pathPrefix
        self.host = host
        self.methods = methods
        self.upstream = upstream
        self.requestBody = requestBody
        self.rewritesMultipart = rewritesMultipart
        self.setHeaders = setHeaders
        self.removeHeaders = removeHeaders
    }

    /// Whether `path` is under this route's prefix (segment-wise: `/upload` matches
    /// `/upload` and `/upload/x`, not `/uploads`). `path` is the request's routing
    /// path (`RequestHead.routingPath`: normalised and percent-decoded); paths compare
    /// case-sensitively, as nginx and Apache on Linux compare them. `requestHost` is the Host
    /// without its port.
    public func matches(path: some Collection<UInt8>, host requestHost: String?) -> Bool {
        if let host, host.lowercased() != requestHost?.lowercased() { return false }
        return Self.isUnder(path, prefix: pathPrefix.utf8)
    }

    /// Segment-wise prefix test (see `matches(path:host:)`).
    static func isUnder(_ path: some Collection<UInt8>, prefix: some BidirectionalCollection<UInt8>) -> Bool {
        guard path.starts(with: prefix) else { return false }
        let prefixLength = prefix.count
        if prefix.last == UInt8(ascii: "/") || path.count == prefixLength { return true }
        return path[path.index(path.startIndex, offsetBy: prefixLength)] == UInt8(ascii: "/")
    }
}
