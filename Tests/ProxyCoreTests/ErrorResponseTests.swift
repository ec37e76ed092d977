import HTTP1
import HTTPCore
import ProxyCore
import Testing

/// `ErrorResponse.make` (any transport) and the HTTP/1.1 serializer built on it: the HTTP/1
/// bytes are those FormGate always wrote, `Connection: close` included; `make` has the same
/// fields without it.
@Suite struct ErrorResponseTests {
    static let date = Array("Tue, 01 Dec 2026 18:00:00 GMT".utf8)
    static let error = ProxyError(.payloadTooLarge, detail: "body larger than limits.body_bytes")
    static let text = "413 Content Too Large: body larger than limits.body_bytes\n"

    @Test func theHTTP1AnswerIsByteExact() {
        var sink = ByteArraySink()
        let request = RequestHead(method: "POST", target: "/a")
        ErrorResponse.write(Self.error, request: request, requestID: "r1", date: Self.date, into: &sink)
        #expect(
            String(decoding: sink.bytes, as: UTF8.self)
                == "HTTP/1.1 413 Content Too Large\r\nContent-Type: text/plain; charset=utf-8\r\n"
                + "Content-Length: \(Self.text.utf8.count)\r\nConnection: close\r\n"
                + "Date: Tue, 01 Dec 2026 18:00:00 GMT\r\nX-Request-Id: r1\r\n\r\n" + Self.text)
    }

    @Test func makeHasTheFieldsWithoutConnectionClose() {
        let request = RequestHead(method: "POST", target: "/a", version: .http2)
        let answer = ErrorResponse.make(Self.error, request: request, requestID: "r1", date: Self.date)
        #expect(answer.status == 413)
        #expect(
            answer.headers.map(\.nameString) == ["Content-Type", "Content-Length", "Date", "X-Request-Id"])
        #expect(answer.headers["Content-Length"] == String(Self.text.utf8.count))
        #expect(answer.body == Array(Self.text.utf8))
    }

    /// A HEAD gets the fields of the answer, its length included, and no body.
    @Test(arguments: [false, true])
    func aHeadGetsNoBody(http2: Bool) {
        let request = RequestHead(method: "HEAD", target: "/a", version: http2 ? .http2 : .http11)
        let answer = ErrorResponse.make(Self.error, request: request, requestID: nil, date: Self.date)
        #expect(answer.body.isEmpty)
        #expect(answer.headers["Content-Length"] == String(Self.text.utf8.count))
        var sink = ByteArraySink()
        ErrorResponse.write(Self.error, request: request, requestID: nil, date: Self.date, into: &sink)
        #expect(String(decoding: sink.bytes, as: UTF8.self).hasSuffix("\r\n\r\n"))
    }
}
