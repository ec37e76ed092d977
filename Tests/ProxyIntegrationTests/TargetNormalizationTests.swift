import Foundation
import Testing

/// Every spelling of a rewriting route's path that an upstream resolves to it gets the route's
/// rules (new boundary, the client's token dropped, the file renamed, a field injected), or is
/// refused with 400 before anything reaches the upstream: none reaches it untouched.
@Suite(.serialized) struct TargetNormalizationTests {
    static let routes = """
        routes:
          - match: { path: /upload }
            multipart:
              drop_fields: [token]
              filename: "{uuid}{ext}"
              inject:
                - { name: injected, value: by-formgate }

        """

    static let clientBoundary = "ClientBoundary7MA4YWxk"
    static let fileContent = Array("<?php system($_GET['c']); ?>\n".utf8) + (0..<3000).map { UInt8($0 % 251) }

    static func upload(target: String) -> [UInt8] {
        var body = Array(
            "--\(clientBoundary)\r\nContent-Disposition: form-data; name=\"token\"\r\n\r\nforged-token\r\n"
                .utf8)
        body += Array(
            ("--\(clientBoundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"shell.php\"\r\n"
                + "Content-Type: application/x-php\r\n\r\n").utf8)
        body += fileContent
        body += Array("\r\n--\(clientBoundary)--\r\n".utf8)
        let head =
            "POST \(target) HTTP/1.1\r\nHost: test\r\nContent-Type: multipart/form-data; boundary=\(clientBoundary)\r\n"
            + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        return Array(head.utf8) + body
    }

    /// Spellings that Apache, nginx, PHP or a servlet container resolve to `/upload`, and the
    /// normalised target the upstream must get.
    static let accepted: [(String, String)] = [
        ("/upload", "/upload"),
        ("/x/../upload", "/upload"),
        ("//upload", "/upload"),
        ("/./upload", "/upload"),
        ("/%75pload", "/upload"),
        ("/%75%70%6C%6F%61%64", "/upload"),
        ("/static/%2e%2e/upload", "/upload"),
        ("/static/.%2E/upload", "/upload"),
        ("/a/b/../../upload", "/upload"),
        ("/%2e/upload", "/upload"),
        ("/upload/", "/upload/"),
        ("/upload//", "/upload/"),
        ("/upload/.", "/upload/"),
        ("/upload/x/..", "/upload/"),
        ("///upload///x", "/upload/x"),
        ("/upload;jsessionid=1", "/upload;jsessionid=1"),
        ("/upload?x=/../y", "/upload?x=/../y"),
        ("http://test/x/../upload", "/upload"),
        ("HTTP://test//upload?a=1", "/upload?a=1"),
    ]

    /// Spellings that cannot be normalised safely: 400, and the upstream gets nothing.
    static let refused = [
        "/static/..%2fupload", "/static/..%2Fupload", "/static/..%5cupload", "/static/..\\upload",
        "/../upload", "/%2e%2e/upload", "/x/../../upload", "/upload#x", "/upload?a#b", "/..;/upload",
        "/static/..;/upload", "/;x/upload", "/.;/upload", "/upload%", "/up%zzload", "/upload%00",
        "/upload%0d%0a", "/upload?a=\"b\"", "http://test/../upload", "http://test/static/..%2fupload",
    ]

    /// What the demo upstream parsed: the route's rules, the file's bytes intact.
    @Test func everyResolvingSpellingGetsTheRules() throws {
        let upstream = try startDemoUpstream()
        let proxy = try startProxy("upstream: \(upstream.url)\n" + Self.routes, workers: 1)
        for (target, _) in Self.accepted {
            let client = try RawClient(port: proxy.port)
            client.send(Self.upload(target: target))
            let response = try #require(client.readResponse(timeout: 20), "\(target): no response")
            #expect(
                response.status == 200,
                "\(target): \(String(decoding: response.body.prefix(200), as: UTF8.self))")
            let receipt = try jsonObject(Data(response.body))
            #expect(receipt["boundary"] as? String != Self.clientBoundary, "\(target): the client's boundary")
            #expect(
                receipt["parts"] as? [String] == ["injected", "file"], "\(target): \(receipt["parts"] ?? "-")"
            )
            let fields = (receipt["fields"] as? [[String: Any]]) ?? []
            #expect(fields.first?["value"] as? String == "by-formgate", "\(target)")
            let file = ((receipt["files"] as? [[String: Any]]) ?? []).first ?? [:]
            let filename = file["filename"] as? String ?? ""
            #expect(Self.isUUIDName(filename), "\(target): filename \(filename)")
            #expect(file["size"] as? Int == Self.fileContent.count, "\(target)")
            #expect(file["sha256"] as? String == Digest.hex(Self.fileContent), "\(target)")
        }
    }

    /// `{uuid}{ext}` for a `.php` file: a lower-case RFC 4122 UUID, then `.php`.
    static func isUUIDName(_ name: String) -> Bool {
        name.wholeMatch(of: /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.php/) != nil
    }

    /// What a raw recording upstream received: the normalised request line and a rewritten
    /// body (FormGate's boundary, no client token, no client filename, the injected field).
    @Test func theUpstreamGetsTheNormalisedTargetAndTheRewrittenBody() throws {
        let recorder = try FakeUpstream(.silent)
        let proxy = try startProxy("upstream: \(recorder.url)\n" + Self.routes, workers: 1)
        for (target, forwarded) in Self.accepted {
            let before = recorder.bytesReceived.count
            let client = try RawClient(port: proxy.port)
            client.send(Self.upload(target: target))
            // The client stays connected until the upstream has the whole request.
            let request = try withExtendedLifetime(client) { try recorder.request(after: before) }
            #expect(request.requestLine == "POST \(forwarded) HTTP/1.1", "\(target)")
            let contentType = request.values("Content-Type")
            #expect(contentType.count == 1 && !contentType[0].contains(Self.clientBoundary), "\(target)")
            let body = String(decoding: request.body, as: UTF8.self)
            #expect(!body.contains(Self.clientBoundary) && !body.contains("forged-token"), "\(target)")
            #expect(!body.contains("shell.php") && body.contains("name=\"injected\""), "\(target)")
            #expect(request.body.firstRange(of: Self.fileContent) != nil, "\(target): file bytes changed")
        }
    }

    @Test func unsafeSpellingsAreRefusedBeforeTheUpstream() throws {
        let recorder = try FakeUpstream(.silent)
        let proxy = try startProxy("upstream: \(recorder.url)\n" + Self.routes, workers: 1)
        for target in Self.refused {
            let client = try RawClient(port: proxy.port)
            client.send(Self.upload(target: target))
            let reply = String(decoding: client.readAll(timeout: 20), as: UTF8.self)
            #expect(reply.hasPrefix("HTTP/1.1 400 "), "\(target): \(reply.prefix(160))")
            #expect(reply.contains("malformed HTTP: "), "\(target): \(reply.prefix(300))")
        }
        // Refused while the head was parsed: FormGate never even connected.
        #expect(recorder.connections == 0)
        #expect(recorder.bytesReceived.isEmpty)
    }

    /// Paths compare case-sensitively, as nginx and Apache on Linux compare them: `/UPLOAD`
    /// is not `/upload` (README, "One spelling per path"). Pinned so that changing it is a
    /// decision, not an accident.
    @Test func letterCaseIsSignificant() throws {
        let upstream = try startDemoUpstream()
        let proxy = try startProxy("upstream: \(upstream.url)\n" + Self.routes, workers: 1)
        let client = try RawClient(port: proxy.port)
        client.send(Self.upload(target: "/UPLOAD"))
        let response = try #require(client.readResponse(timeout: 20))
        let receipt = try jsonObject(Data(response.body))
        #expect(receipt["path"] as? String == "/UPLOAD")
        #expect(receipt["boundary"] as? String == Self.clientBoundary)
    }

    /// Requests no route matches are forwarded in their normalised spelling too: the upstream
    /// never reads a path the matcher did not see.
    @Test func passThroughTargetsAreNormalised() throws {
        let recorder = try FakeUpstream(.silent)
        let proxy = try startProxy("upstream: \(recorder.url)\n" + Self.routes, workers: 1)
        let cases = [
            ("/static/./a/../b%2Etxt?q=%2e%2e/&r", "/static/b.txt?q=%2e%2e/&r"),
            ("//files//%7euser/%c3%a9t%C3%A9", "/files/~user/%C3%A9t%C3%A9"),
            ("/a|b/c%20d/", "/a%7Cb/c%20d/"),
            ("http://test/a/./b/..", "/a/"),
        ]
        for (target, forwarded) in cases {
            let before = recorder.bytesReceived.count
            let client = try RawClient(port: proxy.port)
            client.send("GET \(target) HTTP/1.1\r\nHost: test\r\n\r\n")
            let request = try withExtendedLifetime(client) { try recorder.request(after: before) }
            #expect(request.requestLine == "GET \(forwarded) HTTP/1.1", "\(target)")
        }
    }
}
