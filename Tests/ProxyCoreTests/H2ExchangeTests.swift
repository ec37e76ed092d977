import HTTP1
import HTTPCore
import ProxyCore
import Testing
import UploadRules

/// An `Exchange` serving an HTTP/2 stream: the request goes upstream as HTTP/1.1 (a
/// Content-Length when the client sent one, chunks or an exact length when it did not), the
/// response comes back as a `respondClient` head without connection-specific fields, its body
/// de-framed, and `endClientStream`.
@Suite struct H2ExchangeTests {
    static let body = (0..<3_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }

    /// The upstream's request head (without the blank line) and body.
    static func split(_ received: [UInt8]) -> (head: String, body: [UInt8]) {
        DeclaredLengthTests.split(received)
    }

    /// Sends `body` as DATA frames of `frame` bytes, draining the upstream after each.
    static func send(_ body: [UInt8], frames frame: Int, to harness: StreamHarness) {
        var offset = 0
        while offset < body.count {
            let end = min(offset + frame, body.count)
            harness.clientSends(body[offset..<end])
            harness.upstreamDrains()
            offset = end
        }
    }

    @Test func aGetGoesUpstreamAsHTTP1AndItsResponseAsFields() throws {
        let harness = try StreamHarness(method: "GET", endsStream: true)
        harness.upstreamConnects()
        harness.upstreamDrains()
        #expect(
            String(decoding: harness.shell.upstreamReceived, as: UTF8.self)
                == "GET /a HTTP/1.1\r\nHost: 127.0.0.1:9000\r\nX-Forwarded-For: 192.0.2.1\r\n"
                + "X-Forwarded-Proto: https\r\nX-Forwarded-Host: t\r\nX-Request-Id: h2-1\r\n\r\n")
        harness.upstreamSends(
            "HTTP/1.1 200 OK\r\nConnection: keep-alive, X-Hop\r\nKeep-Alive: timeout=5\r\n"
                + "Proxy-Connection: keep-alive\r\nUpgrade: h2c\r\nTE: trailers\r\nX-Hop: secret\r\n"
                + "Content-Length: 2\r\nX-Kept: yes\r\nDate: Mon, 30 Nov 2026 00:00:00 GMT\r\n\r\nok")
        harness.clientDrains()
        let head = try #require(harness.shell.streamHeads.first)
        #expect(harness.shell.streamHeads.count == 1)
        #expect(head.status == 200)
        #expect(
            head.names == ["Content-Length", "X-Kept", "Date"],
            "connection-specific and Connection-named fields go")
        #expect(head.field("Content-Length") == "2")
        #expect(head.field("Date") == "Mon, 30 Nov 2026 00:00:00 GMT", "the upstream's Date stays")
        #expect(!head.endsStream)
        #expect(harness.shell.clientText == "ok", "the body bytes alone, no HTTP/1 head")
        #expect(harness.shell.streamEnds == 1)
        #expect(
            harness.shell.log.filter {
                ["respondClient", "moveResponseBody", "endClientStream"].contains($0)
            }
                == ["respondClient", "moveResponseBody", "endClientStream"])
        #expect(harness.exchange.outcome == .complete(keepAlive: false, linger: false))
        #expect(harness.exchange.streamReset == nil)
        #expect(harness.shell.released == 1)
        let record = try #require(harness.record)
        #expect(record.status == 200)
        #expect(record.clientProtocol == .http2(streamID: 1))
        #expect(record.clientProtocol.logName == "h2" && record.clientProtocol.streamID == 1)
        #expect(record.bytesOut == 2)
    }

    @Test(arguments: [1, 7, 1_000, 3_000])
    func aPostWithContentLengthGoesWithItZeroCopy(frame: Int) throws {
        let harness = try StreamHarness(fields: [("content-length", "3000")])
        harness.upstreamConnects()
        Self.send(Self.body, frames: frame, to: harness)
        #expect(harness.exchange.wantsMoreBody(input: harness.shell.clientInput) == false)
        harness.clientEndsStream()
        harness.upstreamDrains()
        let (head, sent) = Self.split(harness.shell.upstreamReceived)
        #expect((head + "\r\n").contains("\r\nContent-Length: 3000\r\n"), "\(head)")
        #expect(!head.contains("Transfer-Encoding") && !head.contains("content-length"))
        #expect(sent == Self.body)
        #expect(harness.shell.log.contains("moveRequestBody"))
        harness.upstreamSends(Wire.ok)
        #expect(harness.shell.streamHeads.map(\.status) == [200])
        #expect(harness.exchange.outcome == .complete(keepAlive: false, linger: false))
        #expect(harness.record?.bytesIn == 3_000)
    }

    @Test(arguments: [1, 7, 1_000, 3_000])
    func aPostWithoutContentLengthGoesChunkedAndEndsWithTheStream(frame: Int) throws {
        let harness = try StreamHarness()
        harness.upstreamConnects()
        Self.send(Self.body, frames: frame, to: harness)
        #expect(harness.exchange.wantsMoreBody(input: harness.shell.clientInput))
        #expect(
            harness.shell.upstreamReceived.suffix(5) != Array("0\r\n\r\n".utf8), "not ended before END_STREAM"
        )
        harness.clientEndsStream()
        harness.upstreamDrains()
        #expect(!harness.exchange.wantsMoreBody(input: harness.shell.clientInput))
        let (head, sent) = Self.split(harness.shell.upstreamReceived)
        #expect((head + "\r\n").contains("\r\nTransfer-Encoding: chunked\r\n"), "\(head)")
        #expect(!head.contains("Content-Length"))
        #expect(dechunked(sent) == Self.body)
        harness.upstreamSends(Wire.ok)
        #expect(harness.exchange.outcome == .complete(keepAlive: false, linger: false))
        #expect(harness.shell.released == 1)
    }

    /// The whole body and END_STREAM came before the upstream was ready: an exact length.
    @Test func aBodyWholeBeforeTheUpstreamIsReadyGoesWithItsLength() throws {
        let harness = try StreamHarness()
        harness.clientSends(Self.body[..<1_000])
        harness.clientSends(Self.body[1_000...])
        harness.clientEndsStream()
        #expect(harness.shell.upstreamReceived.isEmpty)
        harness.upstreamConnects()
        harness.upstreamDrains()
        let (head, sent) = Self.split(harness.shell.upstreamReceived)
        #expect((head + "\r\n").contains("\r\nContent-Length: 3000\r\n"), "\(head)")
        #expect(sent == Self.body)
    }

    /// END_STREAM while the upstream is not draining: the rest of the input is the body's
    /// rest, read as the upstream drains.
    @Test func theStreamEndsWhileTheClientIsPaused() throws {
        let harness = try StreamHarness(highWater: 64)
        harness.upstreamConnects()
        harness.clientSends(Self.body)
        #expect(!harness.shell.clientReading)
        harness.clientEndsStream()
        while !harness.shell.upstreamOutput.isEmpty { harness.upstreamDrains() }
        let (head, sent) = Self.split(harness.shell.upstreamReceived)
        #expect(head.contains("Transfer-Encoding: chunked"))
        #expect(dechunked(sent) == Self.body)
        harness.upstreamSends(Wire.ok)
        #expect(harness.record?.status == 200)
    }

    @Test func aChunkedResponseReachesTheClientDechunkedWithoutTrailers() throws {
        let harness = try StreamHarness(method: "GET", endsStream: true)
        harness.upstreamConnects()
        harness.upstreamDrains()
        harness.upstreamSends(
            "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\nContent-Type: text/plain\r\n\r\n"
                + "5\r\nhello\r\n6\r\n world\r\n0\r\nX-Sum: 42\r\n\r\n")
        harness.clientDrains()
        let head = try #require(harness.shell.streamHeads.first)
        #expect(head.status == 201)
        #expect(head.names == ["Content-Type", "Date"], "no Transfer-Encoding, Trailer or Content-Length")
        #expect(head.field("Date") == String(decoding: StreamHarness.date, as: UTF8.self))
        #expect(harness.shell.clientText == "hello world")
        #expect(harness.shell.streamEnds == 1)
        #expect(harness.shell.log.last(where: { $0 != "finish" && $0 != "cancelTimer" }) == "releaseUpstream")
        #expect(
            harness.shell.log.firstIndex(of: "endClientStream")! > harness.shell.log.lastIndex(
                of: "sendClient")!)
        #expect(harness.exchange.outcome == .complete(keepAlive: false, linger: false))
    }

    /// A chunked response cut anywhere into two reads reaches the client as the same bytes.
    @Test func everySplitOfAChunkedResponseGivesTheSameBody() throws {
        let response = Array(
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5;ext=1\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\nX-Sum: 1\r\n\r\n").utf8)
        for cut in 1..<response.count {
            let harness = try StreamHarness(method: "GET", endsStream: true)
            harness.upstreamConnects()
            harness.upstreamDrains()
            harness.upstreamSends(String(decoding: response[..<cut], as: UTF8.self))
            harness.upstreamSends(String(decoding: response[cut...], as: UTF8.self))
            #expect(harness.shell.clientOutput == Array("hello world".utf8), "cut at \(cut)")
            #expect(harness.shell.streamEnds == 1 && harness.shell.streamHeads.count == 1, "cut at \(cut)")
        }
    }

    @Test func aCloseDelimitedResponseEndsTheStreamWhenTheUpstreamCloses() throws {
        let harness = try StreamHarness(method: "GET", endsStream: true)
        harness.upstreamConnects()
        harness.upstreamDrains()
        harness.upstreamSends("HTTP/1.1 200 OK\r\n\r\nall of")
        harness.upstreamSends(" it")
        #expect(harness.shell.streamEnds == 0)
        harness.upstreamFails(.closed(tlsError: nil))
        #expect(harness.shell.streamHeads.first?.names == ["Date"])
        #expect(harness.shell.clientOutput == Array("all of it".utf8))
        #expect(harness.shell.streamEnds == 1)
        #expect(harness.record?.status == 200)
    }

    @Test(arguments: [
        ("HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n"),
        ("GET", "HTTP/1.1 204 No Content\r\n\r\n"),
        ("GET", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
    ])
    func aResponseWithoutBodyEndsTheStreamWithItsHead(method: String, response: String) throws {
        let harness = try StreamHarness(method: method, endsStream: true)
        harness.upstreamConnects()
        harness.upstreamDrains()
        harness.upstreamSends(response)
        let head = try #require(harness.shell.streamHeads.first)
        #expect(head.endsStream)
        #expect(method != "HEAD" || head.field("Content-Length") == "5000", "a HEAD keeps its length")
        #expect(harness.shell.streamEnds == 0, "no END_STREAM after a head that ended the stream")
        #expect(harness.shell.clientOutput.isEmpty)
        #expect(harness.exchange.outcome == .complete(keepAlive: false, linger: false))
    }

    /// The upstream answers before the body is read: the rest is not forwarded, and the
    /// client, still sending, is told to stop (`linger`: RST_STREAM NO_ERROR after).
    @Test func anEarlyAnswerTellsTheShellToResetTheStream() throws {
        let harness = try StreamHarness(fields: [("content-length", "3000")])
        harness.upstreamConnects()
        harness.clientSends(Self.body[..<500])
        harness.upstreamDrains()
        harness.upstreamSends(
            "HTTP/1.1 413 Payload Too Large\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbig!")
        #expect(harness.shell.streamHeads.map(\.status) == [413])
        #expect(harness.shell.streamHeads.first?.field("Connection") == nil)
        #expect(harness.shell.clientOutput == Array("big!".utf8))
        #expect(!harness.shell.clientReading)
        #expect(harness.exchange.outcome == .complete(keepAlive: false, linger: true))
        #expect(harness.exchange.streamReset == .noError)
        #expect(harness.shell.aborted == 1, "the upstream had an unfinished body")
    }
}
