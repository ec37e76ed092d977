#if canImport(Glibc)
    import Glibc
#endif

/// Decodes `listen:`: one address, a listener mapping `{ address, tls, http2 }`, or a list of
/// either, into the server's `ListenerConfig`s.
enum ListenerLoader {
    static let listenerKeys: Set<String> = ["address", "tls", "http2"]
    static let http2Keys: Set<String> = [
        "enabled", "h2c", "max_concurrent_streams", "stream_window", "connection_window",
    ]
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
        var http2 = ListenerConfig.HTTP2Settings()
        var valid = true
        for (key, _, value) in entries {
            let keyPath = join(path, key)
            switch key {
            case "address":
                address = listenAddress(value, keyPath, &decoder)
                valid = valid && address != nil
            case "http2":
                guard let settings = decodeHTTP2(value, keyPath, &decoder) else {
                    valid = false
                    continue
                }
                http2 = settings
            default:
                tls = decodeTLS(value, keyPath, &decoder)
                valid = valid && tls != nil
            }
        }
        guard let address else {
            if valid { decoder.fail(node.mark, join(path, "address"), "a listener needs an address") }
            return nil
        }
        return valid ? ListenerConfig(address: address, tls: tls, http2: http2) : nil
    }

    /// `http2: { enabled, h2c, max_concurrent_streams, stream_window, connection_window }`.
    static func decodeHTTP2(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder)
        -> ListenerConfig.HTTP2Settings?
    {
        guard let entries = decoder.mapping(node, path, allowed: http2Keys) else { return nil }
        let errorsBefore = decoder.errors.count
        var settings = ListenerConfig.HTTP2Settings()
        for (key, _, value) in entries {
            let keyPath = join(path, key)
            switch key {
            case "enabled": settings.enabled = decoder.bool(value, keyPath) ?? true
            case "h2c": settings.h2c = decoder.bool(value, keyPath) ?? false
            case "max_concurrent_streams":
                guard let count = decoder.string(value, keyPath).flatMap({ Int($0) }),
                    (1...1000).contains(count)
                else {
                    decoder.fail(value.mark, keyPath, "expected 1 to 1000")
                    continue
                }
                settings.maxConcurrentStreams = count
            case "stream_window", "connection_window":
                // RFC 9113 §6.9.2: at least the protocol's 65,535, at most 2^31-1.
                guard let size = decoder.size(value, keyPath), (65_535...Int64(Int32.max)).contains(size)
                else {
                    decoder.fail(value.mark, keyPath, "expected 64KiB to 2GiB-1")
                    continue
                }
                if key == "stream_window" {
                    settings.streamWindow = size
                } else {
                    settings.connectionWindow = size
                }
            default: break
            }
        }
        if settings.connectionWindow < settings.streamWindow {
            decoder.fail(node.mark, join(path, "connection_window"), "must be at least stream_window")
        }
        return decoder.errors.count == errorsBefore ? settings : nil
    }

    /// A listener's `HOST:PORT`.
    static func listenAddress(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder) -> String? {
        guard let text = decoder.string(node, path) else { return nil }
        guard ConfigLoader.isAddress(text) else {
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

    /// `certificates: [{ cert, key }, ...]`: at least one, each naming two readable PEM files.
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
