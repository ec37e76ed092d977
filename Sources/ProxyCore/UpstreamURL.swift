/// An `http://` or `https://` upstream: where a route's requests go.
public struct UpstreamURL: Sendable, Equatable, Hashable, CustomStringConvertible {
    public enum Scheme: String, Sendable { case http, https }

    public let scheme: Scheme
    public let host: String
    public let port: Int
    /// `authority`'s bytes, computed once (every upstream request head carries them).
    public let authorityBytes: [UInt8]

    public init(scheme: Scheme, host: String, port: Int) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.authorityBytes = Array(Self.authority(scheme: scheme, host: host, port: port).utf8)
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
        Self.authority(scheme: scheme, host: host, port: port)
    }

    private static func authority(scheme: Scheme, host: String, port: Int) -> String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        let defaultPort = scheme == .https ? 443 : 80
        return port == defaultPort ? shownHost : "\(shownHost):\(port)"
    }

    public var description: String { "\(scheme.rawValue)://\(authority)" }
}
