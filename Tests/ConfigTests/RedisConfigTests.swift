import Config
import Foundation
import ProxyCore
import SharedState
import Testing

/// `redis:` and `rate_limit: { shared: true }`: what they load into, and every error, which
/// never repeats a URL (it may hold a password).
@Suite struct RedisConfigTests {
    func load(_ text: String) -> Result<ServerConfig, ConfigErrors> {
        ConfigLoader.load(text: text, file: "r.yaml")
    }

    func errors(_ text: String) -> [String] {
        guard case .failure(let errors) = load(text) else { return [] }
        return errors.errors.map(\.description)
    }

    @Test func urlsOfEveryForm() throws {
        let cases: [(String, RedisSettings.Address, String?, String?, Int)] = [
            ("redis://10.0.0.5:6380/2", .tcp(host: "10.0.0.5", port: 6380), nil, nil, 2),
            ("redis://cache", .tcp(host: "cache", port: 6379), nil, nil, 0),
            ("redis://:p%40ss@cache:7000", .tcp(host: "cache", port: 7000), nil, "p@ss", 0),
            ("redis://app:secret@[::1]:6379/1", .tcp(host: "::1", port: 6379), "app", "secret", 1),
            ("unix:/run/redis/redis.sock?db=3", .unix(path: "/run/redis/redis.sock"), nil, nil, 3),
        ]
        for (url, address, username, password, database) in cases {
            let settings = try RedisSettings.parse(url: url).get()
            #expect(settings.address == address, "\(url)")
            #expect(settings.username == username && settings.password == password, "\(url)")
            #expect(settings.database == database, "\(url)")
        }
    }

    @Test func badURLsAreRefusedWithoutRepeatingThem() {
        for url in [
            "http://cache:6379", "rediss://cache", "redis://cache:0", "redis://cache:99999",
            "redis://cache/x",
            "redis://:%zz@cache", "redis://", "unix:", "unix:/s?db=x",
        ] {
            guard case .failure(let problem) = RedisSettings.parse(url: url) else {
                Issue.record("\(url) was accepted")
                continue
            }
            #expect(!problem.description.contains(url) || !url.contains("@"), "\(problem)")
        }
        let failures = errors("redis: \"redis://:hunter2@cache:notaport\"\n")
        #expect(failures.count == 1 && failures.allSatisfy { !$0.contains("hunter2") }, "\(failures)")
    }

    @Test func theMappingFormWithAPasswordFile() throws {
        let file = NSTemporaryDirectory() + "formgate-redis-pass-\(UUID().uuidString)"
        try "s3cret\n".write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let config = try load(
            """
            redis: { url: "redis://cache:6379/4", password_file: \(file), timeout: 20ms, connections: 2, on_error: deny, key_prefix: "app1:" }
            routes:
              - name: up
                match: { path: /u }
                rate_limit: { requests_per_second: 5, burst: 20, concurrent: 2, shared: true }

            """
        ).get()
        let redis = try #require(config.redis)
        #expect(redis.password == "s3cret" && redis.database == 4 && redis.connections == 2)
        #expect(redis.timeoutMilliseconds == 20 && redis.onError == .deny && redis.keyPrefix == "app1:")
        let route = try #require(config.routes.first)
        let shared = try #require(route.sharedLimit)
        #expect(shared.limit == RateLimit(requestsPerSecond: 5, burst: 20, concurrent: 2))
        #expect(shared.onError == .deny && shared.keyPrefix == "app1:" && shared.route == "up")
        #expect(shared.timeoutMilliseconds == 20)
        #expect(route.rateLimiter?.limit == shared.limit, "the per-process fallback")
    }

    @Test func sharedLimitsNeedRedis() {
        let failures = errors(
            "routes:\n  - match: { path: /u }\n    rate_limit: { requests_per_second: 5, shared: true }\n")
        #expect(failures.count == 1 && failures[0].contains("shared: true needs redis:"), "\(failures)")
        #expect(errors("redis: { url: \"redis://c\", on_error: sometimes }\n").count == 1)
        #expect(errors("redis: { url: \"redis://c\", timeout: 2m }\n").count == 1)
        #expect(errors("redis: { url: \"redis://:a@c\", password_file: /nonexistent }\n").count >= 1)
        #expect(errors("redis: { timeout: 1s }\n").count == 1)
        let plain = try? load(
            "routes:\n  - match: { path: /u }\n    rate_limit: { requests_per_second: 5 }\n"
        ).get()
        #expect(plain?.routes.first?.sharedLimit == nil && plain?.redis == nil)
    }
}
