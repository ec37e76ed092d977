extension ConfigLoader {
    /// The settings that hold credentials. Each may be given as `NAME_file: PATH` instead, so
    /// that the secret lives in a file (a Kubernetes or Docker secret, mode 0400) rather than
    /// in the configuration; the file is read at every load, so a SIGHUP picks up a rotated one.
    static let secretSettings: Set<String> = [
        "access_key", "secret_key", "session_token", "security_token", "secret_id", "secret",
    ]

    /// The largest secret file read.
    static let maxSecretFileBytes = 64 * 1024

    /// `keys` and the `_file` form of each credential setting among them.
    static func withSecretFiles(_ keys: Set<String>) -> Set<String> {
        keys.union(keys.intersection(secretSettings).map { $0 + "_file" })
    }

    /// The credential named by `key` (`secret_key`) or read from the file `key_file` names, from
    /// a mapping's `entries`; both at once are refused. `nil` when neither is given.
    static func secretValue(
        _ key: String, in entries: [(key: String, keyMark: SourceMark, value: YAMLNode)], _ path: String,
        _ decoder: inout ValueDecoder
    ) -> String? {
        let inline = entries.first { $0.key == key }
        let file = entries.first { $0.key == key + "_file" }
        switch (inline, file) {
        case (let inline?, nil):
            return decoder.string(inline.value, join(path, key))
        case (nil, let file?):
            return secretFromFile(file.value, join(path, key + "_file"), &decoder)
        case (_?, let file?):
            decoder.fail(file.keyMark, join(path, key + "_file"), "give \(key) or \(key)_file, not both")
            return nil
        case (nil, nil):
            return nil
        }
    }

    /// The secret in the file `node` names: its text less one final line break (`echo` adds
    /// one). Refused: a file that cannot be read, an empty one, one over 64 KiB, and one with
    /// other control characters or invalid UTF-8. Errors name the file, never what it holds.
    static func secretFromFile(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder) -> String? {
        guard let file = decoder.string(node, path) else { return nil }
        guard let bytes = readBytes(file, limit: maxSecretFileBytes) else {
            decoder.fail(node.mark, path, "cannot read '\(file)' (or it is over 64 KiB)")
            return nil
        }
        var secret = bytes[...]
        if secret.last == 0x0A { secret = secret.dropLast() }
        if secret.last == 0x0D { secret = secret.dropLast() }
        guard !secret.isEmpty else {
            decoder.fail(node.mark, path, "'\(file)' is empty")
            return nil
        }
        guard let text = String(validating: secret, as: UTF8.self),
            !secret.contains(where: { $0 < 0x20 || $0 == 0x7F })
        else {
            decoder.fail(
                node.mark, path, "'\(file)' holds control characters or invalid UTF-8 (one line expected)")
            return nil
        }
        return text
    }
}
