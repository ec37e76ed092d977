#if canImport(Glibc)
    import Glibc
#endif

/// `listen:` one address, a listener mapping `{ address, tls }`, or a list of either.
extension ConfigLoader {
    static let listenerKeys: Set<String> = ["address", "tls"]
    static let tlsKeys: Set<String> = ["certificates", "min_version"]
    static let certificateKeys: Set<String> = ["cert", "key"]

    /// The listeners of `listen:`, or `nil` after reporting an error.
    static func decodeListeners(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder)
        -> [ListenerConfig]?
    {
        let errorsBefore = decoder.errors.count
        var listeners: [ListenerConfig] = []
        if case .sequence(let items, let mark) = node {
            guard !items.isEmpty else {
                decoder.fail(mark, path, "expected at least one listener")
                return nil
            }
            for (index, item) in items.enumerated() {
                if let listener = decodeListener(item, "\(path)[\(index)]", &decoder) {
                    listeners.append(listener)
                }
            }
        } else if let listener = decodeListener(node, path, &decoder) {
            listeners.append(listener)
        }
        var seen: Set<String> = []
        // Port 0 picks a free port per listener: several may ask for it.
        for (index, listener) in listeners.enumerated()
        where !listener.address.hasSuffix(":0") && !seen.insert(listener.address).inserted {
            decoder.fail(node.mark, "\(path)[\(index)]", "\(listener.address) is listed twice")
        }
        return decoder.errors.count == errorsBefore ? listeners : nil
    }

    /// `HOST:PORT`, or `{ address: HOST:PORT, tls: {...} }`.
    static func decodeListener(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder)
        -> ListenerConfig?
    {
        if case .scalar = node {
            return listenAddress(node, path, &decoder).map { ListenerConfig(address: $0) }
        }
        guard let entries = decoder.mapping(node, path, allowed: listenerKeys) else { return nil }
        var address: String?
        var tls: ListenerConfig.TLSSettings?
        var valid = true
        for (key, _, value) in entries {
            let keyPath = join(path, key)
            switch key {
            case "address":
                address = listenAddress(value, keyPath, &decoder)
                valid = valid && address != nil
            default:
                tls = decodeTLS(value, keyPath, &decoder)
                valid = valid && tls != nil
            }
        }
        guard let address else {
            if valid { decoder.fail(node.mark, join(path, "address"), "a listener needs an address") }
            return nil
        }
        return valid ? ListenerConfig(address: address, tls: tls) : nil
    }

    static func listenAddress(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder) -> String? {
        guard let text = decoder.string(node, path) else { return nil }
        guard isAddress(text) else {
            decoder.fail(node.mark, path, "expected HOST:PORT, found '\(text)'")
            return nil
        }
        return text
    }

    /// `tls: { certificates: [{ cert, key }, ...], min_version }`.
    static func decodeTLS(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder)
        -> ListenerConfig.TLSSettings?
    {
        guard let entries = decoder.mapping(node, path, allowed: tlsKeys) else { return nil }
        var certificates: [ListenerConfig.Certificate]?
        var minimumVersion = "1.2"
        var valid = true
        for (key, _, value) in entries {
            let keyPath = join(path, key)
            switch key {
            case "certificates":
                certificates = decodeCertificates(value, keyPath, &decoder)
                valid = valid && certificates != nil
            default:
                guard let text = decoder.string(value, keyPath) else {
                    valid = false
                    continue
                }
                guard ListenerConfig.minimumVersions.contains(text) else {
                    decoder.fail(value.mark, keyPath, "expected \"1.2\" or \"1.3\", found '\(text)'")
                    valid = false
                    continue
                }
                minimumVersion = text
            }
        }
        guard let certificates else {
            if valid {
                decoder.fail(node.mark, join(path, "certificates"), "a TLS listener needs a certificate")
            }
            return nil
        }
        return valid
            ? ListenerConfig.TLSSettings(certificates: certificates, minimumVersion: minimumVersion) : nil
    }

    static func decodeCertificates(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder)
        -> [ListenerConfig.Certificate]?
    {
        guard case .sequence(let items, let mark) = node else {
            decoder.fail(node.mark, path, "expected a list of { cert, key }, found \(node.kind)")
            return nil
        }
        guard !items.isEmpty else {
            decoder.fail(mark, path, "expected at least one { cert, key }")
            return nil
        }
        var certificates: [ListenerConfig.Certificate] = []
        for (index, item) in items.enumerated() {
            let itemPath = "\(path)[\(index)]"
            guard let entries = decoder.mapping(item, itemPath, allowed: certificateKeys) else { continue }
            var files: [String: String] = [:]
            for (key, _, value) in entries {
                if let file = readableFile(value, join(itemPath, key), &decoder) { files[key] = file }
            }
            for key in ["cert", "key"] where !entries.contains(where: { $0.key == key }) {
                decoder.fail(item.mark, join(itemPath, key), "missing (a PEM file)")
            }
            if let certificate = files["cert"], let key = files["key"] {
                certificates.append(ListenerConfig.Certificate(certificate: certificate, key: key))
            }
        }
        return certificates.count == items.count ? certificates : nil
    }

    /// A file name whose file can be read now (it is read again on every reload).
    static func readableFile(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder) -> String? {
        guard let file = decoder.string(node, path) else { return nil }
        guard access(file, R_OK) == 0 else {
            let reason = String(cString: strerror(errno))
            decoder.fail(node.mark, path, "cannot read \(file): \(reason)")
            return nil
        }
        return file
    }
}
