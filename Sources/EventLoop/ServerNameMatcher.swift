/// Picks the certificate for a TLS client's SNI name among several, each known by the DNS
/// names it covers (its subjectAltName dNSNames, else its subject CN): exact names first,
/// then `*.` wildcards, which stand for exactly one leftmost label (`*.example.com` covers
/// `a.example.com`, not `example.com` nor `a.b.example.com`). Names compare without regard
/// to ASCII case and a trailing dot. A pure value: `TLSServerContext` asks it per handshake.
public struct ServerNameMatcher: Sendable, Equatable {
    /// Each certificate's names, lowercased, in configuration order.
    public let names: [[String]]

    /// - Parameter names: the names of each certificate, in the order they are configured.
    public init(names: [[String]]) {
        self.names = names.map { $0.map(Self.normalized) }
    }

    /// The index of the certificate that covers `serverName`, or `nil` when none does.
    public func certificate(for serverName: String) -> Int? {
        let name = Self.normalized(serverName)
        guard !name.isEmpty, !name.contains("*") else { return nil }
        if let exact = names.firstIndex(where: { $0.contains(name) }) { return exact }
        guard let dot = name.firstIndex(of: "."), dot != name.startIndex else { return nil }
        let wildcard = "*" + name[dot...]
        return names.firstIndex { $0.contains(wildcard) }
    }

    private static func normalized(_ name: String) -> String {
        let lowered = name.lowercased()
        return lowered.hasSuffix(".") ? String(lowered.dropLast()) : lowered
    }
}
