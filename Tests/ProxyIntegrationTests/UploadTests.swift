import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Real clients through the real binary to the demo upstream, asserting on what the
/// upstream received.
@Suite(.serialized) struct UploadTests {
    static func config(upstream: String) -> String {
        """
        upstream: \(upstream)
        routes:
          - match: { path: /upload }
            multipart: {}
          - match: { path: /legacy }
            request_body: buffer
            multipart: {}

        """
    }

    func curl(_ arguments: [String]) throws -> [String: Any] {
        let result = try run(try tool("curl"), ["-sS", "--fail-with-body"] + arguments)
        #expect(result.status == 0, "curl failed: \(String(decoding: result.output, as: UTF8.self))")
        return try jsonObject(result.output)
    }

    @Test(arguments: [0, 1 << 20], ["/upload", "/legacy"])
    func curlUploadArrivesByteExact(size: Int, path: String) throws {
        let upstream = try startDemoUpstream()
        let proxy = try startProxy(Self.config(upstream: upstream.url))
        let seed: UInt64 = 0x0B10AD
        let content = SeededRandom.bytes(size, seed: seed)
        let file = NSTemporaryDirectory() + "formgate-upload-\(UUID().uuidString)"
        try Data(content).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }

        let receipt = try curl([
            "-F", "title=Holiday ☀", "-F", "photo=@\(file);filename=IMG 1.jpg;type=image/jpeg",
            proxy.url + path,
        ])
        let files = try #require(receipt["files"] as? [[String: Any]])
        #expect(files.count == 1)
        #expect(files.first?["sha256"] as? String == Digest.hex(content), "content seed \(seed)")
        #expect(files.first?["size"] as? Int == size)
        #expect(files.first?["filename"] as? String == "IMG 1.jpg")
        #expect(files.first?["content_type"] as? String == "image/jpeg")
        let fields = try #require(receipt["fields"] as? [[String: Any]])
        #expect(fields.first?["value"] as? String == "Holiday ☀")
        #expect((receipt["boundary"] as? String)?.hasPrefix("----FormGate") == true)
        let headers = (receipt["headers"] as? [[String]]) ?? []
        let names = headers.map { $0[0].lowercased() }
        let length = headers.first { $0[0].lowercased() == "content-length" }?[1]
        let encoding = headers.first { $0[0].lowercased() == "transfer-encoding" }?[1]
        // Exactly one framing, and it is exact. Spooled: a length. Streamed: chunked, except that
        // a small body read whole before the head went out gets a length (curl may send a small
        // body with its head or after it; `framingFollowsWhatWasRead` pins both cases down).
        #expect((length == nil) != (encoding == nil), "framing: length \(length ?? "-"), \(encoding ?? "-")")
        if let length { #expect(length == "\(receipt["body_size"] as? Int ?? -1)") }
        if let encoding { #expect(encoding == "chunked") }
        if path == "/legacy" {
            #expect(length != nil)
        } else if size > 0 {
            #expect(encoding == "chunked")
        }
        #expect(names.contains("x-forwarded-for"))
        #expect(names.contains("x-request-id"))
    }

    /// Stream mode: a body that arrives with its head goes upstream with an exact
    /// Content-Length; one that arrives after the upstream head went out goes chunked.
    @Test func framingFollowsWhatWasRead() throws {
        let boundary = "b0undary"
        let body =
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.txt\"\r\n\r\nhello\r\n--\(boundary)--\r\n"
        let head =
            "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data; boundary=\(boundary)\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"

        let upstream = try startDemoUpstream()
        let proxy = try startProxy(Self.config(upstream: upstream.url))
        let client = try RawClient(port: proxy.port)
        client.send(head + body)
        let response = try #require(client.readResponse())
        #expect(response.status == 200)
        let receipt = try jsonObject(Data(response.body))
        let headers = ((receipt["headers"] as? [[String]]) ?? []).map { [$0[0].lowercased(), $0[1]] }
        #expect(headers.first { $0[0] == "content-length" }?[1] == "\(receipt["body_size"] as? Int ?? -1)")
        #expect(headers.first { $0[0] == "transfer-encoding" } == nil)
        let files = try #require(receipt["files"] as? [[String: Any]])
        #expect(files.first?["size"] as? Int == 5)

        // The body only once the upstream has the head: a recording upstream says when.
        let recorder = try FakeUpstream(.silent)
        let late = try startProxy(Self.config(upstream: recorder.url))
        let apart = try RawClient(port: late.port)
        apart.send(head)
        #expect(eventually { ForwardedRequest(recorder.bytesReceived).headComplete }, "no upstream head")
        apart.send(body)
        #expect(eventually { ForwardedRequest(recorder.bytesReceived).isComplete }, "no complete body")
        let forwarded = ForwardedRequest(recorder.bytesReceived)
        #expect(forwarded.contentLength == nil)
        #expect(forwarded.chunked)
        #expect(forwarded.lastChunkArrived)
        let ending = Array("\r\n\r\nhello\r\n--\(forwarded.boundary ?? "?")--\r\n".utf8)
        #expect(forwarded.body.count > ending.count && Array(forwarded.body.suffix(ending.count)) == ending)
    }

    @Test func chunkedClientBodies() throws {
        let upstream = try startDemoUpstream()
        let proxy = try startProxy(Self.config(upstream: upstream.url))
        let content = Array(repeating: UInt8(ascii: "x"), count: 300_000)
        let file = NSTemporaryDirectory() + "formgate-chunked-\(UUID().uuidString)"
        try Data(content).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        for path in ["/upload", "/legacy"] {
            let receipt = try curl(["-H", "Transfer-Encoding: chunked", "-F", "f=@\(file)", proxy.url + path])
            let files = try #require(receipt["files"] as? [[String: Any]])
            #expect(files.first?["sha256"] as? String == Digest.hex(content))
        }
        let raw = try curl([
            "-H", "Transfer-Encoding: chunked", "--data-binary", "@\(file)", proxy.url + "/other",
        ])
        #expect(raw["body_sha256"] as? String == Digest.hex(content))
    }

    /// Streams a generated multipart upload of `size` bytes through a fresh proxy; returns the
    /// proxy's peak RSS in KiB after checking the upstream got every byte.
    func generatedUpload(size: Int, path: String) throws -> Int {
        let upstream = try startDemoUpstream()
        let proxy = try startProxy(Self.config(upstream: upstream.url), workers: 1)
        let boundary = "----client-boundary-1234"
        let head =
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"big\"; filename=\"big.bin\"\r\n"
            + "Content-Type: application/octet-stream\r\n\r\n"
        let tail = "\r\n--\(boundary)--\r\n"
        let length = head.utf8.count + size + tail.utf8.count
        let client = try RawClient(port: proxy.port)
        client.send(
            "POST \(path) HTTP/1.1\r\nHost: test\r\nContent-Type: multipart/form-data; boundary=\(boundary)\r\n"
                + "Content-Length: \(length)\r\n\r\n" + head)
        let digest = Digest()
        var block = [UInt8](repeating: 0, count: 1 << 20)
        for index in 0..<(size >> 20) {
            for offset in stride(from: 0, to: block.count, by: 4096) {
                block[offset] = UInt8(truncatingIfNeeded: index &+ offset)
            }
            block[block.count - 2] = 0x0D
            block[block.count - 1] = 0x0A
            digest.update(block)
            client.send(block)
        }
        client.send(tail)
        let response = try #require(client.readResponse(timeout: 120))
        #expect(response.status == 200)
        let receipt = try jsonObject(Data(response.body))
        let files = try #require(receipt["files"] as? [[String: Any]])
        #expect(files.first?["size"] as? Int == size)
        #expect(files.first?["sha256"] as? String == digest.hex())
        return proxy.peakRSSKiB
    }

    /// A 1 GiB upload generated on the fly (never stored), in both modes: the proxy's peak
    /// RSS stays under 64 MiB and within 8 MiB of its peak for a 64 MiB upload.
    @Test(arguments: ["/upload", "/legacy"])
    func oneGibibyteUpload(path: String) throws {
        let small = try generatedUpload(size: 64 << 20, path: path)
        let large = try generatedUpload(size: 1 << 30, path: path)
        print("proxy peak RSS (\(path)): 64 MiB upload \(small / 1024) MiB, 1 GiB upload \(large / 1024) MiB")
        #expect(large > 0 && large <= 64 * 1024)
        #expect(large - small <= 8 * 1024)
    }

    /// An upstream that reads 1 MiB/s: backpressure keeps the proxy's memory bounded.
    @Test func slowUpstreamKeepsMemoryBounded() throws {
        let slow = try FakeUpstream(.slowRead(bytesPerSecond: 1 << 20))
        let proxy = try startProxy(Self.config(upstream: slow.url), workers: 1)
        let client = try RawClient(port: proxy.port)
        let size = 64 << 20
        client.send(
            "POST /upload HTTP/1.1\r\nHost: test\r\nContent-Type: multipart/form-data; boundary=b\r\n"
                + "Content-Length: \(size + 200)\r\n\r\n--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"f\"\r\n\r\n"
        )
        let sent = Counter()
        let sender = Thread {
            let block = [UInt8](repeating: 0x61, count: 1 << 20)
            for _ in 0..<64 {
                client.send(block)
                sent.add(block.count)
            }
        }
        sender.start()
        // Once the upstream has read 8 MiB, the rest is either still with the client (pushed
        // back) or in the proxy, whose memory must stay bounded.
        #expect(eventually(within: 120) { slow.byteCount >= 8 << 20 })
        let peak = proxy.peakRSSKiB
        let clientSent = sent.value
        print(
            "slow upstream: 8 MiB received, the client sent \(clientSent >> 20) MiB, proxy peak RSS \(peak / 1024) MiB"
        )
        #expect(clientSent < size, "the client sent all 64 MiB: nothing pushed back")
        #expect(peak > 0 && peak <= 48 * 1024)
        shutdown(client.fd, Int32(SHUT_RDWR))
    }
}
