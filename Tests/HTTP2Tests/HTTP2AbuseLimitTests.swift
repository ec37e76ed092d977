import HTTP2
import HTTPCore
import Testing

/// The protocol's abuse limits (RFC 9113 and the CVEs), each provoked by raw frames.
@Suite struct HTTP2AbuseLimitTests {
    static func goaways(_ link: RawLink) -> [UInt32] {
        link.frames(ofType: Frame.goaway).map(\.errorCode)
    }

    @Test func rapidResetExhaustsTheBudgetAndEndsWithEnhanceYourCalm() throws {
        var settings = HTTP2Settings()
        settings.unansweredResetBudget = 10
        let link = try RawLink(settings: settings)
        for index in 0..<20 {
            let stream = Int32(1 + 2 * index)
            link.writer.headers(stream: stream, FrameWriter.request())
            link.writer.rstStream(stream: stream, code: HTTP2ErrorCode.cancel.rawValue)
        }
        try link.send()
        #expect(Self.goaways(link) == [HTTP2ErrorCode.enhanceYourCalm.rawValue])
        #expect(link.events.contains(.terminating(code: .enhanceYourCalm)))
        // The 11th reset tipped it: streams after it were not processed.
        #expect(link.frames(ofType: Frame.goaway).first?.lastStreamID == 21)
        #expect(!link.server.wantsRead)
        #expect(!link.server.wantsWrite)
    }

    /// With the defaults FormGate's budget (200) runs out before libnghttp2's bucket (1000).
    @Test func withTheDefaultsTheResetBudgetAnswersEnhanceYourCalm() throws {
        let link = try RawLink()
        for index in 0..<300 {
            let stream = Int32(1 + 2 * index)
            link.writer.headers(stream: stream, FrameWriter.request())
            link.writer.rstStream(stream: stream, code: HTTP2ErrorCode.cancel.rawValue)
        }
        try link.send()
        #expect(Self.goaways(link) == [HTTP2ErrorCode.enhanceYourCalm.rawValue])
        #expect(link.frames(ofType: Frame.goaway).first?.lastStreamID == 401)
    }

    @Test func answeredStreamsEarnTheBudgetBack() throws {
        var settings = HTTP2Settings()
        settings.unansweredResetBudget = 10
        let link = try RawLink(settings: settings)
        for round in 0..<6 {
            for index in 0..<8 {
                let stream = Int32(1 + 2 * (round * 16 + index))
                link.writer.headers(stream: stream, FrameWriter.request())
                link.writer.rstStream(stream: stream, code: HTTP2ErrorCode.cancel.rawValue)
            }
            let answered = (8..<16).map { Int32(1 + 2 * (round * 16 + $0)) }
            for stream in answered { link.writer.headers(stream: stream, FrameWriter.request()) }
            try link.send()
            for stream in answered {
                try link.server.respond(streamID: stream, status: 204, fields: HeaderFields(), hasBody: false)
            }
            try link.send()
        }
        #expect(Self.goaways(link).isEmpty)
        #expect(link.events.filter { if case .closed = $0 { true } else { false } }.count == 96)
        #expect(link.server.streamRecordCount == 0)
    }

    @Test func libnghttp2sResetRateLimitEndsTheConnection() throws {
        var settings = HTTP2Settings()
        settings.resetBurst = 5
        settings.resetRate = 1
        let link = try RawLink(settings: settings)
        for index in 0..<20 {
            let stream = Int32(1 + 2 * index)
            link.writer.headers(stream: stream, FrameWriter.request())
            link.writer.rstStream(stream: stream, code: HTTP2ErrorCode.cancel.rawValue)
        }
        try link.send()
        // libnghttp2's bucket answers INTERNAL_ERROR (FormGate's own budget, tighter by
        // default, answers ENHANCE_YOUR_CALM first); the 6th reset drains it.
        #expect(Self.goaways(link) == [HTTP2ErrorCode.internalError.rawValue])
        #expect(link.frames(ofType: Frame.goaway).first?.lastStreamID == 11)
        #expect(link.events.contains(.terminating(code: .internalError)))
    }

    @Test func aContinuationFloodIsAConnectionError() throws {
        let link = try RawLink()
        let block = link.writer.headerBlock(
            FrameWriter.request() + [("x-pad", String(repeating: "p", count: 64))])
        link.writer.frame(Frame.headers, flags: Frame.endStream, stream: 1, Array(block.prefix(1)))
        for byte in block.dropFirst() {
            link.writer.frame(Frame.continuation, stream: 1, [byte])
        }
        #expect(block.count > 20)
        #expect(
            throws: HTTP2Error(code: HTTP2Error.tooManyContinuations, operation: "nghttp2_session_mem_recv")
        ) {
            try link.send()
        }
        #expect(!link.events.contains { if case .request = $0 { true } else { false } })
    }

    @Test func continuationsWithinTheLimitAreOneHeaderBlock() throws {
        let link = try RawLink()
        let block = link.writer.headerBlock(FrameWriter.request())
        let pieces = stride(from: 0, to: block.count, by: (block.count + 8) / 9).map {
            Array(block[$0..<min($0 + (block.count + 8) / 9, block.count)])
        }
        link.writer.frame(Frame.headers, flags: Frame.endStream, stream: 1, pieces[0])
        for (index, piece) in pieces.enumerated().dropFirst() {
            link.writer.frame(
                Frame.continuation, flags: index == pieces.count - 1 ? Frame.endHeaders : 0, stream: 1, piece)
        }
        try link.send()
        #expect(link.events.contains { if case .request(1, _, true) = $0 { true } else { false } })
    }

    @Test func aSettingsFrameWithTooManyEntriesIsEnhanceYourCalm() throws {
        let link = try RawLink()
        link.writer.settings((0..<40).map { _ in (0x3, 100) })
        try link.send()
        #expect(Self.goaways(link) == [HTTP2ErrorCode.enhanceYourCalm.rawValue])
        #expect(link.events.contains(.terminating(code: .enhanceYourCalm)))
    }

    @Test(arguments: [false, true])
    func aPingOrSettingsFloodOfAClientThatDoesNotReadThrowsFlooded(settingsFrames: Bool) throws {
        var settings = HTTP2Settings()
        settings.maxOutboundAcks = 100
        let link = try RawLink(settings: settings)
        for _ in 0..<150 {
            if settingsFrames { link.writer.settings([]) } else { link.writer.ping() }
        }
        #expect(throws: HTTP2Error(code: HTTP2Error.flooded, operation: "nghttp2_session_mem_recv")) {
            try link.send()
        }
    }

    @Test func pingsOfAClientThatReadsAreAnswered() throws {
        var settings = HTTP2Settings()
        settings.maxOutboundAcks = 100
        let link = try RawLink(settings: settings)
        for _ in 0..<5 {
            for _ in 0..<50 { link.writer.ping() }
            try link.send()
        }
        #expect(link.frames(ofType: Frame.ping).filter { $0.flags == Frame.ack }.count == 250)
    }

    @Test func aWindowUpdateBeyondTwoToTheThirtyOneIsAFlowControlError() throws {
        let link = try RawLink()
        link.writer.windowUpdate(stream: 0, increment: 0x7fff_ffff)
        try link.send()
        #expect(Self.goaways(link) == [HTTP2ErrorCode.flowControlError.rawValue])
    }

    @Test func aStreamWindowOverflowResetsTheStream() throws {
        let link = try RawLink()
        link.writer.headers(stream: 1, FrameWriter.request(), endStream: false)
        link.writer.windowUpdate(stream: 1, increment: 0x7fff_ffff)
        try link.send()
        let resets = link.frames(ofType: Frame.rstStream)
        #expect(resets.map(\.errorCode) == [HTTP2ErrorCode.flowControlError.rawValue])
        #expect(Self.goaways(link).isEmpty)
    }

    /// libnghttp2 makes it a connection error (GOAWAY STREAM_CLOSED), stricter than the
    /// stream error RFC 9113 §5.1 asks for.
    @Test func dataAfterEndStreamIsStreamClosed() throws {
        let link = try RawLink()
        link.writer.headers(stream: 1, FrameWriter.request())
        link.writer.data(stream: 1, Array("late".utf8))
        try link.send()
        #expect(Self.goaways(link) == [HTTP2ErrorCode.streamClosed.rawValue])
        #expect(link.frames(ofType: Frame.goaway).first?.lastStreamID == 1)
        #expect(!link.events.contains { if case .data = $0 { true } else { false } })
    }

    @Test func aReusedStreamIDIsAConnectionError() throws {
        let link = try RawLink()
        link.writer.headers(stream: 1, FrameWriter.request())
        try link.send()
        try link.server.respond(streamID: 1, status: 204, fields: HeaderFields(), hasBody: false)
        try link.send()
        link.writer.headers(stream: 1, FrameWriter.request())
        try link.send()
        #expect(Self.goaways(link) == [HTTP2ErrorCode.streamClosed.rawValue])
        #expect(link.events.filter { if case .request = $0 { true } else { false } }.count == 1)
    }

    /// A new stream's id must exceed every id the client used (RFC 9113 §5.1.1): HEADERS on 3
    /// after 5 is a connection error PROTOCOL_ERROR, and nothing after it is served.
    /// (libnghttp2 1.52 alone ignores the block and serves 7.)
    @Test func aStreamIDBelowOneAlreadyUsedIsAConnectionError() throws {
        let link = try RawLink()
        link.writer.headers(stream: 5, FrameWriter.request())
        link.writer.headers(stream: 3, FrameWriter.request())
        link.writer.headers(stream: 7, FrameWriter.request())
        try link.send()
        let requests = link.events.compactMap { if case .request(let id, _, _) = $0 { id } else { nil } }
        #expect(requests == [5])
        #expect(Self.goaways(link) == [HTTP2ErrorCode.protocolError.rawValue])
    }

    /// HEADERS (trailers the client had in flight) on a stream this side reset are ignored,
    /// not taken for an id gone backwards (RFC 9113 §5.1, "closed").
    @Test func trailersOnAStreamThisSideResetAreIgnored() throws {
        let link = try RawLink()
        link.writer.headers(stream: 1, FrameWriter.request(method: "POST"), endStream: false)
        link.writer.headers(stream: 3, FrameWriter.request())
        try link.send()
        try link.server.reset(streamID: 1, code: .cancel)
        try link.send()
        link.writer.headers(stream: 1, [("x-trailer", "1")], endStream: true)
        link.writer.headers(stream: 5, FrameWriter.request())
        try link.send()
        let requests = link.events.compactMap { if case .request(let id, _, _) = $0 { id } else { nil } }
        #expect(requests == [1, 3, 5])
        #expect(Self.goaways(link).allSatisfy { $0 == HTTP2ErrorCode.noError.rawValue })
    }

    /// SETTINGS values RFC 9113 §6.5.2 forbids: ENABLE_PUSH 2, INITIAL_WINDOW_SIZE 2^31,
    /// MAX_FRAME_SIZE below 16384 and above 2^24-1.
    @Test(arguments: [
        (UInt16(0x2), UInt32(2), HTTP2ErrorCode.protocolError),
        (0x4, 0x8000_0000, .flowControlError),
        (0x5, 16383, .protocolError),
        (0x5, 1 << 24, .protocolError),
    ])
    func illegalSettingsValuesEndTheConnection(id: UInt16, value: UInt32, code: HTTP2ErrorCode) throws {
        let link = try RawLink()
        link.writer.settings([(id, value)])
        try link.send()
        #expect(Self.goaways(link) == [code.rawValue])
        #expect(link.events.contains(.terminating(code: code)))
    }

    @Test func streamsBeyondMaxConcurrentStreamsAreRefused() throws {
        var settings = HTTP2Settings()
        settings.maxConcurrentStreams = 2
        let link = try RawLink(settings: settings)
        for stream: Int32 in [1, 3, 5] {
            link.writer.headers(stream: stream, FrameWriter.request(), endStream: false)
        }
        try link.send()
        let resets = link.frames(ofType: Frame.rstStream)
        #expect(resets.map(\.streamID) == [5])
        #expect(resets.map(\.errorCode) == [HTTP2ErrorCode.refusedStream.rawValue])
        #expect(link.events.filter { if case .request = $0 { true } else { false } }.count == 2)
        #expect(link.server.streamRecordCount == 2)
    }
}
