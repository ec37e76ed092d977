import Foundation
import Testing

/// Real tus clients against a `tus:` route: the official Python client (tuspy) and curl driving
/// the raw protocol. Each finished upload must reach the upstream (PHP's `$_FILES`, Werkzeug,
/// the Qiniu mock) as one multipart POST, byte-exact, exactly once, with the route's rules
/// applied (renamed by `{uuid}{ext}`, typed by `filetype`, `title` as a form field). The
/// browser is TusClientBrowserTests; concatenation and HTTP/2 are TusClientDeliveryTests;
/// retried completions are TusClientRetryTests.
@Suite(.serialized) struct TusClientTests {
    static let resources = UpstreamServerTests.resources

    struct TuspyCase: Sendable, CustomTestStringConvertible {
        let upstream: TusUpstreamKind
        let size: Int
        let chunk: Int

        /// tuspy sends an `Upload-Checksum` (sha1) with each 5 MiB chunk.
        var checksum: Bool { chunk == 5 << 20 }

        var testDescription: String {
            "\(upstream) \(size) B in \(chunk >> 20) MiB chunks" + (checksum ? " with Upload-Checksum" : "")
        }

        /// 0 B and 1 MiB with both chunk sizes at every upstream; 64 MiB once per upstream
        /// (1 MiB chunks at PHP and Qiniu, 5 MiB at Werkzeug).
        static let all: [TuspyCase] = TusUpstreamKind.allCases.flatMap { upstream in
            [0, 1 << 20].flatMap { size in
                [1 << 20, 5 << 20].map { TuspyCase(upstream: upstream, size: size, chunk: $0) }
            }
                + [
                    TuspyCase(
                        upstream: upstream, size: 64 << 20, chunk: upstream == .werkzeug ? 5 << 20 : 1 << 20)
                ]
        }
    }

    /// tuspy's `Uploader.upload()` (creation, then one PATCH per chunk; only the creation for
    /// a 0-byte file): every PATCH but the last answers 204 with the new offset, the last one
    /// (or the creation of the empty file) answers with the upstream's own answer, which says
    /// it received the file byte-exact, once, renamed, with the `title` field.
    @Test(arguments: TuspyCase.all)
    func tuspyUploadsAndTheUpstreamGetsTheFileOnce(_ test: TuspyCase) throws {
        let upstream = try TusUpstream.start(test.upstream)
        defer { upstream.server.stop() }
        let setup = try TusSetup(test.upstream, upstreamURL: upstream.url)
        defer { setup.stop() }
        let seed = 0x7_5500 + UInt64(test.size)
        let bytes = SeededRandom.bytes(test.size, seed: seed)
        let file = NSTemporaryDirectory() + "formgate-tuspy-\(UUID().uuidString).mp4"
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let title = "tuspy ☀ \(test.size)"
        let metadata = try JSONSerialization.data(withJSONObject: [
            "filename": "holiday clip.mp4", "filetype": "video/mp4", "title": title,
        ])
        let (status, output) = try run(
            try sdkPython(),
            [
                Self.resources.appendingPathComponent("tus_client.py").path, setup.creationURL, file,
                String(test.chunk), String(decoding: metadata, as: UTF8.self),
            ] + (test.checksum ? ["checksum"] : []))
        let result = try jsonObject(output)
        #expect(status == 0, "tuspy: \(result)")

        // What tuspy sent and got.
        let patches = (test.size + test.chunk - 1) / test.chunk
        let exchanges = result["exchanges"] as? [[String: Any]] ?? []
        let seen = exchanges.map { "\($0["method"] ?? "") \($0["status"] ?? "")" }
        let expected =
            test.size == 0
            ? ["POST 201"] : ["POST 201"] + Array(repeating: "PATCH 204", count: patches - 1) + ["PATCH 200"]
        #expect(seen == expected)
        let offsets = exchanges.dropFirst().compactMap { ($0["offset"] as? String).flatMap { Int($0) } }
        #expect(offsets == (1...max(1, patches)).prefix(patches).map { min($0 * test.chunk, test.size) })
        let location = try #require(result["location"] as? String)
        #expect(location.hasPrefix(setup.creationURL + "/") && location.count == setup.creationURL.count + 33)

        // What the upstream received (its answer, relayed).
        let receipt = try TusReceipt(test.upstream, Array((result["body"] as? String ?? "").utf8))
        expectDelivered(
            receipt, test.upstream, bytes: bytes, ext: ".mp4", type: "video/mp4", title: title, seed: seed)
        #expect(upstream.sawOnePost(), "the upstream counted \(upstream.postsSeen ?? -1) POSTs")

        // The access log: one line per tus request, one for the delivery.
        let deliveries = setup.deliveries(atLeast: exchanges.count + 1)
        expectDeliveryLine(deliveries, original: "holiday clip.mp4", size: test.size)
        let id = String(location.suffix(32))
        let events = setup.tusLines.map { ($0["tus"] as? [String: Any])?["event"] as? String ?? "null" }
        #expect(
            events
                == (test.size == 0
                    ? ["completed"]
                    : ["created"] + Array(repeating: "patched", count: patches - 1) + ["completed"]))
        let last = try #require(setup.tusLines.last?["tus"] as? [String: Any])
        #expect(last["id"] as? String == id)
        #expect(last["offset"] as? Int == test.size && last["length"] as? Int == test.size)
    }

    /// curl drives the raw protocol, each step checked: OPTIONS (the capabilities), POST (201,
    /// an absolute Location, Upload-Expires), HEAD (offset, length, metadata, no-store), PATCH
    /// in three pieces (each with a checksum of another algorithm; a piece at a wrong offset is
    /// 409 and changes nothing), the last PATCH answered with the upstream's answer, then DELETE
    /// (204) and HEAD (404). A second upload terminated half-way never reaches the upstream; a
    /// third, created with all its bytes (creation-with-upload), is 201 with the upstream's
    /// answer.
    @Test(arguments: TusUpstreamKind.allCases)
    func curlDrivesTheRawProtocol(_ kind: TusUpstreamKind) throws {
        let upstream = try TusUpstream.start(kind)
        defer { upstream.server.stop() }
        let setup = try TusSetup(kind, upstreamURL: upstream.url)
        defer { setup.stop() }
        let seed: UInt64 = 0x7_5C01
        let bytes = SeededRandom.bytes(2_500_000, seed: seed)
        let pieces = [bytes[..<700_000], bytes[700_000..<1_900_001], bytes[1_900_001...]].map { Array($0) }
        let directory = NSTemporaryDirectory() + "formgate-tus-curl-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for (index, piece) in pieces.enumerated() {
            try Data(piece).write(to: URL(fileURLWithPath: "\(directory)/piece\(index)"))
        }
        let tus = ["-H", "Tus-Resumable: 1.0.0"]
        let octets = ["-H", "Content-Type: application/offset+octet-stream"]

        let options = try curlTus(["-X", "OPTIONS", setup.creationURL])
        #expect(options.status == 204, "\(options)")
        #expect(options.header("Tus-Version") == "1.0.0")
        #expect(
            Set((options.header("Tus-Extension") ?? "").split(separator: ",").map(String.init)).isSuperset(
                of: [
                    "creation", "creation-with-upload", "creation-defer-length", "expiration", "checksum",
                    "termination",
                    "concatenation",
                ]), "\(options)")
        #expect(options.header("Tus-Max-Size") == String(1 << 30))
        #expect(
            Set((options.header("Tus-Checksum-Algorithm") ?? "").split(separator: ",")) == [
                "sha1", "sha256", "md5",
            ])

        let title = "curl: ünïcode, commas"
        let metadata = tusMetadata([
            ("filename", "scan.pdf"), ("filetype", "application/pdf"), ("title", title),
        ])
        let created = try curlTus(
            ["-X", "POST"] + tus + [
                "-H", "Upload-Length: \(bytes.count)", "-H", "Upload-Metadata: \(metadata)",
                setup.creationURL,
            ])
        #expect(created.status == 201, "\(created)")
        let location = try #require(created.header("Location"))
        #expect(
            location.hasPrefix("http://127.0.0.1:\(setup.port)/files/")
                && location.count == setup.creationURL.count + 33)
        let expires = try #require(created.header("Upload-Expires"))
        let format = DateFormatter()
        format.locale = Locale(identifier: "en_US_POSIX")
        format.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        format.timeZone = TimeZone(identifier: "GMT")
        let expiry = try #require(format.date(from: expires), "an HTTP date: \(expires)")
        #expect(abs(expiry.timeIntervalSinceNow - 3600) < 120, "expire_after: 1h, \(expires)")

        let head = try curlTus(["-I"] + tus + [location])
        #expect(head.status == 200, "\(head)")
        #expect(head.header("Upload-Offset") == "0")
        #expect(head.header("Upload-Length") == String(bytes.count))
        #expect(head.header("Upload-Metadata") == metadata)
        #expect(head.header("Cache-Control") == "no-store")

        // Piece 0 with a SHA-1, piece 1 first at a wrong offset (409), then with a SHA-256,
        // piece 2 (completing the upload) with an MD5.
        func patch(_ index: Int, offset: Int, _ algorithm: String) throws -> TusResponse {
            try curlTus(
                ["-X", "PATCH"] + tus + octets + [
                    "-H", "Upload-Offset: \(offset)", "-H",
                    "Upload-Checksum: \(algorithm) \(try checksum(algorithm, pieces[index]))",
                    "--data-binary", "@\(directory)/piece\(index)", location,
                ])
        }
        let first = try patch(0, offset: 0, "sha1")
        #expect(first.status == 204 && first.header("Upload-Offset") == "700000", "\(first)")
        let wrong = try patch(1, offset: 1, "sha256")
        #expect(wrong.status == 409, "\(wrong)")
        #expect(try curlTus(["-I"] + tus + [location]).header("Upload-Offset") == "700000")
        let second = try patch(1, offset: 700_000, "sha256")
        #expect(second.status == 204 && second.header("Upload-Offset") == "1900001", "\(second)")
        let last = try patch(2, offset: 1_900_001, "md5")
        #expect(last.status == 200, "the upstream's status: \(last)")
        #expect(
            last.header("Upload-Offset") == String(bytes.count) && last.header("Tus-Resumable") == "1.0.0")
        expectDelivered(
            try TusReceipt(kind, last.body), kind, bytes: bytes, ext: ".pdf", type: "application/pdf",
            title: title, seed: seed)

        let deleted = try curlTus(["-X", "DELETE"] + tus + [location])
        #expect(deleted.status == 204, "\(deleted)")
        #expect(try curlTus(["-I"] + tus + [location]).status == 404)

        // Terminated half-way: nothing of it goes upstream, and it is gone.
        let abandoned = try curlTus(
            ["-X", "POST"] + tus + [
                "-H", "Upload-Length: \(bytes.count)", "-H", "Upload-Metadata: \(metadata)",
                setup.creationURL,
            ])
        let abandonedURL = try #require(abandoned.header("Location"))
        #expect(try patch(0, offset: 0, "sha1").status == 404, "the first upload is gone")
        let half = try curlTus(
            ["-X", "PATCH"] + tus + octets + [
                "-H", "Upload-Offset: 0", "--data-binary", "@\(directory)/piece0", abandonedURL,
            ])
        #expect(half.status == 204, "\(half)")
        #expect(try curlTus(["-X", "DELETE"] + tus + [abandonedURL]).status == 204)
        #expect(try curlTus(["-I"] + tus + [abandonedURL]).status == 404)
        let late = try curlTus(
            ["-X", "PATCH"] + tus + octets + [
                "-H", "Upload-Offset: 700000", "--data-binary", "@\(directory)/piece1", abandonedURL,
            ])
        #expect(late.status == 404, "\(late)")

        // Creation with upload, all bytes at once: 201, Location, and the upstream's answer.
        let small = Array(bytes.prefix(100_000))
        try Data(small).write(to: URL(fileURLWithPath: "\(directory)/small"))
        let whole = try curlTus(
            ["-X", "POST"] + tus + octets + [
                "-H", "Upload-Length: \(small.count)", "-H",
                "Upload-Metadata: \(tusMetadata([("filename", "small.pdf"), ("filetype", "application/pdf"), ("title", "small")]))",
                "--data-binary", "@\(directory)/small", setup.creationURL,
            ])
        #expect(whole.status == 201 && whole.header("Location") != nil, "\(whole)")
        #expect(whole.header("Upload-Offset") == String(small.count))
        expectDelivered(
            try TusReceipt(kind, whole.body), kind, bytes: small, ext: ".pdf", type: "application/pdf",
            title: "small",
            seed: seed)

        // Two deliveries in all, the terminated upload's bytes never among them.
        let deliveries = setup.deliveries(atLeast: 19)
        #expect(deliveries.count == 2, "\(deliveries)")
        #expect(deliveries.compactMap { $0["status"] as? Int } == [200, 200])
        if upstream.postsSeen != nil {
            eventually(within: 10) { (upstream.postsSeen ?? 0) >= 2 }
            #expect(upstream.postsSeen == 2, "the upstream counted \(upstream.postsSeen ?? -1) POSTs")
        }
    }

    /// creation-defer-length with curl: the upload is created with `Upload-Defer-Length: 1`
    /// (HEAD says so), a first PATCH sends bytes without a length, the last one declares
    /// `Upload-Length` with its bytes and is answered with the upstream's answer (byte-exact).
    @Test func curlDefersTheLength() throws {
        let upstream = try TusUpstream.start(.php)
        defer { upstream.server.stop() }
        let setup = try TusSetup(.php, upstreamURL: upstream.url)
        defer { setup.stop() }
        let seed: UInt64 = 0x7_5DEF
        let bytes = SeededRandom.bytes(1_300_000, seed: seed)
        let directory = NSTemporaryDirectory() + "formgate-tus-defer-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data(bytes[..<1_000_000]).write(to: URL(fileURLWithPath: directory + "/a"))
        try Data(bytes[1_000_000...]).write(to: URL(fileURLWithPath: directory + "/b"))
        let tus = ["-H", "Tus-Resumable: 1.0.0"]
        let octets = ["-H", "Content-Type: application/offset+octet-stream"]
        let metadata = tusMetadata([("filename", "stream.ts"), ("filetype", "video/mp2t"), ("title", "live")])
        let created = try curlTus(
            ["-X", "POST"] + tus + [
                "-H", "Upload-Defer-Length: 1", "-H", "Upload-Metadata: \(metadata)", setup.creationURL,
            ])
        #expect(created.status == 201, "\(created)")
        let location = try #require(created.header("Location"))
        let head = try curlTus(["-I"] + tus + [location])
        #expect(head.header("Upload-Defer-Length") == "1" && head.header("Upload-Length") == nil, "\(head)")
        let first = try curlTus(
            ["-X", "PATCH"] + tus + octets + [
                "-H", "Upload-Offset: 0", "--data-binary", "@\(directory)/a", location,
            ])
        #expect(first.status == 204 && first.header("Upload-Offset") == "1000000", "\(first)")
        let last = try curlTus(
            ["-X", "PATCH"] + tus + octets + [
                "-H", "Upload-Offset: 1000000", "-H", "Upload-Length: \(bytes.count)", "--data-binary",
                "@\(directory)/b", location,
            ])
        #expect(last.status == 200 && last.header("Upload-Offset") == String(bytes.count), "\(last)")
        expectDelivered(
            try TusReceipt(.php, last.body), .php, bytes: bytes, ext: ".ts", type: "video/mp2t",
            title: "live",
            seed: seed)
        #expect(upstream.postsSeen == 1, "PHP counted \(upstream.postsSeen ?? -1) POSTs")
        expectDeliveryLine(setup.deliveries(atLeast: 5), original: "stream.ts", size: bytes.count)
    }
}

/// The `Upload-Checksum` value of `bytes` (base64 of the digest) by openssl.
func checksum(_ algorithm: String, _ bytes: [UInt8]) throws -> String {
    let file = NSTemporaryDirectory() + "formgate-tus-sum-\(UUID().uuidString)"
    try Data(bytes).write(to: URL(fileURLWithPath: file))
    defer { try? FileManager.default.removeItem(atPath: file) }
    let (status, output) = try run(try tool("openssl"), ["dgst", "-\(algorithm)", "-binary", file])
    guard status == 0 else { throw TestFailure("openssl dgst -\(algorithm) failed") }
    return output.base64EncodedString()
}
