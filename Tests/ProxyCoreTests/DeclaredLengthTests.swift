import HTTP1
import HTTPCore
import MultipartParsing
import ProxyCore
import Testing
import UploadRules

/// A `stream` route whose store needs a Content-Length: the upstream head waits until the
/// file's head is re-encoded, then goes with the exact length of the whole re-encoded body,
/// and the file streams through; whatever the client's body ends with, the body upstream is
/// exactly that long.
@Suite struct DeclaredLengthTests {
    static let file = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }

    static func harness(highWater: Int = 1024, rules: (inout RuleSet) -> Void = { _ in }) -> Harness {
        var route = Route(pathPrefix: "/u", requestBody: .stream, rewritesMultipart: true)
        route.rules.dropFields = ["token"]
        route.rules.inject = [
            Injection(
                name: "token", position: .before("file"),
                value: .provider(
                    QiniuProvider(
                        fieldName: "token",
                        policy: QiniuPolicy(
                            accessKey: "AK", secretKey: "SK", scope: try! Template("photos:{filename}"),
                            ttlSeconds: 60, extra: []))))
        ]
        rules(&route.rules)
        return Harness(routes: RouteTable([route]), highWater: highWater)
    }

    /// A client body: a field, then the file, then `tail` (the client's close and after).
    static func body(tail: String) -> [UInt8] {
        Array(
            "--b\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHoliday\r\n--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"cat.png\"\r\nContent-Type: image/png\r\n\r\n"
                .utf8) + file + Array(tail.utf8)
    }

    static func head(length: Int, chunked: Bool = false) -> String {
        "POST /u HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data; boundary=b\r\n"
            + (chunked ? "Transfer-Encoding: chunked" : "Content-Length: \(length)") + "\r\n\r\n"
    }

    /// The upstream's request head and body.
    static func split(_ received: [UInt8]) -> (head: String, body: [UInt8]) {
        let end = Array("\r\n\r\n".utf8)
        for index in 0...(received.count - 4) where received[index..<index + 4].elementsEqual(end) {
            return (String(decoding: received[..<index], as: UTF8.self), Array(received[(index + 4)...]))
        }
        return (String(decoding: received, as: UTF8.self), [])
    }

    /// The parts of a re-encoded body under the boundary its head names.
    static func parts(_ head: String, _ body: [UInt8]) throws -> [(name: String, content: [UInt8])] {
        let boundary = try #require(head.split(separator: "boundary=").last?.split(separator: "\r\n").first)
        var parser = try MultipartParser(boundary: String(boundary))
        var parts: [(name: String, content: [UInt8])] = []
        var handler = ClosureEventHandler { event in
            switch event {
            case .partBegin(let part): parts.append((part.nameString, []))
            case .body(let bytes): parts[parts.count - 1].content.append(contentsOf: bytes)
            default: break
            }
        }
        try parser.feed(body, into: &handler)
        try parser.finish(into: &handler)
        return parts
    }

    @Test(arguments: [
        "\r\n--b--\r\n",  // curl, browsers, requests, Go, Node
        "\r\n--b--",  // no final CRLF (hand-built iOS bodies)
        "\r\n--b--  \r\nan epilogue\r\n",
        // A part dropped after the file.
        "\r\n--b\r\nContent-Disposition: form-data; name=\"token\"\r\n\r\nforged\r\n--b--\r\n",
    ])
    func theHeadWaitsForTheFileThenDeclaresTheExactLength(tail: String) throws {
        let harness = Self.harness()
        let body = Self.body(tail: tail)
        harness.clientSends(Self.head(length: body.count))
        // The fields and the start of the file's head arrive; the connection is made.
        harness.clientSends(body[..<60])
        harness.upstreamConnects()
        harness.upstreamDrains()
        #expect(harness.shell.upstreamReceived.isEmpty, "no head before the length is known")
        var offset = 60
        while offset < body.count {
            let end = min(offset + 3_000, body.count)
            harness.clientSends(body[offset..<end])
            harness.upstreamDrains()
            offset = end
        }
        let (head, sent) = Self.split(harness.shell.upstreamReceived)
        #expect(!head.contains("Transfer-Encoding"))
        #expect((head + "\r\n").contains("\r\nContent-Length: \(sent.count)\r\n"), "\(head)")
        let parts = try Self.parts(head, sent)
        #expect(parts.map(\.name) == ["title", "token", "file"])
        #expect(parts.last?.content == Self.file)
        #expect(!String(decoding: sent, as: UTF8.self).contains("forged"))
        harness.upstreamSends(Wire.ok)
        harness.clientDrains()
        #expect(harness.statuses == [200])
    }

    /// The file's head and the body's end in one read: the body ended before a length could
    /// be declared, so it goes with the length it has.
    @Test(arguments: ["\r\n--b--\r\n", "\r\n--b--", "\r\n--b--\r\n\r\nepilogue"])
    func aBodyWholeInOneReadGoesWithItsOwnLength(tail: String) throws {
        let harness = Self.harness()
        let body = Self.body(tail: tail)
        harness.clientSends(Self.head(length: body.count))
        harness.upstreamConnects()
        harness.clientSends(body[...])
        harness.drainUpstream()
        let (head, sent) = Self.split(harness.shell.upstreamReceived)
        #expect((head + "\r\n").contains("\r\nContent-Length: \(sent.count)\r\n"), "\(head)")
        #expect(try Self.parts(head, sent).last?.content == Self.file)
    }

    @Test func theUsualCloseComesOutAsTheEncoderWritesIt() {
        let harness = Self.harness()
        let body = Self.body(tail: "\r\n--b--\r\n")
        harness.clientSends(Self.head(length: body.count))
        harness.clientSends(body[..<400])
        harness.upstreamConnects()
        harness.clientSends(body[400...])
        harness.drainUpstream()
        let sent = Self.split(harness.shell.upstreamReceived).body
        #expect(String(decoding: sent.suffix(4), as: UTF8.self) == "--\r\n")
    }

    @Test func aSniffWindowIsHeldBeforeTheHeadGoes() throws {
        let harness = Self.harness { $0.sniff = RuleSet.SniffRule(bytes: 4096, policy: .override) }
        let body = Self.body(tail: "\r\n--b--\r\n")
        let fileStart = body.count - Self.file.count - 9
        harness.clientSends(Self.head(length: body.count))
        harness.clientSends(body[..<(fileStart + 100)])
        harness.upstreamConnects()
        harness.upstreamDrains()
        #expect(harness.shell.upstreamReceived.isEmpty, "the file's head waits for 4 KiB of it")
        harness.clientSends(body[(fileStart + 100)...])
        harness.drainUpstream()
        let (head, sent) = Self.split(harness.shell.upstreamReceived)
        #expect((head + "\r\n").contains("\r\nContent-Length: \(sent.count)\r\n"))
        #expect(try Self.parts(head, sent).last?.content == Self.file)
    }

    @Test func aPartAfterTheFileAbortsTheUpstream() {
        let harness = Self.harness()
        let body = Self.body(
            tail: "\r\n--b\r\nContent-Disposition: form-data; name=\"album\"\r\n\r\nsummer\r\n--b--\r\n")
        harness.clientSends(Self.head(length: body.count))
        harness.clientSends(body[..<400])
        harness.upstreamConnects()
        harness.clientSends(body[400...])
        harness.drainUpstream()
        harness.clientDrains()
        #expect(harness.statuses == [400])
        #expect(harness.shell.aborted == 1, "the upstream never gets a whole request")
        let (head, sent) = Self.split(harness.shell.upstreamReceived)
        let declared = head.split(separator: "Content-Length: ").last.flatMap {
            Int($0.prefix { $0.isNumber })
        }
        #expect(declared.map { sent.count < $0 } == true)
    }

    @Test func tooMuchBeforeTheFileIsRefused() {
        let harness = Self.harness()
        let field = String(repeating: "x", count: 100_000)
        var fields = ""
        for index in 0..<11 {
            fields += "--b\r\nContent-Disposition: form-data; name=\"f\(index)\"\r\n\r\n\(field)\r\n"
        }
        let body = Array(fields.utf8) + Self.body(tail: "\r\n--b--\r\n")
        harness.clientSends(Self.head(length: body.count))
        harness.upstreamConnects()
        for start in stride(from: 0, to: body.count, by: 65_536) {
            harness.clientSends(body[start..<min(start + 65_536, body.count)])
        }
        harness.clientDrains()
        #expect(harness.statuses == [413], "\(harness.shell.clientText.prefix(300))")
        #expect(harness.shell.upstreamReceived.isEmpty)
    }

    /// A store never gets chunks: a body whose length cannot be declared when the file begins
    /// (sent chunked, or with digest fields after the file) is spooled and sent with its length.
    @Test(arguments: [true, false])
    func aBodyWhoseLengthCannotBeDeclaredIsSpooled(chunked: Bool) throws {
        let harness = Self.harness { if !chunked { $0.digests = [.sha256] } }
        let body = Self.body(tail: "\r\n--b--\r\n")
        harness.clientSends(Self.head(length: body.count, chunked: chunked))
        if chunked {
            harness.clientSends(Array((String(body.count, radix: 16) + "\r\n").utf8)[...])
            harness.clientSends(body[...])
            harness.clientSends(Array("\r\n0\r\n\r\n".utf8)[...])
        } else {
            harness.clientSends(body[...])
        }
        #expect(harness.shell.upstream == .connecting, "connected once the spool holds the body")
        harness.upstreamConnects()
        harness.drainUpstream()
        let (head, sent) = Self.split(harness.shell.upstreamReceived)
        #expect(!head.contains("Transfer-Encoding"))
        #expect((head + "\r\n").contains("\r\nContent-Length: \(sent.count)\r\n"), "\(head)")
        let parts = try Self.parts(head, sent)
        #expect(parts.first { $0.name == "file" }?.content == Self.file)
        #expect(parts.map(\.name).contains("file.sha256") == !chunked)
    }
}

extension Harness {
    /// Lets the upstream read until the client's input and the upstream's output are empty.
    func drainUpstream() {
        while shell.clientInput.count > 0 || !shell.upstreamOutput.isEmpty { upstreamDrains() }
    }

    /// Sends body bytes (which need not be UTF-8).
    func clientSends(_ bytes: ArraySlice<UInt8>) {
        shell.clientInput.append(contentsOf: bytes)
        guard shell.clientReading else { return }
        clientReadable()
    }
}
