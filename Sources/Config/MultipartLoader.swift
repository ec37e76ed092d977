import UploadRules

/// Decodes a route's `multipart:` rules into a `RuleSet`: which fields are dropped, renamed
/// and injected, how files are sniffed, named and digested, and which anomalies refuse a body
/// (`+Policy`).
enum MultipartLoader {
    /// `multipart:` the rules applied to the route's `multipart/form-data` bodies (empty: the
    /// defaults).
    static func decodeMultipart(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder) -> RuleSet {
        var rules = RuleSet()
        if case .scalar(let text, _, _) = node, text.isEmpty || text == "~" || text == "null" { return rules }
        let keys: Set<String> = [
            "drop_fields", "rename_fields", "sniff", "allow_types", "filename", "inject", "digest", "order",
            "anomalies", "keep_part_headers", "scan", "strip_metadata",
        ]
        for (key, keyMark, value) in decoder.mapping(node, path, allowed: keys) ?? [] {
            let keyPath = join(path, key)
            switch key {
            case "drop_fields":
                rules.dropFields = Set(decoder.stringList(value, keyPath) ?? [])
            case "rename_fields":
                for (from, _, target) in decoder.mapping(value, keyPath, allowed: nil) ?? [] {
                    if let to = decoder.string(target, join(keyPath, from)) { rules.renameFields[from] = to }
                }
            case "filename":
                rules.filename = ConfigLoader.template(value, keyPath, &decoder)
            case "inject":
                guard case .sequence(let items, _) = value else {
                    decoder.fail(
                        value.mark, keyPath, "expected a list of fields to inject, found \(value.kind)")
                    continue
                }
                rules.inject = items.enumerated().compactMap {
                    InjectionLoader.decodeInjection($0.element, "\(keyPath)[\($0.offset)]", &decoder)
                }
            case "digest":
                for (digestKey, _, list) in decoder.mapping(value, keyPath, allowed: ["algorithms"]) ?? [] {
                    for name in decoder.stringList(list, join(keyPath, digestKey)) ?? [] {
                        if let algorithm = DigestAlgorithm(rawValue: name) {
                            rules.digests.append(algorithm)
                        } else {
                            decoder.fail(
                                list.mark, join(keyPath, digestKey),
                                "unknown algorithm '\(name)' (sha256, sha1, md5, crc32, size)")
                        }
                    }
                }
            case "sniff":
                var rule = RuleSet.SniffRule(bytes: 4096, policy: .override)
                for (sniffKey, _, item) in decoder.mapping(
                    value, keyPath, allowed: ["bytes", "content_type"]) ?? []
                {
                    let itemPath = join(keyPath, sniffKey)
                    if sniffKey == "bytes" {
                        if let size = decoder.size(item, itemPath) {
                            if (16...65536).contains(size) {
                                rule.bytes = Int(size)
                            } else {
                                decoder.fail(item.mark, itemPath, "must be between 16 and 64KiB")
                            }
                        }
                    } else if let text = decoder.string(item, itemPath) {
                        if let policy = RuleSet.SniffPolicy(rawValue: text) {
                            rule.policy = policy
                        } else {
                            decoder.fail(
                                item.mark, itemPath,
                                "expected override, keep or reject_mismatch, found '\(text)'")
                        }
                    }
                }
                rules.sniff = rule
            case "order":
                if let text = decoder.string(value, keyPath) {
                    if text == "fields_first" {
                        rules.fieldsFirst = true
                    } else if text != "as_sent" {
                        decoder.fail(value.mark, keyPath, "expected fields_first or as_sent, found '\(text)'")
                    }
                }
            case "allow_types":
                let patterns = decoder.stringList(value, keyPath) ?? []
                for pattern in patterns where !isTypePattern(pattern) {
                    decoder.fail(value.mark, keyPath, "'\(pattern)' is not type/subtype or type/*")
                }
                rules.allowTypes = patterns
            case "anomalies":
                decodeAnomalies(value, keyPath, &decoder, into: &rules.policy)
            case "keep_part_headers":
                decodeKeptPartHeaders(value, keyPath, &decoder, into: &rules.policy)
            case "scan":
                rules.inspection = InspectionLoader.decodeScan(value, keyPath, &decoder)
            case "strip_metadata":
                rules.strip = InspectionLoader.decodeStrip(value, keyPath, &decoder)
            default:
                // `mapping` returned only the keys above, and each has its case.
                decoder.fail(keyMark, keyPath, "unknown rule")
            }
        }
        // strip_metadata decides an image's format by its sniffed type: a route that does not
        // sniff sniffs for it, forwarding the declared type as it is.
        if rules.strip != nil, rules.sniff == nil {
            rules.sniff = RuleSet.SniffRule(bytes: 4096, policy: .keep)
        }
        return rules
    }

    /// Whether `pattern` is `type/subtype`, either half a token or `*` (`image/*`).
    static func isTypePattern(_ pattern: String) -> Bool {
        let parts = pattern.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return false }
        return parts.allSatisfy { part in part == "*" || part.utf8.allSatisfy(ConfigLoader.isTokenByte) }
    }
}
