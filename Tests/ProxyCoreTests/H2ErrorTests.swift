import HTTP1
import HTTPCore
import ProxyCore
import Testing

/// Errors, malformed requests, 100-continue and backpressure on an HTTP/2 stream.
@Suite struct H2ErrorTests {
    /// An error answer on a stream: one final head (no `Connection: close`) with the fields of
    /// `ErrorResponse.make`, the body as DATA, END_STREAM; `Outcome.refused`.
    static func expectAnswer(
        _ harness: StreamHarness, status: Int, bodyContains detail: String, reset: StreamResetCode?
    ) throws {
        let head = try #require(harness.shell.streamHeads.first)
        #expect(harness.shell.streamHeads.count == 1)
        #expect(head.status == status)
        #expect(!head.endsStream)
        #expect(head.field("Connection") == nil)
        #expect(head.field("X-Request-Id") == "h2-1")
        #expect(head.field("Date") == String(decoding: StreamHarness.date, as: UTF8.self))
        #expect(head.field("Content-Length") == String(harness.shell.clientOutput.count))
        let text = String(decoding: harness.shell.clientOutput, as: UTF8.self)
        #expect(text.hasPrefix("\(status) ") && text.contains(detail), "\(text)")
        #expect(!text.contains("HTTP/1.1"))
        #expect(harness.shell.streamEnds == 1)
        #expect(
            harness.shell.log.last(where: { ["sendClient", "endClientStream"].contains($0) })
                == "endClientStream")
        #expect(harness.exchange.outcome == .refused)
        #expect(harness.exchange.streamReset == reset, "RST_STREAM NO_ERROR while the client may still send")
        #expect(harness.record?.status == status)
    }

    @Test func aContentLengthOverTheLimitIs413BeforeAnyUpstream() throws {
        var limits = Limits()
        limits.bodyBytes = 100
        let harness = try StreamHarness(fields: [("content-length", "1000")], limits: limits)
        try Self.expectAnswer(harness, status: 413, bodyContains: "body_bytes", reset: .noError)
        #expect(harness.shell.connects.isEmpty)
    }

    /// Without a content-length the limit is met while streaming: the upstream, which had
    /// part of the body in chunks and no last chunk, is aborted.
    @Test func aBodyPastTheLimitWhileStreamingIs413AndTheUpstreamAborted() throws {
        var limits = Limits()
        limits.bodyBytes = 100
        let harness = try StreamHarness(limits: limits)
        harness.upstreamConnects()
        harness.clientSends(String(repeating: "a", count: 60))
        harness.upstreamDrains()
        harness.clientSends(String(repeating: "a", count: 60))
        try Self.expectAnswer(harness, status: 413, bodyContains: "body_bytes", reset: .noError)
        #expect(harness.shell.aborted == 1)
        let sent = DeclaredLengthTests.split(harness.shell.upstreamReceived).body
        #expect(dechunked(sent) == nil, "no complete chunked body upstream")
    }

    @Test func aRefusingCheckAnswers401WithItsFields() throws {
        var route = Route(pathPrefix: "/a")
        route.checks = [
            FixedCheck(
                answer: .refuse(
                    Refusal(status: 401, reason: "no token", fields: [.init("WWW-Authenticate", "Bearer")])))
        ]
        let harness = try StreamHarness(fields: [("content-length", "5")], routes: RouteTable([route]))
        harness.clientSends("hello")
        try Self.expectAnswer(harness, status: 401, bodyContains: "no token", reset: .noError)
        #expect(harness.shell.streamHeads.first?.field("WWW-Authenticate") == "Bearer")
        #expect(harness.shell.connects.isEmpty)
        #expect(harness.shell.upstreamReceived.isEmpty)
    }

    @Test func anUnreachableUpstreamIs502() throws {
        let harness = try StreamHarness(method: "GET", endsStream: true)
        harness.upstreamFails(.unreachable("connection refused"))
        try Self.expectAnswer(harness, status: 502, bodyContains: "502", reset: nil)
    }

    @Test func anUpstreamSilentTooLongIs504() throws {
        let harness = try StreamHarness(method: "GET", endsStream: true)
        harness.upstreamConnects()
        harness.upstreamDrains()
        harness.advance(by: Harness.timeouts.upstreamResponse + 1)
        try Self.expectAnswer(harness, status: 504, bodyContains: "did not answer in time", reset: nil)
        #expect(harness.shell.aborted == 1)
    }

    /// A response cut off by the upstream: `closeNow` (the shell resets the stream), no
    /// END_STREAM that would make the truncated body look whole.
    @Test func aResponseCutOffResetsTheStream() throws {
        let harness = try StreamHarness(method: "GET", endsStream: true)
        harness.upstreamConnects()
        harness.upstreamDrains()
        harness.upstreamSends("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nfive.")
        harness.upstreamFails(.closed(tlsError: nil))
        #expect(harness.shell.streamHeads.map(\.status) == [200])
        #expect(harness.shell.streamEnds == 0)
        #expect(harness.exchange.outcome == .closeNow)
        #expect(harness.exchange.streamReset == .internalError)
        #expect(harness.record?.status == 200 && harness.record?.error != nil)
    }

    @Test func aClientResetIs499AndAbortsTheUpstream() throws {
        let harness = try StreamHarness()
        harness.upstreamConnects()
        harness.clientSends("part")
        harness.clientResets()
        #expect(harness.exchange.outcome == .closeNow)
        #expect(harness.exchange.streamReset == nil, "the client reset it already")
        #expect(harness.shell.aborted == 1)
        #expect(harness.shell.streamHeads.isEmpty)
        #expect(harness.record?.status == 499)
    }

    @Test func aVerdictThatAbortsCancelsTheStream() throws {
        var route = Route(pathPrefix: "/a")
        route.checks = [FixedCheck(answer: .hold(milliseconds: 4_000))]
        let harness = try StreamHarness(routes: RouteTable([route]))
        harness.verdict(0, .abort)
        #expect(harness.exchange.outcome == .closeNow)
        #expect(harness.exchange.streamReset == .cancel)
        #expect(harness.shell.streamHeads.isEmpty && harness.shell.connects.isEmpty)
        #expect(harness.record?.status == 444)
    }

    /// A held request's DATA and END_STREAM wait in the input; released, the body goes whole.
    @Test func theStreamEndingWhileHeldIsReadOnceReleased() throws {
        var route = Route(pathPrefix: "/a")
        route.checks = [FixedCheck(answer: .hold(milliseconds: 4_000))]
        let harness = try StreamHarness(routes: RouteTable([route]))
        harness.clientSends("the whole body")
        harness.clientEndsStream()
        #expect(harness.shell.connects.isEmpty)
        harness.verdict(0, .release())
        harness.upstreamConnects()
        harness.upstreamDrains()
        let (head, sent) = DeclaredLengthTests.split(harness.shell.upstreamReceived)
        #expect((head + "\r\n").contains("\r\nContent-Length: 14\r\n"), "\(head)")
        #expect(sent == Array("the whole body".utf8))
    }

    /// A HEAD's error head ends the stream: its Content-Length counts a body not sent.
    @Test func anErrorToAHeadEndsTheStreamWithItsHead() throws {
        var route = Route(pathPrefix: "/a")
        route.methods = ["POST"]
        let harness = try StreamHarness(method: "HEAD", endsStream: true, routes: RouteTable([route]))
        let head = try #require(harness.shell.streamHeads.first)
        #expect(head.status == 405)
        #expect(head.endsStream)
        #expect(Int(head.field("Content-Length") ?? "") ?? 0 > 0)
        #expect(harness.shell.clientOutput.isEmpty)
        #expect(harness.shell.streamEnds == 0)
        #expect(harness.exchange.outcome == .refused)
        #expect(harness.exchange.streamReset == nil)
    }

    /// END_STREAM before the content-length's bytes (RFC 9113 §8.1.1): malformed, unanswered;
    /// the upstream, which had the head and part of the body, is aborted; logged as 400.
    @Test func theStreamEndingShortOfItsContentLengthIsMalformed() throws {
        let harness = try StreamHarness(fields: [("content-length", "10")])
        harness.upstreamConnects()
        harness.clientSends("abcd")
        harness.upstreamDrains()
        #expect(harness.exchange.wantsMoreBody(input: harness.shell.clientInput))
        harness.clientEndsStream()
        #expect(harness.exchange.outcome == .malformed)
        #expect(harness.exchange.streamReset == .protocolError)
        #expect(harness.shell.aborted == 1)
        #expect(harness.shell.streamHeads.isEmpty && harness.shell.clientOutput.isEmpty)
        let (head, sent) = DeclaredLengthTests.split(harness.shell.upstreamReceived)
        #expect(head.contains("Content-Length: 10") && sent == Array("abcd".utf8), "never the whole request")
        #expect(harness.record?.status == 400)
        #expect(harness.record?.error == "the stream ended before the request's content-length")
    }

    /// Bytes still buffered count: a short body is found even while reading is paused.
    @Test func theStreamEndingShortWhilePausedIsMalformed() throws {
        let harness = try StreamHarness(fields: [("content-length", "5000")], highWater: 64)
        harness.upstreamConnects()
        harness.clientSends(String(repeating: "x", count: 4_000))
        #expect(!harness.shell.clientReading)
        harness.clientEndsStream()
        #expect(harness.exchange.outcome == .malformed)
        #expect(harness.shell.aborted == 1)
    }

    @Test func moreDataThanTheContentLengthIsMalformed() throws {
        let harness = try StreamHarness(fields: [("content-length", "4")])
        harness.upstreamConnects()
        harness.clientSends("ab")
        #expect(harness.exchange.wantsMoreBody(input: harness.shell.clientInput))
        harness.clientSends("cd")
        #expect(!harness.exchange.wantsMoreBody(input: harness.shell.clientInput))
        #expect(harness.exchange.isActive)
        harness.clientSends("e")
        #expect(harness.exchange.outcome == .malformed)
        #expect(harness.shell.aborted == 1)
        #expect(harness.record?.status == 400)
        #expect(harness.record?.error == "more DATA than the request's content-length")
    }

    /// `content-length: 0` on a stream still open: a DATA byte is past its end. The request is
    /// whole only with its END_STREAM, so the upstream was never asked for (issue 26: it used to
    /// receive the whole request, `Content-Length: 0`, and then be aborted).
    @Test func dataAfterAZeroContentLengthIsMalformed() throws {
        let harness = try StreamHarness(fields: [("content-length", "0")])
        #expect(!harness.exchange.wantsMoreBody(input: harness.shell.clientInput))
        harness.upstreamConnects()
        harness.clientSends("x")
        #expect(harness.exchange.outcome == .malformed)
        #expect(harness.shell.connects.isEmpty && harness.shell.upstreamReceived.isEmpty)
    }

    @Test func aContentLengthOnAStreamThatEndedWithItsHeadersIsRefused() throws {
        let head = RequestHead(
            method: "POST", target: "/a", version: .http2, headers: HeaderFields([("content-length", "3")]))
        #expect(throws: HTTP1Error(.invalidContentLength)) {
            try MessageFraming.http2Request(head, endsStream: true)
        }
        #expect(try MessageFraming.http2Request(head, endsStream: false) == .length(3))
        let twice = RequestHead(
            method: "POST", target: "/a", version: .http2,
            headers: HeaderFields([("content-length", "3"), ("content-length", "3")]))
        #expect(throws: HTTP1Error(.invalidContentLength)) {
            try MessageFraming.http2Request(twice, endsStream: false)
        }
        let bare = RequestHead(method: "POST", target: "/a", version: .http2)
        #expect(try MessageFraming.http2Request(bare, endsStream: false) == .untilEndOfStream)
        #expect(try MessageFraming.http2Request(bare, endsStream: true) == BodyFraming.none)
    }

    @Test func expectContinueGivesAStatus100Head() throws {
        let harness = try StreamHarness(fields: [("content-length", "3"), ("expect", "100-continue")])
        #expect(harness.shell.streamHeads == [StreamResponseHead.continue])
        #expect(harness.shell.clientOutput.isEmpty)
        harness.upstreamConnects()
        harness.clientSends("abc")
        harness.clientEndsStream()
        harness.upstreamDrains()
        #expect(DeclaredLengthTests.split(harness.shell.upstreamReceived).head.contains("Expect") == false)
        harness.upstreamSends(Wire.ok)
        #expect(harness.shell.streamHeads.map(\.status) == [100, 200])
        #expect(harness.shell.streamEnds == 1)
    }

    @Test func aSlowUpstreamStopsConsumingTheStreamUntilItDrains() throws {
        let harness = try StreamHarness(fields: [("content-length", "1000")], highWater: 64)
        harness.upstreamConnects()
        var sent = 0
        var pauses = 0
        while sent < 1_000 {
            if !harness.shell.clientReading {
                pauses += 1
                #expect(harness.shell.upstreamOutput.count > 64, "paused only above the watermark")
                harness.upstreamDrains()
                #expect(harness.shell.clientReading, "the pause is followed by its resume")
            }
            harness.clientSends(String(repeating: "b", count: 100))
            sent += 100
        }
        #expect(pauses >= 9)
        harness.clientEndsStream()
        while harness.shell.clientInput.count > 0 || !harness.shell.upstreamOutput.isEmpty {
            harness.upstreamDrains()
        }
        let sentBody = DeclaredLengthTests.split(harness.shell.upstreamReceived).body
        #expect(sentBody == Array(String(repeating: "b", count: 1_000).utf8))
        harness.upstreamSends(Wire.ok)
        #expect(harness.record?.status == 200)
    }

    @Test func aSlowClientPausesTheUpstreamUntilItDrains() throws {
        let harness = try StreamHarness(method: "GET", endsStream: true, highWater: 64)
        harness.upstreamConnects()
        harness.upstreamSends("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
        var pauses = 0
        for _ in 0..<10 {
            harness.upstreamSends(String(repeating: "r", count: 100))
            #expect(
                harness.exchange.isActive == false
                    || harness.shell.upstreamReading == (harness.shell.clientOutput.count <= 64))
            while !harness.shell.upstreamReading {
                pauses += 1
                harness.clientDrains()
                #expect(harness.shell.upstreamReading == (harness.shell.clientOutput.count <= 64))
            }
        }
        harness.clientDrains()
        #expect(pauses >= 9)
        #expect(harness.shell.clientText == String(repeating: "r", count: 1_000))
        #expect(harness.shell.streamEnds == 1)
        #expect(harness.shell.released == 1)
    }
}
