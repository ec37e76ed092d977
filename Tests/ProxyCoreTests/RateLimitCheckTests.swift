import HTTP1
import HTTPCore
import ProxyCore
import Testing
import UploadRules

/// `rate_limit:` as a route's request check: through the connection state machine (429 with
/// `Retry-After`, nothing upstream, the bytes read charged at the end) and on its own.
@Suite struct RateLimitCheckTests {
    static let upload = "POST /c HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello"

    static func harness(_ limit: RateLimit) -> (Harness, ClientLimiter) {
        let limiter = ClientLimiter(limit: limit)
        var route = Route(pathPrefix: "/c")
        route.checks = [RateLimitCheck(limiter: limiter)]
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
        #expect(harness.shell.records.last?.tallies == [.rateLimited(limit: "requests")])
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

    @Test func theIdentityIsTheClientWhenThereIsOne() {
        let check = RateLimitCheck(limiter: ClientLimiter(limit: RateLimit(requestsPerSecond: 1, burst: 1)))
        let head = RequestHead(method: "GET", target: "/c", headers: HeaderFields([("Host", "t")]))
        let address = Array("192.0.2.9".utf8)
        let alice = Identity(subject: "alice", method: .jwt)
        let bob = Identity(subject: "bob", method: .jwt)
        func answer(_ identity: Identity?) -> CheckAnswer {
            check.check(CheckRequest(head: head, route: "r", client: address, identity: identity, now: 0))
        }
        #expect(answer(alice) == .pass)
        #expect(answer(bob) == .pass, "another identity from the same address has its own bucket")
        #expect(answer(nil) == .pass, "so has the address")
        guard case .refuse(let refusal) = answer(alice) else {
            Issue.record("alice is over her rate")
            return
        }
        #expect(refusal.status == 429 && refusal.reason == "rate_limit: requests")
        #expect(refusal.fields == [.init("Retry-After", "1")])
    }

    @Test func concurrentSlotsAreFreedByEnded() {
        let check = RateLimitCheck(
            limiter: ClientLimiter(limit: RateLimit(bytesPerMinute: 100, concurrent: 1)))
        let chunked = RequestHead(
            method: "POST", target: "/c",
            headers: HeaderFields([("Host", "t"), ("Transfer-Encoding", "chunked")]))
        let request = CheckRequest(head: chunked, route: "r", client: Array("192.0.2.9".utf8), now: 0)
        #expect(check.check(request) == .pass)
        guard case .refuse(let refusal) = check.check(request) else {
            Issue.record("one upload at a time")
            return
        }
        #expect(refusal.tally == .rateLimited(limit: "concurrent"))
        check.ended(request, bytesIn: 100, now: 0)
        // The slot is free, but the chunked upload spent the whole budget.
        guard case .refuse(let bytes) = check.check(request) else {
            Issue.record("the budget is spent")
            return
        }
        #expect(bytes.tally == .rateLimited(limit: "bytes"))
        #expect(
            check.check(CheckRequest(head: chunked, route: "r", client: Array("192.0.2.9".utf8), now: 601))
                == .pass)
    }
}
