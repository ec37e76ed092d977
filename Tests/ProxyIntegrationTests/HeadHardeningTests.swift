import Foundation
import Testing

/// What the hostile replay found in request heads, checked against what the upstream got:
/// underscore header names, chunk extensions, 1xx to HTTP/1.0, Date, bare LF, a second
/// Content-Type.
@Suite(.serialized) struct HeadHardeningTests {
    static let routes = """
        routes:
          - match: { path: /upload }
            multipart: {}

        """

    /// Sends `request` through a proxy in front of a silent recorder and returns the reply;
    /// the recorder must have received nothing (FormGate refused it while reading the head or
    /// the first body bytes, before connecting).
    func refusedBeforeTheUpstream(_ request: String, _ label: String) throws -> String {
        let recorder = try FakeUpstream(.silent)
        let proxy = try startProxy("upstream: \(recorder.url)\n" + Self.routes, workers: 1)
        let client = try RawClient(port: proxy.port)
        client.send(request)
        let reply = String(decoding: client.readAll(timeout: 20), as: UTF8.self)
        #expect(reply.hasPrefix("HTTP/1.1 400 "), "\(label): \(reply.prefix(200))")
        #expect(
            recorder.connections == 0 && recorder.bytesReceived.isEmpty, "\(label): the upstream got bytes")
        return reply
    }

    @Test func underscoreHeaderNamesAreDropped() throws {
        let recorder = try FakeUpstream(.silent)
        let proxy = try startProxy(
            "admin: 127.0.0.1:0\nupstream: \(recorder.url)\n" + Self.routes, workers: 1)
        let client = try RawClient(port: proxy.port)
        client.send(
            "POST /echo HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\nContent_Length: 500\r\n"
                + "Transfer_Encoding: chunked\r\nX_Forwarded_For: 6.6.6.6\r\nX-Keep: 1\r\n_: x\r\n\r\nhello")
        let request = try withExtendedLifetime(client) { try recorder.request(after: 0) }
        #expect(!request.fields.contains { $0.name.contains("_") }, "\(request.fields)")
        #expect(request.values("X-Keep") == ["1"])
        #expect(request.values("X-Forwarded-For") == ["127.0.0.1"])
        #expect(request.body == Array("hello".utf8))
        // Counted before the request went upstream: the figure is there by now.
        let adminPort = try #require(
            Int(
                proxy.stderr.components(separatedBy: "admin on 127.0.0.1:").last?.prefix { $0.isNumber } ?? ""
            ))
        let metrics = try RawClient(port: adminPort)
        metrics.send("GET /metrics HTTP/1.1\r\nHost: admin\r\n\r\n")
        let text = String(decoding: try #require(metrics.readResponse()).body, as: UTF8.self)
        #expect(
            text.contains("formgate_rule_actions_total{action=\"drop_underscore_header\"} 4\n"), "\(text)")

        let allowing = try FakeUpstream(.silent)
        let optedIn = try startProxy(
            "upstream: \(allowing.url)\nunderscores_in_headers: true\n" + Self.routes, workers: 1)
        let second = try RawClient(port: optedIn.port)
        second.send("GET /x HTTP/1.1\r\nHost: test\r\nX_Custom: kept\r\n\r\n")
        let kept = try withExtendedLifetime(second) { try allowing.request(after: 0) }
        #expect(kept.values("X_Custom") == ["kept"])
    }

    @Test(arguments: ["5;", "5;bad[=x", "5;a=", "5; a b", "5;a=\"open", "5;a ", "5;;"])
    func malformedChunkExtensionsAreRefused(_ line: String) throws {
        let reply = try refusedBeforeTheUpstream(
            "POST /echo HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n\(line)\r\nhello\r\n0\r\n\r\n",
            line)
        #expect(reply.contains("invalid_chunk_extension"), "\(line): \(reply)")
    }

    @Test func wellFormedChunkExtensionsAreReadAndDropped() throws {
        let recorder = try FakeUpstream(.silent)
        let proxy = try startProxy("upstream: \(recorder.url)\n" + Self.routes, workers: 1)
        let client = try RawClient(port: proxy.port)
        client.send(
            "POST /echo HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5 ; a=b ; q=\"x;y\"\r\nhello\r\n6;z\r\n world\r\n0\r\n\r\n")
        let request = try withExtendedLifetime(client) { try recorder.request(after: 0) }
        #expect(request.body == Array("hello world".utf8))
        let raw = String(decoding: recorder.bytesReceived, as: UTF8.self)
        #expect(!raw.contains("q=") && !raw.contains(";z"), "extensions went upstream: \(raw)")
    }

    /// RFC 9110 §15.2: no 1xx to an HTTP/1.0 client. The same request over HTTP/1.1 gets its
    /// 100 Continue, so the check can fail.
    @Test func noContinueForHTTP10() throws {
        let upstream = try startDemoUpstream()
        let proxy = try startProxy("upstream: \(upstream.url)\n" + Self.routes, workers: 1)
        for version in ["1.0", "1.1"] {
            let client = try RawClient(port: proxy.port)
            client.send(
                "POST /echo HTTP/\(version)\r\nHost: test\r\nContent-Length: 5\r\nExpect: 100-continue\r\n"
                    + "Connection: close\r\n\r\nhello")
            let reply = String(decoding: client.readAll(timeout: 20), as: UTF8.self)
            if version == "1.0" {
                #expect(reply.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(reply.prefix(200))")
                #expect(!reply.contains("100 Continue"))
            } else {
                #expect(
                    reply.hasPrefix("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"),
                    "\(reply.prefix(200))")
            }
            #expect(reply.contains("\"body_size\":5"), "\(version): \(reply)")
        }
    }

    /// An upstream's 1xx is not relayed (to HTTP/1.0 or 1.1); a response without Date gets
    /// one, a response with one keeps it.
    @Test func upstreamInterimResponsesAndDate() throws {
        let bare = try FakeUpstream(
            .respond(
                "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
            ))
        let proxy = try startProxy("upstream: \(bare.url)\n" + Self.routes, workers: 1)
        for version in ["1.0", "1.1"] {
            let client = try RawClient(port: proxy.port)
            client.send("GET /x HTTP/\(version)\r\nHost: test\r\nConnection: close\r\n\r\n")
            let reply = String(decoding: client.readAll(timeout: 20), as: UTF8.self)
            #expect(
                reply.hasPrefix("HTTP/1.1 200 OK\r\n") && reply.hasSuffix("\r\n\r\nok"),
                "\(version): \(reply)")
            let dates = reply.components(separatedBy: "\r\n").filter { $0.hasPrefix("Date: ") }
            #expect(dates.count == 1, "\(version): \(reply)")
            try expectCurrentDate(String(dates.first?.dropFirst(6) ?? ""))
        }

        let dated = try FakeUpstream(
            .respond("HTTP/1.1 200 OK\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\nContent-Length: 2\r\n\r\nok"))
        let second = try startProxy("upstream: \(dated.url)\n" + Self.routes, workers: 1)
        let client = try RawClient(port: second.port)
        client.send("GET /x HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
        let reply = String(decoding: client.readAll(timeout: 20), as: UTF8.self)
        #expect(
            reply.components(separatedBy: "\r\n").filter { $0.hasPrefix("Date: ") } == [
                "Date: Sun, 06 Nov 1994 08:49:37 GMT"
            ])
    }

    @Test func formGateErrorsCarryDate() throws {
        let reply = try refusedBeforeTheUpstream("GET /a#b HTTP/1.1\r\nHost: test\r\n\r\n", "fragment")
        let date = reply.components(separatedBy: "\r\n").first { $0.hasPrefix("Date: ") }
        try expectCurrentDate(String(try #require(date).dropFirst(6)))
    }

    /// An IMF-fixdate within a minute of now (the clock is the machine's: no tight bound).
    func expectCurrentDate(_ text: String) throws {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let date = try #require(formatter.date(from: text), "not an IMF-fixdate: \(text)")
        #expect(formatter.string(from: date) == text)
        #expect(abs(date.timeIntervalSinceNow) < 60, "\(text)")
    }

    @Test(arguments: [
        "GET / HTTP/1.1\nHost: test\r\n\r\n", "GET / HTTP/1.1\r\nHost: test\n\r\n",
        "GET / HTTP/1.1\r\nHost: test\r\n\n",
        "\nGET / HTTP/1.1\r\nHost: test\r\n\r\n",
        "POST /upload HTTP/1.1\r\nHost: test\r\nContent-Length: 0\nX: 1\r\n\r\n",
    ])
    func bareLineFeedsInTheHeadAreRefused(_ request: String) throws {
        let reply = try refusedBeforeTheUpstream(request, request.debugDescription)
        #expect(reply.contains("bare_lf"), "\(reply)")
    }

    @Test(arguments: ["/echo", "/upload"])
    func aSecondContentTypeIsRefusedOnEveryRoute(_ path: String) throws {
        let reply = try refusedBeforeTheUpstream(
            "POST \(path) HTTP/1.1\r\nHost: test\r\nContent-Type: text/plain\r\n"
                + "Content-Type: multipart/form-data; boundary=x\r\nContent-Length: 2\r\n\r\nab", path)
        #expect(reply.contains("duplicate_content_type"), "\(reply)")
    }
}
