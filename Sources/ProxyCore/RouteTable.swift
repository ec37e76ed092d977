public import HTTP1

/// The routes in the order written, compiled for matching: each prefix and host as bytes, so
/// a request is routed without building a `String` (the host is lowered once per request,
/// and only when some route names one).
public struct RouteTable: Sendable, RandomAccessCollection, ExpressibleByArrayLiteral {
    private struct Key: Sendable {
        var prefix: [UInt8]
        /// `match.host`, lowercased.
        var host: [UInt8]?
    }

    private var routes: [Route]
    private var keys: [Key]
    private var namesHosts: Bool

    public init(_ routes: [Route] = []) {
        self.routes = routes
        self.keys = routes.map { Key(prefix: Array($0.pathPrefix.utf8), host: $0.host.map(Self.lowered)) }
        self.namesHosts = routes.contains { $0.host != nil }
    }

    public init(arrayLiteral routes: Route...) {
        self.init(routes)
    }

    public var startIndex: Int { routes.startIndex }
    public var endIndex: Int { routes.endIndex }
    public subscript(position: Int) -> Route { routes[position] }

    /// The route for `head`: its routing path (`RequestTarget.routingPath`; a path without an
    /// escape or a `;` is its own, matched where it lies) and its Host field.
    public func match(_ head: RequestHead) -> Route? {
        let path = head.path
        let host = head.headers.firstValue("Host") ?? []
        guard RequestTarget.needsRoutingDecode(path) else { return match(path: path.utf8, host: host) }
        return match(path: RequestTarget.routingPath(path), host: host)
    }

    /// The route for a request: the longest matching path prefix (host-specific routes first
    /// among equals, then the first written). `path` is the routing path
    /// (`RequestTarget.routingPath`); `host` the request's Host field as received.
    public func match(path: some Collection<UInt8>, host: some Collection<UInt8>) -> Route? {
        let hostOnly = namesHosts ? Self.hostWithoutPort(host) : []
        var best: Int?
        var bestKey = (-1, -1)
        for index in keys.indices {
            let key = keys[index]
            if let wanted = key.host, wanted != hostOnly { continue }
            guard Route.isUnder(path, prefix: key.prefix) else { continue }
            let rank = (key.prefix.count, key.host == nil ? 0 : 1)
            if rank > bestKey {  // the first of equals wins
                best = index
                bestKey = rank
            }
        }
        return best.map { routes[$0] }
    }

    /// `match(path:host:)` for a request without a Host field.
    public func match(path: some Collection<UInt8>) -> Route? {
        match(path: path, host: EmptyCollection())
    }

    /// The Host value without its port, lowercased (`[v6]:port` keeps its brackets).
    static func hostWithoutPort(_ host: some Collection<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(host.count)
        let bracketed = host.first == UInt8(ascii: "[")
        for byte in host {
            if bracketed {
                out.append(byte)
                if byte == UInt8(ascii: "]") { break }
            } else {
                if byte == UInt8(ascii: ":") { break }
                out.append(byte | (byte >= 0x41 && byte <= 0x5A ? 0x20 : 0))
            }
        }
        return bracketed ? lowered(out) : out
    }

    static func lowered(_ text: String) -> [UInt8] {
        lowered(Array(text.utf8))
    }

    static func lowered(_ bytes: [UInt8]) -> [UInt8] {
        bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
    }
}
