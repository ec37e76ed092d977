import HTTPCore
import ProxyCore
import Resumable
import UploadRules

#if canImport(Glibc)
    import Glibc
#endif

/// Loads `conf/formgate.yaml`-style files into a `ServerConfig`, reporting every problem as
/// `FILE:LINE:COL: key.path: message`. Unknown keys are errors; `${NAME}` expands from the
/// environment. The server and its routes are decoded here; `listen:` by `ListenerLoader`, and
/// a route's `auth:`, `rate_limit:` and `multipart:` by `AuthLoader`, `RateLimitLoader` and
/// `MultipartLoader` (whose `inject:` goes to `InjectionLoader`); `tracing:` by `TracingLoader`.
public enum ConfigLoader {
    /// Loads the file at `path`.
    public static func load(path: String, environment: [String: String] = processEnvironment())
        -> Result<ServerConfig, ConfigErrors>
    {
        guard let text = readFile(path) else {
            return .failure(
                ConfigErrors([
                    ConfigError(file: path, line: 0, column: 0, keyPath: "", message: "cannot read the file")
                ]))
        }
        return load(text: text, file: path, environment: environment)
    }

    /// Loads configuration text; `file` names it in errors.
    public static func load(text: String, file: String, environment: [String: String] = [:])
        -> Result<ServerConfig, ConfigErrors>
    {
        let root: YAMLNode
        do throws(YAMLError) {
            root = try YAMLNode.parse(text)
        } catch {
            return .failure(
                ConfigErrors([
                    ConfigError(
                        file: file, line: error.mark.line, column: error.mark.column, keyPath: "",
                        message: error.message)
                ]))
        }
        var decoder = ValueDecoder(file: file, environment: environment)
        var config = decodeServer(root, &decoder)
        config.warnings = decoder.warnings.map(\.description)
        return decoder.errors.isEmpty ? .success(config) : .failure(ConfigErrors(decoder.errors))
    }

    static let topKeys: Set<String> = [
        "listen", "workers", "admin", "upstream", "upstream_ca_file", "timeouts", "limits", "access_log",
        "temp_dir", "underscores_in_headers", "scanners", "redis", "tracing",
        "routes",
    ]

    static func decodeServer(_ root: YAMLNode, _ decoder: inout ValueDecoder) -> ServerConfig {
        var config = ServerConfig()
        guard let entries = decoder.mapping(root, "", allowed: topKeys) else { return config }
        // Routes name scanners: they are known first, wherever the file puts them.
        for (key, _, value) in entries where key == "scanners" {
            decoder.scanners = InspectionLoader.decodeScanners(value, key, &decoder)
            config.scanners = decoder.scanners
        }
        // Routes with a shared limit or an object-store tus store need it.
        for (key, _, value) in entries where key == "redis" {
            decoder.redis = RedisLoader.decodeRedis(value, key, &decoder)
            config.redis = decoder.redis
        }
        for (key, _, value) in entries {
            switch key {
            case "listen":
                if let listeners = ListenerLoader.decodeListeners(value, key, &decoder) {
                    config.listeners = listeners
                }
            case "admin":
                AdminLoader.decode(value, key, &decoder, into: &config)
            case "workers":
                if case .scalar("auto", _, _) = value {
                    config.workers = 0
                } else if let count = decoder.int(value, key, range: 1...256) {
                    config.workers = count
                }
            case "upstream":
                if let url = upstream(value, key, &decoder) { config.upstream = url }
            case "upstream_ca_file":
                config.upstreamCAFile = decoder.string(value, key)
            case "access_log":
                if let text = decoder.string(value, key) { config.accessLog = text }
            case "temp_dir":
                if let text = decoder.string(value, key) { config.tempDirectory = text }
            case "underscores_in_headers":
                if let flag = decoder.bool(value, key) { config.underscoresInHeaders = flag }
            case "tracing":
                config.tracing = TracingLoader.decodeTracing(value, key, &decoder)
            case "timeouts":
                decodeTimeouts(value, key, &decoder, into: &config.timeouts)
            case "limits":
                decodeLimits(value, key, &decoder, into: &config.limits)
            case "routes":
                guard case .sequence(let items, _) = value else {
                    decoder.fail(value.mark, key, "expected a list of routes, found \(value.kind)")
                    continue
                }
                config.routes = RouteTable(
                    items.enumerated().compactMap {
                        decodeRoute($0.element, "routes[\($0.offset)]", &decoder)
                    })
            default:
                break
            }
        }
        return config
    }

    static func upstream(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder) -> UpstreamURL? {
        guard let text = decoder.string(node, path) else { return nil }
        guard let url = UpstreamURL(parsing: text) else {
            decoder.fail(
                node.mark, path, "expected http://HOST[:PORT] or https://HOST[:PORT], found '\(text)'")
            return nil
        }
        return url
    }

    static func decodeTimeouts(
        _ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder, into timeouts: inout Timeouts
    ) {
        let keys: Set<String> = [
            "header", "idle", "upstream_connect", "upstream_response", "drain", "tls_handshake", "body_total",
        ]
        for (key, _, value) in decoder.mapping(node, path, allowed: keys) ?? [] {
            guard let milliseconds = decoder.duration(value, join(path, key)) else { continue }
            guard milliseconds > 0 else {
                decoder.fail(value.mark, join(path, key), "must be more than 0")
                continue
            }
            switch key {
            case "header": timeouts.header = milliseconds
            case "idle": timeouts.idle = milliseconds
            case "upstream_connect": timeouts.upstreamConnect = milliseconds
            case "drain": timeouts.drain = milliseconds
            case "tls_handshake": timeouts.tlsHandshake = milliseconds
            case "body_total": timeouts.bodyTotal = milliseconds
            default: timeouts.upstreamResponse = milliseconds
            }
        }
    }

    static func decodeLimits(
        _ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder, into limits: inout Limits
    ) {
        let keys: Set<String> = [
            "header_bytes", "body_bytes", "parts", "part_header_bytes", "field_bytes", "file_bytes",
            "connections",
        ]
        for (key, _, value) in decoder.mapping(node, path, allowed: keys) ?? [] {
            let keyPath = join(path, key)
            switch key {
            case "parts":
                if let count = decoder.int(value, keyPath, range: 1...1_000_000) { limits.parts = count }
            case "connections":
                if let count = decoder.int(value, keyPath, range: 1...1_000_000) {
                    limits.connections = count
                }
            default:
                guard let size = decoder.size(value, keyPath) else { continue }
                guard size > 0 else {
                    decoder.fail(value.mark, keyPath, "must be more than 0")
                    continue
                }
                switch key {
                case "header_bytes": limits.headerBytes = Int(min(size, 1 << 24))
                case "body_bytes": limits.bodyBytes = size
                case "part_header_bytes": limits.partHeaderBytes = Int(min(size, 1 << 24))
                case "field_bytes": limits.fieldBytes = size
                default: limits.fileBytes = size
                }
            }
        }
    }

    static func decodeRoute(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder) -> Route? {
        let keys: Set<String> = [
            "name", "match", "upstream", "request_body", "multipart", "headers", "auth", "rate_limit", "tus",
        ]
        guard let entries = decoder.mapping(node, path, allowed: keys) else { return nil }
        guard entries.contains(where: { $0.key == "match" }) else {
            decoder.fail(node.mark, path, "a route needs match: { path: … }")
            return nil
        }
        var route = Route(pathPrefix: "/")
        var name: String?
        var auth: (spec: AuthSpec, mark: SourceMark)?
        var rateLimit: RateLimitSpec?
        var tus: TusSettings?
        for (key, _, value) in entries {
            let keyPath = join(path, key)
            switch key {
            case "name": name = decoder.string(value, keyPath)
            case "match": decodeMatch(value, keyPath, &decoder, into: &route)
            case "upstream": route.upstream = upstream(value, keyPath, &decoder)
            case "request_body":
                if let text = decoder.string(value, keyPath) {
                    if let mode = RequestBodyMode(rawValue: text) {
                        route.requestBody = mode
                    } else {
                        decoder.fail(value.mark, keyPath, "expected stream or buffer, found '\(text)'")
                    }
                }
            case "multipart":
                route.rewritesMultipart = true
                route.rules = MultipartLoader.decodeMultipart(value, keyPath, &decoder)
            case "headers":
                decodeHeaders(value, keyPath, &decoder, into: &route)
            case "auth":
                auth = AuthLoader.decodeAuth(value, keyPath, &decoder).map { ($0, value.mark) }
            case "rate_limit":
                rateLimit = RateLimitLoader.decodeRateLimit(value, keyPath, &decoder)
            case "tus":
                tus = TusLoader.decodeTus(value, keyPath, &decoder)
            default:
                break
            }
        }
        route.name = name ?? route.pathPrefix
        AuthLoader.identityHeaderTemplates(&route, path, node.mark, &decoder)
        if AuthLoader.readsIdentity(route), auth == nil {
            decoder.fail(node.mark, path, "{auth:…} variables need auth: on the route")
        }
        if let auth { AuthLoader.addAuth(auth.spec, auth.mark, join(path, "auth"), &decoder, to: &route) }
        if let rateLimit {
            RateLimitLoader.addRateLimit(rateLimit, node.mark, join(path, "rate_limit"), &decoder, to: &route)
        }
        if let tus {
            TusLoader.checkRoute(route, tus, node.mark, path, &decoder)
            route.tus = tus
        }
        if route.rules.fieldsFirst, route.requestBody != .buffer {
            decoder.fail(node.mark, join(path, "multipart.order"), "fields_first needs request_body: buffer")
        }
        if route.rules.strip?.mode == .remove, route.requestBody != .buffer || route.tus != nil {
            decoder.fail(
                node.mark, join(path, "multipart.strip_metadata.mode"),
                "remove changes the file's length: it needs request_body: buffer (blank keeps it)")
        }
        return route
    }

    static func decodeMatch(
        _ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder, into route: inout Route
    ) {
        let entries = decoder.mapping(node, path, allowed: ["path", "methods", "host"]) ?? []
        if !entries.contains(where: { $0.key == "path" }) {
            decoder.fail(node.mark, path, "match needs a path")
        }
        for (key, _, value) in entries {
            let keyPath = join(path, key)
            switch key {
            case "path":
                if let text = decoder.string(value, keyPath) {
                    if !text.hasPrefix("/") {
                        decoder.fail(value.mark, keyPath, "a path prefix starts with /")
                    } else if !isRoutingPath(text) {
                        // Requests are matched decoded and normalised: a prefix in another
                        // spelling would never match.
                        decoder.fail(
                            value.mark, keyPath,
                            "write the path decoded and normalised (no %, ;, ?, #, \\, //, . or .. segments)")
                    } else {
                        route.pathPrefix = text
                    }
                }
            case "host":
                route.host = decoder.string(value, keyPath)?.lowercased()
            default:
                let methods = decoder.stringList(value, keyPath) ?? []
                for method in methods
                where method.isEmpty || !method.allSatisfy({ $0.isLetter && $0.isUppercase }) {
                    decoder.fail(value.mark, keyPath, "'\(method)' is not an upper-case method name")
                }
                route.methods = methods
            }
        }
    }

    /// The template `node` holds; `nil` after reporting one that does not compile.
    static func template(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder) -> Template? {
        guard let text = decoder.string(node, path) else { return nil }
        do throws(Template.CompileError) {
            return try Template(text)
        } catch {
            decoder.fail(node.mark, path, error.message)
            return nil
        }
    }

    static func decodeHeaders(
        _ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder, into route: inout Route
    ) {
        for (key, _, value) in decoder.mapping(node, path, allowed: ["set", "remove"]) ?? [] {
            let keyPath = join(path, key)
            if key == "remove" {
                route.removeHeaders = decoder.stringList(value, keyPath) ?? []
                continue
            }
            guard case .mapping(let entries, _) = value else {
                decoder.fail(
                    value.mark, keyPath, "expected a mapping of header names to values, found \(value.kind)")
                continue
            }
            for (name, nameMark, headerValue) in entries {
                guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte) else {
                    decoder.fail(nameMark, join(keyPath, name), "not a header name")
                    continue
                }
                guard let text = decoder.string(headerValue, join(keyPath, name)) else { continue }
                guard !text.utf8.contains(where: { $0 < 0x20 && $0 != 0x09 || $0 == 0x7F }) else {
                    decoder.fail(
                        headerValue.mark, join(keyPath, name),
                        "control characters are not allowed in a header value")
                    continue
                }
                route.setHeaders.append((name, text))
            }
        }
    }

    /// Whether `byte` may appear in an RFC 9110 token (a header or method name).
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    /// Whether `text` is `HOST:PORT` (a port from 0 to 65535 after a non-empty host).
    static func isAddress(_ text: String) -> Bool {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]) else {
            return false
        }
        return (0...65535).contains(port) && colon > text.startIndex
    }
}
