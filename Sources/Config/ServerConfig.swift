public import UploadRules

/// FormGate's configuration after loading: immutable, shared by every worker.
///
/// The keys and defaults are DESIGN.md's contract (`conf/formgate.yaml`).
public struct ServerConfig: Sendable {
    /// `listen:` the client-facing address.
    public var listen = "127.0.0.1:8080"
    /// `workers:` event loops (threads); 0 means one per core (`auto`).
    public var workers = 0
    /// `admin:` the admin listener address, if any.
    public var admin: String?
    /// `upstream:` the default upstream.
    public var upstream = UpstreamURL(scheme: .http, host: "127.0.0.1", port: 9000)
    /// `upstream_ca_file:` a PEM file of CAs trusted for https upstreams (default: the
    /// system store).
    public var upstreamCAFile: String?
    /// `timeouts:`
    public var timeouts = Timeouts()
    /// `limits:`
    public var limits = Limits()
    /// `access_log:` `stdout`, `stderr`, a path, or `off`.
    public var accessLog = "stdout"
    /// `temp_dir:` where `request_body: buffer` spools bodies.
    public var tempDirectory = "/tmp"
    /// `underscores_in_headers:` whether request header names containing `_` go upstream
    /// (default `false`: dropped, as nginx drops them; CGI-style servers fold `_` and `-` into
    /// one name, so `Content_Length` could stand in for `Content-Length`).
    public var underscoresInHeaders = false
    /// `routes:` in the order written; matching picks the longest path prefix.
    public var routes: [Route] = []

    public init() {}

    /// The worker count to start: `workers`, or the number of online cores for `auto`.
    public var effectiveWorkers: Int {
        workers > 0 ? workers : max(1, onlineCores())
    }
}

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

    public init() {}
}

/// `limits:`; exceeding one is a 413 (or 431 for the head).
public struct Limits: Sendable, Equatable {
    public var headerBytes = 32 * 1024
    public var bodyBytes: Int64 = 4 << 30
    public var parts = 1000
    public var partHeaderBytes = 8 * 1024
    public var fieldBytes: Int64 = 1 << 20
    public var fileBytes: Int64 = 4 << 30
    public var connections = 10_000

    public init() {}
}

/// An `http://` or `https://` upstream.
public struct UpstreamURL: Sendable, Equatable, Hashable, CustomStringConvertible {
    public enum Scheme: String, Sendable { case http, https }

    public var scheme: Scheme
    public var host: String
    public var port: Int

    public init(scheme: Scheme, host: String, port: Int) {
        self.scheme = scheme
        self.host = host
        self.port = port
    }

    /// Parses `http://host[:port]` or `https://host[:port]` (a trailing `/` is allowed; a
    /// path is not).
    public init?(parsing text: String) {
        let lowered = text.lowercased()
        let scheme: Scheme
        var rest: Substring
        if lowered.hasPrefix("http://") {
            scheme = .http
            rest = text.dropFirst(7)
        } else if lowered.hasPrefix("https://") {
            scheme = .https
            rest = text.dropFirst(8)
        } else {
            return nil
        }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.isEmpty, !rest.contains("/"), !rest.contains("@") else { return nil }
        var host = rest
        var port = scheme == .https ? 443 : 80
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let value = Int(after.dropFirst()), (1...65535).contains(value)
                else { return nil }
                port = value
            }
        } else if let colon = rest.lastIndex(of: ":") {
            guard let value = Int(rest[rest.index(after: colon)...]), (1...65535).contains(value) else {
                return nil
            }
            host = rest[..<colon]
            port = value
        }
        guard !host.isEmpty else { return nil }
        self.init(scheme: scheme, host: String(host), port: port)
    }

    /// `host` or `host:port` when the port is not the scheme's default (for the Host header).
    public var authority: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        let defaultPort = scheme == .https ? 443 : 80
        return port == defaultPort ? shownHost : "\(shownHost):\(port)"
    }

    public var description: String { "\(scheme.rawValue)://\(authority)" }
}

/// `request_body:` how a rewritten body travels upstream.
public enum RequestBodyMode: String, Sendable, Equatable {
    /// Chunked, as it is produced.
    case stream
    /// Spooled to a temp file, then sent with an exact Content-Length.
    case buffer
}

/// One `routes:` entry.
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
    /// `/upload`, `/upload/x` and `/upload?x`, not `/uploads`). `path` is the request's routing
    /// path (`RequestHead.routingPath`: normalised and percent-decoded); paths compare
    /// case-sensitively, as nginx and Apache on Linux compare them.
    public func matches(path: some Collection<UInt8>, host requestHost: String?) -> Bool {
        if let host, host.lowercased() != requestHost?.lowercased() { return false }
        guard path.starts(with: pathPrefix.utf8) else { return false }
        let prefixLength = pathPrefix.utf8.count
        if pathPrefix.utf8.last == UInt8(ascii: "/") || path.count == prefixLength { return true }
        return path[path.index(path.startIndex, offsetBy: prefixLength)] == UInt8(ascii: "/")
    }
}

extension ServerConfig {
    /// The route for a request: the longest matching path prefix (host-specific routes first
    /// among equals). `path` is the routing path (`RequestHead.routingPath`).
    public func route(path: some Collection<UInt8>, host: String?) -> Route? {
        // Computed only when a route names a host.
        var hostOnly: String??
        var best: Int?
        var bestKey = (-1, -1)
        for index in routes.indices {
            if routes[index].host != nil, hostOnly == nil {
                hostOnly = .some(
                    host.map { value -> String in
                        if value.hasPrefix("["), let close = value.firstIndex(of: "]") {
                            return String(value[...close])
                        }
                        return String(value.split(separator: ":", maxSplits: 1).first ?? "")
                    })
            }
            guard routes[index].matches(path: path, host: hostOnly ?? nil) else { continue }
            let key = (routes[index].pathPrefix.utf8.count, routes[index].host == nil ? 0 : 1)
            if key > bestKey {  // the first of equals wins
                best = index
                bestKey = key
            }
        }
        return best.map { routes[$0] }
    }

    /// `route(path:host:)` for a path given as text (tests, tools).
    public func route(path: Substring, host: String?) -> Route? {
        route(path: path.utf8, host: host)
    }
}

#if canImport(Glibc)
    import Glibc
#endif

func onlineCores() -> Int {
    Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
}
