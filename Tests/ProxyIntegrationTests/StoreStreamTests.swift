import Foundation
import Testing

/// Object-store routes in `request_body: stream`, through the binary to the verifying Qiniu
/// mock, which refuses a body without a Content-Length (as every store does): FormGate sends
/// the exact length once the file begins, and the file streams through; and credentials read
/// from a file are re-read on SIGHUP.
@Suite(.serialized) struct StoreStreamTests {
    static func mock(secret: String) throws -> ServerProcess {
        try ServerProcess(
            try python3(),
            [
                UpstreamServerTests.resources.appendingPathComponent("qiniu_mock.py").path, "stream-ak",
                secret,
                "photos",
            ])
    }

    static func route(upstream: String, secret: String) -> String {
        """
        upstream: \(upstream)
        routes:
          - match: { path: /upload }
            request_body: stream
            multipart:
              drop_fields: [token, key]
              inject:
                - { name: token, before: file, qiniu: { access_key: stream-ak, \(secret), scope: "photos:{filename}", ttl: 1h } }
                - { name: key, before: file, value: "{filename}" }

        """
    }

    static func upload(_ proxy: ServerProcess, file: String) throws -> [String: Any] {
        let result = try run(
            try tool("curl"),
            [
                "-sS", "-F", "title=big", "-F", "token=forged", "-F", "file=@\(file);filename=big.bin",
                proxy.url + "/upload",
            ])
        return try jsonObject(result.output)
    }

    @Test func aStreamedUploadReachesTheStoreWithAnExactLength() throws {
        let mock = try Self.mock(secret: "stream-sk")
        defer { mock.stop() }
        let proxy = try startProxy(
            Self.route(upstream: mock.url, secret: "secret_key: stream-sk"), workers: 1)
        defer { proxy.stop() }
        let file = NSTemporaryDirectory() + "formgate-stream-\(UUID().uuidString).bin"
        var content = [UInt8](repeating: 0, count: 64 << 20)
        for index in stride(from: 0, to: content.count, by: 4096) {
            content[index] = UInt8(truncatingIfNeeded: index >> 12)
        }
        try Data(content).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let baseline = proxy.residentKiB
        let answer = try Self.upload(proxy, file: file)
        #expect(answer["error"] == nil, "\(answer)")
        #expect(answer["key"] as? String == "big.bin")
        #expect(answer["fsize"] as? Int == content.count)
        #expect(answer["sha256"] as? String == Digest.hex(content))
        #expect(answer["fields"] as? [String] == ["key", "title", "token"], "\(answer)")
        // Streamed, not buffered: 64 MiB went through in far less memory.
        #expect(proxy.peakRSSKiB - baseline < 32 * 1024, "peak \(proxy.peakRSSKiB) KiB from \(baseline) KiB")
    }

    /// A client that sends its body chunked: FormGate cannot declare the length when the
    /// file begins, so it spools the body and the store still gets a Content-Length.
    @Test func aChunkedClientBodyIsSpooledForTheStore() throws {
        let mock = try Self.mock(secret: "stream-sk")
        defer { mock.stop() }
        let proxy = try startProxy(
            Self.route(upstream: mock.url, secret: "secret_key: stream-sk"), workers: 1)
        defer { proxy.stop() }
        let file = NSTemporaryDirectory() + "formgate-chunked-\(UUID().uuidString).bin"
        let content = Array((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 3) })
        try Data(content).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let result = try run(
            try tool("curl"),
            [
                "-sS", "-H", "Transfer-Encoding: chunked", "-F", "title=big", "-F",
                "file=@\(file);filename=c.bin",
                proxy.url + "/upload",
            ])
        let answer = try jsonObject(result.output)
        #expect(answer["error"] == nil, "\(answer)")
        #expect(answer["fsize"] as? Int == content.count)
        #expect(answer["sha256"] as? String == Digest.hex(content))
    }

    @Test func aRotatedSecretFileSignsAfterSIGHUP() throws {
        let mock = try Self.mock(secret: "sk-rotated-2")
        defer { mock.stop() }
        let secretFile = NSTemporaryDirectory() + "formgate-sk-\(UUID().uuidString)"
        try "sk-original-1\n".write(toFile: secretFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: secretFile) }
        let config = NSTemporaryDirectory() + "formgate-rotate-\(UUID().uuidString).yaml"
        try
            ("listen: 127.0.0.1:0\nworkers: 1\naccess_log: stdout\n"
            + Self.route(upstream: mock.url, secret: "secret_key_file: \(secretFile)")).write(
                toFile: config, atomically: true, encoding: .utf8)
        let proxy = try ServerProcess(formgateBinary, ["run", "-c", config], removingAtStop: [config])
        defer { proxy.stop() }
        let file = NSTemporaryDirectory() + "formgate-rotate-\(UUID().uuidString).bin"
        let content = Array((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try Data(content).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }

        let before = try Self.upload(proxy, file: file)
        #expect(before["error"] as? String == "bad signature", "the old secret is not the store's: \(before)")
        try "sk-rotated-2\n".write(toFile: secretFile, atomically: true, encoding: .utf8)
        kill(proxy.pid, SIGHUP)
        #expect(eventually { proxy.stderr.contains("configuration reloaded") }, "\(proxy.stderr)")
        let after = try Self.upload(proxy, file: file)
        #expect(after["error"] == nil, "\(after)")
        #expect(after["sha256"] as? String == Digest.hex(content))
        for secret in ["sk-original-1", "sk-rotated-2"] {
            #expect(!proxy.stdout.contains(secret) && !proxy.stderr.contains(secret), "no secret in the logs")
        }
    }
}
