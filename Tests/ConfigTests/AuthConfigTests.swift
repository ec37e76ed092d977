import Config
import Foundation
import ProxyCore
import Testing

/// `auth:` and `rate_limit:` on a route: what they load into (checks, the limiter, what the
/// forwarded head loses and gains) and every error with its place and key path.
@Suite struct AuthConfigTests {
    static let secret = "config-test-secret-0123456789abcdef"

    func route(_ body: String, environment: [String: String] = [:]) throws -> Route {
        let text = "routes:\n  - match: { path: /u }\n" + body
        let config = try ConfigLoader.load(text: text, file: "a.yaml", environment: environment).get()
        return try #require(config.routes.first)
    }

    func errors(_ body: String, environment: [String: String] = [:]) -> [String] {
        let text = "routes:\n  - match: { path: /u }\n" + body
        guard
            case .failure(let errors) = ConfigLoader.load(
                text: text, file: "a.yaml", environment: environment)
        else { return [] }
        return errors.errors.map(\.description)
    }

    @Test func aJWTSecretFromTheEnvironment() throws {
        let route = try route(
            "    auth: { jwt: { secret: \"${JWT_SECRET}\", issuer: id, audience: [a, b] } }\n",
            environment: ["JWT_SECRET": Self.secret])
        #expect(route.checks.count == 1 && route.checks.first is JWTCheck)
        #expect(route.authMethod == "jwt")
        #expect(route.authForwarding?.strip == ["Authorization"], "the token is not forwarded")
    }

    @Test func theTokensHeaderIsKeptOnlyWhenAsked() throws {
        let kept = try route(
            "    auth: { jwt: { secret: \(Self.secret), token_from: { header: X-Token }, forward_token: true } }\n"
        )
        #expect(kept.authForwarding?.strip == [])
        let stripped = try route(
            "    auth: { jwt: { secret: \(Self.secret), token_from: { header: X-Token } } }\n")
        #expect(stripped.authForwarding?.strip == ["X-Token"])
    }

    @Test func anAuthServiceStripsTheIdentityHeadersTheClientSent() throws {
        let route = try route(
            "    auth: { request: { url: \"http://auth:8000/check\", identity_headers: [X-User-Id, X-Role], cache_ttl: 30s } }\n"
        )
        let check = try #require(route.checks.first as? AuthServiceCheck)
        #expect(check.settings.pathPrefix == "/check")
        #expect(check.settings.cacheTTLMilliseconds == 30_000 && check.cache != nil)
        #expect(route.authForwarding?.strip == ["X-User-Id", "X-Role"])
        #expect(route.authForwarding?.identityHeaders == ["X-User-Id", "X-Role"])
    }

    @Test func identityInHeaderValuesIsATemplate() throws {
        let route = try route(
            "    auth: { jwt: { secret: \(Self.secret) } }\n    headers: { set: { X-User: \"{auth:sub}\", X-Via: fg } }\n"
        )
        #expect(route.setHeaders.map(\.0) == ["X-Via"])
        #expect(route.authForwarding?.templatedSet.map(\.name) == ["X-User"])
    }

    @Test func aRateLimitBuildsOneLimiterPerRoute() throws {
        let route = try route(
            "    rate_limit: { requests_per_second: 0.5, burst: 3, bytes_per_minute: 1MiB, concurrent: 2 }\n")
        let limit = try #require(route.rateLimiter?.limit)
        #expect(limit == RateLimit(requestsPerSecond: 0.5, burst: 3, bytesPerMinute: 1 << 20, concurrent: 2))
        #expect(route.checks.isEmpty)
    }

    @Test(arguments: [
        (
            "    auth: { jwt: { issuer: x } }\n",
            "routes[0].auth.jwt: jwt needs jwks_file, secret or secret_file"
        ),
        (
            "    auth: { jwt: { secret: short } }\n",
            "routes[0].auth.jwt.secret: an HS256 secret needs at least 32 bytes"
        ),
        (
            "    auth: { jwt: { secret: \(AuthConfigTests.secret), jwks_file: /x } }\n",
            "routes[0].auth.jwt: give jwks_file or secret, not both"
        ),
        (
            "    auth: { jwt: { secret: \(AuthConfigTests.secret), token_from: { body: x } } }\n",
            "routes[0].auth.jwt.token_from.body: unknown key"
        ),
        (
            "    auth: { jwt: { jwks_file: /nonexistent/jwks.json } }\n",
            "routes[0].auth.jwt.jwks_file: /nonexistent/jwks.json"
        ),
        ("    auth: { api_keys: /nonexistent/keys.txt }\n", "routes[0].auth.api_keys: /nonexistent/keys.txt"),
        ("    auth: { request: { url: \"ftp://x\" } }\n", "routes[0].auth.request.url: expected http[s]://"),
        (
            "    auth: { request: { url: \"http://a\", on_error: maybe } }\n",
            "routes[0].auth.request.on_error: expected deny or allow"
        ),
        (
            "    auth: { request: { url: \"http://a\", forward_headers: [Content-Length] } }\n",
            "routes[0].auth.request: Content-Length cannot be forwarded"
        ),
        (
            "    auth: { jwt: { secret: \(AuthConfigTests.secret) }, api_keys: /k }\n",
            "routes[0].auth: give exactly one"
        ),
        ("    rate_limit: { burst: 3 }\n", "routes[0].rate_limit: give requests_per_second"),
        (
            "    rate_limit: { requests_per_second: 0 }\n",
            "routes[0].rate_limit.requests_per_second: expected a rate above 0"
        ),
        (
            "    multipart: { inject: [{ name: who, value: \"{auth:sub}\" }] }\n",
            "routes[0]: {auth:…} variables need auth: on the route"
        ),
        (
            "    multipart: { inject: [{ name: t, qiniu: { access_key: a, secret_key: b, scope: \"b:{auth:sub}\" } }] }\n",
            "routes[0]: {auth:…} variables need auth: on the route"
        ),
    ])
    func errorsNameTheirKey(body: String, expected: String) {
        let found = errors(body)
        #expect(found.contains { $0.contains(expected) }, "\(found)")
    }

    @Test func skippedJWKSKeysAreWarnings() throws {
        let path = NSTemporaryDirectory() + "formgate-jwks-\(UUID().uuidString).json"
        try
            #"{"keys":[{"kty":"oct","kid":"good","k":"Y29uZmlnLXRlc3Qtc2VjcmV0LTAxMjM0NTY3ODlhYmNkZWY"},{"kty":"RSA","kid":"short","n":"AQAB","e":"AQAB"}]}"#
            .write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let text = "routes:\n  - match: { path: /u }\n    auth: { jwt: { jwks_file: \(path) } }\n"
        let config = try ConfigLoader.load(text: text, file: "a.yaml").get()
        #expect(config.warnings.count == 1)
        #expect(
            config.warnings.first?.contains("skipped") == true
                && config.warnings.first?.contains("short") == true)
    }
}

/// A route injecting an object-store credential loads without warnings in either mode: a
/// `stream` body is never sent chunked to a store (its length is declared, or it is spooled).
@Suite struct ProviderConfigTests {
    static let route = """
        routes:
          - match: { path: /u }
            request_body: MODE
            multipart:
              order: ORDER
              inject: [{ name: token, before: file, qiniu: { access_key: a, secret_key: b, scope: "p:{filename}" } }]
        DIGEST
        """

    static func load(mode: String, order: String, digest: Bool) throws -> ServerConfig {
        let text = route.replacingOccurrences(of: "MODE", with: mode)
            .replacingOccurrences(of: "ORDER", with: order)
            .replacingOccurrences(of: "DIGEST", with: digest ? "      digest: { algorithms: [sha256] }" : "")
        return try ConfigLoader.load(text: text, file: "p.yaml").get()
    }

    @Test func storeRoutesLoadWithoutWarnings() throws {
        #expect(try Self.load(mode: "stream", order: "as_sent", digest: false).warnings.isEmpty)
        #expect(try Self.load(mode: "stream", order: "as_sent", digest: true).warnings.isEmpty)
        #expect(try Self.load(mode: "buffer", order: "fields_first", digest: true).warnings.isEmpty)
    }
}

/// `inject: - { s3_post | oss_post | cos_post: { … }, before: file }`: a provider of several
/// fields (no `name`), its settings checked at load.
@Suite struct StoreProviderConfigTests {
    func load(_ provider: String) -> Result<ServerConfig, ConfigErrors> {
        ConfigLoader.load(
            text: """
                routes:
                  - match: { path: /u }
                    request_body: buffer
                    multipart:
                      inject: [{ before: file, \(provider) }]

                """, file: "s.yaml", environment: ["AWS_SK": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"])
    }

    @Test(arguments: [
        (
            "s3_post: { access_key: AK, secret_key: \"${AWS_SK}\", region: us-east-1, bucket: b, key: \"u/{uuid}{ext}\" }",
            "s3_post"
        ),
        (
            "oss_post: { access_key: AK, secret_key: S, region: cn-hangzhou, bucket: b, key: \"{filename}\", version: v1 }",
            "oss_post"
        ),
        (
            "cos_post: { secret_id: ID, secret_key: S, bucket: b-125, key: \"{filename}\", ttl: 10m }",
            "cos_post"
        ),
    ])
    func eachProviderLoads(provider: String, kind: String) throws {
        let route = try #require(try load(provider).get().routes.first)
        guard case .provider(let loaded) = route.rules.inject.first?.value else {
            Issue.record("no provider")
            return
        }
        #expect(loaded.kind == kind)
        #expect(route.rules.shadowsAddedField("policy"), "a client's policy field is dropped")
    }

    @Test(arguments: [
        ("s3_post: { access_key: AK, secret_key: S, bucket: b, key: k }", "s3_post: needs region"),
        (
            "s3_post: { access_key: AK, secret_key: S, region: US_EAST, bucket: b, key: k }",
            "s3_post.region: 'US_EAST' is not a region name"
        ),
        (
            "s3_post: { access_key: AK, secret_key: S, region: us-east-1, bucket: b, key: k, ttl: 30d }",
            "s3_post.ttl: expected 1s to 7d"
        ),
        (
            "oss_post: { access_key: AK, secret_key: S, region: cn-hangzhou, bucket: b, key: k, version: v2 }",
            "oss_post.version: expected v1 or v4"
        ),
        ("cos_post: { secret_id: ID, bucket: b, key: k }", "cos_post: needs secret_key"),
        (
            "s3_post: { access_key: AK, secret_key: S, region: us-east-1, bucket: b, key: k, conditions: { content-length-range: [10, 1] } }",
            "conditions.content-length-range: expected [MIN, MAX] sizes"
        ),
    ])
    func badSettingsNameTheirKey(provider: String, expected: String) {
        guard case .failure(let errors) = load(provider) else {
            Issue.record("\(provider) loaded")
            return
        }
        #expect(errors.errors.map(\.description).contains { $0.contains(expected) }, "\(errors.errors)")
    }
}
