import HTTP1
import HTTPCore
import ProxyCore
import Testing
import UploadRules

/// Multipart rules over an HTTP/2 stream: the body the upstream gets is the one an HTTP/1.1
/// client's identical upload produces, byte for byte but for the random boundary, whether or
/// not the stream carried a `content-length`, in `stream` and `buffer` modes.
@Suite struct H2MultipartTests {
    static let file = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }

    static let body: [UInt8] =
        Array(
            ("--b\r\nContent-Disposition: form-data; name=\"token\"\r\n\r\nforged\r\n"
                + "--b\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHoliday\r\n"
                + "--b\r\nContent-Disposition: form-data; name=\"userfile\"; filename=\"cat.png\"\r\n"
                + "Content-Type: image/png\r\n\r\n").utf8) + file + Array("\r\n--b--\r\n".utf8)

    static func routes(_ mode: RequestBodyMode) -> RouteTable {
        var route = Route(pathPrefix: "/u", requestBody: mode, rewritesMultipart: true)
        route.rules.dropFields = ["token"]
        route.rules.renameFields = ["userfile": "file"]
        return RouteTable([route])
    }

    /// The body with its boundary (named in `head`) replaced by `BOUNDARY`.
    static func normalized(_ head: String, _ body: [UInt8]) throws -> [UInt8] {
        let boundary = try #require(head.split(separator: "boundary=").last?.split(separator: "\r\n").first)
        let pattern = Array(boundary.utf8)
        var out: [UInt8] = []
        var index = 0
        while index < body.count {
            if body.count - index >= pattern.count, body[index..<index + pattern.count].elementsEqual(pattern)
            {
                out += Array("BOUNDARY".utf8)
                index += pattern.count
            } else {
                out.append(body[index])
                index += 1
            }
        }
        return out
    }

    /// What the upstream gets when an HTTP/1.1 client uploads `body` with a Content-Length.
    static func http1Upload(_ mode: RequestBodyMode) throws -> (head: String, body: [UInt8]) {
        let harness = Harness(routes: routes(mode), highWater: 1 << 20)
        harness.clientSends(
            "POST /u HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data; boundary=b\r\n"
                + "Content-Length: \(body.count)\r\n\r\n")
        if harness.shell.upstream == .connecting { harness.upstreamConnects() }
        harness.shell.clientInput.append(contentsOf: body)
        harness.clientReadable()
        if harness.shell.upstream == .connecting { harness.upstreamConnects() }
        harness.drainUpstream()
        return DeclaredLengthTests.split(harness.shell.upstreamReceived)
    }

    /// What the upstream gets when an HTTP/2 client uploads `body` in DATA frames of 1000 bytes.
    static func h2Upload(_ mode: RequestBodyMode, contentLength: Bool) throws -> (head: String, body: [UInt8])
    {
        let harness = try StreamHarness(
            path: "/u",
            fields: [("content-type", "multipart/form-data; boundary=b")]
                + (contentLength ? [("content-length", String(body.count))] : []),
            routes: routes(mode), highWater: 1 << 20)
        if harness.shell.upstream == .connecting { harness.upstreamConnects() }
        var offset = 0
        while offset < body.count {
            harness.clientSends(body[offset..<min(offset + 1_000, body.count)])
            offset += 1_000
        }
        harness.clientEndsStream()
        if harness.shell.upstream == .connecting { harness.upstreamConnects() }
        while !harness.shell.upstreamOutput.isEmpty { harness.upstreamDrains() }
        harness.upstreamSends(Wire.ok)
        #expect(harness.record?.status == 200)
        #expect(harness.record?.multipart?.parts.map(\.name) == ["token", "title", "file"])
        return DeclaredLengthTests.split(harness.shell.upstreamReceived)
    }

    @Test(arguments: [true, false])
    func aStreamRouteRewritesTheBodyAsForHTTP1(contentLength: Bool) throws {
        let (head, sent) = try Self.h2Upload(.stream, contentLength: contentLength)
        #expect((head + "\r\n").contains("\r\nTransfer-Encoding: chunked\r\n"), "\(head)")
        let payload = try #require(dechunked(sent))
        let parts = try DeclaredLengthTests.parts(head, payload)
        #expect(parts.map(\.name) == ["title", "file"])
        #expect(parts.last?.content == Self.file)
        #expect(!String(decoding: payload, as: UTF8.self).contains("forged"))
        let (http1Head, http1Sent) = try Self.http1Upload(.stream)
        let http1Payload = try #require(dechunked(http1Sent))
        #expect(try Self.normalized(head, payload) == Self.normalized(http1Head, http1Payload))
    }

    /// Byte fidelity at every split point: two DATA frames cut anywhere, then END_STREAM (no
    /// content-length), give the same re-encoded body as one frame.
    @Test func everySplitOfTheDataGivesTheSameBodyUpstream() throws {
        let body = Array(
            ("--b\r\nContent-Disposition: form-data; name=\"token\"\r\n\r\nforged\r\n"
                + "--b\r\nContent-Disposition: form-data; name=\"userfile\"; filename=\"a.bin\"\r\n\r\n"
                + "\r\n--b-\r\n--\r\n\r\n--b--\r\n").utf8)
        func upload(_ frames: [ArraySlice<UInt8>]) throws -> [UInt8] {
            let harness = try StreamHarness(
                path: "/u", fields: [("content-type", "multipart/form-data; boundary=b")],
                routes: Self.routes(.stream), highWater: 1 << 20)
            harness.upstreamConnects()
            for frame in frames { harness.clientSends(frame) }
            harness.clientEndsStream()
            harness.upstreamDrains()
            let (head, sent) = DeclaredLengthTests.split(harness.shell.upstreamReceived)
            return try Self.normalized(head, try #require(dechunked(sent)))
        }
        let whole = try upload([body[...]])
        #expect(String(decoding: whole, as: UTF8.self).contains("name=\"file\"; filename=\"a.bin\""))
        #expect(!String(decoding: whole, as: UTF8.self).contains("forged"))
        for cut in 1..<body.count {
            #expect(try upload([body[..<cut], body[cut...]]) == whole, "cut at \(cut)")
        }
    }

    /// A store that needs a length never gets chunks over HTTP/2 either: with a
    /// content-length the head waits for the file and declares it, without one the body is
    /// spooled; either way the upstream gets an exact Content-Length and the file whole.
    @Test(arguments: [true, false])
    func aStoreRouteGetsAnExactLength(contentLength: Bool) throws {
        var route = Route(pathPrefix: "/u", requestBody: .stream, rewritesMultipart: true)
        route.rules.dropFields = ["token"]
        route.rules.inject = [
            Injection(
                name: "token", position: .before("file"),
                value: .provider(
                    QiniuProvider(
                        fieldName: "token",
                        policy: QiniuPolicy(
                            accessKey: "AK", secretKey: "SK", scope: try Template("photos:{filename}"),
                            ttlSeconds: 60, extra: []))))
        ]
        let body = DeclaredLengthTests.body(tail: "\r\n--b--\r\n")
        let harness = try StreamHarness(
            path: "/u",
            fields: [("content-type", "multipart/form-data; boundary=b")]
                + (contentLength ? [("content-length", String(body.count))] : []),
            routes: RouteTable([route]))
        if harness.shell.upstream == .connecting { harness.upstreamConnects() }
        var offset = 0
        while offset < body.count {
            harness.clientSends(body[offset..<min(offset + 3_000, body.count)])
            harness.upstreamDrains()
            offset += 3_000
        }
        harness.clientEndsStream()
        if harness.shell.upstream == .connecting { harness.upstreamConnects() }
        while !harness.shell.upstreamOutput.isEmpty || harness.shell.clientInput.count > 0 {
            harness.upstreamDrains()
        }
        let (head, sent) = DeclaredLengthTests.split(harness.shell.upstreamReceived)
        #expect(!head.contains("Transfer-Encoding"), "\(head)")
        #expect((head + "\r\n").contains("\r\nContent-Length: \(sent.count)\r\n"), "\(head)")
        let parts = try DeclaredLengthTests.parts(head, sent)
        #expect(parts.map(\.name) == ["title", "token", "file"])
        #expect(parts.last?.content == DeclaredLengthTests.file)
        #expect((harness.shell.spool != nil) == !contentLength, "spooled exactly when no content-length came")
    }

    @Test(arguments: [true, false])
    func aBufferRouteSpoolsAndSendsTheExactLength(contentLength: Bool) throws {
        let (head, sent) = try Self.h2Upload(.buffer, contentLength: contentLength)
        #expect(!head.contains("Transfer-Encoding"))
        #expect((head + "\r\n").contains("\r\nContent-Length: \(sent.count)\r\n"), "\(head)")
        #expect(try DeclaredLengthTests.parts(head, sent).last?.content == Self.file)
        let (http1Head, http1Sent) = try Self.http1Upload(.buffer)
        #expect(try Self.normalized(head, sent) == Self.normalized(http1Head, http1Sent))
    }
}
