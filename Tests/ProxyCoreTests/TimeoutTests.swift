import ProxyCore
import Testing

/// Every timeout in every state, on the fake clock.
@Suite struct TimeoutTests {
    /// The status each state's first timeout logs, and what it says.
    static let expected: [ExchangeState: (status: Int, error: String)] = [
        .partialHead: (408, "request header not received in time"),
        .held: (503, "a request check did not answer in time"),
        .connecting: (504, "upstream connect timed out"),
        .sendingBody: (408, "client too slow"),
        .awaitingResponse: (504, "upstream did not answer in time"),
        .relayingResponse: (200, "upstream did not answer in time"),
    ]

    @Test(arguments: ExchangeState.allCases)
    func firstTimeoutInEveryState(_ state: ExchangeState) throws {
        let harness = state.reach()
        harness.advance(by: 60_000)
        let expected = try #require(Self.expected[state])
        #expect(harness.statuses == [expected.status])
        #expect(harness.shell.records.first?.error == expected.error)
        harness.clientDrains()
        harness.advance(by: 60_000)
        #expect(harness.shell.closed)
        #expect(harness.shell.timers.isEmpty, "\(harness.shell.timers)")
        #expect(harness.shell.sentAfterClose == 0)
        if state.hasUpstream { #expect(harness.shell.aborted == 1) }
    }

    @Test func progressPostponesTheIdleTimeout() {
        let harness = state(.sendingBody)
        for _ in 0..<5 {
            harness.advance(by: 4_000)
            harness.clientSends("x")
        }
        #expect(harness.shell.records.isEmpty, "each byte restarted the 5 s idle clock")
        harness.advance(by: 5_000)
        #expect(harness.statuses == [408])
    }

    @Test func anIdleKeepAliveConnectionClosesSilently() {
        let harness = Harness()
        harness.serve()
        harness.advance(by: 4_999)
        #expect(!harness.shell.closed)
        harness.advance(by: 1)
        #expect(harness.shell.closed)
        #expect(harness.statuses == [200])
        #expect(harness.shell.clientOutput.isEmpty)
    }

    @Test func aClientThatDoesNotReadItsAnswerIsDropped() {
        let harness = Harness()
        harness.clientSends(Wire.get)
        harness.upstreamConnects()
        harness.upstreamSends(Wire.ok)
        // The response is queued and the client never drains it.
        harness.advance(by: 5_000)
        #expect(harness.shell.closed)
        #expect(harness.statuses == [200])
    }

    @Test func theResponseTimerDoesNotRunWhileTheClientHoldsUpTheUpstream() {
        let harness = Harness(highWater: 4)
        harness.clientSends(Wire.get)
        harness.upstreamConnects()
        harness.upstreamSends(
            "HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n" + String(repeating: "a", count: 100))
        #expect(!harness.shell.upstreamReading, "the client's output is over the watermark")
        harness.advance(by: 3_000)
        #expect(harness.shell.records.isEmpty, "a paused upstream is not a silent one")
        harness.clientDrains()
        #expect(harness.shell.clientOutput.count == 100, "resumed: the body moved on")
    }

    private func state(_ state: ExchangeState) -> Harness { state.reach() }
}
