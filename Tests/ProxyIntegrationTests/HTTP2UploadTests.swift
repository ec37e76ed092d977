import Foundation
import Testing

/// HTTP/2 from clients through the binary: curl over TLS (ALPN `h2`) uploads byte-exact to the
/// demo upstream while HTTP/1.1 still works on the same listeners, PHP sees what a direct
/// upload gives it, 1 GiB passes in bounded memory, SIGTERM drains, many streams share one
/// connection. (The client × size × mode matrix, h2c with prior knowledge included, is
/// HTTP2ClientMatrixTests; the hostile cases are HTTP2HostileTests.)
@Suite(.serialized) struct HTTP2UploadTests {
    struct Setup {
        let certificates: TLSCertificates
        let upstream: ServerProcess
        let proxy: ServerProcess

        init(extra: String = "") throws {
            certificates = try TLSCertificates()
            let leaf = try certificates.leaf("a.test")
            upstream = try startDemoUpstream()
            proxy = try startListeners(
                ["{ address: 127.0.0.1:0, http2: { h2c: true } }", tlsListener([leaf])],
                "admin: 127.0.0.1:0\nupstream: \(upstream.url)\nroutes:\n  - match: { path: /upload }\n    multipart:\n      inject: [{ name: via, value: h2 }]\n"
                    + extra, workers: 1)
        }

        var h2cPort: Int { proxy.listeners.first { !$0.tls }?.port ?? 0 }
        var tlsPort: Int { proxy.listeners.first { $0.tls }?.port ?? 0 }

        func stop() {
            proxy.stop()
            upstream.stop()
            certificates.remove()
        }
    }

    /// curl's answer body and the HTTP version it used (`-w %{http_version}` on the last line).
    static func curl(_ arguments: [String]) throws -> (body: [String: Any], version: String) {
        let result = try run(
            try tool("curl"), ["-sS", "--fail-with-body", "-w", "\n%{http_version}"] + arguments)
        let text = String(decoding: result.output, as: UTF8.self)
        #expect(result.status == 0, "curl failed: \(text.prefix(300))")
        let version = String(text.split(separator: "\n").last ?? "")
        let body = String(text.dropLast(version.count + 1))
        return (try jsonObject(Data(body.utf8)), version)
    }

    /// The seed of every `file`'s block (named in the byte-exactness checks' failures).
    static let blockSeed: UInt64 = 0x4202

    /// A file of `count` bytes: a pseudo-random 64 KiB block (seeded with `blockSeed`)
    /// repeated, each copy numbered.
    static func file(_ setup: Setup, count: Int) throws -> (path: String, sha256: String) {
        let block = SeededRandom.bytes(65_536, seed: blockSeed)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        var index = 0
        while bytes.count < count {
            var copy = block
            copy[0] = UInt8(truncatingIfNeeded: index)
            bytes += copy.prefix(count - bytes.count)
            index += 1
        }
        let path = setup.certificates.directory + "/upload-\(count).bin"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (path, Digest.hex(bytes))
    }

    static func expectReceived(_ receipt: [String: Any], size: Int, sha256: String) {
        let files = receipt["files"] as? [[String: Any]] ?? []
        #expect(files.count == 1, "\(receipt)")
        #expect(files.first?["size"] as? Int == size)
        #expect(files.first?["sha256"] as? String == sha256, "block seed \(blockSeed)")
        let fields = (receipt["fields"] as? [[String: Any]] ?? []).map {
            "\($0["name"] ?? "")=\($0["value"] ?? "")"
        }
        #expect(fields.contains("via=h2") && fields.contains("title=two"), "\(fields)")
    }

    @Test func alpnH2OverTLSUploadsByteExactAndHTTP1StillWorks() throws {
        let setup = try Setup()
        defer { setup.stop() }
        let file = try Self.file(setup, count: 3 << 20)
        let tls = [
            "--cacert", setup.certificates.ca, "--resolve", "a.test:\(setup.tlsPort):127.0.0.1", "-F",
            "title=two",
            "-F", "file=@\(file.path)", "https://a.test:\(setup.tlsPort)/upload",
        ]
        let (h2, h2Version) = try Self.curl(["--http2"] + tls)
        #expect(h2Version == "2")
        Self.expectReceived(h2, size: 3 << 20, sha256: file.sha256)
        #expect(TLSListenerTests.header(h2, "X-Forwarded-Proto") == ["https"])
        let (h1, h1Version) = try Self.curl(["--http1.1"] + tls)
        #expect(h1Version == "1.1")
        Self.expectReceived(h1, size: 3 << 20, sha256: file.sha256)
        // HTTP/1.1 on the h2c listener: the preface decides, not the port.
        let (plain, plainVersion) = try Self.curl([
            "-F", "title=two", "-F", "file=@\(file.path)", "http://127.0.0.1:\(setup.h2cPort)/upload",
        ])
        #expect(plainVersion == "1.1")
        Self.expectReceived(plain, size: 3 << 20, sha256: file.sha256)
        let protocols = setup.proxy.accessLog(atLeast: 3).compactMap { $0["protocol"] as? String }
        #expect(protocols == ["h2", "http/1.1", "http/1.1"])
        #expect(try setup.proxy.metric("formgate_requests_by_protocol_total{protocol=\"h2\"}") == 1)
        #expect(try setup.proxy.metric("formgate_requests_by_protocol_total{protocol=\"http/1.1\"}") == 2)
    }

    /// PHP's own parser sees over HTTP/2 what a direct HTTP/1.1 upload gives it, in both modes.
    @Test(arguments: ["stream", "buffer"])
    func phpSeesWhatADirectUploadGivesIt(mode: String) throws {
        let (php, port) = try startPHP()
        defer { php.stop() }
        let proxy = try startListeners(
            ["{ address: 127.0.0.1:0, http2: { h2c: true } }"],
            "upstream: http://127.0.0.1:\(port)\nroutes:\n  - match: { path: / }\n    request_body: \(mode)\n    multipart: {}\n",
            workers: 1)
        defer { proxy.stop() }
        let file = NSTemporaryDirectory() + "formgate-h2-php-\(UUID().uuidString)"
        let seed: UInt64 = 0x4203
        try Data(SeededRandom.bytes(200_000, seed: seed)).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        func upload(_ base: String, _ flags: [String]) throws -> [String: Any] {
            let result = try run(
                try tool("curl"),
                ["-sS"] + flags + [
                    "-F", "title=Résumé \"quoted\"", "-F", "tags[]=a", "-F", "tags[]=b",
                    "-F", "doc=@\(file);filename=report 2024.pdf;type=application/pdf", base + "/upload.php",
                ])
            return try jsonObject(result.output)
        }
        let direct = try upload("http://127.0.0.1:\(port)", [])
        let proxied = try upload(proxy.url, ["--http2-prior-knowledge"])
        #expect(
            NSDictionary(dictionary: direct).isEqual(to: proxied),
            "content seed \(seed)\ndirect \(direct)\nproxied \(proxied)")
        #expect(proxy.accessLog(atLeast: 1).first?["protocol"] as? String == "h2")
    }

    /// 1 GiB over one h2c stream: byte-exact upstream, and the proxy's memory stays bounded
    /// (the stream's 1 MiB window and the watermarks, not the upload's size).
    @Test func aGibibyteStreamsThroughInBoundedMemory() throws {
        let setup = try Setup()
        defer { setup.stop() }
        let path = setup.certificates.directory + "/big.bin"
        let chunk = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        let digest = Digest()
        for index in 0..<1024 {
            var block = chunk
            block[0] = UInt8(truncatingIfNeeded: index)
            handle.write(Data(block))
            digest.update(block)
        }
        try handle.close()
        let baseline = setup.proxy.residentKiB
        let (receipt, version) = try Self.curl([
            "--http2-prior-knowledge", "-F", "title=two", "-F", "file=@\(path)",
            "http://127.0.0.1:\(setup.h2cPort)/upload",
        ])
        #expect(version == "2")
        Self.expectReceived(receipt, size: 1 << 30, sha256: digest.hex())
        #expect(
            setup.proxy.peakRSSKiB - baseline < 64 * 1024,
            "peak \(setup.proxy.peakRSSKiB) KiB from \(baseline) KiB")
    }

    /// SIGTERM during an upload over h2c: the connection gets GOAWAY (NO_ERROR, last stream
    /// 1), the stream in flight finishes byte-exact, then the process exits. (curl, rate
    /// limited to 4 MB/s, takes 8 s for the 32 MiB; the signal goes once the upload is in flight.
    /// Python's h2 stops sending at any GOAWAY, so it cannot be the client here.)
    @Test func sigtermSendsGoawayAndLetsTheStreamFinish() throws {
        let setup = try Setup(extra: "timeouts: { drain: 30s }\n")
        defer { setup.stop() }
        let file = try Self.file(setup, count: 32 << 20)
        let answer = setup.certificates.directory + "/drain.json"
        let client = Process()
        client.executableURL = URL(fileURLWithPath: try tool("curl"))
        client.arguments = [
            "-v", "-sS", "--http2-prior-knowledge", "--limit-rate", "4M", "-F", "title=two", "-F",
            "file=@\(file.path)", "-o", answer, "http://127.0.0.1:\(setup.h2cPort)/upload",
        ]
        let errors = Pipe()
        client.standardError = errors
        try client.run()
        #expect(eventually { (try? setup.proxy.metric("formgate_uploads_in_flight")) == 1 })
        kill(setup.proxy.pid, SIGTERM)
        let trace = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        client.waitUntilExit()
        #expect(client.terminationStatus == 0, "\(trace.suffix(500))")
        // curl's own spelling.
        #expect(trace.contains("GOAWAY, error=0, last_stream=1"), "\(trace.suffix(800))")
        Self.expectReceived(
            try jsonObject(try Data(contentsOf: URL(fileURLWithPath: answer))), size: 32 << 20,
            sha256: file.sha256)
        setup.proxy.process.waitUntilExit()
        #expect(setup.proxy.process.terminationStatus == 0)
        #expect(setup.proxy.stderr.contains("draining"))
    }

    /// Uploads at once on one connection, with httpx (curl 7.88's `--parallel` fails its
    /// second multipart upload on a multiplexed connection, against nginx too).
    @Test(arguments: [(10, 2 << 20), (100, 256 << 10)])
    func concurrentStreamsOnOneConnectionAreEachByteExact(count: Int, size: Int) throws {
        let setup = try Setup()
        defer { setup.stop() }
        let file = try Self.file(setup, count: size)
        let script = UpstreamServerTests.resources.appendingPathComponent("h2_uploads.py").path
        let result = try run(
            try python3(), [script, "http://127.0.0.1:\(setup.h2cPort)/upload", String(count), file.path])
        let answer = try jsonObject(result.output)
        #expect(answer["versions"] as? [String] == Array(repeating: "HTTP/2", count: count))
        #expect(answer["statuses"] as? [Int] == Array(repeating: 200, count: count))
        for receipt in answer["receipts"] as? [[String: Any]] ?? [] {
            Self.expectReceived(receipt, size: size, sha256: file.sha256)
        }
        let streams = Set(setup.proxy.accessLog(atLeast: count).compactMap { $0["stream"] as? Int })
        #expect(streams.count == count, "\(count) streams: \(streams.count)")
    }
}
