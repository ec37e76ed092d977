import Foundation
import Testing

/// Issue 26, 1: a `:path` goes through the request-target normalisation HTTP/1.1 targets go
/// through (TargetNormalizationTests, whose lists and routes these reuse), over h2c and over
/// TLS: every spelling that resolves to a rewriting route gets its rules, every unsafe one is
/// refused with 400 before anything reaches the upstream, and pass-through targets are
/// forwarded normalised. The upstream is a raw recorder, so what is checked is what it read.
@Suite(.serialized) struct HTTP2TargetNormalizationTests {
    /// The accepted spellings that are a valid `:path` (not the absolute forms).
    static let accepted = TargetNormalizationTests.accepted.filter { $0.0.hasPrefix("/") }

    /// The refused spellings that are a `:path`, plus a backslash traversal; `/upload#x` is one.
    static let refused = TargetNormalizationTests.refused.filter { $0.hasPrefix("/") } + ["/x\\..\\upload"]

    /// TargetNormalizationTests' upload body: a `token` field and `shell.php`.
    static let body: [UInt8] = {
        let request = TargetNormalizationTests.upload(target: "/upload")
        let end = request.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound ?? 0
        return Array(request[end...])
    }()

    /// The script's options for one upload of `body` (in `file`) to `target`, ending its stream.
    static func upload(_ target: String, file: String) -> [String] {
        [
            "--path", target, "--body", file, "--header",
            "content-type=multipart/form-data; boundary=\(TargetNormalizationTests.clientBoundary)",
            "--header", "content-length=\(body.count)", "headers", "body-end",
        ]
    }

    /// Each accepted `:path` reaches the recorder as `POST <normalised> HTTP/1.1` with the
    /// route's rules applied: a new boundary, no `forged-token`, no `shell.php`, the injected
    /// field, the file's bytes intact.
    @Test(arguments: H2Transport.allCases)
    func everyResolvingPathGetsTheRules(transport: H2Transport) throws {
        #expect(Self.accepted.count >= 15 && Self.accepted.contains { $0.0 == "/x/../upload" })
        let setup = try HTTP2RecorderSetup(TargetNormalizationTests.routes)
        defer { setup.stop() }
        let file = try setup.file("upload.bin", Self.body)
        for (target, forwarded) in Self.accepted {
            let before = setup.recorder.byteCount
            let client = try setup.client(transport, Self.upload(target, file: file))
            defer { client.stop() }
            // The client stays connected until the recorder has the whole request.
            guard let request = setup.wholeRequest(after: before, unless: client) else {
                Issue.record("\(target): no whole request upstream; the client saw \(client.record)")
                continue
            }
            #expect(request.requestLine == "POST \(forwarded) HTTP/1.1", "\(target)")
            let contentType = request.values("Content-Type")
            #expect(
                contentType.count == 1 && !contentType[0].contains(TargetNormalizationTests.clientBoundary),
                "\(target): \(contentType)")
            let text = String(decoding: request.body, as: UTF8.self)
            #expect(
                !text.contains(TargetNormalizationTests.clientBoundary), "\(target): the client's boundary")
            #expect(!text.contains("forged-token") && !text.contains("shell.php"), "\(target): not rewritten")
            #expect(
                text.contains("name=\"injected\"") && text.contains("by-formgate"), "\(target): no injection")
            #expect(
                request.body.firstRange(of: TargetNormalizationTests.fileContent) != nil,
                "\(target): file bytes changed")
        }
    }

    /// Each refused `:path` gets `:status` 400 with a `malformed HTTP: ` body on its stream,
    /// and the recorder is never even connected to.
    @Test(arguments: H2Transport.allCases)
    func unsafePathsAreRefusedBeforeTheUpstream(transport: H2Transport) throws {
        #expect(Self.refused.contains("/upload#x") && Self.refused.contains("/x\\..\\upload"))
        let setup = try HTTP2RecorderSetup(TargetNormalizationTests.routes)
        defer { setup.stop() }
        let file = try setup.file("upload.bin", Self.body)
        for target in Self.refused {
            let connections = setup.recorder.connections
            let client = try setup.client(transport, Self.upload(target, file: file))
            defer { client.stop() }
            // Decided by the stream's answer, or by the recorder being connected to instead.
            eventually(within: 20) { client.ended() != nil || setup.recorder.connections > connections }
            let ended = client.ended()
            #expect(ended?["status"] as? Int == 400, "\(target): \(client.record)")
            let answer = ended?["body"] as? String ?? ""
            #expect(answer.contains("malformed HTTP: "), "\(target): \(answer.prefix(200))")
            #expect(setup.recorder.connections == connections, "\(target) was forwarded")
        }
        #expect(setup.recorder.connections == 0)
        #expect(
            setup.recorder.bytesReceived.isEmpty,
            "the recorder read \(String(decoding: setup.recorder.bytesReceived.prefix(300), as: UTF8.self))")
    }

    /// A GET no route matches is forwarded in its normalised spelling too
    /// (TargetNormalizationTests.passThroughTargetsAreNormalised without the absolute form).
    @Test(arguments: H2Transport.allCases)
    func passThroughPathsAreNormalised(transport: H2Transport) throws {
        let setup = try HTTP2RecorderSetup(TargetNormalizationTests.routes)
        defer { setup.stop() }
        let cases = [
            ("/static/./a/../b%2Etxt?q=%2e%2e/&r", "/static/b.txt?q=%2e%2e/&r"),
            ("//files//%7euser/%c3%a9t%C3%A9", "/files/~user/%C3%A9t%C3%A9"),
            ("/a|b/c%20d/", "/a%7Cb/c%20d/"),
        ]
        for (target, forwarded) in cases {
            let before = setup.recorder.byteCount
            let client = try setup.client(transport, ["--method", "GET", "--path", target, "headers-end"])
            defer { client.stop() }
            let request = setup.wholeRequest(after: before, unless: client)
            #expect(request?.requestLine == "GET \(forwarded) HTTP/1.1", "\(target): \(client.record)")
        }
    }
}
