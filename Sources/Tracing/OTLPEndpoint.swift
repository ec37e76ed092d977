import HTTPCore

/// Where an OTLP/HTTP collector listens: `http://HOST[:PORT][/PATH]`.
public struct OTLPEndpoint: Hashable, Sendable, CustomStringConvertible {
    /// A name or an address (an IPv6 one without brackets).
    public var host: String
    public var port: Int
    /// The request target, `/v1/traces` unless the URL gives a path.
    public var path: String

    public init(host: String, port: Int, path: String = "/v1/traces") {
        self.host = host
        self.port = port
        self.path = path
    }

    /// The `Host` field: the host, bracketed if IPv6, and the port.
    public var hostField: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// The URL, as the log shows it.
    public var description: String { "http://\(hostField)\(path)" }

    /// Parses `http://HOST[:PORT][/PATH]` (port 80 by default; OTLP/HTTP's is 4318, but a
    /// URL means what it says). Refuses https, credentials, queries and fragments.
    public static func parse(url: String) -> Result<OTLPEndpoint, URLProblem> {
        if url.hasPrefix("https://") {
            return .failure(
                URLProblem(
                    "https is not supported: the exporter speaks plain http (send to a local OpenTelemetry Collector, which forwards over TLS)"
                ))
        }
        guard url.hasPrefix("http://") else {
            return .failure(
                URLProblem("expected http://HOST[:PORT][/PATH], such as http://127.0.0.1:4318/v1/traces"))
        }
        var rest = Substring(url.dropFirst("http://".count))
        var path = "/v1/traces"
        if let slash = rest.firstIndex(of: "/") {
            let given = rest[slash...]
            if given != "/" { path = String(given) }
            rest = rest[..<slash]
        }
        guard
            !path.contains(where: {
                $0 == "?" || $0 == "#" || $0.isWhitespace
                    || $0.asciiValue.map { $0 < 0x20 || $0 == 0x7F } ?? false
            })
        else {
            return .failure(URLProblem("the path must have no query, fragment, spaces or control characters"))
        }
        guard !rest.contains("@") else {
            return .failure(URLProblem("credentials in the URL are not supported"))
        }
        let host: Substring
        let port: Int
        switch HostPort.split(rest, defaultPort: 80) {
        case .success(let split): (host, port) = split
        case .failure(let problem): return .failure(URLProblem(problem.description))
        }
        guard !host.isEmpty, !host.contains(where: { $0.isWhitespace || $0 == "/" || $0 == "[" || $0 == "]" })
        else {
            return .failure(URLProblem("expected a host"))
        }
        return .success(OTLPEndpoint(host: String(host), port: port, path: path))
    }

    /// Why a URL was refused.
    public struct URLProblem: Error, Hashable, Sendable, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }
}
