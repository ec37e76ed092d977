/// The host and port of a URL's authority (`HOST[:PORT]`, `[IPV6][:PORT]`), as the
/// configuration's service URLs give them (`redis:`, `tracing: { endpoint }`).
public enum HostPort {
    /// Why an authority was refused: the message a URL error shows.
    public struct Problem: Error, Equatable, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// Splits `authority` (credentials and path already taken off) into its host (an IPv6
    /// address without its brackets) and port, `defaultPort` when none is given; the port must
    /// be from 1 to 65535. The host is not checked: each caller says which bytes it refuses.
    public static func split(_ authority: Substring, defaultPort: Int) -> Result<
        (host: Substring, port: Int), Problem
    > {
        let badPort = Problem(description: "expected a port from 1 to 65535 after the host")
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                return .failure(Problem(description: "unclosed [ in the host"))
            }
            let host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            guard !after.isEmpty else { return .success((host, defaultPort)) }
            guard after.hasPrefix(":"), let port = Int(after.dropFirst()), (1...65_535).contains(port) else {
                return .failure(badPort)
            }
            return .success((host, port))
        }
        guard let colon = authority.lastIndex(of: ":") else { return .success((authority, defaultPort)) }
        guard let port = Int(authority[authority.index(after: colon)...]), (1...65_535).contains(port) else {
            return .failure(badPort)
        }
        return .success((authority[..<colon], port))
    }
}
