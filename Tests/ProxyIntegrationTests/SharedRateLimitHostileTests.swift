import CCrypto
import Foundation
import Testing

/// A Redis that lies: every decision fails as `on_error` says (here `deny`: 503), the process
/// serves on, and a route without a shared limit is untouched.
@Suite(.serialized) struct SharedRateLimitHostileTests {
    static func config(upstream: String, redis: String) -> String {
        """
        upstream: \(upstream)
        admin: 127.0.0.1:0
        redis: { url: "\(redis)", timeout: 2s, on_error: deny }
        routes:
          - name: shared
            match: { path: /upload }
            rate_limit: { requests_per_second: 1000, shared: true }
          - name: open
            match: { path: /open }

        """
    }

    @Test(arguments: [FakeRedis.Mode.garbage, .closeMidReply, .otherNonce, .errorReply])
    func aLyingRedisDecidesNothing(_ mode: FakeRedis.Mode) throws {
        let redis = try FakeRedis(mode)
        let upstream = try FakeUpstream(.respond("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        let proxy = try startProxy(Self.config(upstream: upstream.url, redis: redis.url), workers: 1)
        defer { proxy.stop() }
        for _ in 0..<3 { #expect(try SharedRateLimitTests.status(proxy.port) == 503, "\(mode)") }
        #expect(try SharedRateLimitTests.status(proxy.port, path: "/open") == 200)
        #expect(redis.decisionsRead >= 1)
        let metrics = try SharedRateLimitTests.metrics(proxy)
        #expect(
            SharedRateLimitTests.value(metrics, "formgate_redis_errors_total{on_error=\"deny\"}") == 3,
            "\(metrics)")
        #expect(proxy.process.isRunning)
    }

    @Test func repliesOutOfOrderAreRecognised() throws {
        let redis = try FakeRedis(.outOfOrder)
        let upstream = try FakeUpstream(.respond("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        let proxy = try startProxy(Self.config(upstream: upstream.url, redis: redis.url), workers: 1)
        defer { proxy.stop() }
        // Two decisions on the one connection: each gets the other's answer.
        let head =
            "POST /upload HTTP/1.1\r\nHost: test\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        let first = try RawClient(port: proxy.port)
        first.send(head)
        #expect(eventually(within: 10) { redis.decisionsRead == 1 })
        let second = try RawClient(port: proxy.port)
        second.send(head)
        for client in [first, second] {
            let answer = String(decoding: client.readAll(timeout: 30), as: UTF8.self)
            #expect(answer.hasPrefix("HTTP/1.1 503 "), "\(answer.prefix(120))")
        }
        #expect(proxy.process.isRunning)
    }
}

/// Keys built from JWT subjects through a real Redis: a subject made of key syntax (`:`, `*`,
/// braces, line breaks) counts against itself alone, never against another's bucket.
@Suite(.serialized) struct SharedRateLimitKeyTests {
    static let secret = "shared-limit-test-secret-0123456789abcdef"

    /// An HS256 token for `subject` (header and claims as JSON, HMAC-SHA256 by OpenSSL).
    static func token(_ subject: String) throws -> String {
        func encode(_ bytes: [UInt8]) -> String {
            Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        let claims = try JSONSerialization.data(withJSONObject: ["sub": subject, "exp": 4_000_000_000])
        let input = encode(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8)) + "." + encode(Array(claims))
        var mac = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let key = Array(secret.utf8)
        let data = Array(input.utf8)
        _ = HMAC(EVP_sha256(), key, Int32(key.count), data, data.count, &mac, &length)
        return input + "." + encode(mac)
    }

    static func status(_ port: Int, subject: String) throws -> Int {
        let client = try RawClient(port: port)
        client.send(
            "POST /upload HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer \(try token(subject))\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
        let answer = String(decoding: client.readAll(timeout: 30), as: UTF8.self)
        return Int(answer.dropFirst("HTTP/1.1 ".count).prefix(3)) ?? 0
    }

    @Test func subjectsMadeOfKeySyntaxStayInTheirOwnKeys() throws {
        let redis = try RedisServer()
        let upstream = try FakeUpstream(.answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        let proxy = try startProxy(
            """
            upstream: \(upstream.url)
            redis: { url: "\(redis.url)", timeout: 1s }
            routes:
              - name: shared
                match: { path: /upload }
                auth: { jwt: { secret: \(Self.secret) } }
                rate_limit: { requests_per_second: 0.01, burst: 1, shared: true }

            """, workers: 1)
        defer { proxy.stop() }
        let tricky = [
            "alice}:r", "alice\n", "*", "alice:*", "{alice}", "a" + String(repeating: "l", count: 80),
        ]
        for subject in tricky { #expect(try Self.status(proxy.port, subject: subject) == 200, "\(subject)") }
        // Alice's own bucket is untouched by them: her first passes, her second is refused.
        #expect(try Self.status(proxy.port, subject: "alice") == 200)
        #expect(try Self.status(proxy.port, subject: "alice") == 429)
        for subject in tricky { #expect(try Self.status(proxy.port, subject: subject) == 429, "\(subject)") }
        let keys = try redis.command(["KEYS", "*"]).split(separator: "\n")
        #expect(keys.count == tricky.count + 1, "\(keys)")
        for key in keys {
            let tag = key.split(separator: "{", maxSplits: 1)[1].split(separator: "}")[0]
            #expect(key.hasPrefix("formgate:rl:{r736861726564.i") && key.hasSuffix("}:r"), "\(key)")
            #expect(
                tag.dropFirst("r736861726564.i".count).allSatisfy { $0.isHexDigit || $0 == "h" }, "\(key)")
        }
    }
}
