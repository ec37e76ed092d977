import Foundation
import Testing

/// The TLS listener against independent clients: curl (`--cacert`, `--resolve`), Python's
/// `ssl` and headless Chromium upload through it byte-exact (the demo upstream's receipt holds
/// what it received) with `X-Forwarded-Proto: https`; SNI picks the certificate, a name no
/// certificate covers and TLS 1.0/1.1 are refused; a saved session resumes.
@Suite(.serialized) struct TLSListenerTests {
    static let client = packageRoot.appendingPathComponent(
        "Tests/ProxyIntegrationTests/Resources/tls_client.py"
    )
    .path

    /// Certificates for a.test and b.test, a demo upstream, and a proxy with a TLS listener
    /// (first, so `proxy.port` is its port) and a plain one.
    struct Setup {
        let certificates: TLSCertificates
        let upstream: ServerProcess
        let proxy: ServerProcess

        init(minVersion: String = "1.2", extra: String = "") throws {
            certificates = try TLSCertificates()
            let a = try certificates.leaf("a.test", serial: 10)
            let b = try certificates.leaf("b.test", serial: 20)
            upstream = try startDemoUpstream()
            proxy = try startListeners(
                [tlsListener([a, b], minVersion: minVersion), "127.0.0.1:0"],
                "admin: 127.0.0.1:0\nupstream: \(upstream.url)\n" + extra)
        }

        var tlsPort: Int { proxy.port }
        var plainPort: Int? { proxy.listeners.first { !$0.tls }?.port }
    }

    /// Runs `tls_client.py` with `arguments`; its JSON lines, parsed.
    static func python(_ arguments: [String]) throws -> [[String: Any]] {
        let result = try run(try python3(), [client] + arguments)
        let lines = String(decoding: result.output, as: UTF8.self).split(separator: "\n")
        return try lines.map { try jsonObject(Data($0.utf8)) }
    }

    /// The value of header `name` in a demo upstream receipt.
    static func header(_ receipt: [String: Any], _ name: String) -> [String] {
        ((receipt["headers"] as? [[String]]) ?? []).filter { $0.first?.lowercased() == name.lowercased() }
            .map { $0.last ?? "" }
    }

    /// The seed of every `payload` (named in the byte-exactness checks' failures).
    static let payloadSeed: UInt64 = 0x7157

    /// A file of `count` pseudo-random bytes (seeded with `payloadSeed`) in `directory`.
    static func payload(_ directory: String, _ name: String, count: Int) throws -> (
        path: String, bytes: [UInt8]
    ) {
        let bytes = SeededRandom.bytes(count, seed: payloadSeed)
        let path = directory + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (path, bytes)
    }

    @Test func curlUploadsByteExactWithForwardedProtoHTTPS() throws {
        let setup = try Setup()
        defer { setup.certificates.remove() }
        let file = try Self.payload(setup.certificates.directory, "photo.bin", count: 300_000)
        func curl(_ url: String, port: Int) throws -> [String: Any] {
            let result = try run(
                try tool("curl"),
                [
                    "-sS", "--fail-with-body", "--cacert", setup.certificates.ca, "--resolve",
                    "a.test:\(port):127.0.0.1", "-F", "title=TLS upload", "-F", "file=@\(file.path)", url,
                ])
            #expect(result.status == 0, "curl failed: \(String(decoding: result.output, as: UTF8.self))")
            return try jsonObject(result.output)
        }
        let receipt = try curl("https://a.test:\(setup.tlsPort)/upload", port: setup.tlsPort)
        let files = try #require(receipt["files"] as? [[String: Any]])
        #expect(files.count == 1)
        #expect(files.first?["size"] as? Int == file.bytes.count)
        #expect(
            files.first?["sha256"] as? String == Digest.hex(file.bytes), "payload seed \(Self.payloadSeed)")
        #expect(Self.header(receipt, "X-Forwarded-Proto") == ["https"])
        #expect(Self.header(receipt, "X-Forwarded-Host") == ["a.test:\(setup.tlsPort)"])

        // The plain listener beside it still says http.
        let plainPort = try #require(setup.plainPort, "no plain listener in \(setup.proxy.stderr)")
        let plain = try curl("http://a.test:\(plainPort)/upload", port: plainPort)
        #expect(Self.header(plain, "X-Forwarded-Proto") == ["http"])
        #expect(
            (plain["files"] as? [[String: Any]])?.first?["sha256"] as? String == Digest.hex(file.bytes),
            "payload seed \(Self.payloadSeed)")
    }

    @Test func pythonSSLUploadsByteExact() throws {
        let setup = try Setup()
        defer { setup.certificates.remove() }
        let content = try Self.payload(setup.certificates.directory, "content", count: 200_000).bytes
        let boundary = "tls-\(UUID().uuidString)"
        let body =
            Array(
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.bin\"\r\n\r\n"
                    .utf8)
            + content + Array("\r\n--\(boundary)--\r\n".utf8)
        let bodyPath = setup.certificates.directory + "/body"
        try Data(body).write(to: URL(fileURLWithPath: bodyPath))
        let lines = try Self.python([
            "upload", String(setup.tlsPort), "b.test", setup.certificates.ca, bodyPath, boundary,
        ])
        let handshake = try #require(lines.first)
        #expect(handshake["subject"] as? String == "b.test")
        #expect(handshake["alpn"] as? String == "http/1.1")
        let answer = try #require(lines.last)
        #expect(answer["status"] as? Int == 200)
        let receipt = try jsonObject(Data(((answer["body"] as? String) ?? "").utf8))
        #expect(receipt["body_size"] as? Int == body.count)
        #expect(receipt["body_sha256"] as? String == Digest.hex(body), "payload seed \(Self.payloadSeed)")
        #expect(
            (receipt["files"] as? [[String: Any]])?.first?["sha256"] as? String == Digest.hex(content),
            "payload seed \(Self.payloadSeed)")
        #expect(Self.header(receipt, "X-Forwarded-Proto") == ["https"])
    }

    /// Chromium trusts the leaf through `--ignore-certificate-errors-spki-list` (its public
    /// key's hash; no NSS database needed), resolves a.test to 127.0.0.1 with
    /// `--host-resolver-rules`, loads a page through the TLS listener and posts a FormData
    /// built from a fixture fetched over the same origin.
    @Test func chromiumPostsFormDataOverHTTPS() throws {
        let certificates = try TLSCertificates()
        defer { certificates.remove() }
        let leaf = try certificates.leaf("a.test")
        let site = certificates.directory + "/site"
        try FileManager.default.createDirectory(atPath: site, withIntermediateDirectories: true)
        let fixture = try Self.payload(site, "fixture.bin", count: 250_000)
        try FileManager.default.copyItem(
            atPath: packageRoot.appendingPathComponent("Tests/ProxyIntegrationTests/Resources/tls_page.html")
                .path,
            toPath: site + "/page.html")
        let probe = try FakeUpstream(.silent)
        let staticPort = probe.port
        probe.stop()
        let staticServer = try ServerProcess(
            try python3(),
            ["-m", "http.server", "--bind", "127.0.0.1", "--directory", site, String(staticPort)],
            waitForListening: false)
        #expect(eventually(within: 30) { (try? RawClient(port: staticPort)) != nil })
        let upstream = try startDemoUpstream()
        let proxy = try startListeners(
            [tlsListener([leaf])],
            "upstream: http://127.0.0.1:\(staticPort)\nroutes:\n  - { match: { path: /upload }, upstream: \"\(upstream.url)\" }\n"
        )
        let profile = certificates.directory + "/chromium-profile"
        let text = try chromiumPageResult(
            "https://a.test:\(proxy.port)/page.html", profile: profile, budgetMilliseconds: 30000,
            extra: [
                "--host-resolver-rules=MAP a.test 127.0.0.1",
                "--ignore-certificate-errors-spki-list=\(try certificates.spkiHash(leaf.cert))",
            ])
        // The upload went over HTTP/2, negotiated by ALPN (the page reads nextHopProtocol).
        let prefix = "STATUS 200 https: h2 "
        #expect(text.hasPrefix(prefix), "\(text.prefix(300))")
        let json = text.dropFirst(prefix.count)
        let receipt = try jsonObject(Data(json.utf8))
        let files = try #require(receipt["files"] as? [[String: Any]])
        #expect(files.first?["filename"] as? String == "fixture.bin")
        #expect(files.first?["size"] as? Int == fixture.bytes.count)
        #expect(files.first?["sha256"] as? String == Digest.hex(fixture.bytes))
        #expect(Self.header(receipt, "X-Forwarded-Proto") == ["https"])
        withExtendedLifetime(staticServer) {}
    }

    @Test func sniPicksTheCertificateAndAnUnknownNameIsRefused() throws {
        let setup = try Setup()
        defer { setup.certificates.remove() }
        let port = String(setup.tlsPort)
        let ca = setup.certificates.ca
        let a = try #require(try Self.python(["hello", port, "a.test", ca]).first)
        #expect(a["subject"] as? String == "a.test")
        let b = try #require(try Self.python(["hello", port, "b.test", ca]).first)
        #expect(b["subject"] as? String == "b.test")
        // A wildcard name of b's certificate.
        let wildcard = try #require(try Self.python(["hello", port, "upload.b.test", ca]).first)
        #expect(wildcard["subject"] as? String == "b.test")
        #expect(a["serial"] as? String != b["serial"] as? String)
        let unknown = try #require(try Self.python(["hello", port, "c.test", ca]).first)
        #expect((unknown["error"] as? String)?.contains("UNRECOGNIZED_NAME") == true, "\(unknown)")
        #expect(
            eventually(within: 30) {
                (try? setup.proxy.metric("formgate_tls_handshake_failures_total{reason=\"server_name\"}"))
                    == 1
            })

        // No SNI at all: the first certificate (openssl s_client sends none for an IP address
        // with -noservername).
        let result = try run(
            "/bin/sh",
            [
                "-c",
                "openssl s_client -connect 127.0.0.1:\(port) -noservername -CAfile '\(ca)' </dev/null 2>/dev/null",
            ])
        #expect(String(decoding: result.output, as: UTF8.self).contains("subject=CN = a.test"))
    }

    /// Debian's OpenSSL does not offer TLS 1.0/1.1 at its default security level 2:
    /// `tls_client.py` lowers its own level to 0 so the ClientHello really offers them. The
    /// test then only passes on what the server does: the error must be the server's
    /// `protocol_version` alert (a local refusal to offer would read "no protocols available"),
    /// and the proxy must have counted a version failure for each.
    @Test func tls10And11AreRefused() throws {
        let setup = try Setup()
        defer { setup.certificates.remove() }
        for version in ["1.0", "1.1"] {
            let answer = try #require(
                try Self.python(["hello", String(setup.tlsPort), "a.test", setup.certificates.ca, version])
                    .first)
            #expect((answer["error"] as? String)?.contains("ALERT_PROTOCOL_VERSION") == true, "\(answer)")
        }
        #expect(
            eventually(within: 30) {
                (try? setup.proxy.metric("formgate_tls_handshake_failures_total{reason=\"version\"}")) == 2
            })
        let modern = try #require(
            try Self.python(["hello", String(setup.tlsPort), "a.test", setup.certificates.ca, "1.2"]).first)
        #expect(modern["version"] as? String == "TLSv1.2")
    }

    @Test func minVersion13RefusesTLS12() throws {
        let setup = try Setup(minVersion: "1.3")
        defer { setup.certificates.remove() }
        let old = try #require(
            try Self.python(["hello", String(setup.tlsPort), "a.test", setup.certificates.ca, "1.2"]).first)
        #expect((old["error"] as? String)?.contains("ALERT_PROTOCOL_VERSION") == true, "\(old)")
        let current = try #require(
            try Self.python(["hello", String(setup.tlsPort), "a.test", setup.certificates.ca]).first)
        #expect(current["version"] as? String == "TLSv1.3")
    }

    /// Resumption on the first certificate's context and on one SNI switched to (b.test):
    /// sessions and tickets belong to the listener, whichever certificate served them.
    @Test(arguments: [("1.2", "a.test"), ("1.3", "a.test"), ("1.2", "b.test"), ("1.3", "b.test")])
    func aSavedSessionResumes(version: String, name: String) throws {
        let setup = try Setup()
        defer { setup.certificates.remove() }
        let lines = try Self.python(["resume", String(setup.tlsPort), name, setup.certificates.ca, version])
        #expect(lines.count == 2)
        #expect(lines.first?["reused"] as? Bool == false)
        #expect(lines.last?["reused"] as? Bool == true, "\(lines)")
        #expect(lines.last?["version"] as? String == "TLSv\(version)")
        #expect(lines.last?["subject"] as? String == name)
    }
}
