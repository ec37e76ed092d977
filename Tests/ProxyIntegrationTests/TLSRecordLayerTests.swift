import CCrypto
import Foundation
import Testing

/// Uploads through the TLS listener as OpenSSL's record layer reads them, judged by what a raw
/// recording upstream received: several MiB over TLS 1.3 and 1.2, KeyUpdates from the client
/// in the middle of a body (the server's own KeyUpdate answering the requested ones), and a
/// body sent as thousands of tiny records.
@Suite(.serialized) struct TLSRecordLayerTests {
    /// A certificate for a.test, a recording upstream that answers each whole request, and a
    /// proxy with one TLS listener in front of it (pass-through: no routes).
    struct Setup {
        let certificates: TLSCertificates
        let upstream: FakeUpstream
        let proxy: ServerProcess

        /// `workers` event loops; a plain listener beside the TLS one when `plain`.
        init(workers: Int = 2, plain: Bool = false) throws {
            certificates = try TLSCertificates()
            let leaf = try certificates.leaf("a.test")
            upstream = try FakeUpstream(.answer("HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nreceived"))
            proxy = try startListeners(
                [tlsListener([leaf])] + (plain ? ["127.0.0.1:0"] : []), "upstream: \(upstream.url)\n",
                workers: workers)
        }

        func client(_ version: Int32) throws -> OpenSSLClient {
            try OpenSSLClient(
                port: proxy.port, serverName: "a.test", caFile: certificates.ca, version: version)
        }

        /// The head of a POST of `count` bytes.
        func head(count: Int) -> [UInt8] {
            Array(
                ("POST /upload/blob HTTP/1.1\r\nHost: a.test\r\nContent-Type: application/octet-stream\r\n"
                    + "Content-Length: \(count)\r\nConnection: close\r\n\r\n").utf8)
        }

        /// Sends the head of a POST of `count` bytes.
        func sendHead(_ client: OpenSSLClient, count: Int) throws {
            try client.write(head(count: count))
        }

        /// Reads the answer, and the upload the upstream received (on whichever connection);
        /// checks both.
        func expectForwarded(_ body: [UInt8], by client: OpenSSLClient, _ comment: Comment) throws {
            let answer = String(decoding: client.readToEnd(), as: UTF8.self)
            #expect(answer.hasPrefix("HTTP/1.1 200 "), "\(comment): \(answer.prefix(300))")
            #expect(answer.hasSuffix("\r\n\r\nreceived"), comment)
            // The proxy answered: the upstream had the whole request.
            let line = Array("POST /upload/blob ".utf8)
            let upload = upstream.streams.lazy.compactMap { stream in
                stream.firstRange(of: line).flatMap { RecordedRequest(stream[$0.lowerBound...]) }
            }.first
            let request = try #require(upload, comment)
            #expect(request.requestLine == "POST /upload/blob HTTP/1.1", comment)
            #expect(request.body.count == body.count, comment)
            #expect(request.body == body, comment)
        }

        func stop() {
            proxy.stop()
            upstream.stop()
            certificates.remove()
        }
    }

    static let versions: [(name: String, value: Int32)] = [
        ("TLSv1.3", TLS1_3_VERSION), ("TLSv1.2", TLS1_2_VERSION),
    ]

    /// `count` bytes from a fixed seed (SplitMix64's output, byte by byte).
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        var out: [UInt8] = []
        out.reserveCapacity(count + 8)
        while out.count < count {
            state &+= 0x9E37_79B9_7F4A_7C15
            var value = state
            value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
            value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
            value ^= value >> 31
            withUnsafeBytes(of: value) { out += $0 }
        }
        return Array(out.prefix(count))
    }

    @Test(arguments: 0..<versions.count)
    func aLargeUploadArrivesByteExact(version: Int) throws {
        let (name, value) = Self.versions[version]
        let setup = try Setup()
        defer { setup.stop() }
        let body = Self.bytes(6 << 20, seed: 41)
        let client = try setup.client(value)
        #expect(client.version == name)
        try setup.sendHead(client, count: body.count)
        for start in stride(from: 0, to: body.count, by: 100_000) {
            try client.write(Array(body[start..<min(start + 100_000, body.count)]))
        }
        try setup.expectForwarded(body, by: client, "\(name)")
    }

    /// A KeyUpdate every 128 KiB of a 3 MiB body, every other one asking the server to update
    /// its key too: every byte arrives under whichever key it was sealed with, and the server
    /// answers with its own KeyUpdate before the response.
    @Test func keyUpdatesInTheMiddleOfABodyAreFollowed() throws {
        let setup = try Setup()
        defer { setup.stop() }
        let body = Self.bytes(3 << 20, seed: 42)
        let client = try setup.client(TLS1_3_VERSION)
        try setup.sendHead(client, count: body.count)
        var updates = 0
        for start in stride(from: 0, to: body.count, by: 128 << 10) {
            try client.write(Array(body[start..<start + (64 << 10)]))
            try client.keyUpdate(requested: updates % 2 == 1)
            updates += 1
            // The update goes out with the next record: mid-chunk, not at a request boundary.
            try client.write(Array(body[start + (64 << 10)..<start + (128 << 10)]))
        }
        #expect(updates == 24)
        try setup.expectForwarded(body, by: client, "key updates")
        // OpenSSL owes at most one KeyUpdate at a time: one at least, before the response.
        #expect(client.heard.contains(24), "the server's KeyUpdate: \(client.heard)")
    }

    @Test(arguments: 0..<versions.count)
    func manySmallRecordsArriveByteExact(version: Int) throws {
        let (name, value) = Self.versions[version]
        let setup = try Setup()
        defer { setup.stop() }
        let body = Self.bytes(300_000, seed: 43)
        let sizes = Self.bytes(body.count, seed: 44)
        let client = try setup.client(value)
        try setup.sendHead(client, count: body.count)
        var offset = 0
        var records = 0
        while offset < body.count {
            // 1 to 64 bytes a record.
            let size = min(Int(sizes[records] % 64) + 1, body.count - offset)
            try client.write(Array(body[offset..<offset + size]))
            offset += size
            records += 1
        }
        #expect(records > 8000)
        try setup.expectForwarded(body, by: client, "\(name), \(records) records")
    }

    /// A client that sends part of a record and stops: OpenSSL holds the part, and the worker
    /// waits for the socket instead of asking OpenSSL again and again (it did, for TLS 1.2:
    /// the worker's loop never returned, and every other connection on it stalled until the
    /// record was whole). One worker, so the plain request beside it shares the loop.
    @Test(arguments: 0..<versions.count)
    func aRecordCutShortLeavesTheWorkerServing(version: Int) throws {
        let (name, value) = Self.versions[version]
        let setup = try Setup(workers: 1, plain: true)
        defer { setup.stop() }
        let plainPort = try #require(setup.proxy.listeners.first { !$0.tls }?.port)
        let body = Self.bytes(50_000, seed: 45)
        let client = try setup.client(value)
        // The head's record cut short: the worker reads it while it waits for a head.
        let records = try client.seal(setup.head(count: body.count)) + client.seal(body)
        client.sendRaw(records.prefix(10))
        let other = try RawClient(port: plainPort)
        other.send("GET /beside HTTP/1.1\r\nHost: a.test\r\n\r\n")
        let answer = try #require(other.readResponse(), "\(name): the request beside got no answer")
        #expect(answer.status == 200)
        client.sendRaw(records.dropFirst(10))
        try setup.expectForwarded(body, by: client, "\(name)")
    }
}
