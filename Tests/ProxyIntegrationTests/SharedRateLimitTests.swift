import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `rate_limit: { shared: true }`: two FormGate processes against one Debian redis-server
/// decide one limit together; a Redis that goes away, freezes or lies is handled as
/// `redis.on_error` says, and comes back.
@Suite(.serialized) struct SharedRateLimitTests {
    static let body =
        "--b0undary\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nshared upload\r\n--b0undary--\r\n"

    /// One request; the status (0 when the connection closed unanswered).
    static func status(_ port: Int, path: String = "/upload", apiKey: String? = nil) throws -> Int {
        let client = try RawClient(port: port)
        let keyLine = apiKey.map { "X-Api-Key: \($0)\r\n" } ?? ""
        client.send(
            "POST \(path) HTTP/1.1\r\nHost: test\r\n\(keyLine)Content-Type: multipart/form-data; boundary=b0undary\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
                + body)
        let answer = String(decoding: client.readAll(timeout: 30), as: UTF8.self)
        return Int(answer.dropFirst("HTTP/1.1 ".count).prefix(3)) ?? 0
    }

    static func metrics(_ proxy: ServerProcess) throws -> String {
        let port = try #require(
            Int(
                proxy.stderr.components(separatedBy: "admin on 127.0.0.1:").last?.prefix { $0.isNumber } ?? ""
            ))
        let client = try RawClient(port: port)
        client.send("GET /metrics HTTP/1.1\r\nHost: admin\r\nConnection: close\r\n\r\n")
        return String(decoding: client.readAll(timeout: 30), as: UTF8.self)
    }

    static func value(_ metrics: String, _ series: String) -> Int {
        for line in metrics.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Int(Double(line.dropFirst(series.count + 1)) ?? -1)
        }
        return -1
    }

    static func config(
        upstream: String, redis: String, limit: String, onError: String = "local", timeout: String = "50ms"
    )
        -> String
    {
        """
        upstream: \(upstream)
        admin: 127.0.0.1:0
        redis: { url: "\(redis)", timeout: \(timeout), on_error: \(onError) }
        routes:
          - name: shared
            match: { path: /upload }
            rate_limit: \(limit)
            multipart: {}

        """
    }

    @Test func twoReplicasShareOneRateAndOneBurst() throws {
        let redis = try RedisServer()
        let upstream = try FakeUpstream(.respond("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        let yaml = Self.config(
            upstream: upstream.url, redis: redis.url,
            limit: "{ requests_per_second: 0.05, burst: 4, shared: true }")
        let a = try startProxy(yaml, workers: 2)
        let b = try startProxy(yaml, workers: 2)
        defer {
            a.stop()
            b.stop()
        }
        let started = Date()
        var statuses: [Int] = []
        for index in 0..<16 { statuses.append(try Self.status(index % 2 == 0 ? a.port : b.port)) }
        let elapsed = Date().timeIntervalSince(started)
        let admitted = statuses.filter { $0 == 200 }.count
        // One burst (4), plus one request per 20 s that passed; per-process limits would admit 8.
        #expect(statuses.allSatisfy { $0 == 200 || $0 == 429 }, "\(statuses)")
        #expect(admitted >= 4 && admitted <= 4 + Int(elapsed / 20) + 1, "admitted \(admitted) of \(statuses)")
        #expect(Array(statuses.prefix(4)) == [200, 200, 200, 200], "\(statuses)")
        let metricsA = try Self.metrics(a)
        #expect(Self.value(metricsA, "formgate_redis_up") == 1, "\(metricsA)")
        #expect(Self.value(metricsA, "formgate_redis_commands_total{result=\"ok\"}") >= 8)
        #expect(Self.value(metricsA, "formgate_redis_errors_total{on_error=\"local\"}") == 0)
        #expect(metricsA.contains("formgate_rate_limited_total{route=\"shared\",limit=\"requests\"}"))
        #expect(!metricsA.contains(redis.url))
        let refused = a.accessLog(atLeast: 8).filter { ($0["status"] as? Int) == 429 }
        #expect(!refused.isEmpty)
    }

    @Test func theByteBudgetIsSharedAndSettledWithWhatWasRead() throws {
        let redis = try RedisServer()
        let upstream = try FakeUpstream(.answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        let yaml = Self.config(
            upstream: upstream.url, redis: redis.url, limit: "{ bytes_per_minute: 1000, shared: true }")
        let a = try startProxy(yaml, workers: 1)
        let b = try startProxy(yaml, workers: 1)
        defer {
            a.stop()
            b.stop()
        }
        func upload(_ port: Int, declared: Int, sent: Int) throws -> Int {
            let client = try RawClient(port: port)
            client.send(
                "POST /upload HTTP/1.1\r\nHost: test\r\nContent-Length: \(declared)\r\nConnection: close\r\n\r\n"
                    + String(repeating: "x", count: sent))
            if sent < declared { client.shutdownWrite() }
            let answer = String(decoding: client.readAll(timeout: 30), as: UTF8.self)
            return Int(answer.dropFirst("HTTP/1.1 ".count).prefix(3)) ?? 0
        }
        // 900 reserved, 100 read: the end gives 800 back.
        #expect(try upload(a.port, declared: 900, sent: 100) != 429)
        let key = "formgate:rl:{r736861726564.a3132372e302e302e31}:b"
        #expect(
            eventually(within: 10) {
                (Double((try? redis.command(["HGET", key, "a"])) ?? "") ?? 0) >= 850
            })
        #expect(try upload(b.port, declared: 800, sent: 800) == 200)
        // About 100 left in the fleet's budget (refilled at 1000 a minute: a few bytes more).
        #expect(try upload(a.port, declared: 600, sent: 600) == 429)
        #expect(try upload(b.port, declared: 600, sent: 600) == 429)
        let metrics = try Self.metrics(b)
        #expect(
            metrics.contains("formgate_rate_limited_total{route=\"shared\",limit=\"bytes\"} 1\n"),
            "\(metrics)")
    }

    @Test func http2StreamsShareTheLimitWithHTTP1() throws {
        let redis = try RedisServer()
        let upstream = try FakeUpstream(.answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        let yaml = Self.config(
            upstream: upstream.url, redis: redis.url,
            limit: "{ requests_per_second: 0.05, burst: 4, shared: true }")
        let h2 = try startListeners(
            ["{ address: 127.0.0.1:0, http2: { h2c: true } }"],
            yaml.replacingOccurrences(of: "admin: 127.0.0.1:0\n", with: ""), workers: 1)
        let h1 = try startProxy(yaml, workers: 1)
        defer {
            h2.stop()
            h1.stop()
        }
        #expect(try Self.status(h1.port) == 200)
        // Five streams on one HTTP/2 connection: three pass (the burst of 4, one spent), two 429.
        // (httpx, one connection: Debian's curl 7.88.1 breaks reusing a prior-knowledge connection.)
        let script = """
            import httpx
            with httpx.Client(http2=True, http1=False) as client:
                for _ in range(5):
                    r = client.post("http://127.0.0.1:\(h2.port)/upload", files={"f": ("a.txt", b"shared")})
                    print(r.status_code, r.http_version[-1])
            """
        let result = try run(try python3(), ["-c", script])
        let lines = String(decoding: result.output, as: UTF8.self).split(separator: "\n")
        #expect(lines.filter { $0 == "200 2" }.count == 3, "\(lines)")
        #expect(lines.filter { $0 == "429 2" }.count == 2, "\(lines)")
        #expect(try Self.status(h1.port) == 429)
    }

    @Test func concurrentHoldsAcrossReplicasAndFreesOnEnd() throws {
        let redis = try RedisServer()
        let upstream = try FakeUpstream(.answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        let yaml = Self.config(
            upstream: upstream.url, redis: redis.url, limit: "{ concurrent: 2, shared: true }")
        let a = try startProxy(yaml, workers: 2)
        let b = try startProxy(yaml, workers: 2)
        defer {
            a.stop()
            b.stop()
        }
        // Two uploads in flight, one on each replica: their heads are sent, their bodies not.
        let head =
            "POST /upload HTTP/1.1\r\nHost: test\r\nContent-Type: multipart/form-data; boundary=b0undary\r\nContent-Length: \(Self.body.utf8.count)\r\nConnection: close\r\n\r\n"
        let first = try RawClient(port: a.port)
        first.send(head + "--b0u")
        let second = try RawClient(port: b.port)
        second.send(head + "--b0u")
        // Both hold a lease once Redis has two members in the client's set.
        #expect(
            eventually(within: 10) {
                let keys = (try? redis.command(["KEYS", "formgate:rl:*:c"])) ?? ""
                guard let key = keys.split(separator: "\n").first else { return false }
                return (try? redis.command(["ZCARD", String(key)])) == ":2"
            })
        let third = try Self.status(a.port)
        let fourth = try Self.status(b.port)
        #expect(
            third == 429 && fourth == 429,
            "\(third) \(fourth) \(third) \(fourth): \((try? redis.command(["KEYS", "*"])) ?? "")")
        // One finishes: a slot frees, on either replica.
        first.send(String(Self.body.dropFirst(5)))
        #expect(String(decoding: first.readAll(timeout: 30), as: UTF8.self).hasPrefix("HTTP/1.1 200 "))
        #expect(
            eventually(within: 10) {
                let keys = (try? redis.command(["KEYS", "formgate:rl:*:c"])) ?? ""
                guard let key = keys.split(separator: "\n").first else { return false }
                return (try? redis.command(["ZCARD", String(key)])) == ":1"
            })
        #expect(try Self.status(b.port) == 200)
        second.send(String(Self.body.dropFirst(5)))
        #expect(String(decoding: second.readAll(timeout: 30), as: UTF8.self).hasPrefix("HTTP/1.1 200 "))
    }

    @Test func redisDownFallsBackLocallyAndComesBack() throws {
        let redis = try RedisServer()
        let upstream = try FakeUpstream(.respond("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        let yaml = Self.config(
            upstream: upstream.url, redis: redis.url,
            limit: "{ requests_per_second: 0.05, burst: 2, shared: true }")
        let a = try startProxy(yaml, workers: 1)
        defer { a.stop() }
        #expect(try Self.status(a.port) == 200)
        #expect(try Self.status(a.port) == 200)
        #expect(try Self.status(a.port) == 429)
        redis.stop()
        // The process's own bucket (burst 2, fresh) decides: two pass, then 429.
        #expect(try Self.status(a.port) == 200)
        #expect(try Self.status(a.port) == 200)
        #expect(try Self.status(a.port) == 429)
        let down = try Self.metrics(a)
        #expect(Self.value(down, "formgate_redis_errors_total{on_error=\"local\"}") == 3, "\(down)")
        #expect(Self.value(down, "formgate_redis_up") == 0)
        #expect(a.stderr.contains("decided by this process's own limits"), "\(a.stderr)")
        try redis.start()
        #expect(eventually(within: 15) { (try? Self.value(Self.metrics(a), "formgate_redis_up")) == 1 })
        // Redis (empty again) decides: a fresh shared bucket of 2, though the local one is spent.
        #expect(try Self.status(a.port) == 200)
        #expect(try Self.status(a.port) == 200)
        #expect(try Self.status(a.port) == 429)
        let back = try Self.metrics(a)
        #expect(Self.value(back, "formgate_redis_errors_total{on_error=\"local\"}") == 3, "\(back)")
        #expect(a.stderr.contains("again"), "\(a.stderr)")
    }

    @Test(arguments: ["deny", "allow"]) func redisDownDeniesOrAllowsAsConfigured(_ policy: String) throws {
        let redis = try RedisServer()
        let upstream = try FakeUpstream(.respond("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        let yaml = Self.config(
            upstream: upstream.url, redis: redis.url,
            limit: "{ requests_per_second: 0.05, burst: 1, shared: true }",
            onError: policy)
        let a = try startProxy(yaml, workers: 1)
        defer { a.stop() }
        #expect(try Self.status(a.port) == 200)
        #expect(try Self.status(a.port) == 429)
        redis.stop()
        for _ in 0..<3 { #expect(try Self.status(a.port) == (policy == "deny" ? 503 : 200)) }
        #expect(Self.value(try Self.metrics(a), "formgate_redis_errors_total{on_error=\"\(policy)\"}") == 3)
    }

    @Test func aFrozenRedisNeverStallsTheLoop() throws {
        let redis = try RedisServer()
        let upstream = try FakeUpstream(.respond("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        let yaml = Self.config(
            upstream: upstream.url, redis: redis.url, limit: "{ requests_per_second: 100, shared: true }",
            timeout: "50ms")
        let a = try startProxy(yaml, workers: 1)
        defer {
            redis.thaw()
            a.stop()
        }
        #expect(try Self.status(a.port) == 200)
        redis.freeze()
        // Each decision waits its 50 ms and falls back; the loop answers every client meanwhile.
        for _ in 0..<20 { #expect(try Self.status(a.port) == 200) }
        let metrics = try Self.metrics(a)
        #expect(Self.value(metrics, "formgate_redis_errors_total{on_error=\"local\"}") == 20, "\(metrics)")
        #expect(Self.value(metrics, "formgate_redis_commands_total{result=\"timeout\"}") >= 1)
        redis.thaw()
        #expect(
            eventually(within: 15) {
                _ = try? Self.status(a.port)
                return (try? Self.value(Self.metrics(a), "formgate_redis_up")) == 1
            })
    }
}
