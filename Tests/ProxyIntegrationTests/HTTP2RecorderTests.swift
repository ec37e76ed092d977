import Foundation
import Testing

/// Issue 26, 2 and 3: an HTTP/2 request body's end is the client's to give, and a request
/// without one never completes upstream. Silent streams time out (408 or RST_STREAM, logged
/// 408); a body that runs past its `content-length`, or ends only after an extra frame, is a
/// malformed request (RST_STREAM PROTOCOL_ERROR or a 4xx, logged 400) whose upstream copy stays
/// incomplete. Over h2c and over TLS, against a raw recorder that never answers. (The HTTP/1.1
/// equivalents are FaultTests, FramingTests and ProtocolTests.)
@Suite(.serialized) struct HTTP2RecorderTests {
    static let boundary = "RecorderBoundary5f2c9e"
    static let multipartType = "content-type=multipart/form-data; boundary=\(boundary)"

    static let partsHead = Array(
        ("--\(boundary)\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nrecorded\r\n"
            + "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n"
            + "Content-Type: application/octet-stream\r\n\r\n").utf8)
    static let partsTail = Array("\r\n--\(boundary)--\r\n".utf8)

    /// The file part's content in a multipart body of `size` bytes.
    static func fileContent(size: Int) -> [UInt8] {
        (0..<(size - partsHead.count - partsTail.count)).map { UInt8(truncatingIfNeeded: $0 % 251 + 1) }
    }

    /// A valid multipart body: a `title` field, then a file part padded to `size` bytes in all.
    static func multipart(size: Int) -> [UInt8] {
        partsHead + fileContent(size: size) + partsTail
    }

    /// `/upload` rewrites (TargetNormalizationTests' rules); `/plain` has none.
    static let routes = TargetNormalizationTests.routes + "  - match: { path: /plain }\n"

    /// 3 streams on one connection each send 1,000 bytes of a 200,000-byte multipart body, then
    /// nothing while the connection stays open (PINGs answered): each stream ends within a few
    /// `timeouts.idle` periods with a 408 or RST_STREAM, each is logged 408, every upstream
    /// connection closes, and no recorded request is whole.
    @Test(arguments: H2Transport.allCases)
    func silentStreamsTimeOut(transport: H2Transport) throws {
        let setup = try HTTP2RecorderSetup("timeouts: { idle: 2s }\n" + Self.routes)
        defer { setup.stop() }
        let body = try setup.file("body.bin", Self.multipart(size: 200_000))
        let descriptors = setup.proxy.openDescriptors
        let client = try setup.client(
            transport,
            [
                "--path", "/upload", "--body", body, "--header", Self.multipartType, "--header",
                "content-length=200000", "--streams", "3", "headers", "prefix:1000",
            ])
        defer { client.stop() }
        // 20 s (10 idle periods) only bounds a test that would hang.
        let ended = eventually(within: 20) { [1, 3, 5].allSatisfy { client.ended($0) != nil } }
        #expect(ended, "streams not ended: \(client.record)")
        for stream in [1, 3, 5] {
            let event = client.ended(stream)
            let status = event?["status"] as? Int
            #expect(
                status == 408 || (status == nil && event?["rst"] is String),
                "stream \(stream): \(event ?? [:])")
        }
        #expect(
            eventually(within: 20) { setup.recorder.openConnections == 0 }, "upstream connections stay open")
        #expect(setup.recorderHoldsNoWholeRequest, "\(setup.recorder.streams.map { $0.count })")
        let log = Self.settledLog(setup, client: client, descriptors: descriptors, atLeast: 3)
        let timedOut = log.filter { $0["status"] as? Int == 408 }.compactMap { $0["stream"] as? Int }
        #expect(timedOut.sorted() == [1, 3, 5], "\(setup.proxy.stdout)")
        // One line per request (README, access log).
        #expect(log.count == 3, "\(setup.proxy.stdout)")
    }

    /// The access log once it has `count` lines, `client` is stopped and the proxy's descriptors
    /// are back to `descriptors` (its connection closed: any line about it is written by then).
    static func settledLog(
        _ setup: HTTP2RecorderSetup, client: H2FramesClient, descriptors: Int, atLeast count: Int
    ) -> [[String: Any]] {
        #expect(eventually(within: 20) { setup.proxy.stdoutLineCount >= count }, "not logged")
        client.stop()
        eventually(within: 10) { setup.proxy.openDescriptors <= descriptors }
        return setup.proxy.accessLog
    }

    /// A body whose end is not where its `content-length` and END_STREAM agree. Each frame
    /// after the declared length is sent once a PING sent after the ones before it is
    /// answered (`sync`): the proxy has acted on the declared length before the excess arrives.
    enum Framing: String, CaseIterable, Sendable {
        /// N bytes without END_STREAM, then one more byte with it.
        case extraByte
        /// N bytes without END_STREAM, an empty DATA, then one byte with END_STREAM.
        case emptyThenExtraByte
        /// `content-length: 0`, HEADERS without END_STREAM, then one byte with END_STREAM.
        case zeroLengthThenByte

        var steps: [String] {
            switch self {
            case .extraByte: ["headers", "body", "sync", "byte-end"]
            case .emptyThenExtraByte: ["headers", "body", "sync", "empty", "sync", "byte-end"]
            case .zeroLengthThenByte: ["headers", "sync", "byte-end"]
            }
        }
    }

    /// A route and the body it gets.
    struct Case: Sendable, CustomTestStringConvertible {
        let path: String
        let framing: Framing

        var testDescription: String { "\(path) \(framing.rawValue)" }

        static let all = ["/upload", "/plain"].flatMap { path in
            Framing.allCases.map { Case(path: path, framing: $0) }
        }
    }

    /// The script's options for `body` (in `file`) to `path`, declaring `length` bytes.
    static func request(_ path: String, file: String, length: Int) -> [String] {
        let type = path == "/upload" ? multipartType : "content-type=application/octet-stream"
        return ["--path", path, "--body", file, "--header", type, "--header", "content-length=\(length)"]
    }

    /// The body a route gets: a small valid multipart body, or 1,000 bytes that are not one.
    static func body(for path: String) -> [UInt8] {
        path == "/upload" ? multipart(size: 1200) : (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) }
    }

    /// Each malformed framing on a route with rules and one without: RST_STREAM PROTOCOL_ERROR
    /// (or a 4xx) on the stream, an access-log line with 400, and once that line is written and
    /// the upstream connections closed, no recorded request is whole.
    @Test(arguments: H2Transport.allCases, Case.all)
    func aMalformedBodyNeverCompletesUpstream(transport: H2Transport, case malformed: Case) throws {
        let setup = try HTTP2RecorderSetup(Self.routes)
        defer { setup.stop() }
        let body = Self.body(for: malformed.path)
        let file = try setup.file("body.bin", body)
        let length = malformed.framing == .zeroLengthThenByte ? 0 : body.count
        let descriptors = setup.proxy.openDescriptors
        let client = try setup.client(
            transport, Self.request(malformed.path, file: file, length: length) + malformed.framing.steps)
        defer { client.stop() }
        #expect(eventually(within: 20) { client.ended() != nil }, "no answer: \(client.record)")
        let event = client.ended() ?? [:]
        let status = event["status"] as? Int ?? 0
        #expect(
            event["rst"] as? String == "PROTOCOL_ERROR" || (400..<500).contains(status),
            "the stream ended with \(event)")
        // Settled: the request is logged and no upstream connection is left open.
        let settled = eventually(within: 20) {
            setup.proxy.stdoutLineCount >= 1 && setup.recorder.openConnections == 0
        }
        #expect(
            settled,
            "log: \(setup.proxy.stdout); open upstream connections: \(setup.recorder.openConnections)")
        let received = String(decoding: setup.recorder.bytesReceived, as: UTF8.self)
        #expect(
            setup.recorderHoldsNoWholeRequest, "the recorder holds a whole request: \(received.prefix(400))")
        let log = Self.settledLog(setup, client: client, descriptors: descriptors, atLeast: 1)
        #expect(log.contains { $0["status"] as? Int == 400 }, "\(setup.proxy.stdout)")
        // One line per request (README, access log).
        #expect(log.count == 1, "\(setup.proxy.stdout)")
    }

    /// The controls: the same bodies with END_STREAM on the DATA that completes the declared
    /// length reach the recorder whole (the route's rules applied, the bytes intact), and so does
    /// an empty body declared `content-length: 0` on the route without rules.
    @Test(arguments: H2Transport.allCases)
    func wellFramedBodiesReachTheRecorderWhole(transport: H2Transport) throws {
        let setup = try HTTP2RecorderSetup(Self.routes)
        defer { setup.stop() }
        for (path, body) in [
            ("/upload", Self.body(for: "/upload")), ("/plain", Self.body(for: "/plain")), ("/plain", []),
        ] {
            let file = try setup.file("body-\(body.count).bin", body)
            let before = setup.recorder.byteCount
            let client = try setup.client(
                transport, Self.request(path, file: file, length: body.count) + ["headers", "body-end"])
            defer { client.stop() }
            // The recorder never answers: the control ends once it holds the whole request.
            guard let request = setup.wholeRequest(after: before, unless: client) else {
                Issue.record(
                    "\(path), \(body.count) B: no whole request upstream; the client saw \(client.record)")
                continue
            }
            #expect(request.requestLine == "POST \(path) HTTP/1.1")
            if path == "/plain" {
                #expect(request.body == body, "\(path): \(request.body.count) of \(body.count) bytes")
            } else {
                let text = String(decoding: request.body, as: UTF8.self)
                #expect(
                    text.contains("by-formgate") && text.contains("recorded") && !text.contains(Self.boundary)
                )
                #expect(
                    request.body.firstRange(of: Self.fileContent(size: body.count)) != nil,
                    "file bytes changed")
            }
        }
    }

    /// A header block begun and never ended (HEADERS without END_HEADERS, then silence, the
    /// connection kept open): the connection is closed after `timeouts.header` (1 s here),
    /// long before `timeouts.idle` (60 s), as a partial HTTP/1.1 head is; the upstream is
    /// never contacted. The script's own deadline (30 s) ends a run the proxy leaves hanging.
    @Test(arguments: H2Transport.allCases)
    func aHeaderBlockThatNeverEndsClosesAfterTheHeaderTimeout(transport: H2Transport) throws {
        let setup = try HTTP2RecorderSetup("timeouts: { header: 1s, idle: 60s }\n" + Self.routes)
        defer { setup.stop() }
        let client = try setup.client(
            transport,
            // `sync` first: the client's SETTINGS ACK must not come inside the block.
            ["--path", "/upload", "--deadline", "30", "--header", Self.multipartType, "sync", "headers-open"])
        defer { client.stop() }
        let closedEvent = { client.events.first { $0["event"] as? String == "closed" } }
        #expect(eventually(within: 40) { closedEvent() != nil }, "never closed: \(client.record)")
        let closedAt = closedEvent()?["t"] as? Double ?? .infinity
        #expect(closedAt < 30, "closed at \(closedAt) s: by the idle timeout, not the header one")
        #expect(setup.recorder.connections == 0 && setup.recorder.bytesReceived.isEmpty)
    }
}
