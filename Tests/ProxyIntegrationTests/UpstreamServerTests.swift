import Foundation
import Testing

/// Real upstream servers: an https upstream with a CA made at test time, and PHP's
/// `$_FILES` as the legacy server.
@Suite(.serialized) struct UpstreamServerTests {
    static let resources = packageRoot.appendingPathComponent("Tests/ProxyIntegrationTests/Resources")

    /// A CA and a server certificate for `localhost` only, in a fresh directory.
    func makeCertificates() throws -> (directory: String, ca: String, cert: String, key: String) {
        let openssl = try tool("openssl")
        let directory = NSTemporaryDirectory() + "formgate-tls-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let ca = directory + "/ca.pem"
        let caKey = directory + "/ca.key"
        let cert = directory + "/server.pem"
        let key = directory + "/server.key"
        let csr = directory + "/server.csr"
        let extensions = directory + "/san.ext"
        try "subjectAltName=DNS:localhost\n".write(toFile: extensions, atomically: true, encoding: .utf8)
        for arguments in [
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", caKey, "-out", ca, "-days", "1",
                "-subj", "/CN=FormGate Test CA",
            ],
            ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=localhost"],
            [
                "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", caKey, "-CAcreateserial", "-out", cert,
                "-days", "1", "-extfile", extensions,
            ],
        ] {
            let result = try run(openssl, arguments)
            #expect(result.status == 0, "openssl \(arguments[0]) failed")
        }
        return (directory, ca, cert, key)
    }

    @Test func httpsUpstreamIsVerified() throws {
        let certificates = try makeCertificates()
        defer { try? FileManager.default.removeItem(atPath: certificates.directory) }
        let server = try ServerProcess(
            try python3(),
            [
                Self.resources.appendingPathComponent("tls_upstream.py").path, certificates.cert,
                certificates.key,
            ])
        let good = try startProxy(
            "upstream: https://localhost:\(server.port)\nupstream_ca_file: \(certificates.ca)\n")
        let client = try RawClient(port: good.port)
        client.send("POST /secure HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\n\r\nhello")
        let response = try #require(client.readResponse())
        #expect(response.status == 200)
        let receipt = try jsonObject(Data(response.body))
        #expect(receipt["tls"] as? Bool == true)
        #expect(receipt["body_size"] as? Int == 5)

        // The certificate names localhost, not 127.0.0.1: refused.
        let wrongName = try startProxy(
            "upstream: https://127.0.0.1:\(server.port)\nupstream_ca_file: \(certificates.ca)\n")
        let other = try RawClient(port: wrongName.port)
        other.send("GET /secure HTTP/1.1\r\nHost: test\r\n\r\n")
        #expect(other.readResponse()?.status == 502)

        // Without the test CA the system store does not trust it either.
        let untrusted = try startProxy("upstream: https://localhost:\(server.port)\n")
        let third = try RawClient(port: untrusted.port)
        third.send("GET /secure HTTP/1.1\r\nHost: test\r\n\r\n")
        #expect(third.readResponse()?.status == 502)
    }

    /// PHP's own multipart parser sees the same fields and files through FormGate as it does
    /// directly.
    @Test(arguments: ["stream", "buffer"])
    func phpSeesWhatADirectUploadGivesIt(mode: String) throws {
        let (server, port) = try startPHP()
        defer { server.stop() }
        let proxy = try startProxy(
            "upstream: http://127.0.0.1:\(port)\nroutes:\n  - match: { path: / }\n    request_body: \(mode)\n    multipart: {}\n"
        )
        let file = NSTemporaryDirectory() + "formgate-php-\(UUID().uuidString)"
        let seed: UInt64 = 0x0F1D
        try Data(SeededRandom.bytes(200_000, seed: seed)).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        func upload(_ base: String) throws -> [String: Any] {
            let result = try run(
                try tool("curl"),
                [
                    "-sS", "-F", "title=Résumé \"quoted\"", "-F", "tags[]=a", "-F", "tags[]=b",
                    "-F", "doc=@\(file);filename=report 2024.pdf;type=application/pdf",
                    "-F", "empty=@/dev/null;filename=", base + "/upload.php",
                ])
            return try jsonObject(result.output)
        }
        let direct = try upload("http://127.0.0.1:\(port)")
        let proxied = try upload(proxy.url)
        #expect(
            NSDictionary(dictionary: direct).isEqual(to: proxied),
            "content seed \(seed)\ndirect \(direct)\nproxied \(proxied)")
        let files = try #require(proxied["files"] as? [[String: Any]])
        #expect(files.first?["name"] as? String == "report 2024.pdf")
    }

    /// Rules as PHP sees them: renamed field, new file name, injected field, sniffed type;
    /// the file's bytes unchanged.
    @Test func phpSeesTheRulesApplied() throws {
        let (server, port) = try startPHP()
        defer { server.stop() }
        let proxy = try startProxy(
            """
            upstream: http://127.0.0.1:\(port)
            routes:
              - match: { path: / }
                request_body: buffer
                multipart:
                  drop_fields: [token]
                  rename_fields: { "userfile": file }
                  sniff: { bytes: 512, content_type: override }
                  filename: "upload-{index}{ext}"
                  inject:
                    - { name: uploader, value: "{header:X-User-Id}" }

            """)
        let png: [UInt8] =
            [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + (0..<50_000).map { UInt8(truncatingIfNeeded: $0) }
        let file = NSTemporaryDirectory() + "formgate-php-rules-\(UUID().uuidString)"
        try Data(png).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let result = try run(
            try tool("curl"),
            [
                "-sS", "-H", "X-User-Id: u-7", "-F", "token=forged", "-F", "title=hi",
                "-F", "userfile=@\(file);filename=../evil.php;type=application/x-php",
                proxy.url + "/upload.php",
            ])
        let answer = try jsonObject(result.output)
        let post = try #require(answer["post"] as? [String: Any])
        #expect(post["uploader"] as? String == "u-7")
        #expect(post["title"] as? String == "hi")
        #expect(post["token"] == nil)
        let files = try #require(answer["files"] as? [[String: Any]])
        #expect(files.count == 1)
        #expect(files.first?["field"] as? String == "file")
        #expect(files.first?["name"] as? String == "upload-2.png")
        #expect(files.first?["type"] as? String == "image/png")
        #expect(files.first?["sha256"] as? String == Digest.hex(png))
    }
}
