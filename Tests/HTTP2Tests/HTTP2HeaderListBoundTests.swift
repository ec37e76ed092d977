import HTTP2
import HTTPCore
import Testing

/// Header blocks that decode to far more than they take on the wire (HPACK references to one
/// dynamic-table entry, issue 26 item 5): the session stops decoding them with checks and
/// callbacks once the list passes twice `maxHeaderListSize`, resets the stream, and its HPACK
/// table stays in step for the streams that follow.
@Suite struct HTTP2HeaderListBoundTests {
    static let limit: UInt32 = 4096
    /// One 1,000-byte field, then a reference to it (one byte) per repetition.
    static let amplified = [(String, String)](
        repeating: ("x-amp", String(repeating: "a", count: 1000)), count: 5000)

    static func link() throws -> RawLink {
        var settings = HTTP2Settings()
        settings.maxHeaderListSize = limit
        return try RawLink(settings: settings)
    }

    static func resets(_ link: RawLink, stream: Int32) -> [UInt32] {
        link.frames(ofType: Frame.rstStream).filter { $0.streamID == stream }.map(\.errorCode)
    }

    @Test func aBlockOfRepeatedReferencesIsResetPastTwiceTheLimit() throws {
        let link = try Self.link()
        link.writer.headers(stream: 1, FrameWriter.request(method: "POST") + Self.amplified)
        try link.send()
        #expect(Self.resets(link, stream: 1) == [HTTP2ErrorCode.enhanceYourCalm.rawValue])
        #expect(link.frames(ofType: Frame.headers).isEmpty, "a 431 was sent on a reset stream")
        #expect(link.frames(ofType: Frame.goaway).isEmpty)
        #expect(link.events.first == .headersTooLarge(streamID: 1))
        #expect(link.events.contains(.closed(streamID: 1, code: .enhanceYourCalm)))
    }

    /// The block was decoded to its end without callbacks: a later block that refers to the
    /// same table entry decodes to the same field.
    @Test func theTableStaysInStepAfterTheReset() throws {
        let link = try Self.link()
        link.writer.headers(stream: 1, FrameWriter.request(method: "POST") + Self.amplified)
        link.writer.headers(stream: 3, FrameWriter.request() + [Self.amplified[0]])
        try link.send()
        let head = link.events.compactMap { event -> HTTP2RequestHead? in
            if case .request(3, let head, true) = event { head } else { nil }
        }.first
        #expect(head?.fields.first("x-amp") == Array(Self.amplified[0].1.utf8))
        #expect(link.frames(ofType: Frame.goaway).isEmpty)
    }

    /// Under twice the limit the block is decoded to its end and reported for a 431.
    @Test func aListUnderTwiceTheLimitIsStillAnswered() throws {
        let link = try Self.link()
        let fields = [(String, String)](repeating: ("x-amp", String(repeating: "a", count: 1000)), count: 7)
        link.writer.headers(stream: 1, FrameWriter.request(method: "POST") + fields)
        try link.send()
        #expect(link.events == [.headersTooLarge(streamID: 1)])
        try link.server.respond(streamID: 1, status: 431, fields: HeaderFields(), hasBody: false)
        try link.send()
        #expect(link.frames(ofType: Frame.headers).count == 1)
        #expect(Self.resets(link, stream: 1).isEmpty)
    }

    /// Trailers are ignored, but not decoded with checks past the limit either.
    @Test func amplifiedTrailersResetTheStream() throws {
        let link = try Self.link()
        link.writer.headers(stream: 1, FrameWriter.request(method: "POST"), endStream: false)
        link.writer.data(stream: 1, Array("abc".utf8))
        link.writer.headers(stream: 1, Self.amplified, endStream: true)
        link.writer.headers(stream: 3, FrameWriter.request() + [Self.amplified[0]])
        try link.send()
        #expect(Self.resets(link, stream: 1) == [HTTP2ErrorCode.enhanceYourCalm.rawValue])
        #expect(!link.events.contains(.endStream(streamID: 1)))
        #expect(link.events.contains(.closed(streamID: 1, code: .enhanceYourCalm)))
        #expect(link.events.contains { if case .request(3, _, true) = $0 { true } else { false } })
    }
}
