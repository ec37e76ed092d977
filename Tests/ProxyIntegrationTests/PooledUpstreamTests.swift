import Foundation
import Testing

/// Issue 26, item 1: a pooled upstream connection's idle deadline must not run while a request
/// uses it. With `timeouts: { idle: 2s }`, a warm-up request leaves its upstream connection
/// in the pool; a second later an upload on the same client connection takes that connection
/// and sends steadily for about 1.6 s, past the idle deadline the first request's release
/// started. The upload must be answered 200, and the raw upstream must have received, on its
/// one connection, the warm-up and then the whole upload, byte-exact. (Before the fix, the
/// deadline survived the reuse: 502, and the upstream got part of the upload.)
@Suite(.serialized) struct PooledUpstreamTests {
    static let boundary = "PooledUpstreamBoundary7f3a"
    /// The upload is sent in this many slices, `sliceInterval` seconds apart.
    static let slices = 16
    static let sliceInterval = 0.1
    /// How long the warm-up's upstream connection sits idle in the pool before the upload.
    static let idleBeforeUpload = 1.0

    /// The file: 24 KiB from a fixed seed (under HTTP/2's initial window, so the h2 client
    /// needs no flow control).
    static let file: [UInt8] = {
        var state: UInt64 = 26
        return (0..<24 * 1024).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
    }()

    /// The multipart body carrying `file` under `boundary`, as the client sends it and as the
    /// proxy forwards it (under its own boundary; the part's head is already canonical).
    static func body(boundary: String) -> [UInt8] {
        Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"f\"; filename=\"f.bin\"\r\n".utf8)
            + Array("Content-Type: application/octet-stream\r\n\r\n".utf8) + file
            + Array("\r\n--\(boundary)--\r\n".utf8)
    }

    static let body = body(boundary: boundary)

    /// A proxy with an h2c listener (which serves HTTP/1.1 too) and a multipart route, whose
    /// pooled upstream connections idle out after 2 s, in front of a raw recording upstream
    /// that answers each whole request.
    static func start() throws -> (proxy: ServerProcess, upstream: FakeUpstream) {
        let upstream = try FakeUpstream(.answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        let proxy = try startListeners(
            ["{ address: 127.0.0.1:0, http2: { h2c: true } }"],
            "upstream: \(upstream.url)\ntimeouts: { idle: 2s }\nroutes:\n  - match: { path: / }\n"
                + "    multipart: {}\n")
        return (proxy, upstream)
    }

    /// The upstream saw one connection, which carried the warm-up GET and then the whole
    /// upload: its body the client's, byte for byte, under the forwarded boundary; and the
    /// proxy closed that connection once it had been idle in the pool for 2 s.
    static func expectUpstreamReceivedBoth(_ upstream: FakeUpstream) throws {
        // Every check is on a Bool or a count: a failure then prints no 24 KiB byte array.
        let connections = upstream.connections
        #expect(connections == 1, "the upload did not reuse the pooled upstream connection")
        let stream = try #require(upstream.streams.first)
        let warmUpLength = FakeUpstream.wholeRequestLength(stream) ?? stream.count
        let warmUpFirst = stream.starts(with: Array("GET /warm HTTP/1.1\r\n".utf8))
        #expect(
            warmUpFirst,
            "the connection's first request: \(String(decoding: stream.prefix(40), as: UTF8.self))")
        let upload = Array(stream[warmUpLength...])
        let uploadNext = upload.starts(with: Array("POST /upload HTTP/1.1\r\n".utf8))
        #expect(uploadNext, "then: \(String(decoding: upload.prefix(40), as: UTF8.self))")
        let uploadLength = FakeUpstream.wholeRequestLength(upload)
        let received = upload.count
        #expect(uploadLength == received, "the upload arrived in part")
        let forwarded = ForwardedRequest(upload)
        let boundary = try #require(forwarded.boundary, "no forwarded boundary")
        let expected = Self.body(boundary: boundary)
        let complete = forwarded.isComplete
        #expect(complete, "the upstream did not get the upload's close delimiter")
        let (forwardedCount, expectedCount) = (forwarded.body.count, expected.count)
        #expect(forwardedCount == expectedCount)
        let firstDifference = (0..<min(forwardedCount, expectedCount)).first {
            forwarded.body[$0] != expected[$0]
        }
        #expect(firstDifference == nil, "the forwarded body differs from byte \(firstDifference ?? 0)")
        // Back in the pool, the connection's idle deadline runs again: the proxy closes it.
        #expect(eventually(within: 20) { upstream.openConnections == 0 }, "the idle connection stayed open")
    }

    @Test func http1UploadOnAReusedUpstreamConnectionOutlivesItsIdleDeadline() throws {
        let (proxy, upstream) = try Self.start()
        defer {
            proxy.stop()
            upstream.stop()
        }
        let client = try RawClient(port: proxy.listeners[0].port)
        client.send("GET /warm HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try #require(client.readResponse()).status == 200)
        Thread.sleep(forTimeInterval: Self.idleBeforeUpload)  // sets up the condition only
        client.send(
            "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data; boundary=\(Self.boundary)"
                + "\r\nContent-Length: \(Self.body.count)\r\n\r\n")
        let size = (Self.body.count + Self.slices - 1) / Self.slices
        for start in stride(from: 0, to: Self.body.count, by: size) {
            if start > 0 { Thread.sleep(forTimeInterval: Self.sliceInterval) }
            client.send(Array(Self.body[start..<min(start + size, Self.body.count)]))
        }
        let response = try #require(client.readResponse(), "no response to the upload")
        #expect(response.status == 200, "\(response.head)")
        #expect(String(decoding: response.body, as: UTF8.self) == "ok")
        try Self.expectUpstreamReceivedBoth(upstream)
    }

    @Test func h2cUploadOnAReusedUpstreamConnectionOutlivesItsIdleDeadline() throws {
        let (proxy, upstream) = try Self.start()
        defer {
            proxy.stop()
            upstream.stop()
        }
        let file = NSTemporaryDirectory() + "formgate-pooled-\(UUID().uuidString)"
        try Data(Self.body).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let result = try run(
            try python3(),
            [
                "-c", Self.h2Client, String(proxy.listeners[0].port), Self.boundary, file,
                String(Self.idleBeforeUpload), String(Self.slices), String(Self.sliceInterval),
            ])
        let lines = String(decoding: result.output, as: UTF8.self).split(separator: "\n")
        #expect(result.status == 0)
        #expect(lines == ["1 200", "3 200"], "\(lines)")
        let log = proxy.accessLog(atLeast: 2)
        #expect(log.map { $0["protocol"] as? String } == ["h2", "h2"])
        try Self.expectUpstreamReceivedBoth(upstream)
    }

    /// python3-h2 over h2c prior knowledge: stream 1 `GET /warm`; after `idle` seconds, stream 3
    /// posts the file in `slices` DATA frames `interval` seconds apart. Prints each stream's
    /// status (or `reset`).
    static let h2Client = """
        import socket, sys, time, h2.connection, h2.events
        port, boundary, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
        idle, slices, interval = float(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
        body = open(path, "rb").read()
        sock = socket.create_connection(("127.0.0.1", port))
        sock.settimeout(20)
        conn = h2.connection.H2Connection()
        conn.initiate_connection()
        sock.sendall(conn.data_to_send())

        def await_end(stream):
            status = None
            while True:
                data = sock.recv(65536)
                if not data:
                    return status or "closed"
                for event in conn.receive_data(data):
                    if isinstance(event, h2.events.ResponseReceived) and event.stream_id == stream:
                        status = dict(event.headers)[b":status"].decode()
                    if isinstance(event, h2.events.DataReceived):
                        conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    if isinstance(event, h2.events.StreamReset) and event.stream_id == stream:
                        return status or "reset"
                    if isinstance(event, h2.events.StreamEnded) and event.stream_id == stream:
                        return status
                sock.sendall(conn.data_to_send())

        common = [(":authority", "t"), (":scheme", "http")]
        conn.send_headers(1, [(":method", "GET"), (":path", "/warm")] + common, end_stream=True)
        sock.sendall(conn.data_to_send())
        print(1, await_end(1), flush=True)
        time.sleep(idle)
        conn.send_headers(3, [(":method", "POST"), (":path", "/upload")] + common + [
            ("content-type", "multipart/form-data; boundary=" + boundary),
            ("content-length", str(len(body)))])
        sock.sendall(conn.data_to_send())
        size = -(-len(body) // slices)
        for index in range(slices):
            if index:
                time.sleep(interval)
            conn.send_data(3, body[index * size:(index + 1) * size], end_stream=index == slices - 1)
            sock.sendall(conn.data_to_send())
        print(3, await_end(3), flush=True)
        """
}
