import HTTPCore
import UploadRules

/// Decodes `multipart.inject:` entries: a field's value is a template (`value:`) or comes
/// from a token provider (`qiniu:`, and the object stores' `s3_post:`, `oss_post:`,
/// `cos_post:` in `+Providers`).
enum InjectionLoader {
    /// One injected field: its name, where it goes (`before:`, `position:`) and exactly one
    /// source of its value.
    static func decodeInjection(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder) -> Injection?
    {
        let keys = Set(["name", "before", "position", "value", "qiniu"]).union(storeProviders)
        guard let entries = decoder.mapping(node, path, allowed: keys) else { return nil }
        var name: String?
        var position = Injection.Position.first
        var value: Injection.Value?
        var qiniu: QiniuPolicy?
        for (key, _, item) in entries {
            let keyPath = join(path, key)
            switch key {
            case "name": name = decoder.string(item, keyPath)
            case "before": decoder.string(item, keyPath).map { position = .before($0) }
            case "position":
                switch decoder.string(item, keyPath) {
                case "first": position = .first
                case "last": position = .last
                case let other?: decoder.fail(item.mark, keyPath, "expected first or last, found '\(other)'")
                case nil: break
                }
            case "value": value = ConfigLoader.template(item, keyPath, &decoder).map { .template($0) }
            case "qiniu":
                qiniu = decodeQiniu(item, keyPath, &decoder)
            default:
                value = decodeStoreProvider(key, item, keyPath, &decoder).map { .provider($0) }
                name = name ?? key
            }
        }
        guard let name, !name.isEmpty else {
            decoder.fail(node.mark, path, "an injected field needs a name")
            return nil
        }
        if let qiniu { value = .provider(QiniuProvider(fieldName: name, policy: qiniu)) }
        guard let value else {
            decoder.fail(
                node.mark, path, "an injected field needs value:, qiniu:, s3_post:, oss_post: or cos_post:")
            return nil
        }
        let sources = entries.filter {
            $0.key == "value" || $0.key == "qiniu" || storeProviders.contains($0.key)
        }
        if sources.count > 1 {
            decoder.fail(node.mark, path, "give one of value:, qiniu:, s3_post:, oss_post:, cos_post:")
        }
        if position == .last, case .provider(let provider) = value, provider.needsFileLast {
            // The store reads only the fields before the file: a credential after it is lost.
            decoder.fail(
                node.mark, join(path, "position"),
                "\(provider.kind)'s fields must come before the file (before: file, or position: first)")
        }
        return Injection(name: name, position: position, value: value)
    }

    /// `qiniu:` an upload token policy: credentials, `scope`, `ttl` and further policy fields.
    static func decodeQiniu(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder) -> QiniuPolicy? {
        guard case .mapping(let entries, _) = node else {
            decoder.fail(node.mark, path, "expected a mapping, found \(node.kind)")
            return nil
        }
        let accessKey = ConfigLoader.secretValue("access_key", in: entries, path, &decoder)
        let secretKey = ConfigLoader.secretValue("secret_key", in: entries, path, &decoder)
        var scope: Template?
        var ttl: Int64 = 3_600_000
        var extra: [(name: String, value: PolicyValue)] = []
        for (key, _, item) in entries {
            let keyPath = join(path, key)
            switch key {
            case "access_key", "secret_key", "access_key_file", "secret_key_file": continue
            case "scope": scope = ConfigLoader.template(item, keyPath, &decoder)
            case "ttl": decoder.duration(item, keyPath).map { ttl = $0 }
            default:
                guard case .scalar(let text, _, let quoted) = item,
                    let expanded = decoder.expand(text, item.mark, keyPath)
                else {
                    decoder.fail(item.mark, keyPath, "policy fields must be scalars")
                    continue
                }
                let isLiteral =
                    !quoted && (Int64(expanded) != nil || expanded == "true" || expanded == "false")
                if isLiteral {
                    extra.append((key, .literal(expanded)))
                } else if let value = try? Template(expanded) {
                    // Strings may use template variables (`endUser: "{auth:sub}"`); text that is
                    // not a template (a `returnBody` JSON object) is sent as written.
                    extra.append((key, .string(value)))
                } else {
                    extra.append((key, .literal(jsonString(expanded))))
                }
            }
        }
        guard let accessKey, !accessKey.isEmpty, let secretKey, !secretKey.isEmpty, let scope else {
            decoder.fail(node.mark, path, "qiniu needs access_key, secret_key and scope")
            return nil
        }
        return QiniuPolicy(
            accessKey: accessKey, secretKey: secretKey, scope: scope, ttlSeconds: ttl / 1000, extra: extra)
    }
}
