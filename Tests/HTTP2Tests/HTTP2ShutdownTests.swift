import HTTP2
import HTTPCore
import Testing

/// Graceful shutdown: a GOAWAY notice, a PING round trip, then the final GOAWAY naming the
/// last stream; streams up to it finish, later ones are not served.
@Suite struct HTTP2ShutdownTests {
    @Test func anInFlightStreamFinishesAndNewOnesAreRefused() throws {
        let link = try RawLink()
        link.writer.headers(stream: 1, FrameWriter.request(method: "POST"), endStream: false)
        try link.send()
        try link.server.shutdown()
        let notice = try link.send()
        #expect(notice.filter { $0.type == Frame.goaway }.map(\.lastStreamID) == [0x7fff_ffff])
        let ping = try #require(notice.first { $0.type == Frame.ping && $0.flags == 0 })
        // A stream the client opened before it saw the notice is still served.
        link.writer.headers(stream: 3, FrameWriter.request())
        link.writer.ping(ack: true, ping.payload)
        let final = try link.send()
        let goaway = try #require(final.first { $0.type == Frame.goaway })
        #expect(goaway.lastStreamID == 3)
        #expect(goaway.errorCode == HTTP2ErrorCode.noError.rawValue)
        // After the final GOAWAY a new stream is ignored.
        link.writer.headers(stream: 5, FrameWriter.request())
        try link.send()
        let requests = link.events.compactMap { if case .request(let id, _, _) = $0 { id } else { nil } }
        #expect(requests == [1, 3])
        // The open streams finish; then the session wants nothing more.
        try link.server.respond(streamID: 3, status: 204, fields: HeaderFields(), hasBody: false)
        link.writer.data(stream: 1, Array("last bytes".utf8), endStream: true)
        try link.send()
        #expect(link.server.wantsRead)
        try link.server.respond(streamID: 1, status: 200, fields: HeaderFields(), hasBody: false)
        try link.send()
        #expect(link.events.contains(.endStream(streamID: 1)))
        #expect(link.events.contains(.data(streamID: 1, count: 10)))
        #expect(link.events.filter { if case .closed(_, .noError) = $0 { true } else { false } }.count == 2)
        #expect(!link.server.wantsRead)
        #expect(!link.server.wantsWrite)
    }

    @Test func goAwayEndsTheConnectionAtOnce() throws {
        let link = try RawLink()
        link.writer.headers(stream: 1, FrameWriter.request(), endStream: false)
        try link.send()
        try link.server.goAway(code: .enhanceYourCalm)
        let frames = try link.send()
        #expect(frames.map(\.type) == [Frame.goaway])
        #expect(frames.first?.lastStreamID == 1)
        #expect(frames.first?.errorCode == HTTP2ErrorCode.enhanceYourCalm.rawValue)
        #expect(link.events.last == .terminating(code: .enhanceYourCalm))
        #expect(!link.server.wantsRead)
        #expect(!link.server.wantsWrite)
    }

    @Test func aClientGoAwayIsReported() throws {
        let link = try RawLink()
        link.writer.frame(Frame.goaway, stream: 0, FrameWriter.word(0) + FrameWriter.word(0))
        try link.send()
        #expect(link.events == [.goaway(lastStreamID: 0, code: .noError)])
    }

    @Test func bytesThatAreNotAPrefaceThrow() throws {
        let link = try RawLink(preface: false)
        link.writer.frame(Frame.settings, stream: 0)
        link.writer.frame(Frame.settings, stream: 0)
        link.writer.frame(Frame.settings, stream: 0)
        #expect(throws: HTTP2Error(code: HTTP2Error.badClientMagic, operation: "nghttp2_session_mem_recv")) {
            try link.send()
        }
    }
}
