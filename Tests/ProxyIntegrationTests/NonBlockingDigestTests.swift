import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The loop never waits for hashing (issue 13's acceptance test). One worker; the hashing
/// threads are held at `FORMGATE_TEST_HASHING_GATE` (a FIFO: they open it for reading and
/// wait until the test opens and closes its writing end). Client A uploads a 32 MiB file with
/// a sha256 digest, far more than the hashing queue holds (4 MiB): the worker must pause A,
/// not wait. Meanwhile client B's upload on the same worker is answered in full. Then the gate
/// opens, A's upload completes upstream, and its digest field is the file's SHA-256.
///
/// With the blocking design the worker waits in `pthread_cond_wait` once 4 MiB are queued, so
/// B is never answered while the gate is held and the test fails at B's deadline; with hashing
/// on the loop thread (no offload) no thread ever reaches the gate, and the test fails there.
/// Run alone with `swift test --skip-build --filter NonBlockingDigestTests`.
@Suite struct NonBlockingDigestTests {
    static let size = 32 << 20

    static func config(large: String, small: String) -> String {
        """
        listen: 127.0.0.1:0
        workers: 1
        access_log: stdout
        upstream: \(small)
        routes:
          - match: { path: /large }
            upstream: \(large)
            multipart:
              digest: { algorithms: [sha256] }
          - match: { path: /small }
            multipart:
              digest: { algorithms: [sha256] }

        """
    }

    /// A request uploading `content` as the file part `file` to `path`.
    static func upload(_ content: [UInt8], path: String, close: Bool) -> [UInt8] {
        let head = Array(
            "--gate\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f.bin\"\r\n\r\n".utf8)
        let tail = Array("\r\n--gate--\r\n".utf8)
        let request =
            "POST \(path) HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data; boundary=gate\r\n"
            + "Content-Length: \(head.count + content.count + tail.count)\r\n"
            + (close ? "Connection: close\r\n" : "") + "\r\n"
        return Array(request.utf8) + head + content + tail
    }

    @Test func aSecondClientIsAnsweredWhileHashingIsHeld() throws {
        let gate = NSTemporaryDirectory() + "formgate-gate-\(UUID().uuidString)"
        guard mkfifo(gate, 0o600) == 0 else { throw TestFailure("mkfifo \(gate): errno \(errno)") }
        defer { unlink(gate) }
        let large = try FakeUpstream(.silent)
        let small = try startDemoUpstream()
        let path = NSTemporaryDirectory() + "formgate-gate-\(UUID().uuidString).yaml"
        try Self.config(large: large.url, small: small.url).write(
            toFile: path, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["FORMGATE_TEST_HASHING_GATE"] = gate
        let proxy = try ServerProcess(
            formgateBinary, ["run", "-c", path], environment: environment, removingAtStop: [path])

        // A: 32 MiB, sent from its own thread (the proxy stops reading it).
        let content = (0..<Self.size).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) }
        let expected = Digest.hex(content)
        let clientA = try RawClient(port: proxy.port)
        let requestA = Self.upload(content, path: "/large", close: true)
        let sent = Thread { clientA.send(requestA) }
        sent.start()

        // A hashing thread took A's first block and waits at the gate: opening the writing end
        // succeeds only while a reader has it open. The descriptor is the gate: held open, the
        // thread waits for its end of file.
        var writer: Int32 = -1
        let held = eventually(within: 60) {
            writer = open(gate, O_WRONLY | O_NONBLOCK)
            return writer >= 0
        }
        try #require(
            held,
            "no hashing thread reached the gate: large files are hashed on the loop (or the hook is unwired)")
        defer { if writer >= 0 { close(writer) } }
        // A is in flight: past the first MiB (hashed inline) and the 4 MiB the hashing queue
        // holds, but for its last block. A blocking worker waits for hashing within the next
        // block or two (already in its socket); B's exchange, which needs the demo upstream's
        // round trip, cannot be answered before. A pausing worker reaches this point too.
        try #require(
            eventually(within: 60) { large.byteCount >= (5 << 20) - (256 << 10) },
            "A stalled at \(large.byteCount) bytes upstream")

        // B, on the same (only) worker, while A's hashing is held.
        let small1 = Array((0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let clientB = try RawClient(port: proxy.port)
        clientB.send(Self.upload(small1, path: "/small", close: true))
        let response = clientB.readAll(timeout: 30)
        let answer = try Self.parse(response)
        #expect(answer.status == 200, "B: \(String(decoding: response.prefix(200), as: UTF8.self))")
        #expect(answer.complete, "B's answer was cut short (\(response.count) bytes)")
        let receipt = try jsonObject(Data(answer.body))
        let files = try #require(receipt["files"] as? [[String: Any]])
        #expect(files.first?["sha256"] as? String == Digest.hex(small1))
        #expect(files.first?["size"] as? Int == small1.count)
        let fields = (receipt["fields"] as? [[String: Any]]) ?? []
        #expect(
            fields.first { $0["name"] as? String == "file.sha256" }?["value"] as? String == Digest.hex(small1)
        )
        // A is still held: the upstream has neither its end nor its digest field.
        let heldA = ForwardedRequest(large.streams.first ?? [])
        #expect(!heldA.isComplete)
        #expect(heldA.body.count < Self.size)

        // Open the gate: the thread reads its end of file and hashes; A completes.
        close(writer)
        writer = -1
        // (The byte count first: each look at the streams copies what arrived.)
        try #require(
            eventually(within: 120) {
                large.byteCount > Self.size && ForwardedRequest(large.streams.first ?? []).isComplete
            }, "A did not complete after the gate opened (\(large.byteCount) bytes upstream)")
        let forwarded = ForwardedRequest(large.streams.first ?? [])
        let start = try #require(forwarded.body.firstRange(of: content.prefix(4096))).lowerBound
        #expect(forwarded.body[start...].starts(with: content), "A's file bytes differ upstream")
        let marker = Array("name=\"file.sha256\"\r\n\r\n".utf8)
        let field = try #require(
            forwarded.body[(start + Self.size)...].firstRange(of: marker),
            "no file.sha256 field after A's file")
        let digest = String(decoding: forwarded.body[field.upperBound...].prefix(64), as: UTF8.self)
        #expect(digest == expected)
        proxy.stop()
    }

    /// The status, the body, and whether the body has its Content-Length.
    static func parse(_ response: [UInt8]) throws -> (status: Int, body: [UInt8], complete: Bool) {
        guard let end = response.firstRange(of: Array("\r\n\r\n".utf8)) else {
            throw TestFailure("no response head: \(response.count) bytes")
        }
        let head = String(decoding: response[..<end.lowerBound], as: UTF8.self)
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        let body = Array(response[end.upperBound...])
        let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) }
        return (status, body, length == body.count)
    }
}
