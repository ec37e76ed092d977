import ProxyCore
import Testing

/// A client that leaves and an upstream that fails, in every state of an exchange: exactly
/// one log record, nothing armed, nothing sent after the close.
@Suite struct FailureTests {
    @Test(arguments: ExchangeState.allCases)
    func clientResetInEveryState(_ state: ExchangeState) {
        let harness = state.reach()
        harness.clientResets()
        #expect(harness.shell.closed)
        #expect(harness.shell.timers.isEmpty, "\(harness.shell.timers)")
        #expect(harness.shell.records.count == (state.hasExchange ? 1 : 0))
        if state.hasExchange { #expect(harness.statuses == [499]) }
        #expect(harness.shell.aborted == (state.hasUpstream ? 1 : 0))
        #expect(harness.shell.sentAfterClose == 0)
    }

    @Test(arguments: ExchangeState.allCases.filter(\.hasUpstream))
    func upstreamFailureInEveryState(_ state: ExchangeState) {
        let harness = state.reach()
        harness.upstreamFails(.error(tlsError: nil))
        #expect(harness.shell.records.count == 1)
        #expect(harness.shell.aborted == 1)
        let record = harness.shell.records.first
        switch state {
        case .connecting:
            #expect(record?.status == 502)
            #expect(record?.error == "upstream unreachable")
        case .sendingBody, .awaitingResponse:
            #expect(record?.status == 502)
            #expect(record?.error == "upstream closed the connection")
        case .relayingResponse:
            // The response had started: it is cut off, the upstream's status logged.
            #expect(record?.status == 200)
            #expect(harness.shell.closed)
        case .partialHead, .held:
            Issue.record("no upstream in \(state)")
        }
        if state != .relayingResponse {
            harness.clientDrains()
            #expect(harness.shell.clientText.hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"))
            #expect(harness.shell.clientText.hasSuffix("\r\n\r\n502 Bad Gateway: \(record?.error ?? "")\n"))
        }
        harness.advance(by: 10_000)
        #expect(harness.shell.closed)
        #expect(harness.shell.timers.isEmpty)
        #expect(harness.shell.records.count == 1)
        #expect(harness.shell.sentAfterClose == 0)
    }

    @Test func unreachableUpstreamIsA502WithItsReason() {
        let harness = Harness()
        harness.clientSends(Wire.get)
        harness.upstreamFails(.unreachable("cannot connect to the upstream"))
        harness.clientDrains()
        #expect(harness.statuses == [502])
        #expect(harness.shell.clientText.contains("502 Bad Gateway: cannot connect to the upstream"))
        #expect(harness.shell.records.first?.failure?.kind == .upstreamUnreachable)
    }

    @Test func malformedResponseHeadIsA502() {
        let harness = Harness()
        harness.clientSends(Wire.get)
        harness.upstreamConnects()
        harness.upstreamSends("SMTP ready\r\n\r\n")
        #expect(harness.statuses == [502])
        #expect(harness.shell.aborted == 1)
    }
}
