import ProxyCore
import Testing

/// Request-level verdicts: a check may pass, refuse, or hold the request; held bytes stay in
/// the client's input (the client paused above the watermark) until the verdict or its deadline.
@Suite struct VerdictTests {
    static func harness(_ answer: CheckAnswer, highWater: Int = 1024) -> Harness {
        var route = Route(pathPrefix: "/c")
        route.checks = [FixedCheck(answer: answer)]
        return Harness(routes: RouteTable([route]), highWater: highWater)
    }

    static let request = "POST /c HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello"

    @Test func aHoldKeepsTheBodyUntilReleased() {
        let harness = Self.harness(.hold(milliseconds: 1_000))
        harness.clientSends(Self.request)
        #expect(harness.shell.connects.isEmpty, "nothing goes upstream while held")
        #expect(harness.shell.clientInput.count == 5, "the body stays in the client's input")
        #expect(harness.shell.timers[.verdict(0)] == harness.now + 1_000)
        harness.verdict(0, .release())
        #expect(harness.shell.timers[.verdict(0)] == nil)
        harness.upstreamConnects()
        harness.upstreamDrains()
        #expect(String(decoding: harness.shell.upstreamReceived, as: UTF8.self).hasSuffix("\r\n\r\nhello"))
        harness.upstreamSends(Wire.ok)
        #expect(harness.statuses == [200])
    }

    @Test func aRefusalAnswersWithTheStatusItNames() {
        let harness = Self.harness(.hold(milliseconds: 1_000))
        harness.clientSends(Self.request)
        harness.verdict(0, .refuse(Refusal(status: 403, reason: "refused by the auth service")))
        harness.clientDrains()
        #expect(harness.statuses == [403])
        #expect(harness.shell.clientText.hasPrefix("HTTP/1.1 403 Forbidden\r\n"))
        #expect(harness.shell.clientText.hasSuffix("403 Forbidden: refused by the auth service\n"))
        #expect(harness.shell.connects.isEmpty)
    }

    @Test func anImmediateRefusalNeedsNoHold() {
        let harness = Self.harness(
            .refuse(Refusal(status: 429, reason: "over the rate limit", fields: [.init("Retry-After", "3")])))
        harness.clientSends(Self.request)
        harness.clientDrains()
        #expect(harness.statuses == [429])
        #expect(harness.shell.clientText.hasPrefix("HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\n"))
        #expect(harness.shell.timers[.verdict(0)] == nil)
    }

    @Test func anAbortClosesUnanswered() {
        let harness = Self.harness(.hold(milliseconds: 1_000))
        harness.clientSends(Self.request)
        harness.verdict(0, .abort)
        #expect(harness.shell.closed)
        #expect(harness.shell.clientOutput.isEmpty)
        #expect(harness.statuses == [444])
        #expect(harness.shell.timers.isEmpty)
    }

    @Test func aVerdictThatDoesNotComeIsA503() {
        let harness = Self.harness(.hold(milliseconds: 1_000))
        harness.clientSends(Self.request)
        harness.advance(by: 999)
        #expect(harness.shell.records.isEmpty)
        harness.advance(by: 1)
        #expect(harness.statuses == [503])
        // A late verdict changes nothing.
        harness.verdict(0, .release())
        #expect(harness.shell.connects.isEmpty)
        #expect(harness.statuses == [503])
    }

    @Test func heldBytesPauseTheClientAboveTheWatermark() {
        let harness = Self.harness(.hold(milliseconds: 10_000), highWater: 8)
        harness.clientSends("POST /c HTTP/1.1\r\nHost: t\r\nContent-Length: 20\r\n\r\n0123")
        #expect(harness.shell.clientReading)
        harness.clientSends("456789abcdef")
        #expect(!harness.shell.clientReading, "16 bytes held: over the watermark of 8")
        harness.verdict(0, .release())
        harness.upstreamConnects()
        harness.upstreamDrains()
        #expect(harness.shell.clientReading, "released: the pause is followed by its resume")
        harness.clientSends("ghij")
        harness.upstreamDrains()
        #expect(
            String(decoding: harness.shell.upstreamReceived, as: UTF8.self).hasSuffix("0123456789abcdefghij"))
    }
}
