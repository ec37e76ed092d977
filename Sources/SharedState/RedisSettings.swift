import HTTPCore

/// What to do with a decision Redis could not make (slow, down, or a reply that makes no
/// sense): `redis.on_error`.
public enum RedisFailurePolicy: String, Sendable, Equatable, CaseIterable {
    /// Each process decides from its own buckets until Redis answers again (the default).
    case local
    /// The request passes undecided.
    case allow
    /// The request is refused (503).
    case deny
}

/// `redis:` — the one Redis every replica shares (DESIGN.md, "Many replicas").
public struct RedisSettings: Sendable, Equatable {
    /// Where it listens: a host (name or address) and port, or a Unix socket path.
    public enum Address: Sendable, Equatable {
        case tcp(host: String, port: Int)
        case unix(path: String)
    }

    public var address: Address
    /// `AUTH` user (Redis 6 ACLs), from the URL.
    public var username: String?
    /// `AUTH` password, from the URL or `password_file`. Never logged.
    public var password: String?
    /// `SELECT`ed database.
    public var database: Int
    /// Each command's deadline, from when it is written: milliseconds.
    public var timeoutMilliseconds: Int64
    /// Connections per worker (commands are pipelined on each).
    public var connections: Int
    public var onError: RedisFailurePolicy
    /// The prefix of every key FormGate writes (several deployments may share one Redis).
    public var keyPrefix: String

    public init(
        address: Address, username: String? = nil, password: String? = nil, database: Int = 0,
        timeoutMilliseconds: Int64 = 50, connections: Int = 1, onError: RedisFailurePolicy = .local,
        keyPrefix: String = "formgate:"
    ) {
        self.address = address
        self.username = username
        self.password = password
        self.database = database
        self.timeoutMilliseconds = timeoutMilliseconds
        self.connections = connections
        self.onError = onError
        self.keyPrefix = keyPrefix
    }

    /// The address as the log and `formgate check` show it (never the password).
    public var displayAddress: String {
        switch address {
        case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .unix(let path): "unix:\(path)"
        }
    }

    /// Parses `redis://[[user]:password@]host[:port][/db]` or `unix:/path[?db=N]`; the error
    /// says what is wrong without repeating the URL (it may hold a password).
    public static func parse(url: String) -> Result<RedisSettings, URLProblem> {
        if url.hasPrefix("unix:") {
            var rest = Substring(url.dropFirst("unix:".count))
            if rest.hasPrefix("//") { rest = rest.dropFirst(2) }
            var database = 0
            if let query = rest.firstIndex(of: "?") {
                let parameter = rest[rest.index(after: query)...]
                guard parameter.hasPrefix("db="), let value = Int(parameter.dropFirst(3)),
                    (0...1_000).contains(value)
                else { return .failure(URLProblem("a unix: URL takes only ?db=N")) }
                database = value
                rest = rest[..<query]
            }
            guard rest.hasPrefix("/"), rest.count > 1 else {
                return .failure(URLProblem("expected unix:/PATH"))
            }
            return .success(RedisSettings(address: .unix(path: String(rest)), database: database))
        }
        guard url.hasPrefix("redis://") else {
            return .failure(
                URLProblem("expected redis://HOST:PORT/DB or unix:/PATH (rediss:// is not supported)"))
        }
        var rest = Substring(url.dropFirst("redis://".count))
        var settings = RedisSettings(address: .tcp(host: "", port: 6379))
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = credentials.firstIndex(of: ":") {
                let user = credentials[..<colon]
                settings.username = user.isEmpty ? nil : percentDecoded(user)
                settings.password = percentDecoded(credentials[credentials.index(after: colon)...])
            } else if !credentials.isEmpty {
                settings.password = percentDecoded(credentials)
            }
            if settings.password == nil && !credentials.isEmpty {
                return .failure(URLProblem("the URL's credentials are not valid percent-encoding"))
            }
        }
        if let slash = rest.firstIndex(of: "/") {
            let database = rest[rest.index(after: slash)...]
            if !database.isEmpty {
                guard let number = Int(database), (0...1_000).contains(number) else {
                    return .failure(URLProblem("the database after / must be a number"))
                }
                settings.database = number
            }
            rest = rest[..<slash]
        }
        let host: Substring
        let port: Int
        switch HostPort.split(rest, defaultPort: 6379) {
        case .success(let split): (host, port) = split
        case .failure(let problem): return .failure(URLProblem(problem.description))
        }
        guard !host.isEmpty, !host.contains(where: { $0 == "/" || $0 == "@" || $0.isWhitespace }) else {
            return .failure(URLProblem("expected a host"))
        }
        settings.address = .tcp(host: String(host), port: port)
        return .success(settings)
    }

    /// Why a URL was refused.
    public struct URLProblem: Error, Equatable, Sendable, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    private static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue)
            else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
