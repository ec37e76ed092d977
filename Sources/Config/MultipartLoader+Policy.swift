import MultipartParsing

extension MultipartLoader {
    /// `multipart.anomalies: { FLAG: accept | reject }`: the flags that refuse a body.
    static func decodeAnomalies(
        _ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder, into policy: inout MultipartPolicy
    ) {
        for (name, nameMark, action) in decoder.mapping(node, path, allowed: nil) ?? [] {
            let itemPath = join(path, name)
            guard let flag = MultipartAnomalies(name: name) else {
                let known = MultipartAnomalies.allNames.joined(separator: ", ")
                decoder.fail(nameMark, itemPath, "unknown anomaly flag (expected one of: \(known))")
                continue
            }
            guard let text = decoder.string(action, itemPath) else { continue }
            switch text {
            case "accept": policy.rejected.remove(flag)
            case "reject": policy.rejected.insert(flag)
            default: decoder.fail(action.mark, itemPath, "expected accept or reject, found '\(text)'")
            }
        }
    }

    /// `multipart.keep_part_headers: [NAME, …]`: part headers forwarded as received. FormGate
    /// writes `Content-Disposition` and `Content-Type` itself, so neither can be kept.
    static func decodeKeptPartHeaders(
        _ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder, into policy: inout MultipartPolicy
    ) {
        guard case .sequence(let items, _) = node else {
            decoder.fail(node.mark, path, "expected a list of part header names, found \(node.kind)")
            return
        }
        var kept: [String] = []
        for (index, item) in items.enumerated() {
            let itemPath = "\(path)[\(index)]"
            guard let name = decoder.string(item, itemPath) else { continue }
            let lowered = name.lowercased()
            if name.isEmpty || !name.utf8.allSatisfy(ConfigLoader.isTokenByte) {
                decoder.fail(item.mark, itemPath, "'\(name)' is not a header name")
            } else if lowered == "content-disposition" || lowered == "content-type" {
                decoder.fail(item.mark, itemPath, "\(name) is always forwarded (FormGate writes it)")
            } else if kept.contains(where: { $0.lowercased() == lowered }) {
                decoder.fail(item.mark, itemPath, "\(name) is listed twice")
            } else {
                kept.append(name)
            }
        }
        policy.keptHeaders = kept
    }
}
