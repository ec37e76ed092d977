import Foundation
import Testing

/// `scan:` on a tus delivery (issue 30): the tus route's rules are its delivery's, so a
/// finished upload is scanned as it is delivered. An upload carrying EICAR is answered 422
/// naming the signature at the PATCH that completes it (the delivery's answer, replayed), and
/// the recorder upstream never holds a whole request; a clean upload is delivered once,
/// byte-exact, logged `clean`.
@Suite(.serialized) struct ScanTusTests {
    /// The tus rig with `scan: { clamd: default }` on its route and the scanner at `address`.
    static func rig(_ address: String) throws -> TusRig {
        try TusRig(
            extra: "    multipart: { scan: { clamd: default } }\n" + "scanners:\n"
                + "  clamd: { address: \(address), timeout: 30s, max_bytes: 300MiB, connections: 4 }")
    }

    /// The `scan` values of the delivery's access-log lines (POST to the deliver path).
    static func deliveryScans(_ rig: TusRig) -> [[String]] {
        logLines(rig.proxy, path: "/upload").map { scanResults($0).compactMap { $0 } }
    }

    /// 3 MiB with EICAR at 2 MiB, sent in two PATCHes: the first 204 (nothing delivered yet),
    /// the last 422 naming the signature; no whole request upstream, the delivery logged 422
    /// and `infected:<signature>`, and the upload's bytes are all stored (HEAD). The completion
    /// retried (`Upload-Offset` = length, no bytes) replays the 422 without a second delivery.
    @Test func anInfectedUploadIsRefused422AtItsLastPatch() throws {
        let clamd = try Clamd()
        defer { clamd.stop() }
        let rig = try Self.rig(clamd.address)
        let size = (3 << 20) + 17
        var bytes = seededBytes(size, seed: 0x5CC0)
        bytes.replaceSubrange((2 << 20)..<((2 << 20) + eicar.count), with: eicar)
        let id = try rig.client.createID(
            length: Int64(size), metadata: [("filename", "infected.bin"), ("title", "eicar")])
        let first = try rig.client.patch(id, offset: 0, Array(bytes.prefix(1 << 20)))
        #expect(first.status == 204, "\(first)")
        #expect(deliveries(rig.upstream).isEmpty)
        let last = try rig.client.patch(id, offset: 1 << 20, Array(bytes.dropFirst(1 << 20)))
        #expect(last.status == 422, "\(last)")
        #expect(last.text.contains(eicarSignature), "\(last)")
        #expect(last.offset == Int64(size), "\(last)")
        rig.settleLog()
        #expect(deliveries(rig.upstream).isEmpty, "the upstream holds a whole request")
        let lines = logLines(rig.proxy, path: "/upload")
        #expect(lines.map { $0["status"] as? Int } == [422], "\(lines)")
        #expect(Self.deliveryScans(rig) == [["infected:\(eicarSignature)"]], "\(lines)")
        rig.expectStored(id, offset: Int64(size), "the infected upload")

        let retried = try rig.client.patch(id, offset: Int64(size), [])
        #expect(retried.status == 422 && retried.body == last.body, "the stored answer: \(retried)")
        rig.settleLog()
        #expect(logLines(rig.proxy, path: "/upload").count == 1, "the retry was delivered again")
        #expect(deliveries(rig.upstream).isEmpty)
    }

    /// 3 MiB of clean bytes in two PATCHes: the last is answered 200 (the upstream's answer),
    /// the upstream got one delivery of the file byte-exact, logged `clean`.
    @Test func aCleanUploadIsDeliveredOnceByteExact() throws {
        let clamd = try Clamd()
        defer { clamd.stop() }
        let rig = try Self.rig(clamd.address)
        let size = (3 << 20) + 17
        let bytes = seededBytes(size, seed: 0x5CC1)
        let id = try rig.client.createID(
            length: Int64(size), metadata: [("filename", "clean.bin"), ("title", "clean")])
        let first = try rig.client.patch(id, offset: 0, Array(bytes.prefix(1 << 20)))
        #expect(first.status == 204, "\(first)")
        let last = try rig.client.patch(id, offset: 1 << 20, Array(bytes.dropFirst(1 << 20)))
        #expect(last.status == 200, "\(last)")
        rig.expectOneDelivery(of: bytes, filename: "clean.bin", title: "clean", "the clean upload")
        #expect(Self.deliveryScans(rig) == [["clean"]], "\(logLines(rig.proxy, path: "/upload"))")
    }

    /// The scanner is down when an upload completes (its socket path leads nowhere): the last
    /// PATCH is 503 (a scan failure, logged `error` on the delivery), nothing whole upstream,
    /// and the answer is not kept; once clamd answers at that path (a link to its socket), the
    /// retried completion is 200 and the upstream gets the file once, byte-exact, logged `clean`.
    @Test func aScannerFailureIs503AndTheRetryDeliversOnceTheScannerIsBack() throws {
        let link = NSTemporaryDirectory() + "formgate-clamd-link-\(UUID().uuidString.prefix(8)).sock"
        defer { try? FileManager.default.removeItem(atPath: link) }
        let rig = try Self.rig("unix:" + link)
        let size = (1 << 20) + 5
        let bytes = seededBytes(size, seed: 0x5CC2)
        let id = try rig.client.createID(
            length: Int64(size), metadata: [("filename", "later.bin"), ("title", "later")])
        let failed = try rig.client.patch(id, offset: 0, bytes)
        #expect(failed.status == 503, "\(failed)")
        #expect(failed.text.contains("virus scan"), "\(failed)")
        rig.settleLog()
        #expect(deliveries(rig.upstream).isEmpty, "the upstream holds a whole request")
        #expect(Self.deliveryScans(rig) == [["error"]], "\(logLines(rig.proxy, path: "/upload"))")

        let clamd = try Clamd()
        defer { clamd.stop() }
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: clamd.socket)
        let retried = try rig.client.patch(id, offset: Int64(size), [])
        #expect(retried.status == 200, "\(retried)")
        let received = deliveries(rig.upstream)
        #expect(received.count == 1, "\(received.count) deliveries")
        let file = received.last.flatMap { multipartParts($0).last }
        #expect(file?.filename == "later.bin")
        #expect(file?.bytes == bytes, "the delivered file is not the upload")
        rig.settleLog()
        #expect(Self.deliveryScans(rig) == [["error"], ["clean"]], "\(logLines(rig.proxy, path: "/upload"))")
    }
}
