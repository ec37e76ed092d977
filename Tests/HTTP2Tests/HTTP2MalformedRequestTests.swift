import HTTP2
import HTTPCore
import Testing

/// Requests that break RFC 9113 §8 are answered RST_STREAM PROTOCOL_ERROR by the session
/// and reported; the connection goes on.
@Suite struct HTTP2MalformedRequestTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var fields: [(String, String)]
        var reason: HTTP2MalformedReason
        var testDescription: String { name }
    }

    static let valid = FrameWriter.request()

    static let cases: [Case] = [
        Case(name: "uppercase name", fields: valid + [("Content-Type", "text/plain")], reason: .invalidField),
        Case(name: "missing :path", fields: Array(valid.dropLast()), reason: .invalidMessage),
        Case(name: "duplicated :method", fields: [(":method", "GET")] + valid, reason: .invalidField),
        Case(
            name: "pseudo after regular",
            fields: Array(valid.dropLast()) + [("accept", "*/*"), (":path", "/")],
            reason: .invalidField),
        Case(
            name: "connection header", fields: valid + [("connection", "keep-alive")], reason: .invalidField),
        Case(
            name: "transfer-encoding", fields: valid + [("transfer-encoding", "chunked")],
            reason: .invalidField),
        Case(name: "te: gzip", fields: valid + [("te", "gzip")], reason: .invalidField),
        Case(name: "unknown pseudo", fields: valid + [(":foo", "bar")], reason: .invalidField),
        Case(name: "response pseudo", fields: [(":status", "200")] + valid, reason: .invalidField),
        Case(name: "space in name", fields: valid + [("x foo", "bar")], reason: .invalidName),
        Case(name: "value with a leading space", fields: valid + [("x-a", " padded")], reason: .invalidValue),
        Case(
            name: "host differs", fields: valid + [("host", "other.test")], reason: .hostDiffersFromAuthority),
        Case(
            name: "CONNECT", fields: [(":method", "CONNECT"), (":authority", "example.test:443")],
            reason: .connectMethod),
    ]

    @Test(arguments: cases)
    func isResetWithProtocolError(_ malformed: Case) throws {
        let link = try RawLink()
        link.writer.headers(stream: 1, malformed.fields)
        try link.send()
        let resets = link.frames(ofType: Frame.rstStream)
        #expect(resets.map(\.streamID) == [1])
        #expect(resets.first?.errorCode == HTTP2ErrorCode.protocolError.rawValue)
        #expect(link.events.first == .malformed(streamID: 1, reason: malformed.reason))
        #expect(!link.events.contains { if case .request = $0 { true } else { false } })
        // The connection is fine: the next request is served.
        link.writer.headers(stream: 3, Self.valid)
        try link.send()
        #expect(link.events.contains { if case .request(3, _, true) = $0 { true } else { false } })
        #expect(link.frames(ofType: Frame.goaway).isEmpty)
        // The refused stream's record is gone once its `.closed` was taken.
        #expect(link.events.contains(.closed(streamID: 1, code: .protocolError)))
        #expect(link.server.streamRecordCount == 1)
    }

    @Test func aContentLengthTheDataDoesNotMatchIsMalformed() throws {
        let link = try RawLink()
        link.writer.headers(
            stream: 1, FrameWriter.request(method: "POST") + [("content-length", "10")], endStream: false)
        link.writer.data(stream: 1, Array(repeating: 0x61, count: 4), endStream: true)
        try link.send()
        #expect(link.events.contains(.malformed(streamID: 1, reason: .invalidMessage)))
        #expect(
            link.frames(ofType: Frame.rstStream).first?.errorCode == HTTP2ErrorCode.protocolError.rawValue)
        #expect(!link.events.contains(.endStream(streamID: 1)))
    }

    @Test func trailersAreAcceptedAndIgnored() throws {
        let link = try RawLink()
        link.writer.headers(stream: 1, FrameWriter.request(method: "POST"), endStream: false)
        link.writer.data(stream: 1, Array("abc".utf8))
        link.writer.headers(stream: 1, [("x-checksum", "123")], endStream: true)
        try link.send()
        #expect(link.events.count == 3)
        #expect(link.events.dropFirst().first == .data(streamID: 1, count: 3))
        #expect(link.events.last == .endStream(streamID: 1))
        #expect(link.frames(ofType: Frame.rstStream).isEmpty)
    }
}
