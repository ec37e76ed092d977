import Foundation
import Synchronization
import Testing

/// Issue 16's client matrix over HTTP/2: curl (`--http2` with ALPN over TLS, and
/// `--http2-prior-knowledge`), httpx (`http2=True, http1=False`) and a raw `h2` client
/// (Resources/h2_client.py) upload 0 B, 1 MiB and 1 GiB through a `request_body: stream` and a
/// `request_body: buffer` route. What is checked is what arrived: the demo upstream's receipt
/// (the file's size and sha256, the fields, the framing) and PHP's `$_FILES` against a direct
/// HTTP/1.1 upload of the same file; every proxied answer's access-log line says `h2`.
@Suite(.serialized, MatrixFiles())
struct HTTP2ClientMatrixTests {
    /// One client program and how it reaches the proxy.
    enum Client: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case curlALPN, curlH2C, httpxALPN, httpxH2C, h2ALPN, h2H2C

        var tls: Bool { self == .curlALPN || self == .httpxALPN || self == .h2ALPN }
        var testDescription: String { rawValue }
    }

    /// A route's body mode and the upload's size.
    struct Upload: Sendable, CustomTestStringConvertible {
        let mode: String
        let size: Int

        var testDescription: String { "\(mode) \(size) B" }

        static let sizes = [0, 1 << 20, 1 << 30]
        static let all = ["stream", "buffer"].flatMap { mode in sizes.map { Upload(mode: mode, size: $0) } }
    }

    /// A file of the suite, with its sha256.
    struct File: Sendable {
        let path: String
        let sha256: String
    }

    /// The suite's certificates and files by size (set by `MatrixFiles` around the suite).
    @TaskLocal static var fixture: (certificates: TLSCertificates, files: [Int: File])?

    /// Writes `count` bytes of deterministic content (1 MiB pseudo-random blocks, each stamped
    /// with its index) to `path`, hashing them as they go: never held whole.
    static func write(_ path: String, count: Int) throws -> File {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let block = (0..<(1 << 20)).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        }
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw TestFailure("cannot create \(path)")
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let digest = Digest()
        var written = 0
        while written < count {
            var copy = Array(block.prefix(count - written))
            withUnsafeBytes(of: UInt64(written >> 20).littleEndian) { index in
                for offset in 0..<min(8, copy.count) { copy[offset] = index[offset] }
            }
            try handle.write(contentsOf: copy)
            digest.update(copy)
            written += copy.count
        }
        return File(path: path, sha256: digest.hex())
    }

    /// The text field every upload carries (non-ASCII and quotes: the clients' escaping).
    static let title = "Résumé \"quoted\" ∑"
    static let filename = "report 2024.pdf"
    static let type = "application/pdf"

    /// A proxy with an h2c listener and a TLS one (ALPN `h2`, certificate for `a.test`), its
    /// `/stream` and `/buffer` routes injecting `via=h2`, in front of `upstream`.
    static func startProxy(upstream: String, certificates: TLSCertificates) throws -> ServerProcess {
        let routes = ["stream", "buffer"].map {
            "  - match: { path: /\($0) }\n    request_body: \($0)\n    multipart:\n"
                + "      inject: [{ name: via, value: h2 }]\n"
        }
        let directory = certificates.directory
        return try startListeners(
            [
                "{ address: 127.0.0.1:0, http2: { h2c: true } }",
                tlsListener([(directory + "/a.test.pem", directory + "/a.test.key")]),
            ],
            // PHP parses a 1 GiB body only once it has all of it: give its answer time.
            "admin: 127.0.0.1:0\nupstream: \(upstream)\ntimeouts: { upstream_response: 600s }\nroutes:\n"
                + routes.joined(), workers: 1)
    }

    /// Uploads `file` as the `doc` part, after the `title` field, with `client` to `path` on
    /// `proxy`; returns the upstream's answer once the client reports HTTP/2 and a 200.
    static func upload(
        _ client: Client, _ file: File, to path: String, through proxy: ServerProcess,
        certificates: TLSCertificates
    ) throws -> [String: Any] {
        let port = proxy.listeners.first { $0.tls == client.tls }?.port ?? 0
        let base = client.tls ? "https://a.test:\(port)" : "http://127.0.0.1:\(port)"
        let resources = UpstreamServerTests.resources
        switch client {
        case .curlALPN, .curlH2C:
            let flags =
                client.tls
                ? ["--http2", "--cacert", certificates.ca, "--resolve", "a.test:\(port):127.0.0.1"]
                : ["--http2-prior-knowledge"]
            let (answer, version) = try HTTP2UploadTests.curl(
                flags + [
                    "--form-string", "title=\(title)", "-F",
                    "doc=@\(file.path);filename=\(filename);type=\(type)",
                    base + path,
                ])
            #expect(version == "2")
            return answer
        case .httpxALPN, .httpxH2C:
            let tls = client.tls ? ["--cafile", certificates.ca, "--resolve", "a.test:127.0.0.1"] : []
            let result = try run(
                try python3(),
                [
                    resources.appendingPathComponent("h2_httpx_client.py").path, base + path, "--file",
                    file.path,
                    "--filename", filename, "--type", type, "--field", "title=\(title)",
                ] + tls)
            #expect(
                result.status == 0, "\(client) exited \(result.status); proxy: \(proxy.stderr.suffix(1500))")
            let answer = try jsonObject(result.output)
            #expect(answer["version"] as? String == "HTTP/2")
            #expect(answer["status"] as? Int == 200, "\(answer)")
            return answer["body"] as? [String: Any] ?? [:]
        case .h2ALPN, .h2H2C:
            let tls = client.tls ? ["--tls", "--cafile", certificates.ca, "--server-name", "a.test"] : []
            let result = try run(
                try python3(),
                [
                    resources.appendingPathComponent("h2_client.py").path, "127.0.0.1", String(port),
                    "upload",
                    "--path", path, "--file", file.path, "--filename", filename, "--type", type, "--field",
                    "title=\(title)",
                ] + tls)
            #expect(
                result.status == 0, "\(client) exited \(result.status); proxy: \(proxy.stderr.suffix(1500))")
            let answer = try jsonObject(result.output)
            #expect(answer["alpn"] as? String == (client.tls ? "h2" : nil))
            #expect(answer["status"] as? Int == 200, "\(answer)")
            return answer["body"] as? [String: Any] ?? [:]
        }
    }

    /// The last access-log line is this upload's, over h2, answered 200 on the expected route.
    static func expectLoggedOverH2(_ proxy: ServerProcess, route: String) throws {
        let line = try #require(proxy.accessLog(atLeast: 1).last)
        #expect(line["protocol"] as? String == "h2", "\(line)")
        #expect(line["stream"] as? Int == 1)
        #expect(line["status"] as? Int == 200)
        #expect(line["route"] as? String == route)
    }

    @Test(arguments: Client.allCases, Upload.all)
    func theDemoUpstreamReceivesTheFileByteExact(client: Client, upload: Upload) throws {
        let (certificates, files) = try #require(Self.fixture)
        let file = try #require(files[upload.size])
        let upstream = try startDemoUpstream()
        defer { upstream.stop() }
        let proxy = try Self.startProxy(upstream: upstream.url, certificates: certificates)
        defer { proxy.stop() }
        let receipt = try Self.upload(
            client, file, to: "/\(upload.mode)/upload", through: proxy, certificates: certificates)
        let received = receipt["files"] as? [[String: Any]] ?? []
        #expect(received.count == 1, "\(receipt)")
        #expect(received.first?["name"] as? String == "doc")
        #expect(received.first?["filename"] as? String == Self.filename)
        #expect(received.first?["content_type"] as? String == Self.type)
        #expect(received.first?["size"] as? Int == upload.size)
        #expect(received.first?["sha256"] as? String == file.sha256)
        let fields = (receipt["fields"] as? [[String: Any]] ?? []).map {
            "\($0["name"] as? String ?? "")=\($0["value"] as? String ?? "")"
        }
        #expect(fields == ["via=h2", "title=\(Self.title)"])
        // `buffer` spools and sends the exact length; `stream` re-encodes as it goes.
        let length = TLSListenerTests.header(receipt, "Content-Length")
        if upload.mode == "buffer" {
            #expect(length == ["\(receipt["body_size"] as? Int ?? -1)"], "\(receipt["headers"] ?? "")")
        }
        #expect(length.isEmpty != TLSListenerTests.header(receipt, "Transfer-Encoding").isEmpty)
        #expect(TLSListenerTests.header(receipt, "X-Forwarded-Proto") == [client.tls ? "https" : "http"])
        try Self.expectLoggedOverH2(proxy, route: "/\(upload.mode)")
    }

    /// PHP's answers to direct HTTP/1.1 uploads, by file: one direct upload per file and suite.
    static let directAnswers = Mutex<[String: [String: Any]]>([:])

    /// The clients and uploads PHP sees: curl's both ways at every size, the Python clients at
    /// 1 MiB (their 1 GiB runs go to the demo upstream; PHP's 1 GiB takes ~12 s per upload).
    static let phpCases: [(Client, Upload)] =
        [Client.curlALPN, .curlH2C].flatMap { client in Upload.all.map { (client, $0) } }
        + [Client.httpxALPN, .httpxH2C, .h2ALPN, .h2H2C].flatMap { client in
            ["stream", "buffer"].map { (client, Upload(mode: $0, size: 1 << 20)) }
        }

    @Test(arguments: phpCases)
    func phpSeesThroughH2WhatADirectUploadGivesIt(client: Client, upload: Upload) throws {
        let (certificates, files) = try #require(Self.fixture)
        let file = try #require(files[upload.size])
        let (php, port) = try startPHP(ini: ["upload_max_filesize=2G", "post_max_size=2G"])
        defer { php.stop() }
        let proxy = try Self.startProxy(upstream: "http://127.0.0.1:\(port)", certificates: certificates)
        defer { proxy.stop() }
        let direct = try Self.directAnswers.withLock { answers in
            if let known = answers[file.path] { return known }
            let result = try run(
                try tool("curl"),
                [
                    "-sS", "--form-string", "title=\(Self.title)", "-F",
                    "doc=@\(file.path);filename=\(Self.filename);type=\(Self.type)",
                    "http://127.0.0.1:\(port)/upload.php",
                ])
            answers[file.path] = try jsonObject(result.output)
            return answers[file.path] ?? [:]
        }
        let proxied = try Self.upload(
            client, file, to: "/\(upload.mode)/upload.php", through: proxy, certificates: certificates)
        let directFiles = direct["files"] as? [[String: Any]] ?? []
        #expect(directFiles.count == 1, "\(direct)")
        #expect(directFiles.first?["size"] as? Int == upload.size)
        #expect(directFiles.first?["sha256"] as? String == file.sha256)
        #expect(directFiles.first?["name"] as? String == Self.filename)
        #expect(directFiles.first?["type"] as? String == Self.type)
        #expect(
            NSArray(array: directFiles).isEqual(to: proxied["files"] as? [[String: Any]] ?? []),
            "direct \(directFiles)\nproxied \(proxied)")
        var post = direct["post"] as? [String: Any] ?? [:]
        #expect(post["title"] as? String == Self.title)
        post["via"] = "h2"
        #expect(
            NSDictionary(dictionary: post).isEqual(to: proxied["post"] as? [String: Any] ?? [:]), "\(proxied)"
        )
        try Self.expectLoggedOverH2(proxy, route: "/\(upload.mode)")
    }
}

/// The matrix's certificates and three files, made once before the suite's tests and removed
/// after them.
private struct MatrixFiles: SuiteTrait, TestScoping {
    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let certificates = try TLSCertificates()
        defer { certificates.remove() }
        try certificates.leaf("a.test")
        var files: [Int: HTTP2ClientMatrixTests.File] = [:]
        for size in HTTP2ClientMatrixTests.Upload.sizes {
            files[size] = try HTTP2ClientMatrixTests.write(
                certificates.directory + "/upload-\(size).bin", count: size)
        }
        try await HTTP2ClientMatrixTests.$fixture.withValue((certificates, files)) { try await function() }
    }
}
