import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The TLS listener over time: SIGHUP serves new certificates to new connections while an
/// upload on an old one completes; a bad new file keeps the old certificate; aborted and
/// silent handshakes are closed, counted and leave no descriptor or log line behind.
@Suite(.serialized) struct TLSLifecycleTests {
    /// A proxy whose TLS listener serves `site.pem`/`site.key` (a.test, serial 1) from
    /// `certificates`, with an admin listener, in front of a demo upstream.
    struct Setup {
        let certificates: TLSCertificates
        let upstream: ServerProcess
        let proxy: ServerProcess
        let site: (cert: String, key: String)

        init(extra: String = "", workers: Int = 2) throws {
            certificates = try TLSCertificates()
            site = try certificates.leaf("a.test", file: "site", serial: 1)
            upstream = try startDemoUpstream()
            proxy = try startListeners(
                [tlsListener([site])], "admin: 127.0.0.1:0\nupstream: \(upstream.url)\n" + extra,
                workers: workers)
        }

        /// The serial number a new connection is served.
        func servedSerial() throws -> String? {
            let hello = try TLSListenerTests.python(["hello", String(proxy.port), "a.test", certificates.ca])
            return hello.first?["serial"] as? String
        }

        /// Sends SIGHUP and waits for the `count`th "configuration reloaded" line.
        func reload(expecting count: Int) {
            kill(proxy.pid, SIGHUP)
            #expect(
                eventually(within: 60) {
                    proxy.stderr.components(separatedBy: "configuration reloaded").count > count
                }, "\(proxy.stderr)")
        }

        /// The sum of the handshake failure counters.
        func handshakeFailures() throws -> Int {
            try ["closed", "version", "server_name", "other", "timeout"].reduce(0) {
                $0 + (try proxy.metric("formgate_tls_handshake_failures_total{reason=\"\($1)\"}") ?? 0)
            }
        }
    }

    @Test func reloadServesANewCertificateWhileAnOldUploadCompletes() throws {
        let setup = try Setup()
        defer { setup.certificates.remove() }
        let before = try #require(try setup.servedSerial())

        // An upload over a connection made before the reload: half its body, then it waits.
        let content = try TLSListenerTests.payload(setup.certificates.directory, "content", count: 400_000)
            .bytes
        let body =
            Array("--rb\r\nContent-Disposition: form-data; name=\"file\"; filename=\"slow.bin\"\r\n\r\n".utf8)
            + content + Array("\r\n--rb--\r\n".utf8)
        let bodyPath = setup.certificates.directory + "/body"
        try Data(body).write(to: URL(fileURLWithPath: bodyPath))
        let gate = setup.certificates.directory + "/gate"
        let slow = try ServerProcess(
            try python3(),
            [
                TLSListenerTests.client, "upload", String(setup.proxy.port), "a.test", setup.certificates.ca,
                bodyPath, "rb", gate,
            ], waitForListening: false)
        #expect(eventually(within: 60) { slow.stdout.contains("\"sent\"") }, "\(slow.stderr)")

        // A new certificate (serial 2) moved over the files, then SIGHUP.
        let next = try setup.certificates.leaf("a.test", file: "next", serial: 2)
        #expect(rename(next.cert, setup.site.cert) == 0)
        #expect(rename(next.key, setup.site.key) == 0)
        setup.reload(expecting: 1)
        let after = try #require(try setup.servedSerial())
        #expect(after != before)

        // The old connection goes on with its certificate and completes byte-exact.
        let lines = slow.stdout.split(separator: "\n").map { try? jsonObject(Data($0.utf8)) }
        #expect(lines.first??["serial"] as? String == before)
        #expect(FileManager.default.createFile(atPath: gate, contents: nil))
        #expect(eventually(within: 60) { !slow.process.isRunning })
        let answer = try jsonObject(Data((slow.stdout.split(separator: "\n").last ?? "").utf8))
        #expect(answer["status"] as? Int == 200)
        let receipt = try jsonObject(Data(((answer["body"] as? String) ?? "").utf8))
        #expect(receipt["body_size"] as? Int == body.count)
        #expect(receipt["body_sha256"] as? String == Digest.hex(body))
        #expect((receipt["files"] as? [[String: Any]])?.first?["sha256"] as? String == Digest.hex(content))
    }

    @Test func aBadNewCertificateKeepsTheOldOne() throws {
        let setup = try Setup()
        defer { setup.certificates.remove() }
        let before = try #require(try setup.servedSerial())

        // A file that is there but is not a certificate: the YAML loads, the certificate not.
        try "not a certificate\n".write(toFile: setup.site.cert, atomically: true, encoding: .utf8)
        setup.reload(expecting: 1)
        #expect(setup.proxy.stderr.contains("TLS certificates kept"), "\(setup.proxy.stderr)")
        #expect(setup.proxy.stderr.contains(setup.site.cert))
        #expect(try setup.servedSerial() == before)

        // A missing file: the whole reload is refused, with its line and key path.
        try FileManager.default.removeItem(atPath: setup.site.cert)
        kill(setup.proxy.pid, SIGHUP)
        #expect(
            eventually(within: 60) { setup.proxy.stderr.contains("reload refused") }, "\(setup.proxy.stderr)")
        #expect(setup.proxy.stderr.contains("listen[0].tls.certificates[0].cert"))
        #expect(try setup.servedSerial() == before)
    }

    @Test func formgateCheckLoadsTheCertificates() throws {
        let certificates = try TLSCertificates()
        defer { certificates.remove() }
        let good = try certificates.leaf("a.test")
        let junk = certificates.directory + "/junk.pem"
        try "not a certificate\n".write(toFile: junk, atomically: true, encoding: .utf8)
        let other = try certificates.leaf("b.test")
        let cases: [((cert: String, key: String), Bool)] = [
            (good, true), ((junk, good.key), false), ((good.cert, other.key), false),
        ]
        for (pair, passes) in cases {
            let path = certificates.directory + "/check.yaml"
            try tlsConfig([tlsListener([pair])], "").write(toFile: path, atomically: true, encoding: .utf8)
            let result = try run(formgateBinary, ["check", "-c", path])
            #expect((result.status == 0) == passes, "\(pair)")
            #expect(String(decoding: result.output, as: UTF8.self).contains("ok") == passes)
        }
    }

    @Test func thousandAbortedHandshakesLeaveDescriptorsAtBaseline() throws {
        let setup = try Setup()
        defer { setup.certificates.remove() }
        // One whole handshake first, so that anything opened lazily is in the baseline.
        #expect(try setup.servedSerial() != nil)
        let baseline = setup.proxy.openDescriptors
        #expect(baseline > 0)
        let result = try TLSListenerTests.python(["abort", String(setup.proxy.port), "1000"])
        #expect(result.first?["aborted"] as? Int == 1000)
        #expect(eventually(within: 120) { (try? setup.handshakeFailures()) == 1000 })
        #expect(
            eventually(within: 120) { setup.proxy.openDescriptors <= baseline },
            "\(setup.proxy.openDescriptors) descriptors open, \(baseline) before")
        #expect(try setup.proxy.metric("formgate_tls_handshake_failures_total{reason=\"closed\"}") ?? 0 > 0)
        #expect(try setup.proxy.metric("formgate_tls_handshake_failures_total{reason=\"other\"}") ?? 0 > 0)
        // Each is counted by what the client did, at once: none waited for the handshake timeout
        // (a failure reported before the connection had a delegate would).
        #expect(try setup.proxy.metric("formgate_tls_handshake_failures_total{reason=\"timeout\"}") == 0)
        // No access-log line for a handshake that failed, none on stderr either (only the
        // start lines), and the listener still serves.
        #expect(setup.proxy.stdoutLineCount == 0)
        #expect(setup.proxy.stderr.split(separator: "\n").count <= 3, "\(setup.proxy.stderr)")
        #expect(try setup.servedSerial() != nil)
        recordFigure(
            "tls-aborted-handshakes",
            [
                "handshakes": 1000, "descriptorsBefore": baseline,
                "descriptorsAfter": setup.proxy.openDescriptors,
            ])
    }

    @Test func aSilentClientIsClosedAfterTheHandshakeTimeout() throws {
        let setup = try Setup(extra: "timeouts: { tls_handshake: 1s }\n")
        defer { setup.certificates.remove() }
        let silent = try RawClient(port: setup.proxy.port)
        // Part of a record header, then nothing: the proxy ends it, not the client.
        let partial = try RawClient(port: setup.proxy.port)
        partial.send([0x16, 0x03, 0x01])
        for client in [silent, partial] {
            // Waits for the proxy's FIN (or the 60 s receive timeout, which the metric below
            // tells apart).
            #expect(client.readAll(timeout: 60).isEmpty)
        }
        #expect(
            eventually(within: 30) {
                (try? setup.proxy.metric("formgate_tls_handshake_failures_total{reason=\"timeout\"}")) == 2
            })
        #expect(setup.proxy.stdoutLineCount == 0)
    }
}
