import UploadRules

extension InjectionLoader {
    /// The injection keys of the object-store providers (each adds several fields: no `name`).
    static let storeProviders: Set<String> = ["s3_post", "oss_post", "cos_post"]

    /// `{ s3_post | oss_post | cos_post: { … } }` into its provider.
    static func decodeStoreProvider(
        _ kind: String, _ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder
    ) -> (any TokenProvider)? {
        switch kind {
        case "s3_post": decodeS3(node, path, &decoder)
        case "oss_post": decodeOSS(node, path, &decoder)
        default: decodeCOS(node, path, &decoder)
        }
    }

    /// The string settings of a provider mapping, with `key`/`key_prefix` as templates and
    /// `ttl` in seconds (1 s to 7 days); `required` are refused when missing or empty.
    struct ProviderSettings {
        var strings: [String: String] = [:]
        var templates: [String: Template] = [:]
        var ttlSeconds: Int64 = 3600
        var conditions: [S3PostCondition] = []
    }

    /// The settings of a provider mapping (`ProviderSettings`); `nil` after reporting one
    /// missing or invalid.
    static func providerSettings(
        _ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder, keys: Set<String>, required: [String]
    ) -> ProviderSettings? {
        guard let entries = decoder.mapping(node, path, allowed: ConfigLoader.withSecretFiles(keys)) else {
            return nil
        }
        var settings = ProviderSettings()
        for key in keys.intersection(ConfigLoader.secretSettings) {
            settings.strings[key] = ConfigLoader.secretValue(key, in: entries, path, &decoder)
        }
        for (key, _, value) in entries {
            let keyPath = join(path, key)
            if ConfigLoader.secretSettings.contains(key) || key.hasSuffix("_file") { continue }
            switch key {
            case "key", "key_prefix":
                settings.templates[key] = ConfigLoader.template(value, keyPath, &decoder)
            case "ttl":
                guard let milliseconds = decoder.duration(value, keyPath) else { continue }
                if milliseconds < 1000 || milliseconds > S3PostSettings.maxTTLSeconds * 1000 {
                    decoder.fail(value.mark, keyPath, "expected 1s to 7d")
                } else {
                    settings.ttlSeconds = milliseconds / 1000
                }
            case "conditions": settings.conditions = decodeConditions(value, keyPath, &decoder)
            default: settings.strings[key] = decoder.string(value, keyPath)
            }
        }
        let missing = required.filter { name in
            name == "key" ? settings.templates[name] == nil : (settings.strings[name] ?? "").isEmpty
        }
        guard missing.isEmpty else {
            decoder.fail(node.mark, path, "needs \(missing.joined(separator: ", "))")
            return nil
        }
        if let region = settings.strings["region"], !isRegionName(region) {
            decoder.fail(
                node.mark, join(path, "region"), "'\(region)' is not a region name (cn-hangzhou, us-east-1)")
            return nil
        }
        return settings
    }

    /// `conditions: { FIELD: VALUE, FIELD: { starts_with: PREFIX }, content-length-range: [MIN, MAX] }`.
    static func decodeConditions(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder)
        -> [S3PostCondition]
    {
        var conditions: [S3PostCondition] = []
        for (field, _, value) in decoder.mapping(node, path, allowed: nil) ?? [] {
            let keyPath = join(path, field)
            if field == "content-length-range" {
                guard case .sequence(let bounds, _) = value, bounds.count == 2,
                    let low = decoder.size(bounds[0], keyPath), let high = decoder.size(bounds[1], keyPath),
                    low <= high
                else {
                    decoder.fail(value.mark, keyPath, "expected [MIN, MAX] sizes")
                    continue
                }
                conditions.append(.contentLengthRange(min: low, max: high))
            } else if case .mapping = value {
                let entries = decoder.mapping(value, keyPath, allowed: ["starts_with"]) ?? []
                if let prefix = entries.first.flatMap({
                    decoder.string($0.value, join(keyPath, "starts_with"))
                }) {
                    conditions.append(.startsWith(field: field, prefix: prefix))
                }
            } else if let exact = decoder.string(value, keyPath) {
                conditions.append(.exact(field: field, value: exact))
            }
        }
        return conditions
    }

    /// `s3_post:` the fields of an S3 POST (browser-based upload) form.
    static func decodeS3(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder) -> S3PostProvider? {
        let keys: Set<String> = [
            "access_key", "secret_key", "session_token", "region", "bucket", "key", "key_prefix", "ttl",
            "conditions",
        ]
        guard
            let given = providerSettings(
                node, path, &decoder, keys: keys,
                required: ["access_key", "secret_key", "region", "bucket", "key"]),
            let key = given.templates["key"]
        else { return nil }
        let settings = S3PostSettings(
            accessKey: given.strings["access_key"] ?? "", secretKey: given.strings["secret_key"] ?? "",
            sessionToken: given.strings["session_token"], region: given.strings["region"] ?? "",
            bucket: given.strings["bucket"] ?? "", key: key, keyPrefix: given.templates["key_prefix"],
            ttlSeconds: given.ttlSeconds, conditions: given.conditions)
        do throws(S3PostSettings.Invalid) {
            return try S3PostProvider(settings: settings)
        } catch {
            decoder.fail(node.mark, join(path, error.setting), error.message)
            return nil
        }
    }

    /// `oss_post:` the fields of an Aliyun OSS PostObject form (`version: v4` or `v1`).
    static func decodeOSS(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder) -> OSSPostProvider?
    {
        let keys: Set<String> = [
            "access_key", "secret_key", "security_token", "region", "bucket", "key", "ttl", "version",
            "success_action_status",
        ]
        guard
            let given = providerSettings(
                node, path, &decoder, keys: keys,
                required: ["access_key", "secret_key", "region", "bucket", "key"]),
            let key = given.templates["key"]
        else { return nil }
        let version: OSSPostProvider.Version
        switch given.strings["version"] ?? "v4" {
        case "v4": version = .v4
        case "v1": version = .v1
        case let other:
            decoder.fail(node.mark, join(path, "version"), "expected v1 or v4, found '\(other)'")
            return nil
        }
        if let status = given.strings["success_action_status"], !["200", "201", "204"].contains(status) {
            decoder.fail(node.mark, join(path, "success_action_status"), "expected 200, 201 or 204")
            return nil
        }
        return OSSPostProvider(
            version: version, accessKey: given.strings["access_key"] ?? "",
            secretKey: given.strings["secret_key"] ?? "",
            securityToken: given.strings["security_token"], region: given.strings["region"] ?? "",
            bucket: given.strings["bucket"] ?? "", key: key, ttlSeconds: given.ttlSeconds,
            successActionStatus: given.strings["success_action_status"])
    }

    /// `cos_post:` the fields of a Tencent COS POST Object form.
    static func decodeCOS(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder) -> COSPostProvider?
    {
        let keys: Set<String> = ["secret_id", "secret_key", "security_token", "bucket", "key", "ttl"]
        guard
            let given = providerSettings(
                node, path, &decoder, keys: keys, required: ["secret_id", "secret_key", "bucket", "key"]),
            let key = given.templates["key"]
        else { return nil }
        return COSPostProvider(
            secretID: given.strings["secret_id"] ?? "", secretKey: given.strings["secret_key"] ?? "",
            securityToken: given.strings["security_token"], bucket: given.strings["bucket"] ?? "", key: key,
            ttlSeconds: given.ttlSeconds)
    }

    /// `cn-hangzhou`, `oss-cn-hangzhou`, `us-east-1`: lower-case letters and digits in runs
    /// joined by `-`.
    static func isRegionName(_ text: String) -> Bool {
        !text.isEmpty
            && text.split(separator: "-", omittingEmptySubsequences: false).allSatisfy { run in
                !run.isEmpty && run.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) }
            }
    }
}
