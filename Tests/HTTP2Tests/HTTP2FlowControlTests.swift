import HTTP2
import HTTPCore
import Testing

/// Flow control as backpressure: the caller's `consume` is the only thing that reopens a
/// stream's window.
@Suite struct HTTP2FlowControlTests {
    @Test(arguments: [Int32(65_535), 1 << 20])
    func anUploadStallsAtTheStreamWindowUntilConsumed(window: Int32) throws {
        var settings = HTTP2Settings()
        settings.initialStreamWindow = window
        let link = try ServerLink(settings: settings)
        let body = HTTP2ServerSessionTests.pattern(Int(window) * 3 + 12_345)
        let streamID = link.client.request(method: "POST", body: body)
        try link.pump()
        // Nothing consumed: the session holds exactly one window, the client keeps the rest.
        #expect(link.server.inboundCount(streamID: streamID) == Int(window))
        #expect(link.client.pendingUpload(streamID) == body.count - Int(window))
        // Reading the bytes out is not consuming them: the window stays closed.
        var received = ByteArraySink()
        link.server.readInbound(streamID: streamID, into: &received)
        try link.pump()
        #expect(received.bytes.count == Int(window))
        #expect(link.server.inboundCount(streamID: streamID) == 0)
        #expect(link.client.pendingUpload(streamID) == body.count - Int(window))
        // Each consume lets at most as many bytes in as it gave back.
        var rounds = 0
        while received.bytes.count < body.count {
            let before = received.bytes.count
            link.server.consume(streamID: streamID, count: Int(window) / 2)
            link.server.consume(streamID: streamID, count: Int(window) - Int(window) / 2)
            try link.pump()
            let arrived = link.server.readInbound(streamID: streamID, into: &received)
            #expect(arrived <= Int(window))
            #expect(received.bytes.count > before)
            rounds += 1
            if rounds > 10 { break }
        }
        #expect(received.bytes == body)
        #expect(rounds == 3)
        #expect(link.events.contains(.endStream(streamID: streamID)))
    }

    /// A consume reopens the window by what it gave back, not by what the session still
    /// holds: libnghttp2's count of bytes not acknowledged includes the held ones.
    @Test func aPartialConsumeLetsInOnlyWhatWasConsumed() throws {
        let window = 1 << 20
        var settings = HTTP2Settings()
        settings.initialStreamWindow = Int32(window)
        let link = try ServerLink(settings: settings)
        let body = HTTP2ServerSessionTests.pattern(window * 4)
        let streamID = link.client.request(method: "POST", body: body)
        try link.pump()
        var received = ByteArraySink()
        link.server.readInbound(streamID: streamID, into: &received)
        #expect(received.bytes.count == window)
        for round in 1...3 {
            // A quarter handed on, three quarters still held: a quarter more may come.
            link.server.consume(streamID: streamID, count: window / 4)
            try link.pump()
            #expect(link.server.readInbound(streamID: streamID, into: &received) == window / 4)
            #expect(link.client.pendingUpload(streamID) == body.count - window - round * window / 4)
        }
        #expect(received.bytes == Array(body.prefix(received.bytes.count)))
    }

    /// Partial consumes on one stream never let the streams together hold more than the
    /// connection window.
    @Test func partialConsumesKeepTheConnectionWindow() throws {
        let window = 1 << 20
        var settings = HTTP2Settings()
        settings.initialStreamWindow = Int32(window)
        settings.connectionWindow = Int32(window)
        let link = try ServerLink(settings: settings)
        let first = link.client.request(method: "POST", body: HTTP2ServerSessionTests.pattern(window * 3))
        try link.pump()
        #expect(link.server.inboundCount(streamID: first) == window)
        let second = link.client.request(
            method: "POST", body: HTTP2ServerSessionTests.pattern(window * 3, seed: 5))
        var consumed = 0
        for _ in 1...3 {
            var handedOn = ByteArraySink()
            link.server.readInbound(streamID: first, into: &handedOn, maxCount: window / 4)
            link.server.consume(streamID: first, count: handedOn.bytes.count)
            consumed += handedOn.bytes.count
            try link.pump()
            let held = link.server.inboundCount(streamID: first) + link.server.inboundCount(streamID: second)
            #expect(held == window)
        }
        #expect(consumed == 3 * window / 4)
    }

    /// Many stalled streams together hold at most the connection window.
    @Test func theConnectionWindowBoundsAllStreamsTogether() throws {
        var settings = HTTP2Settings()
        settings.initialStreamWindow = 65_535
        settings.connectionWindow = 1 << 20
        let link = try ServerLink(settings: settings)
        let streams = (0..<32).map { index in
            link.client.request(method: "POST", body: HTTP2ServerSessionTests.pattern(100_000, seed: index))
        }
        try link.pump()
        let held = streams.map { link.server.inboundCount(streamID: $0) }
        #expect(held.reduce(0, +) == 1 << 20)
        #expect(held.allSatisfy { $0 <= 65_535 })
    }

    @Test func aStalledStreamDoesNotStallTheOthers() throws {
        var settings = HTTP2Settings()
        settings.initialStreamWindow = 65_535
        let link = try ServerLink(settings: settings)
        let slow = link.client.request(method: "POST", body: HTTP2ServerSessionTests.pattern(500_000))
        let fast = link.client.request(
            method: "POST", body: HTTP2ServerSessionTests.pattern(500_000, seed: 9))
        var fastBytes = ByteArraySink()
        try link.pump { event in
            if case .data(fast, let count) = event {
                link.server.readInbound(streamID: fast, into: &fastBytes)
                link.server.consume(streamID: fast, count: count)
            }
        }
        #expect(fastBytes.bytes == HTTP2ServerSessionTests.pattern(500_000, seed: 9))
        #expect(link.server.inboundCount(streamID: slow) == 65_535)
    }

    @Test func bytesOfAResetStreamGiveTheConnectionWindowBack() throws {
        var settings = HTTP2Settings()
        settings.initialStreamWindow = 1 << 20
        settings.connectionWindow = 1 << 20
        let link = try ServerLink(settings: settings)
        let first = link.client.request(
            method: "POST", body: HTTP2ServerSessionTests.pattern(1 << 20), endBody: false)
        try link.pump()
        #expect(link.server.inboundCount(streamID: first) == 1 << 20)
        // The connection window is used up by a stream nobody consumes; the client resets it.
        link.client.reset(first, code: HTTP2ErrorCode.cancel.rawValue)
        try link.pump()
        #expect(link.events.contains(.closed(streamID: first, code: .cancel)))
        let second = link.client.request(method: "POST", body: HTTP2ServerSessionTests.pattern(300_000))
        try link.pump()
        #expect(link.server.inboundCount(streamID: second) == 300_000)
    }
}
