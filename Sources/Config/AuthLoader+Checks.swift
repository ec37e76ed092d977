import ClientAuth
import ProxyCore
import UploadRules

extension AuthLoader {
    /// Loads a route's `auth:` (keys, key files) into its request check, and what the route
    /// strips from and sets in the forwarded head.
    static func addAuth(
        _ spec: AuthSpec, _ mark: SourceMark, _ path: String, _ decoder: inout ValueDecoder,
        to route: inout Route
    ) {
        var forwarding = route.authForwarding ?? AuthForwarding()
        switch spec {
        case .jwt(let jwt):
            guard let check = jwtCheck(jwt, mark, path, &decoder, claimNames: claimNames(route)) else {
                return
            }
            route.checks.append(check)
            if !jwt.forwardToken, let field = tokenField(jwt.tokenFrom) { forwarding.strip.append(field) }
        case .apiKeys(let keys):
            do throws(APIKeyFileError) {
                route.checks.append(
                    APIKeyCheck(keys: try APIKeySet(contentsOfFile: keys.file, header: keys.header)))
            } catch {
                return decoder.fail(mark, join(path, "api_keys"), "\(keys.file): \(error)")
            }
            if !keys.forwardKey { forwarding.strip.append(keys.header) }
        case .request(let service):
            guard let settings = serviceSettings(service, mark, path, &decoder) else { return }
            route.checks.append(AuthServiceCheck(settings: settings, subjectHeader: service.subjectHeader))
            // The client's own identity headers never go upstream; the service's may.
            forwarding.strip += service.identityHeaders
            if service.forwardIdentity { forwarding.identityHeaders = service.identityHeaders }
        }
        route.authForwarding = forwarding
        route.authMethod = spec.method
    }

    /// The JWT check of `spec`: its key set (the JWKS file, or the shared secret) and verifier
    /// settings; `nil` after reporting a key set that cannot be loaded.
    static func jwtCheck(
        _ spec: JWTSpec, _ mark: SourceMark, _ path: String, _ decoder: inout ValueDecoder,
        claimNames: [String]
    ) -> JWTCheck? {
        let keys: JWKSet
        if let file = spec.jwksFile {
            do throws(JWKSetError) {
                keys = try JWKSet(contentsOfFile: file)
            } catch {
                decoder.fail(mark, join(path, "jwt.jwks_file"), "\(file): \(error)")
                return nil
            }
            for skipped in keys.skipped {
                decoder.warn(mark, join(path, "jwt.jwks_file"), "\(file): skipped \(skipped)")
            }
        } else {
            do throws(JWKError) {
                keys = JWKSet(keys: [try JWK.sharedSecret(Array((spec.secret ?? "").utf8))])
            } catch {
                decoder.fail(mark, join(path, "jwt.secret"), "\(error)")
                return nil
            }
        }
        let settings = JWTVerifier.Settings(
            issuer: spec.issuer, audiences: spec.audience, leeway: spec.leewaySeconds,
            requiredClaims: spec.requiredClaims, requiresExpiration: spec.requireExp,
            maximumTokenBytes: spec.maxTokenBytes)
        return JWTCheck(
            verifier: JWTVerifier(keys: keys, settings: settings), source: tokenSource(spec.tokenFrom),
            claimNames: claimNames)
    }

    /// Where the check reads the token, as `spec` names it.
    static func tokenSource(_ spec: TokenFromSpec) -> TokenSource {
        switch spec {
        case .bearer: .bearer
        case .header(let name): .header(name)
        case .cookie(let name): .cookie(name)
        case .query(let name): .query(name)
        }
    }

    /// The request field that carries the token (removed before forwarding unless kept).
    static func tokenField(_ spec: TokenFromSpec) -> String? {
        switch spec {
        case .bearer: "Authorization"
        case .header(let name): name
        // A cookie shares its field with others and a query parameter is the target: the
        // upstream gets them (the README says so).
        case .cookie, .query: nil
        }
    }

    /// The auth-service client settings of `spec`; `nil` after reporting a bad URL or setting.
    static func serviceSettings(
        _ spec: AuthServiceSpec, _ mark: SourceMark, _ path: String, _ decoder: inout ValueDecoder
    ) -> AuthServiceSettings? {
        guard let (target, prefix) = AuthServiceSettings.parseURL(spec.url) else {
            decoder.fail(
                mark, join(path, "request.url"), "expected http[s]://HOST[:PORT][/PATH], found '\(spec.url)'")
            return nil
        }
        let settings = AuthServiceSettings(
            target: target, pathPrefix: prefix, timeoutMilliseconds: spec.timeoutMilliseconds,
            identityHeaders: spec.identityHeaders, forwardHeaders: spec.forwardHeaders,
            cacheTTLMilliseconds: spec.cacheTTLMilliseconds, onError: spec.allowOnError ? .allow : .deny)
        if let problem = settings.problem {
            decoder.fail(mark, join(path, "request"), problem)
            return nil
        }
        return settings
    }

    /// The claim names the route's templates read (`{auth:claim:NAME}`).
    static func claimNames(_ route: Route) -> [String] {
        var templates: [Template] = route.authForwarding?.templatedSet.map(\.value) ?? []
        if let filename = route.rules.filename { templates.append(filename) }
        for injection in route.rules.inject {
            switch injection.value {
            case .template(let template): templates.append(template)
            case .provider(let provider): templates += provider.templates
            }
        }
        var names: [String] = []
        for template in templates {
            for case .authClaim(let name) in template.pieces where !names.contains(name) {
                names.append(name)
            }
        }
        return names
    }
}
