import HTTP1
import HTTPCore
import Testing

@Suite struct HeadParserTests {
    func request(_ text: String) throws(HTTP1Error) -> RequestHead {
        try HeadParser.parseRequest(Array(text.utf8))
    }

    @Test func parsesARequest() throws {
        let head = try request(
            "\r\nPOST /upload?x=1 HTTP/1.1\r\nHost: example.com:8080\r\nContent-Type:multipart/form-data; boundary=x\r\nX-Empty:\r\n\r\n"
        )
        #expect(head.method == "POST")
        #expect(head.target == "/upload?x=1")
        #expect(head.path == "/upload")
        #expect(head.version == .http11)
        #expect(head.headers["host"] == "example.com:8080")
        #expect(head.headers["content-type"] == "multipart/form-data; boundary=x")
        #expect(head.headers["X-Empty"] == "")
        #expect(head.keepAlive)
    }

    @Test func http10KeepAlive() throws {
        let head = try request("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(head.version == .http10)
        #expect(head.keepAlive)
        #expect(try !request("GET / HTTP/1.0\r\n\r\n").keepAlive)
        #expect(try !request("GET / HTTP/1.1\r\nHost: a\r\nConnection: Keep-Alive, close\r\n\r\n").keepAlive)
    }

    /// A bare LF may end a response line (RFC 9112 §2.2) but never a request line: a server
    /// behind the proxy may read the line differently.
    @Test func requestLinesEndInCRLF() throws {
        let cases: [(String, Int)] = [
            ("GET / HTTP/1.1\nHost: a\r\n\r\n", 14), ("GET / HTTP/1.1\r\nHost: a\n\r\n", 23),
            ("GET / HTTP/1.1\r\nHost: a\r\n\n", 25), ("\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", 0),
            ("\r\n\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", 2),
        ]
        for (text, offset) in cases {
            #expect(throws: HTTP1Error(.bareLineFeed, at: offset)) { try request(text) }
            let bytes = Array(text.utf8)
            for cut in 0...bytes.count {
                var scanner = HeadScanner(limit: 1000, requireCRLF: true)
                #expect(throws: HTTP1Error(.bareLineFeed, at: offset), "cut at \(cut)") {
                    if try scanner.scan(Array(bytes[..<cut])) == nil {
                        _ = try scanner.scan(Array(bytes[cut...]))
                    }
                }
            }
        }
        let response = try HeadParser.parseResponse(Array("HTTP/1.1 200 OK\nContent-Length: 0\n\n".utf8))
        #expect(response.headers["Content-Length"] == "0")
    }

    @Test func oneContentTypeOnly() throws {
        #expect(throws: HTTP1Error(.duplicateContentType)) {
            try request(
                "POST / HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\ncontent-type: text/plain\r\n\r\n")
        }
        #expect(
            try request("POST / HTTP/1.1\r\nHost: a\r\nContent-Type: a/b\r\n\r\n").headers["content-type"]
                == "a/b")
    }

    @Test func targetsAreNormalized() throws {
        #expect(
            try request("GET /x/../up%6coad//a?q=/../ HTTP/1.1\r\nHost: a\r\n\r\n").target
                == "/upload/a?q=/../")
        #expect(throws: HTTP1Error(.encodedSeparator, at: 15)) {
            try request("POST /static/..%2fupload HTTP/1.1\r\nHost: a\r\n\r\n")
        }
        #expect(throws: HTTP1Error(.targetAboveRoot, at: 13)) {
            try request("GET http://a/../upload HTTP/1.1\r\nHost: a\r\n\r\n")
        }
    }

    @Test func absoluteFormBecomesOriginForm() throws {
        let head = try request("GET http://Example.com:81/a?b HTTP/1.1\r\nHost: other\r\n\r\n")
        #expect(head.target == "/a?b")
        #expect(head.headers["Host"] == "Example.com:81")
        #expect(head.headers.count(of: "Host") == 1)
        #expect(try request("GET http://a//./upload HTTP/1.1\r\nHost: a\r\n\r\n").target == "/upload")
        #expect(try request("GET HTTP://a HTTP/1.1\r\nHost: a\r\n\r\n").target == "/")
        #expect(try request("GET http://a?x=1 HTTP/1.1\r\nHost: a\r\n\r\n").target == "/?x=1")
        #expect(try request("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n").target == "*")
    }

    @Test func serializesWithCRLF() throws {
        let head = try request("PUT /x HTTP/1.1\r\nHost: a\r\nX-A:  1 \r\n\r\n")
        #expect(
            String(decoding: head.serialized(), as: UTF8.self)
                == "PUT /x HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n\r\n")
    }

    static let refused: [(String, HTTP1Error.Reason)] = [
        ("GET  / HTTP/1.1\r\nHost: a\r\n\r\n", .invalidTarget),
        ("GET / HTTP/1.1 \r\nHost: a\r\n\r\n", .invalidVersion),
        ("GET /\r\nHost: a\r\n\r\n", .invalidStartLine),
        ("G@T / HTTP/1.1\r\nHost: a\r\n\r\n", .invalidMethod),
        ("GET / HTTP/2.0\r\nHost: a\r\n\r\n", .unsupportedVersion),
        ("GET / HTTP/0.9\r\nHost: a\r\n\r\n", .unsupportedVersion),
        ("GET / HTTP/1.10\r\nHost: a\r\n\r\n", .invalidVersion),
        ("GET / http/1.1\r\nHost: a\r\n\r\n", .invalidVersion),
        ("GET /a\u{7F} HTTP/1.1\r\nHost: a\r\n\r\n", .controlCharacter),
        ("GET /é HTTP/1.1\r\nHost: a\r\n\r\n", .invalidTarget),
        ("GET a HTTP/1.1\r\nHost: a\r\n\r\n", .invalidTarget),
        ("GET * HTTP/1.1\r\nHost: a\r\n\r\n", .invalidTarget),
        ("CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n", .invalidTarget),
        ("GET http://u@a/ HTTP/1.1\r\nHost: a\r\n\r\n", .invalidTarget),
        ("GET / HTTP/1.1\r\nHost: a\r\nX-A : 1\r\n\r\n", .whitespaceBeforeColon),
        ("GET / HTTP/1.1\r\nHost: a\r\nX A: 1\r\n\r\n", .invalidHeaderName),
        ("GET / HTTP/1.1\r\nHost: a\r\n: 1\r\n\r\n", .invalidHeaderName),
        ("GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n", .invalidHeaderName),
        ("GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n 2\r\n\r\n", .obsoleteLineFolding),
        ("GET / HTTP/1.1\r\n Host: a\r\n\r\n", .obsoleteLineFolding),
        ("GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r2\r\n\r\n", .controlCharacter),
        ("GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\u{0}\r\n\r\n", .controlCharacter),
        ("GET / HTTP/1.1\r\nHost: a\r\nX-A: \u{1B}[1m\r\n\r\n", .controlCharacter),
        ("GET / HTTP/1.1\r\n\r\n", .invalidHost),
        ("GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", .invalidHost),
        ("GET / HTTP/1.1\r\nHost: a b\r\n\r\n", .invalidHost),
        ("GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", .invalidHost),
        ("GET / HTTP/1.1\r\nHost: u@a\r\n\r\n", .invalidHost),
        ("GET / HTTP/1.1\r\nHost:\r\n\r\n", .invalidHost),
    ]

    @Test(arguments: refused)
    func refusesMalformedRequests(_ text: String, _ reason: HTTP1Error.Reason) {
        do {
            let head = try request(text)
            Issue.record("accepted: \(head)")
        } catch {
            #expect(error.reason == reason)
        }
    }

    @Test func limitsTheNumberOfFields() {
        var text = "GET / HTTP/1.1\r\nHost: a\r\n"
        for index in 0..<10 { text += "X-\(index): 1\r\n" }
        #expect(throws: HTTP1Error(.tooManyHeaders, at: 57)) {
            try HeadParser.parseRequest(Array((text + "\r\n").utf8), limits: .init(fields: 5))
        }
    }

    @Test func parsesResponses() throws {
        let head = try HeadParser.parseResponse(
            Array("HTTP/1.1 201 Created Now\r\nContent-Length: 2\r\n\r\n".utf8))
        #expect(head.status == 201)
        #expect(head.reason == Array("Created Now".utf8))
        #expect(try HeadParser.parseResponse(Array("HTTP/1.1 204\r\n\r\n".utf8)).status == 204)
        #expect(throws: HTTP1Error.self) {
            try HeadParser.parseResponse(Array("HTTP/1.1 20 OK\r\n\r\n".utf8))
        }
        #expect(throws: HTTP1Error.self) {
            try HeadParser.parseResponse(Array("HTTP/1.1 099 OK\r\n\r\n".utf8))
        }
        #expect(throws: HTTP1Error.self) { try HeadParser.parseResponse(Array("ICY 200 OK\r\n\r\n".utf8)) }
    }

    /// Common reason phrases are shared arrays, others copied; either way the bytes as sent
    /// (a phrase differing only in case or by a space is not a common one).
    @Test(arguments: [
        "OK", "Created", "Not Found", "ok", "OK ", "Okay", "Bad Gateway", "Internal Server Error", "",
    ])
    func keepsTheReasonPhraseAsSent(_ phrase: String) throws {
        let head = try HeadParser.parseResponse(Array("HTTP/1.1 200 \(phrase)\r\n\r\n".utf8))
        #expect(head.reason == Array(phrase.utf8))
    }

    @Test func scannerFindsTheEndAcrossSplits() throws {
        let text = Array("\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\nBODY".utf8)
        for cut in 1..<text.count {
            var scanner = HeadScanner(limit: 1000)
            var end = try scanner.scan(Array(text[..<cut]))
            if end == nil, let rest = try scanner.scan(Array(text[cut...])) { end = cut + rest }
            #expect(end == text.count - 4)
            #expect(scanner.leadingEmptyBytes == 4)
        }
        var lf = HeadScanner(limit: 100)
        #expect(try lf.scan(Array("HTTP/1.1 200 OK\nA: 1\n\nX".utf8)) == 22)
    }

    @Test func scannerEnforcesTheLimit() throws {
        var scanner = HeadScanner(limit: 20)
        #expect(try scanner.scan(Array("GET / HTTP/1.1\r\n".utf8)) == nil)
        #expect(throws: HTTP1Error(.headTooLarge, at: 20)) { try scanner.scan(Array("Host: a\r\n\r\n".utf8)) }
    }
}
