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

    /// A refused connect is answered 502 when it is refused, not when the connect timeout runs
    /// out: the verdict is the status and the failure's kind in /metrics (`unreachable`, none
    /// counted as `timeout`, which would be a 504). The connect timeout (60 s) is longer than
    /// the wait for the answer (30 s), so the timer cannot have answered; both only end a hang.
    @Test func upstreamDownIs502() throws {
        let closed = try FakeUpstream(.silent)
        let port = closed.port
        closed.stop()
        let proxy = try startProxy(
            "admin: 127.0.0.1:0\n" + UploadTests.config(upstream: "http://127.0.0.1:\(port)")
                + "timeouts: { upstream_connect: 60s }\n")
        let client = try RawClient(port: proxy.port)
        let request = multipartRequest(fileBytes: 10)
        client.send(Array(request.head.utf8) + request.body)
        let response = try #require(client.readResponse(timeout: 30))
        #expect(response.status == 502)
        let unreachable = "formgate_upstream_errors_total{kind=\"unreachable\"}"
        #expect(
            eventually { (try? proxy.metric(unreachable)) == 1 },
            "\(unreachable): \(String(describing: try? proxy.metric(unreachable)))")
        #expect((try proxy.metric("formgate_upstream_errors_total{kind=\"timeout\"}") ?? 0) == 0)
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

    /// Over HTTP/2 a stream's timers ride on its connection's one timer: a silent upstream
    /// still ends the stream with 504 after `upstream_response`, and the connection carries
    /// the next stream, which gets its own 504 as well (python3-h2 as the client: curl 7.88
    /// fails to reuse an h2c connection, against nginx too).
    @Test func silentUpstreamIs504OverH2c() throws {
        let silent = try FakeUpstream(.silent)
        let proxy = try startListeners(
            ["{ address: 127.0.0.1:0, http2: { h2c: true } }"],
            "upstream: \(silent.url)\ntimeouts: { upstream_response: 1s }\nroutes:\n  - match: { path: / }\n")
        let client = """
            import socket, sys, h2.connection, h2.events
            sock = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
            sock.settimeout(20)
            conn = h2.connection.H2Connection()
            conn.initiate_connection()
            sock.sendall(conn.data_to_send())
            for stream in (1, 3):
                conn.send_headers(stream, [(":method", "GET"), (":path", "/x"), (":scheme", "http"),
                                           (":authority", "t")], end_stream=True)
                sock.sendall(conn.data_to_send())
                done = False
                while not done:
                    data = sock.recv(65536)
                    if not data:
                        sys.exit("connection closed")
                    for event in conn.receive_data(data):
                        if isinstance(event, h2.events.ResponseReceived):
                            print(stream, dict(event.headers)[b":status"].decode())
                        if isinstance(event, (h2.events.StreamEnded, h2.events.StreamReset)):
                            done = done or event.stream_id == stream
                    sock.sendall(conn.data_to_send())
            """
        let python = ProcessInfo.processInfo.environment["FORMGATE_PYTHON"] ?? "/usr/bin/python3"
        let result = try run(python, ["-c", client, String(proxy.port)])
        let lines = String(decoding: result.output, as: UTF8.self).split(separator: "\n")
        #expect(result.status == 0)
        #expect(lines == ["1 504", "3 504"], "\(lines)")
        let log = proxy.accessLog(atLeast: 2)
        #expect(log.map { $0["status"] as? Int } == [504, 504])
        #expect(log.allSatisfy { $0["protocol"] as? String == "h2" })
    }

    @Test func upstreamResetMidBodyIs502AndCloses() throws {
        let resetting = try FakeUpstream(.resetAfter(bytes: 100_000))
        let proxy = try startProxy(UploadTests.config(upstream: resetting.url))
        let client = try RawClient(port: proxy.port)
        let request = multipartRequest(fileBytes: 8 << 20)
        client.send(Array(request.head.utf8))
        client.send(request.body)
        let rest = client.readAll(timeout: 30)
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
        defer { try? FileManager.default.removeItem(atPath: spoolDirectory) }
        let proxy = try startProxy(
            UploadTests.config(upstream: upstream.url) + "temp_dir: \(spoolDirectory)\n", workers: 2)
        let aborting = try startProxy(UploadTests.config(upstream: recorder.url), workers: 1)

        // One abort against the recording upstream: what arrived has no closing delimiter.
        do {
            let client = try RawClient(port: aborting.port)
            let request = multipartRequest(fileBytes: 1 << 20)
            client.send(Array(request.head.utf8))
            client.send(Array(request.body.prefix(600_000)))
            // The client leaves once part of its body went upstream.
            #expect(eventually { !ForwardedRequest(recorder.bytesReceived).body.isEmpty })
        }
        // Settled: the abort is logged and the upstream connection closed.
        #expect(eventually { aborting.stdoutLineCount == 1 && recorder.openConnections == 0 })
        #expect(recorder.streams.allSatisfy { !ForwardedRequest($0).isComplete })
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
        // Settled: the warm-up is logged and its client connection closed (so the count stops
        // going down).
        #expect(eventually { proxy.stdoutLineCount == 1 })
        var baseline = proxy.openDescriptors
        while eventually(within: 1, { proxy.openDescriptors < baseline }) { baseline = proxy.openDescriptors }
        for index in 0..<1000 {
            let client = try RawClient(port: proxy.port)
            let request = multipartRequest(path: index % 2 == 0 ? "/upload" : "/legacy", fileBytes: 64 * 1024)
            client.send(Array(request.head.utf8))
            client.send(Array(request.body.prefix(1000 + (index * 37) % 60_000)))
        }
        // Every abort is logged, then the descriptors return.
        #expect(eventually(within: 120) { proxy.stdoutLineCount == 1001 })
        eventually(within: 60) { proxy.openDescriptors <= baseline }
        let descriptors = proxy.openDescriptors
        print("proxy descriptors: baseline \(baseline), after 1000 aborts \(descriptors)")
        #expect(descriptors <= baseline)
        #expect(try FileManager.default.contentsOfDirectory(atPath: spoolDirectory).isEmpty)
        let aborted = proxy.accessLog(atLeast: 1001).filter { $0["status"] as? Int == 499 }.count
        #expect(aborted == 1000)
        recordFigure(
            "client-aborts",
            [
                "aborts": 1000, "logged_499": aborted, "descriptors_before": baseline,
                "descriptors_after": descriptors,
            ])
    }

    /// Upstreams that misbehave before or in their response head: each is a 502 to the client,
    /// logged, and the proxy keeps serving.
    @Test(arguments: [
        ("half-closing", FakeUpstream.Behavior.halfCloseAfterHead),
        ("garbage head", .respondAndClose("SMTP ready\r\n\r\n")),
        ("bad status code", .respondAndClose("HTTP/1.1 2OO OK\r\nContent-Length: 0\r\n\r\n")),
        (
            "oversized head",
            .respond(
                "HTTP/1.1 200 OK\r\n"
                    + String(
                        repeating: "X-Filler: " + String(repeating: "a", count: 1000) + "\r\n", count: 80)
                    + "Content-Length: 0\r\n\r\n")
        ),
        (
            "two Content-Lengths",
            .respondAndClose("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc")
        ),
        ("closing mid-head", .respondAndClose("HTTP/1.1 200 OK\r\nContent-Le")),
    ])
    func brokenUpstreamResponsesAre502(label: String, behavior: FakeUpstream.Behavior) throws {
        let broken = try FakeUpstream(behavior)
        let proxy = try startProxy(
            UploadTests.config(upstream: broken.url) + "timeouts: { upstream_response: 5s }\n", workers: 1)
        for _ in 0..<3 {
            let client = try RawClient(port: proxy.port)
            let request = multipartRequest(fileBytes: 1000)
            client.send(Array(request.head.utf8) + request.body)
            let response = try #require(client.readResponse(timeout: 30), "\(label): no response")
            #expect(response.status == 502, "\(label): \(response.head)")
        }
        let log = proxy.accessLog(atLeast: 3)
        #expect(log.count == 3 && log.allSatisfy { $0["status"] as? Int == 502 }, "\(label): \(log)")
    }

    /// `request_body: buffer` with a spool directory that fills up (a 256 KiB tmpfs): 507, the
    /// upstream receives nothing, the spool is empty afterwards, and a body that fits still goes.
    @Test func diskFullWhileSpoolingIs507WithNothingForwarded() throws {
        let mount = try TinyFilesystem(bytes: 256 * 1024)
        let recorder = try FakeUpstream(.silent)
        let proxy = try startProxy(
            UploadTests.config(upstream: recorder.url) + "temp_dir: \(mount.path)\n", workers: 1)
        for size in [1 << 20, 300 * 1024, 8 << 20] {
            let client = try RawClient(port: proxy.port)
            let request = multipartRequest(path: "/legacy", fileBytes: size)
            client.send(Array(request.head.utf8))
            client.send(request.body)
            let response = try #require(client.readResponse(timeout: 30))
            #expect(response.status == 507, "\(size) bytes: \(response.head)")
        }
        // Settled once the three are logged.
        #expect(eventually { proxy.stdoutLineCount == 3 })
        #expect(recorder.bytesReceived.isEmpty, "the upstream received \(recorder.bytesReceived.count) bytes")
        #expect(try FileManager.default.contentsOfDirectory(atPath: mount.path).isEmpty)
        let log = proxy.accessLog(atLeast: 3)
        #expect(log.filter { $0["status"] as? Int == 507 }.count == 3)
        recordFigure(
            "disk-full",
            [
                "requests": 3, "status_507": log.filter { $0["status"] as? Int == 507 }.count,
                "upstream_bytes": recorder.bytesReceived.count,
            ])

        let upstream = try startDemoUpstream()
        let working = try startProxy(
            UploadTests.config(upstream: upstream.url) + "temp_dir: \(mount.path)\n", workers: 1)
        let client = try RawClient(port: working.port)
        let request = multipartRequest(path: "/legacy", fileBytes: 100 * 1024)
        client.send(Array(request.head.utf8) + request.body)
        #expect(client.readResponse(timeout: 30)?.status == 200)
    }

    /// 10,000 faulty requests from 8 concurrent clients (aborts on both routes, malformed
    /// bodies, oversized bodies, a resetting upstream, a full spool disk): each gets its
    /// status, and afterwards descriptors, spool files and RSS are back at their baseline.
    @Test func tenThousandFaultyRequestsLeaveNoTrace() throws {
        let mount = try TinyFilesystem(bytes: 1 << 20)
        let upstream = try startDemoUpstream()
        let resetting = try FakeUpstream(.resetAfter(bytes: 1))
        let proxy = try startProxy(
            """
            upstream: \(upstream.url)
            temp_dir: \(mount.path)
            limits: { body_bytes: 2MiB }
            routes:
              - match: { path: /upload }
                multipart: {}
              - match: { path: /legacy }
                request_body: buffer
                multipart: {}
              - match: { path: /reset }
                upstream: \(resetting.url)
                multipart: {}

            """, workers: 2)

        enum Fault: CaseIterable { case abortStream, abortBuffer, malformed, tooLarge, reset, diskFull }
        @Sendable func request(_ fault: Fault, _ index: Int) -> (bytes: [UInt8], status: Int?) {
            switch fault {
            case .abortStream, .abortBuffer:
                let request = multipartRequest(
                    path: fault == .abortStream ? "/upload" : "/legacy", fileBytes: 64 * 1024)
                let bytes = Array(request.head.utf8) + request.body
                return (Array(bytes.prefix(200 + (index * 7919) % 60_000)), nil)
            case .malformed:
                let body = Array(
                    "--b0undary\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n--b0und".utf8)
                let head =
                    "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data; boundary=b0undary\r\nContent-Length: \(body.count)\r\n\r\n"
                return (Array(head.utf8) + body, 400)
            case .tooLarge:
                // Refused on its declared length, before the body.
                let request = multipartRequest(path: "/upload", fileBytes: 3 << 20)
                return (Array(request.head.utf8) + request.body.prefix(1000), 413)
            case .reset:
                let request = multipartRequest(path: "/reset", fileBytes: 2000)
                return (Array(request.head.utf8) + request.body, 502)
            case .diskFull:
                // Under the body limit, over what the 1 MiB spool disk holds.
                let request = multipartRequest(path: "/legacy", fileBytes: 1536 * 1024)
                return (Array(request.head.utf8) + request.body, 507)
            }
        }
        func drive(_ count: Int, offset: Int) -> [String] {
            let problems = Problems()
            DispatchQueue.concurrentPerform(iterations: 8) { lane in
                for index in stride(from: lane, to: count, by: 8) {
                    let fault = Fault.allCases[(index + offset) % Fault.allCases.count]
                    let (bytes, status) = request(fault, index + offset)
                    guard let client = try? RawClient(port: proxy.port) else {
                        problems.append("connect failed")
                        continue
                    }
                    client.send(bytes)
                    guard let status else { continue }
                    let reply = client.readResponse(timeout: 30)?.status ?? 0
                    if reply != status { problems.append("\(fault): \(reply)") }
                }
            }
            return problems.list
        }
        // Settled: every request is logged (the aborted ones once the proxy saw them go), then
        // the descriptor count stops going down for `seconds` (or reaches `baseline`); a short
        // quiet time can only raise the baseline, so the final check waits longer.
        func settle(requests: Int, _ baseline: Int, quiet seconds: Double) -> Int {
            #expect(
                eventually(within: 300) { proxy.stdoutLineCount == requests },
                "\(proxy.stdoutLineCount) logged")
            var descriptors = proxy.openDescriptors
            while descriptors > baseline, eventually(within: seconds, { proxy.openDescriptors < descriptors })
            {
                descriptors = proxy.openDescriptors
            }
            return descriptors
        }

        // Warm-up: the same mix, so allocator arenas and pools reach their working size.
        let warmUp = drive(1000, offset: 0)
        #expect(warmUp.isEmpty, "\(warmUp.count) unexpected: \(warmUp.prefix(10))")
        let baselineDescriptors = settle(requests: 1000, 0, quiet: 2)
        let baselineRSS = proxy.residentKiB
        let problems = drive(10_000, offset: 1000)
        #expect(problems.isEmpty, "\(problems.count) unexpected: \(problems.prefix(10))")
        let descriptors = settle(requests: 11_000, baselineDescriptors, quiet: 30)
        let rss = proxy.residentKiB
        print(
            "10,000 faulty requests: descriptors \(baselineDescriptors) -> \(descriptors), RSS \(baselineRSS) -> \(rss) KiB, spool files \((try? FileManager.default.contentsOfDirectory(atPath: mount.path).count) ?? -1)"
        )
        let spoolFiles = (try? FileManager.default.contentsOfDirectory(atPath: mount.path).count) ?? -1
        recordFigure(
            "faulty-requests",
            [
                "requests": 10_000, "unexpected": problems.count, "descriptors_before": baselineDescriptors,
                "descriptors_after": descriptors, "rss_kib_before": baselineRSS, "rss_kib_after": rss,
                "spool_files_after": spoolFiles,
            ])
        #expect(descriptors <= baselineDescriptors)
        #expect(try FileManager.default.contentsOfDirectory(atPath: mount.path).isEmpty)
        #expect(rss <= baselineRSS + 4096, "RSS grew from \(baselineRSS) to \(rss) KiB")

        // And it still serves.
        let client = try RawClient(port: proxy.port)
        let good = multipartRequest(path: "/legacy", fileBytes: 1000)
        client.send(Array(good.head.utf8) + good.body)
        #expect(client.readResponse()?.status == 200)
    }
}

/// Failures collected from concurrent clients.
final class Problems: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func append(_ item: String) { lock.withLock { items.append(item) } }
    var list: [String] { lock.withLock { items } }
}

/// A tmpfs of a given size mounted on a fresh directory (the tests run as root, as CI does),
/// unmounted when released.
final class TinyFilesystem {
    let path: String

    init(bytes: Int) throws {
        path = NSTemporaryDirectory() + "formgate-tmpfs-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let result = try run(try tool("mount"), ["-t", "tmpfs", "-o", "size=\(bytes)", "tmpfs", path])
        guard result.status == 0 else {
            throw TestFailure("cannot mount a tmpfs on \(path) (the fault tests need root, as CI runs them)")
        }
    }

    deinit {
        _ = try? run(try tool("umount"), [path])
        try? FileManager.default.removeItem(atPath: path)
    }
}
