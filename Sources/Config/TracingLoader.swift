import Tracing

/// Decodes `tracing:` (DESIGN.md, "Tracing").
enum TracingLoader {
    /// `tracing: { otlp: http://HOST:PORT/v1/traces, service_name: formgate, sample: 0.1 }`.
    static func decodeTracing(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder)
        -> TracingSettings?
    {
        guard let entries = decoder.mapping(node, path, allowed: ["otlp", "service_name", "sample"]) else {
            return nil
        }
        guard let urlEntry = entries.first(where: { $0.key == "otlp" }) else {
            decoder.fail(
                node.mark, path, "give otlp: http://HOST:PORT/v1/traces (the collector's OTLP/HTTP URL)")
            return nil
        }
        let urlPath = join(path, "otlp")
        guard let url = decoder.string(urlEntry.value, urlPath) else { return nil }
        var settings: TracingSettings
        switch OTLPEndpoint.parse(url: url) {
        case .success(let endpoint):
            settings = TracingSettings(endpoint: endpoint)
        case .failure(let problem):
            decoder.fail(urlEntry.value.mark, urlPath, problem.description)
            return nil
        }
        for (key, _, value) in entries {
            let keyPath = join(path, key)
            switch key {
            case "service_name":
                guard let name = decoder.string(value, keyPath) else { continue }
                if !name.isEmpty, name.utf8.count <= 256,
                    !name.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F })
                {
                    settings.serviceName = name
                } else {
                    decoder.fail(
                        value.mark, keyPath, "expected 1 to 256 characters without control characters")
                }
            case "sample":
                guard let text = decoder.string(value, keyPath) else { continue }
                if let ratio = Double(text.trimmingSpaces), (0...1).contains(ratio) {
                    settings.sample = ratio
                } else {
                    decoder.fail(
                        value.mark, keyPath,
                        "expected a number from 0 to 1 (the share of traces kept), found '\(text)'")
                }
            default:
                break
            }
        }
        return settings
    }
}
