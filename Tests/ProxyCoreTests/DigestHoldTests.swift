import ProxyCore
import Testing

@testable import UploadRules

/// Digests hashed off the loop: the exchange never waits; it pauses the client while the
/// hashing queue is backed up and holds the body's end until the digest is reported.
@Suite struct DigestHoldTests {
    static let boundary = "b0undary"

    /// A pool whose threads never run: the test hashes each block itself.
    static func manualPool() -> DigestPool {
        DigestPool(threads: 1) { _, _ in }
    }

    static func routes() -> RouteTable {
        var route = Route(pathPrefix: "/d", rewritesMultipart: true)
        route.rules.digests = [.sha256]
        return RouteTable([route])
    }

    static func upload(fileBytes: Int) -> (head: String, body: [UInt8]) {
        var body = Array(
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n\r\n".utf8)
        body += (0..<fileBytes).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        body += Array("\r\n--\(boundary)--\r\n".utf8)
        let head =
            "POST /d HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data; boundary=\(boundary)\r\nContent-Length: \(body.count)\r\n\r\n"
        return (head, body)
    }

    @Test func theBodyEndWaitsForTheDigestWithoutBlocking() throws {
        let pool = Self.manualPool()
        let queue = DigestQueue(pool: pool) {}
        let harness = Harness(routes: Self.routes(), highWater: 64 << 20, tools: RuleTools(hashing: queue))
        let upload = Self.upload(fileBytes: 2 << 20)
        harness.shell.clientInput.bytes = Array(upload.head.utf8) + upload.body
        harness.clientReadable()
        harness.upstreamConnects()
        harness.upstreamDrains()
        var received = String(decoding: harness.shell.upstreamReceived, as: UTF8.self)
        #expect(!received.contains("file.sha256"), "the digest is not known yet")
        #expect(!received.hasSuffix("0\r\n\r\n"), "the body's end is held")
        #expect(harness.shell.records.isEmpty)
        while pool.hashNextBlock() {}
        harness.hashingProgressed()
        harness.upstreamDrains()
        received = String(decoding: harness.shell.upstreamReceived, as: UTF8.self)
        harness.upstreamSends(Wire.ok)
        let digest = try #require(harness.shell.records.first?.multipart?.parts.first?.digests.first?.1)
        #expect(digest.utf8.count == 64)
        let payload = try #require(dechunked(messageBody(harness.shell.upstreamReceived)))
        #expect(payload.count > 2 << 20)
        let body = String(decoding: payload.suffix(300), as: UTF8.self)
        #expect(body.contains("name=\"file.sha256\"\r\n\r\n\(digest)\r\n--"))
        #expect(received.hasSuffix("0\r\n\r\n"))
        #expect(harness.statuses == [200])
    }

    @Test func aBackedUpHashingQueuePausesTheClientUntilItDrains() {
        let pool = Self.manualPool()
        let queue = DigestQueue(pool: pool, highMark: 512 << 10, lowMark: 256 << 10) {}
        let harness = Harness(routes: Self.routes(), highWater: 64 << 20, tools: RuleTools(hashing: queue))
        let upload = Self.upload(fileBytes: 3 << 20)
        harness.clientSends(upload.head)
        harness.upstreamConnects()
        var offset = 0
        var pauses = 0
        while offset < upload.body.count {
            if !harness.shell.clientReading {
                pauses += 1
                #expect(queue.isBackedUp)
                while queue.isBackedUp, pool.hashNextBlock() {}
                harness.hashingProgressed()
                #expect(harness.shell.clientReading, "every pause is followed by its resume")
            }
            let end = min(offset + 64 << 10, upload.body.count)
            harness.shell.clientInput.append(contentsOf: upload.body[offset..<end])
            harness.clientReadable()
            harness.upstreamDrains()
            offset = end
        }
        #expect(pauses > 0)
        while pool.hashNextBlock() {}
        harness.hashingProgressed()
        harness.upstreamDrains()
        harness.upstreamSends(Wire.ok)
        #expect(harness.statuses == [200])
        #expect(harness.shell.records.first?.multipart?.parts.first?.bytes == 3 << 20)
    }
}
