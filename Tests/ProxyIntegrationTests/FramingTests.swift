import Foundation
import Testing

/// Requests whose framing a peer could read differently: each gets its status and the
/// upstream receives nothing at all.
@Suite(.serialized) struct FramingSmugglingTests {
    static let cases: [(String, String, Int)] = [
        (
            "CL and TE",
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            400
        ),
        (
            "TE and CL",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n0\r\n\r\n",
            400
        ),
        (
            "two different CL",
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nabcde", 400
        ),
        (
            "two equal CL",
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nContent-Length: 4\r\n\r\nabcd", 400
        ),
        ("CL list", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4, 4\r\n\r\nabcd", 400),
        ("CL with sign", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +4\r\n\r\nabcd", 400),
        ("CL hex", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x4\r\n\r\nabcd", 400),
        ("CL negative", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400),
        ("CL huge", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999\r\n\r\n", 400),
        (
            "TE gzip, chunked",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 400
        ),
        (
            "TE chunked, identity",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n", 400
        ),
        (
            "TE twice",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            400
        ),
        ("TE xchunked", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n", 400),
        (
            "TE with space before colon",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n", 400
        ),
        ("TE obs-fold", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n", 400),
        ("TE in HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
        (
            "TE with vertical tab",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \u{0B}chunked\r\n\r\n0\r\n\r\n", 400
        ),
        (
            "bad chunk size",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n", 400
        ),
        (
            "chunk size with LF only",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n", 400
        ),
        (
            "chunk extension with LF",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;a\nb\r\nhello\r\n0\r\n\r\n",
            400
        ),
        (
            "chunk data too long",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhello\r\n0\r\n\r\n", 400
        ),
        (
            "chunk size overflow",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n", 400
        ),
        ("obs-fold", "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n 2\r\n\r\n", 400),
        ("bare CR in a field", "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r2\r\n\r\n", 400),
        ("NUL in a field", "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\u{0}2\r\n\r\n", 400),
        ("space before colon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400),
        ("missing Host", "GET / HTTP/1.1\r\n\r\n", 400),
        ("two Hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
        ("Host with userinfo", "GET / HTTP/1.1\r\nHost: u@a\r\n\r\n", 400),
        ("double space in request line", "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("lower-case version", "GET / http/1.1\r\nHost: a\r\n\r\n", 400),
        ("HTTP/2.0", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505),
        ("HTTP/0.9 style", "GET /\r\n\r\n", 400),
        ("target with space", "GET /a b HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("CONNECT", "CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        (
            "head too large",
            "GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + String(repeating: "a", count: 40_000) + "\r\n\r\n", 431
        ),
        (
            "multipart without boundary",
            "POST /upload HTTP/1.1\r\nHost: a\r\nContent-Type: multipart/form-data\r\nContent-Length: 4\r\n\r\nabcd",
            400
        ),
        (
            "multipart boundary too long",
            "POST /upload HTTP/1.1\r\nHost: a\r\nContent-Type: multipart/form-data; boundary="
                + String(repeating: "b", count: 71) + "\r\nContent-Length: 4\r\n\r\nabcd", 400
        ),
        (
            "multipart duplicate boundary",
            "POST /upload HTTP/1.1\r\nHost: a\r\nContent-Type: multipart/form-data; boundary=a; boundary=b\r\nContent-Length: 4\r\n\r\nabcd",
            400
        ),
    ]

    @Test func everyCaseIsRefusedAndNothingReachesTheUpstream() throws {
        let recorder = try FakeUpstream(.silent)
        let proxy = try startProxy(
            "upstream: \(recorder.url)\nroutes:\n  - match: { path: /upload }\n    multipart: {}\n")
        #expect(Self.cases.count >= 30)
        for (name, request, status) in Self.cases {
            let client = try RawClient(port: proxy.port)
            client.send(request)
            let reply = String(decoding: client.readAll(timeout: 30), as: UTF8.self)
            #expect(reply.hasPrefix("HTTP/1.1 \(status) "), "\(name): \(reply.prefix(80))")
            #expect(reply.contains("Connection: close"), "\(name)")
        }
        // Settled: every request is logged.
        #expect(eventually { proxy.accessLog.count == Self.cases.count }, "\(proxy.accessLog.count) logged")
        #expect(
            recorder.bytesReceived.isEmpty,
            "the upstream received \(String(decoding: recorder.bytesReceived, as: UTF8.self))")
        #expect(recorder.connections == 0)
    }

    @Test func multipartBodyThatIsAmbiguousNeverCompletesUpstream() throws {
        let recorder = try FakeUpstream(.silent)
        let proxy = try startProxy(
            "upstream: \(recorder.url)\nroutes:\n  - match: { path: /upload }\n    request_body: buffer\n    multipart: {}\n"
        )
        let body = "--b\r\nContent-Disposition: form-data; name=\"a\"; name=\"b\"\r\n\r\nx\r\n--b--\r\n"
        let client = try RawClient(port: proxy.port)
        client.send(
            "POST /upload HTTP/1.1\r\nHost: a\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        )
        let reply = String(decoding: client.readAll(timeout: 30), as: UTF8.self)
        #expect(reply.hasPrefix("HTTP/1.1 400 "))
        #expect(reply.contains("duplicateParameter"))
        // Settled once the request is logged and any upstream connection closed.
        #expect(eventually { proxy.accessLog.count == 1 && recorder.openConnections == 0 })
        #expect(recorder.bytesReceived.isEmpty)
    }
}
