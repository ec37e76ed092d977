import SharedState

/// Decodes `redis:` (DESIGN.md, "Many replicas").
enum RedisLoader {
    /// `redis: { url, password_file, timeout, connections, on_error, key_prefix }`, or the URL alone.
    static func decodeRedis(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder) -> RedisSettings?
    {
        if case .scalar = node {
            guard let url = decoder.string(node, path) else { return nil }
            return parse(url, node, path, &decoder)
        }
        let keys: Set<String> = ["url", "password_file", "timeout", "connections", "on_error", "key_prefix"]
        guard let entries = decoder.mapping(node, path, allowed: keys) else { return nil }
        guard let urlEntry = entries.first(where: { $0.key == "url" }) else {
            decoder.fail(node.mark, path, "give url: redis://HOST:PORT/DB")
            return nil
        }
        guard let url = decoder.string(urlEntry.value, join(path, "url")),
            var settings = parse(url, urlEntry.value, join(path, "url"), &decoder)
        else { return nil }
        for (key, keyMark, value) in entries {
            let keyPath = join(path, key)
            switch key {
            case "password_file":
                if settings.password != nil {
                    decoder.fail(keyMark, keyPath, "the URL has a password already: give one or the other")
                }
                settings.password = ConfigLoader.secretFromFile(value, keyPath, &decoder)
            case "timeout":
                if let milliseconds = decoder.duration(value, keyPath) {
                    if (1...60_000).contains(milliseconds) {
                        settings.timeoutMilliseconds = milliseconds
                    } else {
                        decoder.fail(value.mark, keyPath, "expected 1ms to 60s")
                    }
                }
            case "connections":
                if let count = decoder.int(value, keyPath, range: 1...64) { settings.connections = count }
            case "on_error":
                guard let text = decoder.string(value, keyPath) else { continue }
                if let policy = RedisFailurePolicy(rawValue: text) {
                    settings.onError = policy
                } else {
                    decoder.fail(value.mark, keyPath, "expected local, allow or deny, found '\(text)'")
                }
            case "key_prefix":
                guard let text = decoder.string(value, keyPath) else { continue }
                if text.utf8.count <= 64, !text.utf8.contains(where: { $0 < 0x21 || $0 == 0x7F }) {
                    settings.keyPrefix = text
                } else {
                    decoder.fail(value.mark, keyPath, "expected up to 64 printable characters without spaces")
                }
            default:
                break
            }
        }
        return settings
    }

    private static func parse(_ url: String, _ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder)
        -> RedisSettings?
    {
        switch RedisSettings.parse(url: url) {
        case .success(let settings): return settings
        case .failure(let problem):
            decoder.fail(node.mark, path, problem.description)
            return nil
        }
    }
}
