import Inspection
import UploadRules

/// Decodes `scanners:` (DESIGN.md, "Inspection") and a route's `multipart.scan` and
/// `multipart.strip_metadata`.
enum InspectionLoader {
    /// `scanners: { clamd: { address, timeout, max_bytes, connections, config } }` — one scanner
    /// named `default` — or `scanners: { clamd: { NAME: { address, ... }, ... } }`.
    static func decodeScanners(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder)
        -> [String: ClamdSettings]
    {
        guard let entries = decoder.mapping(node, path, allowed: ["clamd"]) else { return [:] }
        var scanners: [String: ClamdSettings] = [:]
        for (key, _, value) in entries {
            let keyPath = join(path, key)
            guard case .mapping(let named, _) = value else {
                decoder.fail(value.mark, keyPath, "expected a mapping, found \(value.kind)")
                continue
            }
            if named.contains(where: { $0.key == "address" }) {
                if let settings = decodeClamd(value, keyPath, name: "default", &decoder) {
                    scanners["default"] = settings
                }
                continue
            }
            for (name, _, settings) in named {
                if let decoded = decodeClamd(settings, join(keyPath, name), name: name, &decoder) {
                    scanners[name] = decoded
                }
            }
        }
        return scanners
    }

    private static func decodeClamd(
        _ node: YAMLNode, _ path: String, name: String, _ decoder: inout ValueDecoder
    ) -> ClamdSettings? {
        let keys: Set<String> = ["address", "timeout", "max_bytes", "connections", "config"]
        guard let entries = decoder.mapping(node, path, allowed: keys) else { return nil }
        var settings = ClamdSettings(name: name, address: .unix(path: "/run/clamav/clamd.ctl"))
        var addressed = false
        for (key, _, value) in entries {
            let keyPath = join(path, key)
            switch key {
            case "address":
                guard let text = decoder.string(value, keyPath) else { continue }
                if let address = address(text) {
                    settings.address = address
                    addressed = true
                } else {
                    decoder.fail(value.mark, keyPath, "expected unix:/PATH or HOST:PORT, found '\(text)'")
                }
            case "timeout":
                guard let milliseconds = decoder.duration(value, keyPath) else { continue }
                if milliseconds > 0 {
                    settings.timeoutMilliseconds = milliseconds
                } else {
                    decoder.fail(value.mark, keyPath, "must be more than 0")
                }
            case "max_bytes":
                guard let size = decoder.size(value, keyPath) else { continue }
                if size > 0 {
                    settings.maxBytes = size
                } else {
                    decoder.fail(value.mark, keyPath, "must be more than 0")
                }
            case "connections":
                if let count = decoder.int(value, keyPath, range: 1...4096) { settings.connections = count }
            default:
                settings.configFile = decoder.string(value, keyPath)
            }
        }
        if !addressed { decoder.fail(node.mark, join(path, "address"), "a clamd scanner needs an address") }
        return addressed ? settings : nil
    }

    /// `unix:/PATH`, `tcp://HOST:PORT` or `HOST:PORT`.
    static func address(_ text: String) -> ClamdSettings.Address? {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst(5))
            guard path.hasPrefix("/"), path.utf8.count < 108, !path.utf8.contains(0) else { return nil }
            return .unix(path: path)
        }
        let hostPort = text.hasPrefix("tcp://") ? String(text.dropFirst(6)) : text
        guard let colon = hostPort.lastIndex(of: ":"),
            let port = Int(hostPort[hostPort.index(after: colon)...]),
            (1...65535).contains(port)
        else { return nil }
        var host = String(hostPort[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, !host.contains("/") else { return nil }
        return .tcp(host: host, port: port)
    }

    /// `scan: { clamd: NAME, types, on_error, oversize }`.
    static func decodeScan(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder) -> ScanRule? {
        let keys: Set<String> = ["clamd", "types", "on_error", "oversize"]
        guard let entries = decoder.mapping(node, path, allowed: keys) else { return nil }
        var scanner: ClamdSettings?
        var types = ["*/*"]
        var onError = ScanRule.Policy.reject
        var oversize = ScanRule.Policy.reject
        for (key, _, value) in entries {
            let keyPath = join(path, key)
            switch key {
            case "clamd":
                guard let name = decoder.string(value, keyPath) else { continue }
                if let settings = decoder.scanners[name] {
                    scanner = settings
                } else {
                    let known = decoder.scanners.keys.sorted().joined(separator: ", ")
                    decoder.fail(
                        value.mark, keyPath,
                        "no scanner '\(name)' in scanners.clamd\(known.isEmpty ? "" : " (configured: \(known))")"
                    )
                }
            case "types":
                types = decoder.stringList(value, keyPath) ?? types
                for pattern in types where !MultipartLoader.isTypePattern(pattern) {
                    decoder.fail(value.mark, keyPath, "'\(pattern)' is not type/subtype or type/*")
                }
            case "on_error", "oversize":
                guard let text = decoder.string(value, keyPath) else { continue }
                guard let policy = ScanRule.Policy(rawValue: text) else {
                    decoder.fail(value.mark, keyPath, "expected reject or allow, found '\(text)'")
                    continue
                }
                if key == "on_error" { onError = policy } else { oversize = policy }
            default:
                break
            }
        }
        guard let scanner else {
            if !entries.contains(where: { $0.key == "clamd" }) {
                decoder.fail(node.mark, join(path, "clamd"), "scan needs a scanner (clamd: NAME)")
            }
            return nil
        }
        return ScanRule(scanner: scanner, types: types, onError: onError, oversize: oversize)
    }

    /// `strip_metadata: { formats, mode, keep }` (`strip_metadata: true`: the defaults).
    static func decodeStrip(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder) -> StripOptions?
    {
        if case .scalar = node {
            guard let enabled = decoder.bool(node, path) else { return nil }
            return enabled ? StripOptions() : nil
        }
        guard let entries = decoder.mapping(node, path, allowed: ["formats", "mode", "keep"]) else {
            return nil
        }
        var options = StripOptions()
        for (key, _, value) in entries {
            let keyPath = join(path, key)
            switch key {
            case "formats":
                var formats = Set<ImageFormat>()
                for name in decoder.stringList(value, keyPath) ?? [] {
                    if let format = ImageFormat(rawValue: name) {
                        formats.insert(format)
                    } else {
                        decoder.fail(value.mark, keyPath, "'\(name)' is not one of jpeg, png, webp, heic")
                    }
                }
                options.formats = formats
            case "mode":
                guard let text = decoder.string(value, keyPath) else { continue }
                if let mode = StripMode(rawValue: text) {
                    options.mode = mode
                } else {
                    decoder.fail(value.mark, keyPath, "expected blank or remove, found '\(text)'")
                }
            default:
                let kept = decoder.stringList(value, keyPath) ?? []
                for name in kept where name != "orientation" && name != "icc" {
                    decoder.fail(value.mark, keyPath, "'\(name)' cannot be kept (orientation, icc)")
                }
                options.keepOrientation = kept.contains("orientation")
                options.keepICC = kept.contains("icc")
            }
        }
        return options
    }
}
