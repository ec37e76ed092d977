import HTTP1
import ProxyCore
import Testing

@testable import Proxy

/// The cache of allowing answers: its key, its expiry on a fake clock, its bound, and a real
/// service asked once for ten requests.
@Suite struct AuthCacheTests {
    let names = AuthServiceSettings.defaultForwardHeaders
    let identity = [AuthServiceVerdict.Header(name: "X-User-Id", value: "u1")]

    func key(_ headers: [(String, String)]) -> AuthCache.Key? {
        AuthCache.key(for: clientRequest("POST", "/upload", headers), forwardHeaders: names)
    }

    @Test func theKeyIsTheCredentialAndNothingElse() throws {
        let bearer = try #require(key([("Authorization", "Bearer a"), ("X-Other", "1")]))
        #expect(key([("authorization", "Bearer a"), ("X-Other", "2"), ("Host", "h")]) == bearer)
        #expect(key([("Authorization", "Bearer b")]) != bearer)
        #expect(key([("Authorization", "Bearer a"), ("Cookie", "s=1")]) != bearer)
        // The same bytes under another header, or split differently, are another credential.
        #expect(key([("Cookie", "Bearer a")]) != bearer)
        #expect(
            key([("Authorization", "ab"), ("Authorization", "c")])
                != key([("Authorization", "a"), ("Authorization", "bc")]))
        // Without a credential nothing is cached.
        #expect(key([("X-Other", "1")]) == nil)
    }

    @Test func anAnswerIsReusedUntilItsTTLEnds() throws {
        let cache = AuthCache(ttl: 10_000)
        let credential = try #require(key([("Authorization", "Bearer a")]))
        #expect(cache.lookup(credential, now: 0) == nil)
        cache.remember(.allowed(identity: identity), for: credential, now: 1_000)
        #expect(cache.lookup(credential, now: 1_000) == identity)
        #expect(cache.lookup(credential, now: 10_999) == identity)
        #expect(cache.lookup(credential, now: 11_000) == nil)
        #expect(cache.count == 0)
    }

    @Test func onlyAllowingAnswersAreKept() throws {
        let cache = AuthCache(ttl: 10_000)
        let credential = try #require(key([("Authorization", "Bearer a")]))
        cache.remember(.denied(status: 401, headers: [], body: []), for: credential, now: 0)
        cache.remember(.failed(.timeout), for: credential, now: 0)
        #expect(cache.lookup(credential, now: 0) == nil)
        #expect(cache.count == 0)
    }

    @Test func theCacheStaysWithinItsBound() throws {
        let cache = AuthCache(ttl: 60_000, maxEntries: 64)
        for index in 0..<5_000 {
            cache.store(try #require(key([("Authorization", "Bearer \(index)")])), identity: identity, now: 0)
        }
        #expect(cache.count <= 64)
        #expect(cache.count >= 48)  // 16 shards of 4, nearly all filled by 5,000 keys
    }

    @Test func tenRequestsWithOneCredentialAskTheServiceOnce() throws {
        let service = try AuthServiceProcess()
        let runner = try CheckRunner()
        let parsed = try #require(AuthServiceSettings.parseURL("http://127.0.0.1:\(service.port)/check"))
        let settings = AuthServiceSettings(
            target: parsed.target, pathPrefix: parsed.pathPrefix, identityHeaders: ["X-User-Id"],
            cacheTTLMilliseconds: 30_000)
        let cache = AuthCache(ttl: settings.cacheTTLMilliseconds)
        // What the proxy does per request: the cache first, the service on a miss.
        func decide(_ request: RequestHead, now: Int64) -> AuthServiceVerdict? {
            let credential = AuthCache.key(for: request, forwardHeaders: settings.forwardHeaders)
            if let credential, let identity = cache.lookup(credential, now: now) {
                return .allowed(identity: identity)
            }
            let verdict = runner.check(request, settings: settings)
            if let credential, let verdict { cache.remember(verdict, for: credential, now: now) }
            return verdict
        }
        let alice = clientRequest("POST", "/allow", [("Authorization", "Bearer alice")])
        let expected = AuthServiceVerdict.allowed(identity: [.init(name: "X-User-Id", value: "user-alice")])
        for second in 0..<10 { #expect(decide(alice, now: Int64(second) * 1_000) == expected) }
        #expect(service.requests.count == 1)
        // Another credential is asked for; so is the first once its TTL has passed.
        let bob = clientRequest("POST", "/allow", [("Authorization", "Bearer bob")])
        #expect(decide(bob, now: 10_000) == .allowed(identity: [.init(name: "X-User-Id", value: "user-bob")]))
        #expect(decide(alice, now: 30_000) == expected)
        #expect(decide(alice, now: 31_000) == expected)
        #expect(service.requests.count == 3)
        // A request without a credential is never cached.
        let anonymous = clientRequest("POST", "/allow", [])
        for _ in 0..<2 { #expect(decide(anonymous, now: 32_000) != nil) }
        #expect(service.requests.count == 5)
    }
}
