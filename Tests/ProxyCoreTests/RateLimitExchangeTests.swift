import HTTP1
import HTTPCore
import ProxyCore
import Testing
import UploadRules

/// `rate_limit:` through the connection state machine: 429 with `Retry-After` and nothing
/// upstream, the bytes read charged when the request ends.
@Suite struct RateLimitExchangeTests {
    static let upload = "POST /c HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello"

    static func harness(_ limit: RateLimit) -> (Harness, ClientLimiter) {
        let limiter = ClientLimiter(limit: limit)
        var route = Route(pathPrefix: "/c")
        route.rateLimiter = limiter
        return (Harness(routes: RouteTable([route])), limiter)
    }

    @Test func aClientOverItsRateGets429WithRetryAfterAndNothingGoesUpstream() {
        let (harness, _) = Self.harness(RateLimit(requestsPerSecond: 0.5, burst: 1))
        harness.clientSends(Self.upload)
        harness.upstreamConnects()
        harness.upstreamDrains()
        harness.upstreamSends(Wire.ok)
        #expect(harness.statuses == [200])
        let connectsBefore = harness.shell.connects.count
        let forwardedBefore = harness.shell.upstreamReceived.count
        harness.clientSends(Self.upload)
        harness.clientDrains()
        #expect(harness.statuses == [200, 429])
        #expect(harness.shell.clientText.contains("HTTP/1.1 429 Too Many Requests\r\nRetry-After: 2\r\n"))
        #expect(harness.shell.records.last?.tallies.all == [.rateLimited(limit: "requests")])
        #expect(harness.shell.connects.count == connectsBefore)
        #expect(harness.shell.upstreamReceived.count == forwardedBefore)
    }

    @Test func theBytesReadAreChargedWhenTheRequestEnds() {
        let (harness, limiter) = Self.harness(RateLimit(bytesPerMinute: 8))
        harness.clientSends(Self.upload)
        harness.upstreamConnects()
        harness.upstreamDrains()
        harness.upstreamSends(Wire.ok)
        #expect(harness.statuses == [200])
        // 5 of the 8 bytes are spent: a request declaring 4 is refused, one declaring 3 is not.
        let client = Array("192.0.2.1".utf8)
        #expect(
            limiter.admit(key: .address(client), declaredBytes: 4, now: harness.now)
                == .limited(.bytes, retryAfterSeconds: 8))
        guard
            case .admitted(let ticket) = limiter.admit(
                key: .address(client), declaredBytes: 3, now: harness.now)
        else {
            Issue.record("3 bytes should fit")
            return
        }
        limiter.end(ticket, bytes: 3, now: harness.now)
    }
}
