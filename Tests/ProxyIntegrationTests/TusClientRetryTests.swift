import Foundation
import Testing

/// Exactly once, seen from the upstream: a completion retried after the client lost the answer
/// (after the delivery, or while it is under way) gets the upstream's answer and causes no
/// second POST; a completion the upstream could not take (nothing listening, or a 503) is
/// delivered by the next final PATCH once PHP is up on that port; an upstream's refusal (a 4xx)
/// is stored and replayed, not delivered again; the stored answer survives a restart.
@Suite(.serialized) struct TusClientRetryTests {
    /// The final PATCH is sent and its connection closed before the answer (the client lost
    /// it); the client asks HEAD where the upload is (all bytes there) and sends the final
    /// PATCH again (`Upload-Offset` = length, no bytes): the upstream's answer, byte-exact,
    /// without a second POST. Retried again, with the last piece's bytes resent at its old
    /// offset: the same answer, byte for byte; the upstream counted one POST.
    @Test func aFinalPatchRetriedAfterTheAnswerWasLostGetsTheSameAnswer() throws {
        let upstream = try TusUpstream.start(.php)
        defer { upstream.server.stop() }
        let setup = try TusSetup(.php, upstreamURL: upstream.url)
        defer { setup.stop() }
        let port = setup.port
        let seed: UInt64 = 0x7_5105
        let bytes = SeededRandom.bytes(1_500_000, seed: seed)
        let title = "lost"
        let path = try TusHTTP.create(
            port: port, length: bytes.count,
            metadata: tusMetadata([
                ("filename", "lost.bin"), ("filetype", "application/octet-stream"), ("title", title),
            ]))
        let first = try TusHTTP.patch(port: port, path, offset: 0, Array(bytes[..<1_000_000]))
        #expect(first.status == 204, "\(first)")
        let last = Array(bytes[1_000_000...])
        do {
            let client = try RawClient(port: port)
            let head = TusHTTP.head(
                port: port, "PATCH", path,
                [("Upload-Offset", "1000000"), ("Content-Type", "application/offset+octet-stream")],
                bodyCount: last.count)
            client.send(head + last)
            // Released here: closed without reading the answer.
        }
        #expect(
            eventually(within: 30) {
                (try? TusHTTP.send(port: port, "HEAD", path))?.header("Upload-Offset") == String(bytes.count)
            }, "the lost PATCH's bytes were kept")
        let retried = try TusHTTP.patch(port: port, path, offset: bytes.count, [])
        #expect(retried.status == 200, "the upstream's answer: \(retried)")
        #expect(retried.header("Upload-Offset") == String(bytes.count))
        expectDelivered(
            try TusReceipt(.php, retried.body), .php, bytes: bytes, ext: ".bin",
            type: "application/octet-stream",
            title: title, seed: seed)
        let again = try TusHTTP.patch(port: port, path, offset: 1_000_000, last)
        #expect(again.status == retried.status && again.body == retried.body, "the same answer: \(again)")
        #expect(again.header("Content-Type") == retried.header("Content-Type"))
        #expect(upstream.postsSeen == 1, "the upstream counted \(upstream.postsSeen ?? -1) POSTs")
        expectDeliveryLine(setup.deliveries(atLeast: 7), original: "lost.bin", size: bytes.count)
    }

    enum Outage: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// Nothing listens on the upstream's port.
        case nothingListens
        /// An upstream answers 503 (`Resources/tus_unavailable.py`).
        case answers503

        var testDescription: String { rawValue }
    }

    /// The upstream cannot take the upload when it completes: the final PATCH fails with a
    /// 5xx (with a 503 upstream: its status and body) and the bytes stay (HEAD: offset =
    /// length). Once PHP listens on that port, the next final PATCH (`Upload-Offset` = length,
    /// no bytes) delivers: PHP's answer, byte-exact, PHP counted one POST; retried once more,
    /// the same answer and no second POST.
    @Test(arguments: Outage.allCases)
    func anUploadTheUpstreamCouldNotTakeIsDeliveredByTheNextFinalPatch(_ outage: Outage) throws {
        var failing: ServerProcess?
        let upstreamPort: Int
        switch outage {
        case .nothingListens:
            upstreamPort = try freePort()
        case .answers503:
            let server = try ServerProcess(
                try python3(),
                [UpstreamServerTests.resources.appendingPathComponent("tus_unavailable.py").path])
            failing = server
            upstreamPort = server.port
        }
        defer { failing?.stop() }
        let setup = try TusSetup(.php, upstreamURL: "http://127.0.0.1:\(upstreamPort)")
        defer { setup.stop() }
        let port = setup.port
        let seed: UInt64 = 0x7_5D0E
        let bytes = SeededRandom.bytes(800_000, seed: seed)
        let title = "down, then up"
        let path = try TusHTTP.create(
            port: port, length: bytes.count,
            metadata: tusMetadata([
                ("filename", "late.bin"), ("filetype", "application/octet-stream"), ("title", title),
            ]))
        let failed = try TusHTTP.patch(port: port, path, offset: 0, bytes)
        #expect((500..<600).contains(failed.status), "the delivery failed: \(failed)")
        if let failing {
            #expect(
                failed.status == 503 && failed.text == #"{"error": "busy"}"#,
                "the upstream's answer: \(failed)")
            #expect(failing.stderr.split(separator: "\n").filter { $0.hasPrefix("POST ") }.count == 1)
            failing.stop()
        }
        let head = try TusHTTP.send(port: port, "HEAD", path)
        #expect(head.status == 200 && head.header("Upload-Offset") == String(bytes.count), "\(head)")

        let upstream = try TusUpstream.startPHP(onPort: upstreamPort)
        defer { upstream.server.stop() }
        let delivered = try TusHTTP.patch(port: port, path, offset: bytes.count, [])
        #expect(delivered.status == 200, "PHP's answer: \(delivered)")
        #expect(delivered.header("Upload-Offset") == String(bytes.count))
        expectDelivered(
            try TusReceipt(.php, delivered.body), .php, bytes: bytes, ext: ".bin",
            type: "application/octet-stream",
            title: title, seed: seed)
        let again = try TusHTTP.patch(port: port, path, offset: bytes.count, [])
        #expect(again.status == 200 && again.body == delivered.body, "the stored answer: \(again)")
        #expect(upstream.postsSeen == 1, "PHP counted \(upstream.postsSeen ?? -1) POSTs")
        let deliveries = setup.deliveries(atLeast: 7)
        #expect(deliveries.count == 2, "one failed delivery, one delivered: \(deliveries)")
        #expect((500..<600).contains(deliveries.first?["status"] as? Int ?? 0), "\(deliveries)")
        expectDeliveryLine(Array(deliveries.dropFirst()), original: "late.bin", size: bytes.count)
    }

    /// The Qiniu mock refuses the delivery (FormGate signs the token with another secret key):
    /// the final PATCH answers the mock's 401 and its body; that answer is stored, so the
    /// retried final PATCH replays it (the same status and body) without a second POST.
    @Test func anUpstreamsRefusalIsStoredAndReplayed() throws {
        let upstream = try TusUpstream.start(.qiniu)
        defer { upstream.server.stop() }
        let setup = try TusSetup(
            .qiniu, upstreamURL: upstream.url,
            multipartYAML: TusUpstreamKind.qiniu.multipartYAML.replacingOccurrences(
                of: "secret_key: test-sk", with: "secret_key: another-sk"))
        defer { setup.stop() }
        let port = setup.port
        let bytes = SeededRandom.bytes(300_000, seed: 0x7_5401)
        let path = try TusHTTP.create(
            port: port, length: bytes.count,
            metadata: tusMetadata([("filename", "refused.jpg"), ("title", "no")]))
        let refused = try TusHTTP.patch(port: port, path, offset: 0, bytes)
        #expect(refused.status == 401, "the mock's refusal: \(refused)")
        #expect(refused.text == #"{"error": "bad signature"}"#, "\(refused)")
        #expect(refused.header("Upload-Offset") == String(bytes.count))
        let replayed = try TusHTTP.patch(port: port, path, offset: bytes.count, [])
        #expect(replayed.status == 401 && replayed.body == refused.body, "the stored answer: \(replayed)")
        let deliveries = setup.deliveries(atLeast: 4)
        #expect(deliveries.count == 1, "one POST: \(deliveries)")
        #expect(deliveries.first?["status"] as? Int == 401)
    }

    /// The final PATCH's delivery is under way (the upstream, `slow_upstream.py`, holds it after
    /// 400,000 bytes) when the client gives up: it closes the connection and sends the final
    /// PATCH again (`Upload-Offset` = length, no bytes). Once the upstream goes on, the retry
    /// gets the delivery's answer (it joined the delivery, or got the stored answer), holding
    /// the file byte-exact, and the upstream answered one POST.
    @Test func aFinalPatchRetriedWhileItsDeliveryIsUnderWayGetsItsAnswer() throws {
        let slow = try ServerProcess(
            try python3(),
            [
                UpstreamServerTests.resources.appendingPathComponent("slow_upstream.py").path, "--rate",
                "100000000",
                "--pause-at", "400000",
            ])
        defer { slow.stop() }
        func progress(_ path: String = "/progress") throws -> [String: Any] {
            let client = try RawClient(port: slow.port)
            client.send("GET \(path) HTTP/1.1\r\nHost: slow\r\nConnection: close\r\n\r\n")
            return try jsonObject(Data(try #require(client.readResponse()).body))
        }
        let setup = try TusSetup(.php, upstreamURL: slow.url, workers: 1)
        defer { setup.stop() }
        let port = setup.port
        let seed: UInt64 = 0x7_5A11
        let bytes = SeededRandom.bytes(1_000_000, seed: seed)
        let path = try TusHTTP.create(
            port: port, length: bytes.count,
            metadata: tusMetadata([("filename", "held.bin"), ("title", "held")]))
        do {
            let first = try RawClient(port: port)
            first.send(
                TusHTTP.head(
                    port: port, "PATCH", path,
                    [("Upload-Offset", "0"), ("Content-Type", "application/offset+octet-stream")],
                    bodyCount: bytes.count) + bytes)
            #expect(
                eventually(within: 30) { (try? progress())?["paused"] as? Bool == true },
                "the delivery reached the upstream, which holds it")
            // Released here: the client gives up on its answer.
        }
        final class Box: @unchecked Sendable {
            let lock = NSLock()
            var response: Result<TusResponse, any Error>?
        }
        let box = Box()
        Thread {
            let result = Result { try TusHTTP.patch(port: port, path, offset: 1_000_000, []) }
            box.lock.withLock { box.response = result }
        }.start()
        // The upload's record is read on its store thread after the retry's (one worker): the
        // retry has found the upload complete and its delivery under way, most likely joined.
        let head = try TusHTTP.send(port: port, "HEAD", path)
        #expect(head.header("Upload-Offset") == "1000000", "\(head)")
        _ = try progress("/release")
        #expect(eventually(within: 60) { box.lock.withLock { box.response != nil } })
        let retried = try #require(try box.lock.withLock { try box.response?.get() })
        #expect(retried.status == 200, "the delivery's answer: \(retried)")
        let receipt = try jsonObject(Data(retried.body))
        let files = receipt["files"] as? [[String: Any]] ?? []
        #expect(files.count == 1, "\(receipt)")
        #expect(files.first?["size"] as? Int == bytes.count)
        #expect(files.first?["sha256"] as? String == Digest.hex(bytes), "byte-exact (seed \(seed))")
        #expect(try progress()["answered"] as? Int == 1, "the upstream answered one POST")
        #expect(setup.deliveries(atLeast: 4).count == 1)
    }

    /// The stored answer outlives FormGate: an upload is delivered, FormGate stops, another
    /// starts on the same store, and the retried final PATCH (`Upload-Offset` = length, no
    /// bytes) replays PHP's answer byte for byte; PHP counted one POST.
    @Test func theStoredAnswerIsReplayedByTheNextFormGateOnTheStore() throws {
        let upstream = try TusUpstream.start(.php)
        defer { upstream.server.stop() }
        let first = try TusSetup(.php, upstreamURL: upstream.url)
        let seed: UInt64 = 0x7_5E57
        let bytes = SeededRandom.bytes(400_000, seed: seed)
        let path = try TusHTTP.create(
            port: first.port, length: bytes.count,
            metadata: tusMetadata([
                ("filename", "kept.bin"), ("filetype", "application/octet-stream"), ("title", "k"),
            ]))
        let delivered = try TusHTTP.patch(port: first.port, path, offset: 0, bytes)
        #expect(delivered.status == 200, "\(delivered)")
        expectDelivered(
            try TusReceipt(.php, delivered.body), .php, bytes: bytes, ext: ".bin",
            type: "application/octet-stream",
            title: "k", seed: seed)
        first.stop(keepingStore: true)
        let second = try TusSetup(.php, upstreamURL: upstream.url, store: first.store)
        defer { second.stop() }
        let head = try TusHTTP.send(port: second.port, "HEAD", path)
        #expect(head.status == 200 && head.header("Upload-Offset") == String(bytes.count), "\(head)")
        let replayed = try TusHTTP.patch(port: second.port, path, offset: bytes.count, [])
        #expect(replayed.status == 200 && replayed.body == delivered.body, "the stored answer: \(replayed)")
        #expect(upstream.postsSeen == 1, "PHP counted \(upstream.postsSeen ?? -1) POSTs")
        #expect(second.deliveries(atLeast: 2).isEmpty, "the second FormGate delivered nothing")
    }
}
