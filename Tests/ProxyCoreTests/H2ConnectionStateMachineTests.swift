import HTTP1
import HTTPCore
import ProxyCore
import Testing

/// `HTTP2ConnectionStateMachine` with a fake clock and no sockets: phases, windows, refusals,
/// the head translation, GOAWAY and drain, every deadline.
@Suite struct H2ConnectionStateMachineTests {
    static let response = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

    /// Serves one POST on stream `id` to its end (the response queued on the stream).
    static func serve(_ harness: H2Harness, _ id: Int32, body: String = "hello") {
        harness.request(id, fields: [("content-length", "\(body.utf8.count)")])
        harness.data(id, body)
        harness.endStream(id)
        harness.upstreamConnects(id)
        harness.upstreamDrains(id)
        harness.upstreamSends(id, Self.response)
    }

    @Test func aStreamIsServedAndItsWindowGivenBackAsTheBodyIsHandedOn() {
        let harness = H2Harness()
        Self.serve(harness, 1)
        let shell = harness.shell(1)
        #expect(String(decoding: shell.upstreamReceived, as: UTF8.self).hasSuffix("\r\n\r\nhello"))
        #expect(harness.consumed[1] == 5)
        #expect(shell.streamHeads.map(\.status) == [200])
        #expect(shell.clientOutput == Array("ok".utf8))
        #expect(shell.streamEnds == 1)
        #expect(harness.exchangeRecords.map(\.status) == [200])
        #expect(harness.machine.activeCount == 0)
        #expect(harness.resets.isEmpty)
        harness.streamClosed(1)
        #expect(harness.closedStreams == [1])
        #expect(harness.machine.credit(1) == nil)
    }

    @Test func theHeadIsTranslatedForAnHTTP1Upstream() {
        let harness = H2Harness()
        harness.request(
            1, method: "GET", path: "/a/../a?q=1", authority: "example.com",
            fields: [("cookie", "a=1"), ("x_forwarded_for", "1.2.3.4"), ("cookie", "b=2")], endStream: true)
        harness.upstreamConnects(1)
        let sent = String(decoding: harness.shell(1).upstreamOutput, as: UTF8.self)
        #expect(sent.hasPrefix("GET /a?q=1 HTTP/1.1\r\n"))
        #expect(sent.contains("Host: example.com\r\n"))
        #expect(sent.contains("cookie: a=1; b=2\r\n"))
        #expect(!sent.contains("x_forwarded_for"))
        #expect(harness.droppedFields == 1)
    }

    @Test func aHeaderListTooLargeIsAnswered431ThenResetAfterTheAnswer() {
        let harness = H2Harness()
        harness.headersTooLarge(3)
        let shell = harness.shell(3)
        #expect(shell.streamHeads.map(\.status) == [431])
        #expect(!shell.clientOutput.isEmpty)
        #expect(shell.streamEnds == 1)
        #expect(harness.resets.map(\.id) == [3])
        #expect(harness.resets.first?.code == .noError && harness.resets.first?.afterAnswer == true)
        #expect(harness.records.map(\.status) == [431])
        #expect(harness.records.first?.clientProtocol == .http2(streamID: 3))
        #expect(harness.exchangesStarted == 0)
    }

    @Test func aTargetThatCannotBeNormalisedIsAnswered400() {
        let harness = H2Harness()
        harness.request(1, method: "GET", path: "/a/../../x", endStream: true)
        #expect(harness.shell(1).streamHeads.map(\.status) == [400])
        #expect(harness.records.map(\.status) == [400])
        #expect(harness.closedStreams == [1])
        #expect(harness.machine.activeCount == 0)
    }

    @Test func anInvalidContentLengthResetsTheStreamWithProtocolError() {
        let harness = H2Harness()
        harness.request(1, fields: [("content-length", "x")])
        #expect(harness.shell(1).streamHeads.isEmpty)
        #expect(harness.resets.first?.code == .protocolError && harness.resets.first?.afterAnswer == false)
        #expect(harness.records.map(\.status) == [400])
    }

    @Test func aMalformedStreamWithAnExchangeEndsItAndResetsWithProtocolError() {
        let harness = H2Harness()
        harness.request(1, fields: [("content-length", "9")])
        harness.malformed(1)
        #expect(harness.resets.map(\.code) == [.protocolError])
        #expect(harness.exchangeRecords.map(\.status) == [400])
        harness.malformed(5)
        #expect(harness.records.map(\.status) == [400, 400])
    }

    @Test func aClientResetEndsTheExchangeAs499WithoutAReset() {
        let harness = H2Harness()
        harness.request(1, fields: [("content-length", "9")])
        harness.data(1, "abc")
        harness.reset(1)
        #expect(harness.exchangeRecords.map(\.status) == [499])
        #expect(harness.resets.isEmpty)
        #expect(harness.discarded.contains(1))
        #expect(harness.consumed[1] == harness.taken[1])
    }

    @Test func dataAfterTheExchangeEndedIsDropped() {
        let harness = H2Harness()
        Self.serve(harness, 1)
        harness.data(1, "late")
        #expect(harness.discarded.last == 1)
        #expect(harness.consumed[1] == harness.taken[1])
        #expect(harness.droppedAtOnce[1] == 4)
    }

    @Test func aPausedStreamKeepsItsWindowShutUntilTheUpstreamTakesTheBody() {
        let harness = H2Harness(highWater: 8)
        harness.request(1, fields: [("content-length", "64")])
        harness.upstreamConnects(1)
        harness.data(1, String(repeating: "x", count: 32))
        let given = harness.consumed[1] ?? 0
        #expect(given <= 32)
        harness.upstreamDrains(1)
        harness.data(1, String(repeating: "y", count: 32))
        harness.upstreamDrains(1)
        harness.endStream(1)
        harness.upstreamDrains(1)
        harness.shell(1).upstreamReadsAll()
        let body = String(repeating: "x", count: 32) + String(repeating: "y", count: 32)
        #expect(Array(harness.shell(1).upstreamReceived.suffix(64)) == Array(body.utf8))
        #expect(harness.consumed[1] == 64)
    }

    @Test func theIdleDeadlineClosesAConnectionWithoutStreams() {
        let harness = H2Harness()
        harness.advance(by: Harness.timeouts.idle - 1)
        #expect(!harness.closed)
        harness.advance(by: 1)
        #expect(harness.goAways == [.noError])
        #expect(harness.sessionFlushes == 1)
        #expect(harness.closed)
        #expect(harness.timers.isEmpty)
    }

    @Test func anOpenStreamHoldsOffTheIdleDeadlineUntilItEnds() {
        let harness = H2Harness()
        harness.request(1, method: "GET", endStream: true)
        harness.received()
        // The stream ends (upstream connect timeout) at 2 s: the idle deadline runs from then.
        harness.advance(by: Harness.timeouts.idle)
        #expect(harness.exchangeRecords.map(\.status) == [504])
        #expect(!harness.closed)
        harness.advance(by: Harness.timeouts.upstreamConnect)
        #expect(harness.closed)
    }

    @Test func aHeaderBlockNotEndedInTimeClosesTheConnection() {
        let harness = H2Harness()
        harness.received(headerBlockOpen: true)
        harness.advance(by: Harness.timeouts.header)
        #expect(harness.goAways == [.noError])
        #expect(harness.closed)
    }

    @Test(arguments: [true, false])
    func aFailedReceiveSendsItsGoAwayAndEndsEveryStream(flood: Bool) {
        let harness = H2Harness()
        harness.request(1, fields: [("content-length", "9")])
        harness.request(3, fields: [("content-length", "9")])
        harness.receiveFailed(flood: flood)
        #expect(harness.goAways == [flood ? .enhanceYourCalm : .protocolError])
        #expect(harness.exchangeRecords.map(\.status) == [499, 499])
        #expect(harness.machine.phase == .closing(flood ? .enhanceYourCalm : .protocolError))
        #expect(!harness.closed)
        harness.flushed()
        #expect(harness.closed)
    }

    /// libnghttp2 found a connection error itself (an RST_STREAM of the wrong length) and
    /// wrote its GOAWAY: open streams end at once (499, upstream aborted), and the connection
    /// closes once that GOAWAY is out, not after `timeouts.idle`.
    @Test func aGoAwayTheSessionSentItselfEndsEveryStreamAndTheConnection() {
        let harness = H2Harness()
        harness.request(1, fields: [("content-length", "9")])
        harness.upstreamConnects(1)
        harness.sessionTerminating()
        #expect(harness.exchangeRecords.map(\.status) == [499])
        #expect(harness.shell(1).aborted == 1)
        #expect(harness.goAways.isEmpty, "the session's own GOAWAY is the one that goes")
        #expect(!harness.closed)
        harness.flushed()
        #expect(harness.closed)
    }

    @Test func aFailedReceiveClosesAtOnceWhenTheClientDoesNotRead() {
        let harness = H2Harness()
        harness.receiveFailed(flood: true, socketOutput: 1 << 20)
        #expect(harness.goAways == [.enhanceYourCalm])
        #expect(harness.closed)
    }

    @Test func drainSendsAGracefulGoAwayAndClosesWhenTheSessionIsDone() {
        let harness = H2Harness()
        harness.request(1, method: "GET", endStream: true)
        harness.drain()
        #expect(harness.shutdowns == 1)
        #expect(harness.machine.phase == .draining)
        harness.upstreamConnects(1)
        harness.upstreamSends(1, Self.response)
        harness.flushed(sessionDone: true)
        #expect(harness.closed)
        #expect(harness.exchangeRecords.map(\.status) == [200])
    }

    @Test func aGoAwayFromTheClientLetsOpenStreamsFinish() {
        let harness = H2Harness()
        harness.request(1, method: "GET", endStream: true)
        harness.machine.goAwayReceived(lastStreamID: 1)
        harness.flushed(sessionDone: true)
        #expect(!harness.closed)
        harness.upstreamConnects(1)
        harness.upstreamSends(1, Self.response)
        harness.flushed(sessionDone: true)
        #expect(harness.closed)
    }

    @Test func heldOutputPausesTheSocketAndStallsAfterTheIdleTimeout() {
        let harness = H2Harness()
        harness.flushed(socketOutput: 1 << 20)
        #expect(!harness.socketReading)
        #expect(harness.timers[.stall] != nil)
        harness.advance(by: Harness.timeouts.idle)
        #expect(harness.goAways == [.noError])
        #expect(harness.closed)
    }

    @Test func heldOutputTheClientTakesIsProgress() {
        let harness = H2Harness()
        harness.request(1, method: "GET", endStream: true)
        harness.flushed(socketOutput: 1 << 20)
        harness.advance(by: Harness.timeouts.idle - 1)
        harness.socketDrained()
        #expect(harness.timers[.stall] == nil)
        harness.flushed()
        #expect(harness.socketReading)
        #expect(harness.timers[.stall] == nil)
        #expect(!harness.closed)
    }

    @Test func aResponseStuckBehindAClosedWindowStalls() {
        let harness = H2Harness()
        harness.request(1, method: "GET", endStream: true)
        harness.flushed(stalled: [1])
        #expect(harness.timers[.stall] != nil)
        harness.flushed()
        #expect(harness.timers[.stall] == nil)
        harness.flushed(stalled: [1])
        harness.advance(by: Harness.timeouts.idle)
        #expect(harness.closed)
        #expect(harness.exchangeRecords.count == 1)
    }

    @Test func streamDeadlinesRunOnOneConnectionTimer() {
        let harness = H2Harness()
        harness.request(1, method: "GET", endStream: true)
        harness.advance(by: 500)
        harness.request(3, method: "GET", endStream: true)
        #expect(Set(harness.timers.keys).isSubset(of: [.idle, .header, .stall, .streams]))
        harness.advance(by: Harness.timeouts.upstreamConnect - 500)
        #expect(harness.exchangeRecords.map(\.status) == [504])
        harness.advance(by: 500)
        #expect(harness.exchangeRecords.map(\.status) == [504, 504])
        #expect(harness.shell(1).streamHeads.map(\.status) == [504])
    }

    @Test func closingEndsEveryExchangeAndCancelsEveryTimer() {
        let harness = H2Harness()
        harness.request(1, method: "GET", endStream: true)
        harness.close()
        #expect(harness.closed)
        #expect(harness.timers.isEmpty)
        #expect(harness.exchangeRecords.map(\.status) == [499])
        harness.request(3, method: "GET", endStream: true)
        #expect(harness.exchangeRecords.count == 1)
        #expect(harness.sentAfterClose == 0)
    }
}
