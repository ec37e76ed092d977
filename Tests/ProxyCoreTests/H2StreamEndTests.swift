import HTTP1
import HTTPCore
import ProxyCore
import Testing
import UploadRules

/// An HTTP/2 stream's request is whole upstream only with the client's END_STREAM, and a stream
/// that goes silent times out as an HTTP/1.1 connection does (issue 26): a body exactly its
/// `content-length` long keeps its final byte until END_STREAM, so DATA that comes after it
/// never finds a whole request upstream; a stream silent for `timeouts.idle` gets 408 and its
/// upstream is aborted.
@Suite struct H2StreamEndTests {
    /// The upstream's request head and body.
    func split(_ harness: StreamHarness) -> (head: String, body: [UInt8]) {
        DeclaredLengthTests.split(harness.shell.upstreamReceived)
    }

    // MARK: the final byte waits for END_STREAM

    @Test func aBodyItsLengthLongKeepsItsLastByteUntilEndStream() throws {
        let harness = try StreamHarness(fields: [("content-length", "4")])
        harness.upstreamConnects()
        harness.clientSends("abcd")
        harness.upstreamDrains()
        #expect(split(harness).body == Array("abc".utf8), "the last byte waits")
        #expect(harness.shell.clientInput.count == 1)
        harness.clientEndsStream()
        harness.upstreamDrains()
        #expect(split(harness).body == Array("abcd".utf8))
        harness.upstreamSends(Wire.ok)
        #expect(harness.record?.status == 200)
    }

    /// Every split of the body into DATA frames, then one byte more (after an empty DATA frame
    /// or not): malformed, and the upstream never had the whole request.
    @Test(arguments: [1, 2, 3, 4])
    func aByteAfterTheContentLengthFindsNoWholeRequestUpstream(cut: Int) throws {
        for emptyFrameFirst in [false, true] {
            let body = Array("abcd".utf8)
            let harness = try StreamHarness(fields: [("content-length", "4")])
            harness.upstreamConnects()
            harness.clientSends(body[..<cut])
            harness.clientSends(body[cut...])
            harness.upstreamDrains()
            if emptyFrameFirst { harness.clientSends([UInt8]()) }
            harness.clientSends("e")
            harness.upstreamDrains()
            #expect(harness.exchange.outcome == .malformed)
            #expect(harness.exchange.streamReset == .protocolError)
            #expect(harness.shell.aborted == 1)
            let (head, sent) = split(harness)
            #expect(head.contains("Content-Length: 4") && sent == Array("abc".utf8), "cut \(cut)")
            #expect(harness.record?.status == 400)
        }
    }

    /// `content-length: 0` on a stream still open: nothing goes upstream before END_STREAM;
    /// with it, the request goes whole.
    @Test func aZeroLengthBodyGoesWithItsEndStream() throws {
        let harness = try StreamHarness(fields: [("content-length", "0")])
        #expect(harness.shell.connects.isEmpty)
        harness.clientEndsStream()
        #expect(harness.shell.connects.count == 1)
        harness.upstreamConnects()
        harness.upstreamDrains()
        #expect(split(harness).head.contains("Content-Length: 0"))
        harness.upstreamSends(Wire.ok)
        #expect(harness.record?.status == 200)
    }

    /// A body the rules re-encode: the close of the new body (the last chunk) waits for
    /// END_STREAM too, and a byte past the length aborts the upstream before it.
    @Test func aRewrittenBodyIsNotClosedUpstreamBeforeEndStream() throws {
        let body = H2MultipartTests.body
        for extra in [false, true] {
            let harness = try StreamHarness(
                path: "/u",
                fields: [
                    ("content-type", "multipart/form-data; boundary=b"),
                    ("content-length", String(body.count)),
                ],
                routes: H2MultipartTests.routes(.stream), highWater: 1 << 20)
            harness.upstreamConnects()
            harness.clientSends(body)
            harness.upstreamDrains()
            #expect(harness.exchange.isActive)
            #expect(split(harness).body.suffix(5) != Array("0\r\n\r\n".utf8), "not closed before END_STREAM")
            if extra {
                harness.clientSends("x")
                #expect(harness.exchange.outcome == .malformed)
                #expect(harness.shell.aborted == 1)
                #expect(split(harness).body.suffix(5) != Array("0\r\n\r\n".utf8))
            } else {
                harness.clientEndsStream()
                harness.upstreamDrains()
                #expect(split(harness).body.suffix(5) == Array("0\r\n\r\n".utf8))
            }
        }
    }

    // MARK: a silent stream times out

    /// Silence for `timeouts.idle` after part of the body: 408, RST_STREAM NO_ERROR after it,
    /// the upstream (which has a partial request) aborted, one log line.
    @Test func aSilentStreamGets408AndItsUpstreamIsAborted() throws {
        let harness = try StreamHarness(fields: [("content-length", "100")])
        harness.upstreamConnects()
        harness.clientSends(String(repeating: "x", count: 10))
        harness.advance(by: Harness.timeouts.idle - 1)
        #expect(harness.exchange.isActive)
        harness.advance(by: 1)
        #expect(harness.exchange.outcome == .refused)
        #expect(harness.exchange.streamReset == .noError)
        #expect(harness.shell.streamHeads.map(\.status) == [408])
        #expect(harness.shell.aborted == 1)
        #expect(harness.record?.status == 408)
        #expect(harness.record?.error == "client too slow")
        #expect(harness.shell.timers.isEmpty, "every timer cancelled")
    }

    /// DATA moves the deadline; only a whole period of silence counts.
    @Test func dataKeepsTheStreamAlive() throws {
        let harness = try StreamHarness(fields: [("content-length", "100")])
        harness.upstreamConnects()
        for _ in 0..<5 {
            harness.advance(by: Harness.timeouts.idle - 100)
            harness.clientSends("x")
            harness.upstreamDrains()
        }
        #expect(harness.exchange.isActive)
        harness.advance(by: Harness.timeouts.idle)
        #expect(harness.record?.status == 408)
    }

    /// A stream paused for a slow upstream (its window shut) is not silent: its time starts
    /// again once it may send.
    @Test func aPausedStreamIsNotSilent() throws {
        let harness = try StreamHarness(fields: [("content-length", "10000")], highWater: 64)
        harness.upstreamConnects()
        harness.clientSends(String(repeating: "x", count: 4_000))
        #expect(!harness.shell.clientReading)
        harness.advance(by: Harness.timeouts.idle * 3)
        #expect(harness.exchange.isActive)
        while !harness.shell.clientReading { harness.upstreamDrains() }
        harness.advance(by: Harness.timeouts.idle - 1)
        #expect(harness.exchange.isActive)
        harness.advance(by: 1)
        #expect(harness.record?.status == 408)
    }

    /// After END_STREAM the client has nothing more to send: no idle timer runs (the upstream's
    /// response timer does).
    @Test func anEndedStreamHasNoIdleTimer() throws {
        let harness = try StreamHarness(fields: [("content-length", "3")])
        #expect(harness.shell.timers[.idle] != nil)
        harness.upstreamConnects()
        harness.clientSends("abc")
        harness.clientEndsStream()
        #expect(harness.shell.timers[.idle] == nil)
        harness.upstreamDrains()
        harness.advance(by: Harness.timeouts.idle * 2)
        #expect(harness.record?.status == 504, "the upstream's timeout, not the client's")
    }
}
