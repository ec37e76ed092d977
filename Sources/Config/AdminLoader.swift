/// `admin:` the admin listener: `HOST:PORT`, or `{ listen, token_file, open_probes }`.
///
/// Outside loopback the listener needs `token_file` (a bearer token, at least 16 characters,
/// read at every load so a SIGHUP rotates it); with a token, every admin request must carry
/// it, except `/healthz` and `/readyz` when `open_probes: true` (for orchestrators' probes,
/// which cannot hold a secret; they reveal nothing).
enum AdminLoader {
    /// The shortest token accepted.
    static let minimumTokenLength = 16

    static func decode(
        _ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder, into config: inout ServerConfig
    ) {
        if case .scalar = node {
            guard let text = decoder.string(node, path) else { return }
            guard ConfigLoader.isAddress(text) else {
                return decoder.fail(node.mark, path, "expected HOST:PORT, found '\(text)'")
            }
            config.admin = text
            return refuseWithoutToken(text, node, path, &decoder)
        }
        let keys: Set<String> = ["listen", "token_file", "open_probes"]
        guard let entries = decoder.mapping(node, path, allowed: keys) else { return }
        guard let listen = entries.first(where: { $0.key == "listen" }) else {
            return decoder.fail(node.mark, path, "listen: is required (HOST:PORT)")
        }
        guard let address = decoder.string(listen.value, join(path, "listen")) else { return }
        guard ConfigLoader.isAddress(address) else {
            return decoder.fail(
                listen.value.mark, join(path, "listen"), "expected HOST:PORT, found '\(address)'")
        }
        config.admin = address
        if let file = entries.first(where: { $0.key == "token_file" }) {
            let keyPath = join(path, "token_file")
            guard let token = ConfigLoader.secretFromFile(file.value, keyPath, &decoder) else { return }
            guard token.count >= minimumTokenLength, !token.contains(" ") else {
                return decoder.fail(
                    file.value.mark, keyPath,
                    "the token must be at least \(minimumTokenLength) characters, without spaces")
            }
            config.adminToken = token
        } else {
            refuseWithoutToken(address, listen.value, path, &decoder)
        }
        if let open = entries.first(where: { $0.key == "open_probes" }),
            let value = decoder.bool(open.value, join(path, "open_probes"))
        {
            config.adminOpenProbes = value
        }
    }

    /// An admin listener outside loopback without a token is refused.
    private static func refuseWithoutToken(
        _ address: String, _ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder
    ) {
        guard !isLoopback(address) else { return }
        decoder.fail(
            node.mark, path,
            "the admin listener on \(address) is not on loopback: give { listen: \(address), token_file: FILE }"
        )
    }

    /// Whether `address` (`HOST:PORT`) names a loopback host: 127.0.0.0/8, `::1`, `localhost`.
    static func isLoopback(_ address: String) -> Bool {
        guard let colon = address.lastIndex(of: ":") else { return false }
        var host = address[..<colon]
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        if host == "localhost" || host == "::1" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }
}
