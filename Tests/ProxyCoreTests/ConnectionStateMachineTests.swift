import ProxyCore
import Testing

/// Keep-alive, pipelining, early answers, half-close and lingering close, with a fake clock
/// and no sockets.
@Suite struct ConnectionStateMachineTests {
    @Test func keepAliveServesRequestsInTurn() {
        let harness = Harness()
        harness.serve()
        harness.serve()
        #expect(harness.statuses == [200, 200])
        #expect(harness.shell.released == 2)
        #expect(!harness.shell.closed)
        #expect(harness.shell.clientText.occurrences(of: "HTTP/1.1 200 OK\r\n") == 2)
        #expect(harness.shell.clientText.hasSuffix("\r\n\r\nok"))
        let upstreamText = String(decoding: harness.shell.upstreamReceived, as: UTF8.self)
        #expect(upstreamText.occurrences(of: "GET /a HTTP/1.1\r\nHost: 127.0.0.1:9000\r\n") == 2)
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() {
        let harness = Harness()
        harness.clientSends(Wire.post("one") + Wire.post("two"))
        #expect(harness.shell.connects.count == 1)
        harness.upstreamConnects()
        harness.upstreamDrains()
        #expect(String(decoding: harness.shell.upstreamReceived, as: UTF8.self).hasSuffix("\r\n\r\none"))
        harness.upstreamSends(Wire.ok)
        // The second request starts once the first response is complete.
        #expect(harness.shell.connects.count == 2)
        harness.upstreamConnects()
        harness.upstreamDrains()
        #expect(String(decoding: harness.shell.upstreamReceived, as: UTF8.self).hasSuffix("\r\n\r\ntwo"))
        harness.upstreamSends(Wire.chunkedOK)
        harness.clientDrains()
        #expect(harness.statuses == [200, 200])
        #expect(harness.shell.clientText.hasSuffix("2\r\nok\r\n0\r\n\r\n"))
    }

    @Test func anEarlyAnswerEndsTheRequestAndLingers() {
        let harness = Harness()
        harness.clientSends(Wire.postHead(length: 100) + "partial")
        harness.upstreamConnects()
        harness.upstreamDrains()
        harness.upstreamSends("HTTP/1.1 413 Too Large\r\nContent-Length: 0\r\n\r\n")
        #expect(harness.statuses == [413])
        #expect(!harness.shell.clientReading)
        #expect(harness.shell.aborted == 1, "the upstream saw an incomplete request: not reused")
        #expect(harness.shell.clientText.isEmpty)
        harness.clientDrains()
        #expect(harness.shell.clientText.hasPrefix("HTTP/1.1 413 Too Large\r\n"))
        #expect(harness.shell.clientText.contains("Connection: close\r\n"))
        #expect(harness.shell.shutDown, "lingering close: FIN first")
        #expect(harness.shell.clientReading, "lingering close reads and discards")
        #expect(!harness.shell.closed)
        harness.clientSends("rest of the body")
        #expect(harness.shell.clientInput.count == 0)
        harness.advance(by: 5_000)
        #expect(harness.shell.closed)
        #expect(harness.shell.timers.isEmpty)
    }

    @Test func halfCloseAfterARequestStillGetsTheAnswer() {
        let harness = Harness()
        harness.clientSends(Wire.get)
        harness.clientHalfCloses()
        #expect(!harness.shell.clientReading)
        harness.upstreamConnects()
        harness.upstreamDrains()
        harness.upstreamSends(Wire.ok)
        #expect(harness.statuses == [200])
        #expect(harness.shell.clientOutput.count > 0)
        #expect(!harness.shell.closed, "the answer is written before closing")
        harness.clientDrains()
        #expect(harness.shell.closed)
        #expect(!harness.shell.shutDown, "no lingering after a half-close: the client sends nothing more")
        #expect(String(decoding: harness.shell.clientReceived, as: UTF8.self).contains("Connection: close"))
    }

    @Test func halfCloseMidBodyIsTheClientLeaving() {
        let harness = Harness()
        harness.clientSends(Wire.postHead(length: 10) + "abc")
        harness.clientHalfCloses()
        #expect(harness.statuses == [499])
        #expect(harness.shell.closed)
        #expect(harness.shell.timers.isEmpty)
    }

    @Test func halfCloseWhenIdleClosesTheConnection() {
        let harness = Harness()
        harness.serve()
        harness.clientHalfCloses()
        #expect(harness.shell.closed)
        #expect(harness.statuses == [200])
    }

    @Test func closeDelimitedResponseEndsWithTheUpstream() {
        let harness = Harness()
        harness.clientSends(Wire.get)
        harness.upstreamConnects()
        harness.upstreamSends(Wire.closeDelimited)
        harness.upstreamFails(.closed(tlsError: nil))
        harness.clientDrains()
        #expect(harness.statuses == [200])
        #expect(harness.shell.clientText.contains("Transfer-Encoding: chunked\r\n"))
        #expect(dechunked(responseBody(harness.shell.clientText)) == "all of it")
        #expect(!harness.shell.closed, "re-chunked for an HTTP/1.1 client: the connection stays")
    }

    @Test func drainingClosesAfterTheCurrentExchange() {
        let harness = Harness()
        harness.clientSends(Wire.get)
        harness.drain()
        #expect(!harness.shell.closed)
        harness.upstreamConnects()
        harness.upstreamSends(Wire.ok)
        harness.clientDrains()
        #expect(harness.shell.closed)
        #expect(harness.statuses == [200])
    }

    @Test func aMalformedHeadIsRefusedBeforeAnExchange() {
        let harness = Harness()
        harness.clientSends("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n")
        #expect(harness.statuses == [400])
        #expect(harness.shell.records.first?.requestID == nil)
        #expect(harness.shell.exchangesStarted == 0)
        #expect(harness.shell.connects.isEmpty)
        harness.clientDrains()
        #expect(harness.shell.clientText.hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
        #expect(harness.shell.shutDown)
    }
}
