public import Inspection
public import ProxyCore
public import SharedState
public import Tracing

/// FormGate's configuration after loading: immutable, shared by every worker.
///
/// The keys and defaults are DESIGN.md's contract (`conf/formgate.yaml`).
public struct ServerConfig: Sendable {
    /// `listen:` the client-facing listeners, plain or TLS, in the order written.
    public var listeners = [ListenerConfig(address: "127.0.0.1:8080")]
    /// The first listener's address; setting it replaces every listener with one plain one
    /// (`--listen ADDR`).
    public var listen: String {
        get { listeners.first?.address ?? "" }
        set { listeners = [ListenerConfig(address: newValue)] }
    }
    /// `workers:` event loops (threads); 0 means one per core (`auto`).
    public var workers = 0
    /// `admin:` the admin listener address, if any.
    public var admin: String?
    /// `admin.token_file`'s token: every admin request must carry it (`Authorization:
    /// Bearer`). Never logged, never shown.
    public var adminToken: String?
    /// `admin.open_probes`: `/healthz` and `/readyz` answer without the token.
    public var adminOpenProbes = false
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
    /// `routes:` in the order written, compiled for matching (the longest path prefix wins).
    public var routes = RouteTable()
    /// `scanners:` by name (what `multipart.scan` names; `formgate check` compares their
    /// limits with clamd's).
    public var scanners: [String: ClamdSettings] = [:]
    /// `redis:`: the Redis the replicas share (shared rate limits, tus locks), if any.
    public var redis: RedisSettings?
    /// `tracing:`: where spans go (OTLP/HTTP), and how many traces are sampled; nil: no tracing.
    public var tracing: TracingSettings?
    /// What the file loaded with but an operator should hear (`FILE:LINE:COL: key: message`):
    /// JWKS keys that were skipped. `formgate check` prints them; `run` writes them to stderr.
    public var warnings: [String] = []

    public init() {}

    /// The worker count to start: `workers`, or the number of online cores for `auto`.
    public var effectiveWorkers: Int {
        workers > 0 ? workers : max(1, onlineCores())
    }
}

extension ServerConfig {
    /// The route for a request path given as text and a Host value (tests, tools); the proxy
    /// matches bytes with `routes.match(path:host:)`.
    public func route(path: Substring, host: String?) -> Route? {
        route(path: path.utf8, host: host)
    }

    /// `route(path:host:)` for a routing path given as bytes.
    public func route(path: some Collection<UInt8>, host: String?) -> Route? {
        routes.match(path: path, host: (host ?? "").utf8)
    }
}

#if canImport(Glibc)
    import Glibc
#endif

func onlineCores() -> Int {
    Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
}
