import ProxyCore
import UploadRules

/// Decodes a route's `auth:` (`jwt`, `request`, `api_keys`) into an `AuthSpec`, and loads the
/// spec into the route's checks and forwarding (`+Checks`); also what on the route reads the
/// identity (`{auth:…}`) that `auth:` provides.
enum AuthLoader {
    /// `auth:` — exactly one of `jwt`, `request`, `api_keys`.
    static func decodeAuth(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder) -> AuthSpec? {
        guard let entries = decoder.mapping(node, path, allowed: ["jwt", "request", "api_keys"]) else {
            return nil
        }
        guard entries.count == 1, let (key, _, value) = entries.first else {
            decoder.fail(node.mark, path, "give exactly one of jwt, request, api_keys")
            return nil
        }
        let keyPath = join(path, key)
        switch key {
        case "jwt": return decodeJWT(value, keyPath, &decoder).map { .jwt($0) }
        case "request": return decodeAuthService(value, keyPath, &decoder).map { .request($0) }
        default: return decodeAPIKeys(value, keyPath, &decoder).map { .apiKeys($0) }
        }
    }

    /// `auth.jwt:` the keys (`jwks_file`, or an HS256 `secret` of at least 32 bytes) and the
    /// claims a token must carry.
    static func decodeJWT(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder) -> JWTSpec? {
        let keys: Set<String> = [
            "jwks_file", "secret", "secret_file", "issuer", "audience", "leeway", "token_from",
            "required_claims",
            "max_token_bytes", "require_exp", "forward_token",
        ]
        guard let entries = decoder.mapping(node, path, allowed: keys) else { return nil }
        var spec = JWTSpec()
        spec.secret = ConfigLoader.secretValue("secret", in: entries, path, &decoder)
        for (key, _, value) in entries {
            let keyPath = join(path, key)
            switch key {
            case "jwks_file": spec.jwksFile = decoder.string(value, keyPath)
            case "secret", "secret_file": continue
            case "issuer": spec.issuer = decoder.string(value, keyPath)
            case "audience":
                if case .sequence = value {
                    spec.audience = decoder.stringList(value, keyPath) ?? []
                } else if let audience = decoder.string(value, keyPath) {
                    spec.audience = [audience]
                }
            case "leeway":
                if let milliseconds = decoder.duration(value, keyPath) {
                    if milliseconds > 600_000 {
                        decoder.fail(value.mark, keyPath, "at most 10m: a token is a short-lived credential")
                    } else {
                        spec.leewaySeconds = milliseconds / 1000
                    }
                }
            case "token_from": spec.tokenFrom = decodeTokenFrom(value, keyPath, &decoder) ?? .bearer
            case "required_claims": spec.requiredClaims = decoder.stringList(value, keyPath) ?? []
            case "max_token_bytes":
                if let size = decoder.size(value, keyPath) {
                    if (64...65_536).contains(size) {
                        spec.maxTokenBytes = Int(size)
                    } else {
                        decoder.fail(value.mark, keyPath, "expected 64 B to 64 KiB")
                    }
                }
            case "require_exp": spec.requireExp = decoder.bool(value, keyPath) ?? true
            default: spec.forwardToken = decoder.bool(value, keyPath) ?? false
            }
        }
        switch (spec.jwksFile, spec.secret) {
        case (nil, nil):
            decoder.fail(node.mark, path, "jwt needs jwks_file, secret or secret_file")
            return nil
        case (.some, .some):
            decoder.fail(node.mark, path, "give jwks_file or secret, not both")
            return nil
        case (nil, .some(let secret)) where secret.utf8.count < 32:
            // RFC 7518 §3.2: an HMAC key at least as long as the hash output (HS256: 32 bytes).
            decoder.fail(node.mark, join(path, "secret"), "an HS256 secret needs at least 32 bytes")
            return nil
        default:
            return spec
        }
    }

    /// `token_from:` `bearer`, or one of `{ header | cookie | query: NAME }`.
    static func decodeTokenFrom(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder)
        -> TokenFromSpec?
    {
        if case .scalar(let text, _, _) = node {
            guard text == "bearer" else {
                decoder.fail(
                    node.mark, path, "expected bearer, { header: NAME }, { cookie: NAME } or { query: NAME }")
                return nil
            }
            return .bearer
        }
        guard let entries = decoder.mapping(node, path, allowed: ["header", "cookie", "query"]) else {
            return nil
        }
        guard entries.count == 1, let (key, _, value) = entries.first,
            let name = decoder.string(value, join(path, key)), !name.isEmpty
        else {
            decoder.fail(node.mark, path, "give one of header, cookie, query with a name")
            return nil
        }
        switch key {
        case "header":
            guard name.utf8.allSatisfy(ConfigLoader.isTokenByte) else {
                decoder.fail(value.mark, join(path, key), "not a header name")
                return nil
            }
            return .header(name)
        case "cookie": return .cookie(name)
        default: return .query(name)
        }
    }

    /// `auth.request:` the auth service asked about each request (`url` required).
    static func decodeAuthService(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder)
        -> AuthServiceSpec?
    {
        let keys: Set<String> = [
            "url", "timeout", "identity_headers", "forward_headers", "cache_ttl", "on_error",
            "subject_header",
            "forward_identity",
        ]
        guard let entries = decoder.mapping(node, path, allowed: keys) else { return nil }
        guard let urlEntry = entries.first(where: { $0.key == "url" }),
            let url = decoder.string(urlEntry.value, join(path, "url"))
        else {
            decoder.fail(node.mark, path, "request needs url")
            return nil
        }
        var spec = AuthServiceSpec(url: url)
        for (key, _, value) in entries where key != "url" {
            let keyPath = join(path, key)
            switch key {
            case "timeout":
                if let milliseconds = decoder.duration(value, keyPath) {
                    if milliseconds > 0 {
                        spec.timeoutMilliseconds = milliseconds
                    } else {
                        decoder.fail(value.mark, keyPath, "must be more than 0")
                    }
                }
            case "identity_headers": spec.identityHeaders = headerNames(value, keyPath, &decoder)
            case "forward_headers": spec.forwardHeaders = headerNames(value, keyPath, &decoder)
            case "cache_ttl": spec.cacheTTLMilliseconds = decoder.duration(value, keyPath) ?? 0
            case "on_error":
                switch decoder.string(value, keyPath) {
                case "deny"?: spec.allowOnError = false
                case "allow"?: spec.allowOnError = true
                case let other?: decoder.fail(value.mark, keyPath, "expected deny or allow, found '\(other)'")
                case nil: break
                }
            case "subject_header": spec.subjectHeader = decoder.string(value, keyPath)
            default: spec.forwardIdentity = decoder.bool(value, keyPath) ?? true
            }
        }
        if let subject = spec.subjectHeader,
            !spec.identityHeaders.contains(where: { $0.lowercased() == subject.lowercased() })
        {
            decoder.fail(node.mark, join(path, "subject_header"), "must be one of identity_headers")
        }
        return spec
    }

    /// `auth.api_keys:` a key file, or `{ file, header, forward_key }`.
    static func decodeAPIKeys(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder) -> APIKeysSpec?
    {
        if case .scalar = node {
            return decoder.string(node, path).map { APIKeysSpec(file: $0) }
        }
        guard let entries = decoder.mapping(node, path, allowed: ["file", "header", "forward_key"]) else {
            return nil
        }
        guard let fileEntry = entries.first(where: { $0.key == "file" }),
            let file = decoder.string(fileEntry.value, join(path, "file"))
        else {
            decoder.fail(node.mark, path, "api_keys needs file")
            return nil
        }
        var spec = APIKeysSpec(file: file)
        for (key, _, value) in entries where key != "file" {
            if key == "header" {
                if let name = headerNames(.sequence([value], value.mark), join(path, key), &decoder).first {
                    spec.header = name
                }
            } else {
                spec.forwardKey = decoder.bool(value, join(path, key)) ?? false
            }
        }
        return spec
    }

    /// A list of header names (token characters only).
    static func headerNames(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder) -> [String] {
        let names = decoder.stringList(node, path) ?? []
        for name in names where name.isEmpty || !name.utf8.allSatisfy(ConfigLoader.isTokenByte) {
            decoder.fail(node.mark, path, "'\(name)' is not a header name")
        }
        return names.filter { !$0.isEmpty && $0.utf8.allSatisfy(ConfigLoader.isTokenByte) }
    }

    /// Whether anything on the route reads the identity (`{auth:…}`), which needs `auth:`.
    static func readsIdentity(_ route: Route) -> Bool {
        if route.authForwarding?.templatedSet.isEmpty == false { return true }
        let rules = route.rules
        if rules.filename?.usesIdentity == true { return true }
        return rules.inject.contains { injection in
            switch injection.value {
            case .template(let template): template.usesIdentity
            case .provider(let provider): provider.templates.contains(where: \.usesIdentity)
            }
        }
    }

    /// `headers.set` values that read the identity become templates rendered per request.
    static func identityHeaderTemplates(
        _ route: inout Route, _ path: String, _ mark: SourceMark, _ decoder: inout ValueDecoder
    ) {
        var literal: [(String, String)] = []
        var templated: [(name: String, value: Template)] = []
        for (name, value) in route.setHeaders {
            guard value.contains("{auth:") else {
                literal.append((name, value))
                continue
            }
            do throws(Template.CompileError) {
                templated.append((name, try Template(value)))
            } catch {
                decoder.fail(mark, join(path, "headers.set.\(name)"), error.message)
            }
        }
        guard !templated.isEmpty else { return }
        route.setHeaders = literal
        var forwarding = route.authForwarding ?? AuthForwarding()
        forwarding.templatedSet = templated
        route.authForwarding = forwarding
    }
}
