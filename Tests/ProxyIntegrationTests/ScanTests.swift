import Foundation
import Testing

/// `scan:` with Debian's real clamd (issue 30): an infected file is refused 422 naming the
/// signature wherever EICAR lies in it, and the upstream never holds a complete request; a
/// clean file passes byte for byte.
@Suite(.serialized) struct ScanTests {
    static let size = 64 << 20

    /// EICAR at `offset` of a 64 MiB file (or of a second part) is refused on `path`, and the
    /// recorder upstream never got a whole request.
    static func refuses(offset: Int, path: String, secondPart: Bool = false, http2: Bool = false) throws {
        let clamd = try Clamd()
        defer { clamd.stop() }
        let upstream = try recordingUpstream()
        defer { upstream.stop() }
        let rig = try ScanRig(scanner: clamd.address, upstream: upstream.url)
        defer { rig.stop() }
        let infected = try rig.file(
            "infected.bin", count: size, insert: eicar, at: min(offset, size - eicar.count))
        var parts = [("file", infected)]
        if secondPart { parts.insert(("clean", try rig.file("clean.bin", count: 1 << 20)), at: 0) }
        let answer = try rig.upload(path, parts, http2: http2)
        #expect(answer.status == 422, "\(answer.body.prefix(300))")
        #expect(
            answer.body.contains(eicarSignature), "the body names the signature: \(answer.body.prefix(300))")
        let line = rig.logLine(1)
        #expect(line?["status"] as? Int == 422)
        #expect(scanResults(line).last == "infected:\(eicarSignature)", "\(String(describing: line))")
        #expect(deliveries(upstream).isEmpty, "the upstream never holds a complete request")
    }

    @Test func eicarAtTheStartIsRefused() throws {
        try Self.refuses(offset: 0, path: "/stream")
    }

    @Test func eicarInTheMiddleIsRefused() throws {
        try Self.refuses(offset: 8 << 20, path: "/stream")
    }

    @Test func eicarAtTheEndIsRefused() throws {
        try Self.refuses(offset: Self.size, path: "/stream")
    }

    @Test func eicarInASecondPartIsRefused() throws {
        try Self.refuses(offset: 8 << 20, path: "/stream", secondPart: true)
    }

    @Test func eicarThroughABufferRouteIsRefused() throws {
        try Self.refuses(offset: Self.size, path: "/buffer")
    }

    @Test func eicarOverHTTP2IsRefused() throws {
        try Self.refuses(offset: 8 << 20, path: "/stream", http2: true)
    }

    @Test func eicarInASecondPartOverHTTP2ThroughABufferRouteIsRefused() throws {
        try Self.refuses(offset: Self.size, path: "/buffer", secondPart: true, http2: true)
    }
}
