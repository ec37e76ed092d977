/// A route's auth service (`auth: { request: { ... } }`), as nginx's `auth_request` and
/// Envoy's HTTP `ext_authz` do it: before the body is read, a request goes to `url` with the
/// client's method, path and query and the named headers; 2xx allows, 401 and 403 are relayed,
/// anything else fails (closed unless `onError` is `.allow`).
public struct AuthServiceSettings: Sendable, Equatable {
    /// What a failed check (timeout, refused connection, other status, garbage) decides.
    public enum OnError: String, Sendable, CaseIterable {
        /// Answer 503 (the default: fail closed).
        case deny
        /// Let the request through without an identity.
        case allow
    }

    /// The service's scheme, host and port.
    public var target: UpstreamURL
    /// The URL's path without a trailing `/` (empty when the URL has none): the subrequest's
    /// target is this prefix followed by the client's original path and query.
    public var pathPrefix: String
    /// `timeout` (default 5 s): from the start of the connect to the verdict.
    public var timeoutMilliseconds: Int64
    /// `identity_headers`: response headers of an allowing answer kept as identity attributes
    /// (in this order and spelling).
    public var identityHeaders: [String]
    /// `forward_headers` (default `Authorization`, `Cookie`): client headers copied into the
    /// subrequest; their values also key the cache.
    public var forwardHeaders: [String]
    /// `cache_ttl` (default 0: off): how long an allowing answer is reused for the same
    /// credential.
    public var cacheTTLMilliseconds: Int64
    /// `on_error` (default `.deny`).
    public var onError: OnError

    /// The default headers forwarded to the service.
    public static let defaultForwardHeaders = ["Authorization", "Cookie"]
    /// The default timeout: 5 s.
    public static let defaultTimeoutMilliseconds: Int64 = 5_000

    /// Settings for a parsed URL (see `parseURL`).
    public init(
        target: UpstreamURL, pathPrefix: String, timeoutMilliseconds: Int64 = Self.defaultTimeoutMilliseconds,
        identityHeaders: [String] = [], forwardHeaders: [String] = Self.defaultForwardHeaders,
        cacheTTLMilliseconds: Int64 = 0, onError: OnError = .deny
    ) {
        self.target = target
        self.pathPrefix = pathPrefix
        self.timeoutMilliseconds = timeoutMilliseconds
        self.identityHeaders = identityHeaders
        self.forwardHeaders = forwardHeaders
        self.cacheTTLMilliseconds = cacheTTLMilliseconds
        self.onError = onError
    }

    /// Splits `http[s]://host[:port][/path]` into the service and its path prefix (a trailing
    /// `/` dropped, so `/check/` and `/check` both give `/check`).
    ///
    /// - Returns: `nil` when the scheme or authority is not what `UpstreamURL` accepts, or the
    ///   path holds a query, a fragment, a space, a control or a non-ASCII byte.
    public static func parseURL(_ text: String) -> (target: UpstreamURL, pathPrefix: String)? {
        guard let separator = text.firstRange(of: "://") else { return nil }
        let afterScheme = text[separator.upperBound...]
        let pathStart = afterScheme.firstIndex(of: "/") ?? afterScheme.endIndex
        guard let target = UpstreamURL(parsing: String(text[..<pathStart])) else { return nil }
        var path = afterScheme[pathStart...]
        guard
            path.utf8.allSatisfy({
                $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#")
            })
        else { return nil }
        while path.hasSuffix("/") { path = path.dropLast() }
        return (target, String(path))
    }

    /// What is wrong with the values, for the configuration's error (`nil` when usable):
    /// a positive timeout, a cache TTL of 0 or more, header names that are tokens, and no
    /// forwarded header the subrequest writes itself (`AuthSubrequest.reservedNames`).
    public var problem: String? {
        if timeoutMilliseconds <= 0 { return "timeout must be positive" }
        if cacheTTLMilliseconds < 0 { return "cache_ttl must not be negative" }
        for name in identityHeaders + forwardHeaders where !Self.isToken(name) {
            return "\"\(name)\" is not a header name"
        }
        for name in forwardHeaders where AuthSubrequest.isReserved(name) {
            return "\(name) cannot be forwarded to the auth service (the proxy sets it)"
        }
        return nil
    }

    private static func isToken(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { byte in
                byte > 0x20 && byte < 0x7F && !"()<>@,;:\\\"/[]?={}".utf8.contains(byte)
            }
    }
}
