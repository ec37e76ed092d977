import Testing

/// The rule the hostile and fault suites use to say "the upstream got no complete request"
/// sees a complete one whatever its framing, and only then.
@Suite struct ForwardedRequestTests {
    static let body = "--FG\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nx\r\n--FG--\r\n"
    static let head = "POST /u HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data; boundary=\"FG\"\r\n"

    @Test func aContentLengthBodyIsCompleteAtItsLength() {
        let whole = Self.head + "Content-Length: \(Self.body.utf8.count)\r\n\r\n" + Self.body
        #expect(ForwardedRequest(Array(whole.utf8)).isComplete)
        #expect(!ForwardedRequest(Array(whole.utf8.dropLast(9))).isComplete)
        // Short of its length but with the close delimiter: complete for a multipart reader.
        let padded = Self.head + "Content-Length: 1000\r\n\r\n" + Self.body
        #expect(ForwardedRequest(Array(padded.utf8)).isComplete)
    }

    @Test func aChunkedBodyIsCompleteAtItsCloseDelimiterWhereverTheChunksSplitIt() {
        let bytes = Array(Self.body.utf8)
        for cut in 1..<bytes.count {
            let chunks = [bytes[..<cut], bytes[cut...]].map {
                String($0.count, radix: 16) + "\r\n" + String(decoding: $0, as: UTF8.self) + "\r\n"
            }
            let request = Self.head + "Transfer-Encoding: chunked\r\n\r\n" + chunks.joined()
            #expect(ForwardedRequest(Array(request.utf8)).isComplete, "split at \(cut)")
        }
        let withoutClose = Self.head + "Transfer-Encoding: chunked\r\n\r\n" + "3\r\n--F\r\n0\r\n\r\n"
        #expect(!ForwardedRequest(Array(withoutClose.utf8)).isComplete)
    }

    @Test func aHeadAloneIsIncomplete() {
        #expect(!ForwardedRequest(Array((Self.head + "Content-Length: 5\r\n").utf8)).isComplete)
        #expect(!ForwardedRequest([]).isComplete)
    }
}
