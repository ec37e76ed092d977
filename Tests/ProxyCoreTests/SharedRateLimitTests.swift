import ProxyCore
import SharedState
import Testing

/// `rate_limit: { shared: true }` in the core: the keys an identity cannot reach out of, the
/// script's reply read strictly, and the exchange held for Redis's verdict, with the local
/// limiter deciding only when Redis could not.
@Suite struct SharedRateLimitTests {
    static let limit = SharedRateLimit(
        limit: RateLimit(requestsPerSecond: 2, burst: 5, bytesPerMinute: 1_000, concurrent: 3),
        route: "up:load",
        keyPrefix: "fg:", onError: .local)

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func keysHoldIdentitiesAsHexInsideOneHashTag() {
        let keys = Self.limit.keys(for: .identity("a:b*c\r\n}{x"))
        #expect(
            keys.map(Self.text)
                == ["r", "c", "b"].map { "fg:rl:{r75703a6c6f6164.i613a622a630d0a7d7b78}:" + $0 })
        for key in keys {
            let tag = Self.text(key).split(separator: "{")[1].split(separator: "}")[0]
            #expect(tag.allSatisfy { $0.isHexDigit || $0 == "." || $0 == "r" || $0 == "i" })
        }
    }

    @Test func anIdentityNamedLikeAnAddressIsAnotherKey() {
        let identity = Self.limit.keys(for: .identity("192.0.2.7"))
        let address = Self.limit.keys(for: .address(Array("192.0.2.7".utf8)))
        #expect(identity != address)
        // An identity cannot spell another's key by carrying the separators.
        #expect(Self.limit.keys(for: .identity("x}:r")) != Self.limit.keys(for: .identity("x")))
        let other = SharedRateLimit(limit: Self.limit.limit, route: "up", keyPrefix: "fg:", onError: .local)
        #expect(other.keys(for: .identity(":load.i61")) != Self.limit.keys(for: .identity("a")))
    }

    @Test func aLongIdentityIsHashed() {
        let long = String(repeating: "z", count: 65)
        let key = Self.text(Self.limit.keys(for: .identity(long))[0])
        #expect(key.contains(".ih"))
        #expect(key.count == "fg:rl:{r75703a6c6f6164.ih}:r".count + 64)
        #expect(Self.limit.keys(for: .identity(long + "y")) != Self.limit.keys(for: .identity(long)))
    }

    @Test func theDecisionCarriesTheLimitsAsArguments() {
        let command = Self.limit.decide(
            client: .address(Array("192.0.2.7".utf8)), declaredBytes: 42, nonce: "n-1", lease: "n-1",
            script: SharedLimitScripts.decide)
        #expect(Self.text(command[0]) == "EVALSHA")
        #expect(Self.text(command[1]) == SharedLimitScripts.decide.sha1)
        #expect(Self.text(command[2]) == "3")
        #expect(command[6...].map(Self.text) == ["n-1", "500.000", "5", "3", "n-1", "30000", "1000", "42"])
        let unknown = Self.limit.decide(
            client: .identity("a"), declaredBytes: nil, nonce: "n", lease: "n",
            script: SharedLimitScripts.decide)
        #expect(Self.text(unknown.last!) == "-1")
        #expect(
            SharedLimitScripts.decide.eval(fromEvalsha: command).map(Self.text).prefix(3) == [
                "EVAL", SharedLimitScripts.decide.source, "3",
            ])
    }

    @Test func theScriptsSHA1IsTheSourcesDigest() {
        // SHA-1 of "" is da39a3ee…; the scripts' own are 40 hex digits and differ.
        let shas = [
            SharedLimitScripts.decide.sha1, SharedLimitScripts.end.sha1, SharedLimitScripts.renew.sha1,
        ]
        #expect(shas.allSatisfy { $0.count == 40 && $0.allSatisfy(\.isHexDigit) })
        #expect(Set(shas).count == 3)
    }

    @Test func repliesAreReadStrictly() {
        func reply(_ nonce: String, _ result: String, _ milliseconds: Int64) -> RESPValue {
            .array([.bulk(Array(nonce.utf8)), .bulk(Array(result.utf8)), .integer(milliseconds)])
        }
        let limit = Self.limit
        #expect(
            limit.outcome(of: reply("n", "ok", 0), nonce: "n", declaredBytes: 7)
                == .admitted(reservedBytes: 7))
        #expect(
            limit.outcome(of: reply("n", "ok", 0), nonce: "n", declaredBytes: nil)
                == .admitted(reservedBytes: 0))
        #expect(
            limit.outcome(of: reply("n", "requests", 1_001), nonce: "n", declaredBytes: nil)
                == .limited(.requests, retryAfterSeconds: 2))
        #expect(
            limit.outcome(of: reply("n", "concurrent", 1), nonce: "n", declaredBytes: nil)
                == .limited(.concurrent, retryAfterSeconds: 1))
        #expect(
            limit.outcome(of: reply("m", "ok", 0), nonce: "n", declaredBytes: nil) == nil, "another's reply")
        #expect(limit.outcome(of: reply("n", "maybe", 0), nonce: "n", declaredBytes: nil) == nil)
        #expect(limit.outcome(of: reply("n", "requests", -5), nonce: "n", declaredBytes: nil) == nil)
        #expect(limit.outcome(of: .error("NOSCRIPT"), nonce: "n", declaredBytes: nil) == nil)
        #expect(limit.outcome(of: .array(nil), nonce: "n", declaredBytes: nil) == nil)
        #expect(limit.outcome(of: .simple("OK"), nonce: "n", declaredBytes: nil) == nil)
    }

    @Test func theEndIsSentOnlyWhenThereIsSomethingToGiveBack() {
        let rateOnly = SharedRateLimit(
            limit: RateLimit(requestsPerSecond: 1), route: "r", keyPrefix: "fg:", onError: .local)
        #expect(
            rateOnly.end(
                client: .identity("a"), lease: "l", reservedBytes: 0, readBytes: 0, nonce: "n",
                script: SharedLimitScripts.end) == nil)
        let end = Self.limit.end(
            client: .identity("a"), lease: "l", reservedBytes: 100, readBytes: 30, nonce: "n",
            script: SharedLimitScripts.end)
        #expect(end?.suffix(4).map(Self.text) == ["n", "l", "1000", "70"])
    }

    // The exchange: held for Redis's verdict (hold id 0: the route has no other check).

    static let upload = "POST /c HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello"

    static func harness(burst: Int = 1) -> Harness {
        var route = Route(pathPrefix: "/c")
        let limit = RateLimit(requestsPerSecond: 0.01, burst: burst)
        route.rateLimiter = ClientLimiter(limit: limit)
        route.sharedLimit = SharedRateLimit(limit: limit, route: "c", keyPrefix: "fg:", onError: .local)
        return Harness(routes: RouteTable([route]))
    }

    static func serve(_ harness: Harness) {
        harness.upstreamConnects()
        harness.upstreamDrains()
        harness.upstreamSends(Wire.ok)
    }

    @Test func theRequestWaitsForRedisAndTheLocalBucketIsUntouched() {
        let harness = Self.harness()
        for round in 1...3 {
            harness.clientSends(Self.upload)
            #expect(harness.shell.connects.count == round - 1, "nothing upstream before the verdict")
            #expect(harness.shell.timers[.verdict(0)] == harness.now + 1_050)
            harness.verdict(0, .release())
            Self.serve(harness)
        }
        // Three admitted by Redis, though the local bucket holds one.
        #expect(harness.statuses == [200, 200, 200])
    }

    @Test func redisRefusesWith429AndRetryAfter() {
        let harness = Self.harness()
        harness.clientSends(Self.upload)
        harness.verdict(0, .refuse(.rateLimited(.requests, retryAfterSeconds: 7)))
        harness.clientDrains()
        #expect(harness.statuses == [429])
        #expect(harness.shell.clientText.hasPrefix("HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\n"))
        #expect(harness.shell.records.last?.tallies.all == [.rateLimited(limit: "requests")])
        #expect(harness.shell.connects.isEmpty)
    }

    @Test func whenRedisCannotDecideTheLocalBucketDoes() {
        let harness = Self.harness()
        harness.clientSends(Self.upload)
        harness.verdict(0, .decideLocally)
        Self.serve(harness)
        harness.clientSends(Self.upload)
        harness.verdict(0, .decideLocally)
        harness.clientDrains()
        #expect(harness.statuses == [200, 429], "the local bucket of one is spent")
    }

    @Test func aVerdictThatNeverComesIs503() {
        let harness = Self.harness()
        harness.clientSends(Self.upload)
        harness.advance(by: 1_050)
        harness.clientDrains()
        #expect(harness.statuses == [503])
    }
}
