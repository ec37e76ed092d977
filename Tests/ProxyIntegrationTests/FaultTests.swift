import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Upstream faults and client aborts: clear statuses, nothing half-forwarded left open, and
/// no leaked descriptors or temp files.
@Suite(.serialized) struct FaultTests {
    func multipartRequest(path: String = "/upload", fileBytes: Int, boundary: String = "b0undary") -> (
        head: String, body: [UInt8]
    ) {
        var body = Array(
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"f\"; filename=\"f.bin\"\r\n\r\n".utf8)
        body += Array(repeating: UInt8(ascii: "z"), count: fileBytes)
        body += Array("\r\n--\(boundary)--\r\n".utf8)
        let head =
            "POST \(path) HTTP/1.1\r\nHost: test\r\nContent-Type: multipart/form-data; boundary=\(boundary)\r\n"
            + "Content-Length: \(body.count)\r\n\r\n"
        return (head, body)
    }

    @Test func upstreamDownIs502() throws {
        let closed = try FakeUpstream(.silent)
        let port = closed.port
        closed.stop()
        let proxy = try startProxy(
            UploadTests.config(upstream: "http://127.0.0.1:\(port)") + "timeouts: { upstream_connect: 2s }\n")
        let start = Date()
        let client = try RawClient(port: proxy.port)
        let request = multipartRequest(fileBytes: 10)
        client.send(Array(request.head.utf8) + request.body)
        let response = try #require(client.readResponse())
        #expect(response.status == 502)
        #expect(Date().timeIntervalSince(start) < 2)
    }

    @Test func silentUpstreamIs504() throws {
        let silent = try FakeUpstream(.silent)
        let proxy = try startProxy(
            UploadTests.config(upstream: silent.url) + "timeouts: { upstream_response: 1s }\n")
        let client = try RawClient(port: proxy.port)
        client.send("GET /x HTTP/1.1\r\nHost: test\r\n\r\n")
        let response = try #require(client.readResponse())
        #expect(response.status == 504)
        #expect(proxy.accessLog(atLeast: 1).last?["status"] as? Int == 504)
    }

    @Test func upstreamResetMidBodyIs502AndCloses() throws {
        let resetting = try FakeUpstream(.resetAfter(bytes: 100_000))
        let proxy = try startProxy(UploadTests.config(upstream: resetting.url))
        let client = try RawClient(port: proxy.port)
        let request = multipartRequest(fileBytes: 8 << 20)
        client.send(Array(request.head.utf8))
        client.send(request.body)
        let rest = client.readAll(timeout: 20)
        let text = String(decoding: rest, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 502"))
        #expect(text.contains("Connection: close"))
    }

    @Test func upstreamAnsweringEarlyIsRelayed() throws {
        let early = try FakeUpstream(
            .respond("HTTP/1.1 413 Payload Too Large\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbig!"))
        let proxy = try startProxy(UploadTests.config(upstream: early.url))
        let client = try RawClient(port: proxy.port)
        let request = multipartRequest(fileBytes: 4 << 20)
        client.send(Array(request.head.utf8))
        client.send(Array(request.body.prefix(200_000)))
        let response = try #require(client.readResponse())
        #expect(response.status == 413)
        #expect(response.body == Array("big!".utf8))
    }

    /// Clients that abort mid-upload: the upstream never sees a closing delimiter, and after
    /// 1,000 aborts the proxy's descriptors and temp files are back where they started.
    @Test func clientAbortsLeaveNothingBehind() throws {
        let recorder = try FakeUpstream(.silent)
        let upstream = try startDemoUpstream()
        let spoolDirectory = NSTemporaryDirectory() + "formgate-spool-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: spoolDirectory, withIntermediateDirectories: true)
        let proxy = try startProxy(
            UploadTests.config(upstream: upstream.url) + "temp_dir: \(spoolDirectory)\n", workers: 2)
        let aborting = try startProxy(UploadTests.config(upstream: recorder.url), workers: 1)

        // One abort against the recording upstream: what arrived has no closing delimiter.
        do {
            let client = try RawClient(port: aborting.port)
            let request = multipartRequest(fileBytes: 1 << 20)
            client.send(Array(request.head.utf8))
            client.send(Array(request.body.prefix(600_000)))
            Thread.sleep(forTimeInterval: 0.3)
        }
        Thread.sleep(forTimeInterval: 0.5)
        let seen = String(decoding: recorder.bytesReceived, as: UTF8.self)
        #expect(seen.contains("----FormGate"))
        let boundary =
            seen.components(separatedBy: "boundary=").dropFirst().first?.prefix { !$0.isWhitespace } ?? ""
        #expect(!boundary.isEmpty)
        #expect(!seen.contains("--\(boundary)--"))
        #expect(!seen.hasSuffix("0\r\n\r\n"))

        // A warm-up request, then the baseline.
        do {
            let client = try RawClient(port: proxy.port)
            let request = multipartRequest(fileBytes: 10)
            client.send(Array(request.head.utf8) + request.body)
            #expect(client.readResponse()?.status == 200)
        }
        Thread.sleep(forTimeInterval: 0.3)
        let baseline = proxy.openDescriptors
        for index in 0..<1000 {
            let client = try RawClient(port: proxy.port)
            let request = multipartRequest(path: index % 2 == 0 ? "/upload" : "/legacy", fileBytes: 64 * 1024)
            client.send(Array(request.head.utf8))
            client.send(Array(request.body.prefix(1000 + (index * 37) % 60_000)))
        }
        var descriptors = proxy.openDescriptors
        for _ in 0..<50 where descriptors > baseline {
            Thread.sleep(forTimeInterval: 0.1)
            descriptors = proxy.openDescriptors
        }
        print("proxy descriptors: baseline \(baseline), after 1000 aborts \(descriptors)")
        #expect(descriptors <= baseline)
        #expect(try FileManager.default.contentsOfDirectory(atPath: spoolDirectory).isEmpty)
        let aborted = proxy.accessLog(atLeast: 1001).filter { $0["status"] as? Int == 499 }.count
        #expect(aborted == 1000)
    }
}
