import HTTP1
import HTTPCore
import Testing

@Suite struct FramingTests {
    func framing(_ fields: [(String, String)], version: HTTPVersion = .http11) throws(HTTP1Error)
        -> BodyFraming
    {
        try MessageFraming.request(
            RequestHead(
                method: "POST", target: "/", version: version, headers: HeaderFields([("Host", "a")] + fields)
            ))
    }

    @Test func requestFraming() throws {
        #expect(try framing([]) == .none)
        #expect(try framing([("Content-Length", "0")]) == .none)
        #expect(try framing([("Content-Length", "42")]) == .length(42))
        #expect(try framing([("Transfer-Encoding", "chunked")]) == .chunked)
        #expect(try framing([("Transfer-Encoding", "Chunked")]) == .chunked)
    }

    static let smuggling: [([(String, String)], HTTP1Error.Reason)] = [
        ([("Content-Length", "4"), ("Transfer-Encoding", "chunked")], .contentLengthWithTransferEncoding),
        ([("Transfer-Encoding", "chunked"), ("Content-Length", "4")], .contentLengthWithTransferEncoding),
        ([("Content-Length", "4"), ("Content-Length", "5")], .invalidContentLength),
        ([("Content-Length", "4"), ("Content-Length", "4")], .invalidContentLength),
        ([("Content-Length", "4, 4")], .invalidContentLength),
        ([("Content-Length", "+4")], .invalidContentLength),
        ([("Content-Length", "-1")], .invalidContentLength),
        ([("Content-Length", "0x10")], .invalidContentLength),
        ([("Content-Length", "4 4")], .invalidContentLength),
        ([("Content-Length", "")], .invalidContentLength),
        ([("Content-Length", "99999999999999999999")], .invalidContentLength),
        ([("Transfer-Encoding", "gzip, chunked")], .unsupportedTransferEncoding),
        ([("Transfer-Encoding", "chunked, gzip")], .unsupportedTransferEncoding),
        ([("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "chunked")], .unsupportedTransferEncoding),
        ([("Transfer-Encoding", "chunked, chunked")], .unsupportedTransferEncoding),
        ([("Transfer-Encoding", "xchunked")], .unsupportedTransferEncoding),
        ([("Transfer-Encoding", "chunked;q=1")], .unsupportedTransferEncoding),
        ([("Transfer-Encoding", "identity")], .unsupportedTransferEncoding),
        ([("Transfer-Encoding", "")], .unsupportedTransferEncoding),
        ([("Transfer-Encoding", "\"chunked\"")], .unsupportedTransferEncoding),
    ]

    @Test(arguments: smuggling)
    func refusesAmbiguousFraming(_ fields: [(String, String)], _ reason: HTTP1Error.Reason) {
        #expect(throws: HTTP1Error(reason)) { try framing(fields) }
    }

    @Test func transferEncodingInHTTP10IsRefused() {
        #expect(throws: HTTP1Error(.unsupportedTransferEncoding)) {
            try framing([("Transfer-Encoding", "chunked")], version: .http10)
        }
    }

    @Test func responseFraming() throws {
        func response(_ status: Int, _ fields: [(String, String)], method: String = "GET") throws
            -> BodyFraming
        {
            try MessageFraming.response(
                ResponseHead(status: status, reason: "", headers: HeaderFields(fields)), requestMethod: method
            )
        }
        #expect(try response(200, [("Content-Length", "5")], method: "HEAD") == .none)
        #expect(try response(204, [("Content-Length", "5")]) == .none)
        #expect(try response(304, []) == .none)
        #expect(try response(101, []) == .none)
        #expect(try response(200, [("Content-Length", "5")]) == .length(5))
        #expect(try response(200, [("Transfer-Encoding", "chunked"), ("Content-Length", "5")]) == .chunked)
        #expect(try response(200, [("Transfer-Encoding", "gzip")]) == .untilClose)
        #expect(try response(200, []) == .untilClose)
        #expect(throws: HTTP1Error.self) {
            try response(200, [("Content-Length", "5"), ("Content-Length", "6")])
        }
    }

    @Test func hopByHopRemoval() {
        var headers = HeaderFields([
            ("Connection", "keep-alive, X-Secret"), ("Keep-Alive", "timeout=5"), ("X-Secret", "1"),
            ("TE", "trailers"),
            ("Transfer-Encoding", "chunked"), ("Upgrade", "h2c"), ("Proxy-Connection", "x"), ("Trailer", "X"),
            ("Content-Type", "text/plain"),
        ])
        headers.removeHopByHop()
        #expect(headers.fields.map(\.nameString) == ["Content-Type"])
    }
}
