public import Resumable
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
///
/// A value with its fields in one shared, copy-on-write box: every request's exchange keeps
/// its route, and a copy of the fields themselves (strings, arrays, the rules) retained and
/// released each of them per request.
public struct Route: Sendable {
    /// The fields, shared by copies until one of them is changed.
    final class Fields: @unchecked Sendable {
        var name: String
        var pathPrefix: String
        var host: String?
        var methods: [String]
        var upstream: UpstreamURL?
        var requestBody: RequestBodyMode
        var rewritesMultipart: Bool
        var rules: RuleSet = RuleSet()
        var setHeaders: [(String, String)]
        var removeHeaders: [String]
        var checks: [any RequestCheck] = []
        var rateLimiter: ClientLimiter? = nil
        var sharedLimit: SharedRateLimit? = nil
        var authForwarding: AuthForwarding? = nil
        var authMethod: String? = nil
        var local: (any LocalHandler)? = nil
        var tus: TusSettings? = nil

        init(
            name: String, pathPrefix: String, host: String?, methods: [String], upstream: UpstreamURL?,
            requestBody: RequestBodyMode, rewritesMultipart: Bool, setHeaders: [(String, String)],
            removeHeaders: [String]
        ) {
            self.name = name
            self.pathPrefix = pathPrefix
            self.host = host
            self.methods = methods
            self.upstream = upstream
            self.requestBody = requestBody
            self.rewritesMultipart = rewritesMultipart
            self.setHeaders = setHeaders
            self.removeHeaders = removeHeaders
        }

        /// A copy of every field (before a shared box is changed).
        func copy() -> Fields {
            let copy = Fields(
                name: name, pathPrefix: pathPrefix, host: host, methods: methods, upstream: upstream,
                requestBody: requestBody, rewritesMultipart: rewritesMultipart, setHeaders: setHeaders,
                removeHeaders: removeHeaders)
            copy.rules = rules
            copy.checks = checks
            copy.rateLimiter = rateLimiter
            copy.sharedLimit = sharedLimit
            copy.authForwarding = authForwarding
            copy.authMethod = authMethod
            copy.local = local
            copy.tus = tus
            return copy
        }
    }

    private var fields: Fields

    /// Makes the box this route's own before a change.
    private mutating func own() {
        if !isKnownUniquelyReferenced(&fields) { fields = fields.copy() }
    }

    /// A name for logs and metrics (default: the path prefix).
    public var name: String {
        _read { yield fields.name }
        _modify {
            own()
            yield &fields.name
        }
    }
    /// `match.path`: a path prefix.
    public var pathPrefix: String {
        _read { yield fields.pathPrefix }
        _modify {
            own()
            yield &fields.pathPrefix
        }
    }
    /// `match.host`: when set, the request's Host (without port) must equal it.
    public var host: String? {
        _read { yield fields.host }
        _modify {
            own()
            yield &fields.host
        }
    }
    /// `match.methods`: when non-empty, other methods get 405.
    public var methods: [String] {
        _read { yield fields.methods }
        _modify {
            own()
            yield &fields.methods
        }
    }
    /// `upstream:` overrides the default.
    public var upstream: UpstreamURL? {
        _read { yield fields.upstream }
        _modify {
            own()
            yield &fields.upstream
        }
    }
    /// `request_body:`
    public var requestBody: RequestBodyMode {
        _read { yield fields.requestBody }
        _modify {
            own()
            yield &fields.requestBody
        }
    }
    /// `multipart:` present (even empty) when multipart bodies are rewritten on this route.
    public var rewritesMultipart: Bool {
        _read { yield fields.rewritesMultipart }
        _modify {
            own()
            yield &fields.rewritesMultipart
        }
    }
    /// The compiled `multipart:` rules.
    public var rules: RuleSet {
        _read { yield fields.rules }
        _modify {
            own()
            yield &fields.rules
        }
    }
    /// `headers.set`.
    public var setHeaders: [(String, String)] {
        _read { yield fields.setHeaders }
        _modify {
            own()
            yield &fields.setHeaders
        }
    }
    /// `headers.remove`.
    public var removeHeaders: [String] {
        _read { yield fields.removeHeaders }
        _modify {
            own()
            yield &fields.removeHeaders
        }
    }
    /// Request-level checks run on every request of the route before its body is forwarded
    /// (none by default); set at run time.
    public var checks: [any RequestCheck] {
        _read { yield fields.checks }
        _modify {
            own()
            yield &fields.checks
        }
    }
    /// `rate_limit:`: the per-client limits, shared by every worker (after the checks admit).
    public var rateLimiter: ClientLimiter? {
        _read { yield fields.rateLimiter }
        _modify {
            own()
            yield &fields.rateLimiter
        }
    }
    /// `rate_limit: { shared: true }`: the limits decided in Redis across replicas
    /// (`rateLimiter` is then the per-process fallback of `on_error: local`).
    public var sharedLimit: SharedRateLimit? {
        _read { yield fields.sharedLimit }
        _modify {
            own()
            yield &fields.sharedLimit
        }
    }
    /// With `auth:`: which request fields never go upstream as sent, and what the identity sets.
    public var authForwarding: AuthForwarding? {
        _read { yield fields.authForwarding }
        _modify {
            own()
            yield &fields.authForwarding
        }
    }
    /// `auth:` in a word (`jwt`, `api_keys`, `request`), for `formgate check` and logs.
    public var authMethod: String? {
        _read { yield fields.authMethod }
        _modify {
            own()
            yield &fields.authMethod
        }
    }
    /// When set, the route is answered inside FormGate by this handler, never upstream.
    public var local: (any LocalHandler)? {
        _read { yield fields.local }
        _modify {
            own()
            yield &fields.local
        }
    }

    /// `tus:` the route takes resumable uploads (the shell gives it its local handler).
    public var tus: TusSettings? {
        _read { yield fields.tus }
        _modify {
            own()
            yield &fields.tus
        }
    }

    public init(
        name: String? = nil, pathPrefix: String, host: String? = nil, methods: [String] = [],
        upstream: UpstreamURL? = nil,
        requestBody: RequestBodyMode = .stream, rewritesMultipart: Bool = false,
        setHeaders: [(String, String)] = [],
        removeHeaders: [String] = []
    ) {
        fields = Fields(
            name: name ?? pathPrefix, pathPrefix: pathPrefix, host: host, methods: methods,
            upstream: upstream,
            requestBody: requestBody, rewritesMultipart: rewritesMultipart, setHeaders: setHeaders,
            removeHeaders: removeHeaders)
    }

    /// Whether `path` is under this route's prefix (segment-wise: `/upload` matches
    /// `/upload` and `/upload/x`, not `/uploads`). `path` is the request's routing
    /// path (`RequestTarget.routingPath`: normalised and percent-decoded); paths compare
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
