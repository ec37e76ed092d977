import HTTP1
import ProxyCore
import Testing

/// `request_body: buffer` with spool writes off the loop: a spool whose writes lag behind
/// pauses the client like a backed-up hashing queue, and the spooled body goes upstream only
/// once every write landed (the shell's progress signal, `hashingProgressed`, says when).
@Suite struct SpoolBacklogTests {
    static let file = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    static let body: [UInt8] =
        Array(
            ("--b\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHoliday\r\n"
                + "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"cat.png\"\r\n"
                + "Content-Type: image/png\r\n\r\n").utf8) + file + Array("\r\n--b--\r\n".utf8)
    static let head =
        "POST /u HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data; boundary=b\r\n"
        + "Content-Length: \(body.count)\r\n\r\n"

    static func harness() -> Harness {
        let route = Route(pathPrefix: "/u", requestBody: .buffer, rewritesMultipart: true)
        return Harness(routes: RouteTable([route]), highWater: 1024)
    }

    /// The upstream gets the spool with an exact Content-Length: the file whole, once.
    static func expectFileUpstream(_ harness: Harness) throws {
        harness.upstreamDrains()
        let (head, sent) = DeclaredLengthTests.split(harness.shell.upstreamReceived)
        #expect((head + "\r\n").contains("\r\nContent-Length: \(sent.count)\r\n"), "\(head)")
        let parts = try DeclaredLengthTests.parts(head, sent)
        #expect(parts.map(\.name) == ["title", "file"])
        #expect(parts.last?.content == file)
    }

    @Test func aBackloggedSpoolPausesTheClientUntilTheSignal() throws {
        let harness = Self.harness()
        harness.shell.spoolBacklogLimit = 1
        harness.clientSends(Self.head)
        harness.shell.clientInput.append(contentsOf: Self.body.prefix(5_000))
        harness.clientReadable()
        #expect(harness.shell.clientReading)
        let spooled = harness.shell.spool?.count ?? 0
        #expect(spooled > 0)
        // The disk lags: the next bytes stay in the input, and the client is paused.
        harness.shell.spoolBacklog = 1
        harness.shell.clientInput.append(contentsOf: Self.body.dropFirst(5_000))
        harness.clientReadable()
        #expect(!harness.shell.clientReading, "a backed-up spool pauses the client")
        #expect(harness.shell.spool?.count == spooled, "nothing more is spooled while backed up")
        #expect(harness.shell.clientInput.count == Self.body.count - 5_000)
        // A signal while still backed up changes nothing.
        harness.hashingProgressed()
        #expect(!harness.shell.clientReading)
        #expect(harness.shell.clientInput.count == Self.body.count - 5_000)

        harness.shell.spoolBacklog = 0
        harness.hashingProgressed()
        #expect(harness.shell.clientInput.count == 0, "the signal reads the rest")
        #expect(harness.shell.connects.count == 1)
        harness.upstreamConnects()
        try Self.expectFileUpstream(harness)
        harness.upstreamSends(Wire.ok)
        #expect(harness.shell.records.last?.status == 200)
        #expect(harness.shell.clientReading)
    }

    @Test func aPendingFlushHoldsTheUpstreamConnectUntilTheSignal() throws {
        let harness = Self.harness()
        harness.shell.spoolBacklog = 4096
        harness.clientSends(Self.head)
        harness.shell.clientInput.append(contentsOf: Self.body)
        harness.clientReadable()
        #expect(harness.shell.spoolFlushes == 1)
        #expect(harness.shell.connects.isEmpty, "no connect while spool writes are in flight")
        #expect(harness.shell.upstream == .none)
        // Still in flight at the next signal: still no connect, and the flush is asked again.
        harness.hashingProgressed()
        #expect(harness.shell.spoolFlushes == 2)
        #expect(harness.shell.connects.isEmpty)

        harness.shell.spoolBacklog = 0
        harness.hashingProgressed()
        #expect(harness.shell.spoolFlushes == 3)
        #expect(harness.shell.connects == [Harness.upstream])
        harness.upstreamConnects()
        try Self.expectFileUpstream(harness)
        harness.upstreamSends(Wire.ok)
        #expect(harness.shell.records.last?.status == 200)
        // A signal after the exchange ended flushes nothing.
        harness.hashingProgressed()
        #expect(harness.shell.spoolFlushes == 3)
    }

    @Test func aFlushThatFailsAfterTheBodyIsA507() {
        let harness = Self.harness()
        harness.shell.spoolBacklog = 4096
        harness.clientSends(Self.head)
        harness.shell.clientInput.append(contentsOf: Self.body)
        harness.clientReadable()
        #expect(harness.shell.connects.isEmpty)

        harness.shell.spoolFailed = true
        harness.hashingProgressed()
        harness.clientDrains()
        #expect(harness.shell.clientText.hasPrefix("HTTP/1.1 507 "), "\(harness.shell.clientText)")
        #expect(harness.shell.connects.isEmpty, "a body that is not on disk never goes upstream")
        #expect(harness.shell.records.last?.status == 507)
    }

    @Test func aWriteThatFailsWhileReadingIsA507() {
        let harness = Self.harness()
        harness.shell.spoolBacklogLimit = 1
        harness.shell.spoolBacklog = 1
        harness.clientSends(Self.head)
        harness.shell.clientInput.append(contentsOf: Self.body.prefix(5_000))
        harness.clientReadable()
        #expect(!harness.shell.clientReading)
        // The writer fails and drops what it held: the signal reads on, and finds the error.
        harness.shell.spoolBacklog = 0
        harness.shell.spoolFailed = true
        harness.hashingProgressed()
        harness.clientDrains()
        #expect(harness.shell.clientText.hasPrefix("HTTP/1.1 507 "), "\(harness.shell.clientText)")
        #expect(harness.shell.connects.isEmpty)
    }
}
