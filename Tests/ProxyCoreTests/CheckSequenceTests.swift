import ProxyCore
import Synchronization
import Testing
import UploadRules

/// A check that answers what it was built with and records what it saw.
final class RecordingCheck: RequestCheck {
    struct Seen: Sendable {
        var checked: [String?] = []
    }

    let answer: CheckAnswer
    let seen = Mutex(Seen())

    init(_ answer: CheckAnswer) { self.answer = answer }

    func check(_ request: CheckRequest) -> CheckAnswer {
        seen.withLock { $0.checked.append(request.identity?.subject) }
        return answer
    }

    var checked: [String?] { seen.withLock { $0.checked } }
}

/// A route's checks run one after another before anything is read past the head: each sees
/// the identity the ones before it established, and a hold stops the sequence until its verdict.
@Suite struct CheckSequenceTests {
    static let alice = Identity(
        subject: "alice", method: .jwt, claims: ["tenant": "t1"], attributes: ["x-user-id": "42"])
    static let request = "POST /c HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello"

    static func harness(_ checks: [any RequestCheck], configure: (inout Route) -> Void = { _ in }) -> Harness
    {
        var route = Route(pathPrefix: "/c")
        route.checks = checks
        configure(&route)
        return Harness(routes: RouteTable([route]))
    }

    @Test func laterChecksSeeTheIdentity() {
        let auth = RecordingCheck(.identified(Self.alice))
        let limit = RecordingCheck(.pass)
        let harness = Self.harness([auth, limit])
        harness.clientSends(Self.request)
        harness.upstreamConnects()
        harness.upstreamDrains()
        harness.upstreamSends(Wire.ok)
        #expect(harness.statuses == [200])
        #expect(auth.checked == [nil])
        #expect(limit.checked == ["alice"])
        let record = harness.shell.records.first
        #expect(record?.identity == "alice")
        #expect(record?.tallies.all == [.auth(.allowed, reason: "jwt")])
    }

    @Test func aHoldStopsTheSequenceUntilItsVerdict() {
        let service = RecordingCheck(.hold(milliseconds: 500))
        let limit = RecordingCheck(.pass)
        let harness = Self.harness([service, limit])
        harness.clientSends(Self.request)
        #expect(harness.shell.log.contains("consultCheck"))
        #expect(limit.checked.isEmpty, "the next check waits for the verdict")
        harness.verdict(0, .release(Self.alice, tally: .auth(.allowed, reason: "request")))
        #expect(limit.checked == ["alice"])
        harness.upstreamConnects()
        harness.upstreamDrains()
        harness.upstreamSends(Wire.ok)
        #expect(harness.shell.records.first?.tallies.all == [.auth(.allowed, reason: "request")])
    }

    @Test func aRefusalStopsTheSequence() {
        let auth = RecordingCheck(.identified(Self.alice))
        let limit = RecordingCheck(
            .refuse(
                Refusal(
                    status: 429, reason: "rate_limit: requests", fields: [.init("Retry-After", "2")],
                    tally: .rateLimited(limit: "requests"))))
        let harness = Self.harness([auth, limit])
        harness.clientSends(Self.request)
        harness.clientDrains()
        #expect(harness.statuses == [429])
        #expect(harness.shell.clientText.contains("\r\nRetry-After: 2\r\n"))
        #expect(harness.shell.connects.isEmpty, "nothing upstream")
        #expect(
            harness.shell.records.first?.tallies.all == [
                .auth(.allowed, reason: "jwt"), .rateLimited(limit: "requests"),
            ])
    }

    @Test func aRelayedBodyReachesTheClientAsTheServiceWroteIt() {
        let body: [UInt8] = Array("{\"error\":\"denied\"}\u{FF}".utf8) + [0xFF]
        let refusal = Refusal(
            status: 403, reason: "refused by the auth service",
            fields: [.init("WWW-Authenticate", "Bearer realm=\"uploads\"")],
            body: .init(contentType: "application/json", bytes: body))
        let harness = Self.harness([RecordingCheck(.hold(milliseconds: 500))])
        harness.clientSends(Self.request)
        harness.verdict(0, .refuse(refusal))
        harness.clientDrains()
        let received = harness.shell.clientReceived
        #expect(
            harness.shell.clientText.hasPrefix(
                "HTTP/1.1 403 Forbidden\r\nWWW-Authenticate: Bearer realm=\"uploads\"\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n"
            ))
        #expect(Array(received.suffix(body.count)) == body)
    }

    @Test func continueIsAnsweredOnlyAfterTheChecksAdmit() {
        let harness = Self.harness([RecordingCheck(.hold(milliseconds: 500))])
        harness.clientSends(
            "POST /c HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
        harness.clientDrains()
        #expect(harness.shell.clientReceived.isEmpty, "no 100 Continue while the check holds")
        harness.verdict(0, .release())
        harness.clientDrains()
        #expect(harness.shell.clientText == "HTTP/1.1 100 Continue\r\n\r\n")
    }

    @Test func aRefusedExpectationGetsNoContinue() {
        let refusal = Refusal(status: 401, reason: "auth: a bearer token is required")
        let harness = Self.harness([RecordingCheck(.refuse(refusal))])
        harness.clientSends(
            "POST /c HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
        harness.clientDrains()
        #expect(harness.shell.clientText.hasPrefix("HTTP/1.1 401 Unauthorized\r\n"))
        #expect(!harness.shell.clientText.contains("100 Continue"))
    }

    @Test func theIdentityReplacesWhatTheClientClaimed() throws {
        let harness = Self.harness([RecordingCheck(.identified(Self.alice))]) { route in
            route.authForwarding = AuthForwarding(
                strip: ["Authorization", "X-User-Id"], identityHeaders: ["X-User-Id"],
                templatedSet: [("X-Tenant", try! Template("{auth:claim:tenant}/{auth:sub}"))])
        }
        harness.clientSends(
            "POST /c HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer secret\r\nX-User-Id: 1\r\nx-user-id: 2\r\nContent-Length: 5\r\n\r\nhello"
        )
        harness.upstreamConnects()
        harness.upstreamDrains()
        let sent = String(decoding: harness.shell.upstreamReceived, as: UTF8.self)
        #expect(!sent.contains("secret"))
        #expect(!sent.contains(": 1\r\n") && !sent.contains(": 2\r\n"))
        #expect(sent.contains("\r\nX-User-Id: 42\r\n"))
        #expect(sent.contains("\r\nX-Tenant: t1/alice\r\n"))
        #expect(sent.contains("\r\nX-Forwarded-Proto: http\r\n"))
    }

    @Test func injectedFieldsAndTokensReadTheIdentity() throws {
        let harness = Self.harness([RecordingCheck(.identified(Self.alice))]) { route in
            route.rewritesMultipart = true
            route.rules.inject = [
                Injection(name: "uploader", position: .first, value: .template(try! Template("{auth:sub}"))),
                Injection(
                    name: "token", position: .first,
                    value: .provider(
                        QiniuProvider(
                            fieldName: "token",
                            policy:
                                QiniuPolicy(
                                    accessKey: "AK", secretKey: "SK",
                                    scope: try! Template("photos:users/{auth:sub}/"),
                                    ttlSeconds: 60, extra: [("endUser", .string(try! Template("{auth:sub}")))]
                                )))),
            ]
        }
        let body = "--b\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nx\r\n--b--\r\n"
        harness.clientSends(
            "POST /c HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        )
        harness.upstreamConnects()
        harness.upstreamDrains()
        let sent = String(decoding: harness.shell.upstreamReceived, as: UTF8.self)
        #expect(sent.contains("name=\"uploader\"\r\n\r\nalice\r\n"))
        let token = try #require(
            sent.split(separator: "name=\"token\"\r\n\r\n").last?.split(separator: "\r\n").first)
        let policy = try #require(token.split(separator: ":").last)
        let json = String(decoding: Self.base64URLDecoded(policy), as: UTF8.self)
        #expect(json.hasPrefix("{\"scope\":\"photos:users/alice/\",\"deadline\":"))
        #expect(json.hasSuffix(",\"endUser\":\"alice\"}"))
    }

    @Test func theRateLimitCountsTheIdentityOnTheMachinesClock() {
        var route = Route(pathPrefix: "/c")
        route.checks = [RecordingCheck(.identified(Self.alice))]
        let limiter = ClientLimiter(limit: RateLimit(requestsPerSecond: 1, burst: 2, concurrent: 1))
        route.rateLimiter = limiter
        let harness = Harness(routes: RouteTable([route]))
        func serve() {
            harness.clientSends(Self.request)
            if harness.shell.upstream != .connected { harness.upstreamConnects() }
            harness.upstreamDrains()
            harness.upstreamSends(Wire.ok)
            harness.clientDrains()
        }
        serve()
        serve()
        #expect(harness.statuses == [200, 200])
        harness.clientSends(Self.request)
        harness.clientDrains()
        #expect(harness.statuses == [200, 200, 429], "the burst of 2 is spent")
        #expect(harness.shell.clientText.contains("\r\nRetry-After: 1\r\n"))
        #expect(
            harness.shell.records.last?.tallies.all == [
                .auth(.allowed, reason: "jwt"), .rateLimited(limit: "requests"),
            ])
        #expect(limiter.trackedClients == 1)
        // A second later one token is back (the connection closed after the 429: a new one).
        let next = Harness(routes: RouteTable([route]))
        next.now = harness.now + 1_000
        next.clientSends(Self.request)
        next.upstreamConnects()
        next.upstreamDrains()
        #expect(next.shell.connects.count == 1, "admitted again once the bucket refilled")
        // While that request is in progress, `concurrent: 1` refuses another of alice's.
        let third = Harness(routes: RouteTable([route]))
        third.now = next.now + 1_000
        third.clientSends(Self.request)
        third.clientDrains()
        #expect(third.statuses == [429])
        #expect(third.shell.records.last?.tallies.all.last == .rateLimited(limit: "concurrent"))
    }

    /// Decodes padded URL-safe base64 (the test's own decoder, independent of FormGate's encoder).
    static func base64URLDecoded(_ text: some StringProtocol) -> [UInt8] {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var out: [UInt8] = []
        var bits = 0
        var value = 0
        for byte in text.utf8 where byte != UInt8(ascii: "=") {
            guard let index = alphabet.firstIndex(of: byte) else { return [] }
            value = value << 6 | index
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: value >> bits))
            }
        }
        return out
    }
}
