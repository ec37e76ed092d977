import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// tus on an s3 store across replicas (issue 31 part 3): two FormGates share moto's S3 server
/// and a redis-server; what the upstream received is checked byte for byte.
@Suite(.serialized) struct TusS3Tests {
    static let metadata = tusMetadata([
        ("filename", "big.bin"), ("filetype", "application/octet-stream"), ("title", "replicas"),
    ])

    /// 256 MiB begun on A; A killed (SIGKILL) mid-PATCH; HEAD on B gives the committed offset;
    /// B continues (423 while A's lock lives) and delivers the file, byte-exact, once.
    @Test func killedReplicaMidPatchIsContinuedOnAnother() throws {
        let rig = try TusS3Rig()
        defer { rig.stop() }
        let (a, b) = (rig.replicas[0], rig.replicas[1])
        let seed: UInt64 = 31_301
        let size = 256 << 20
        let data = seededBytes(size, seed: seed)
        let started = Date()
        let path = try TusHTTP.create(port: a.port, length: size, metadata: Self.metadata)
        let id = String(path.split(separator: "/").last ?? "")
        // Not a multiple of the part size: tails are left between PATCHes.
        let chunk = 30 << 20 + 7
        var offset = 0
        for _ in 0..<3 {
            let response = try TusHTTP.patch(
                port: a.port, path, offset: offset, Array(data[offset..<(offset + chunk)]))
            #expect(response.status == 204, "\(response)")
            offset += chunk
        }
        // A fourth PATCH on A, 20 MiB of its 30 sent, then A is killed.
        let client = try RawClient(port: a.port)
        client.send(
            TusHTTP.head(
                port: a.port, "PATCH", path,
                [("Upload-Offset", String(offset)), ("Content-Type", "application/offset+octet-stream")],
                bodyCount: chunk))
        client.send(Array(data[offset..<(offset + 20 << 20)]))
        #expect(eventually(within: 30) { rig.locked(id) }, "A holds the upload's lock")
        kill(a.pid, SIGKILL)
        a.process.waitUntilExit()
        // Any replica answers HEAD from the store: the offset A committed.
        let head = try TusHTTP.send(port: b.port, "HEAD", path)
        #expect(head.status == 200, "\(head)")
        #expect(head.header("Upload-Offset") == String(offset), "\(head)")
        // B continues from there (423 until A's lock expires).
        var final: TusResponse?
        var lockedAnswers = 0
        while offset < size {
            let end = min(offset + chunk, size)
            let (response, locked) = try rig.patch(
                port: b.port, path, offset: offset, Array(data[offset..<end]))
            lockedAnswers += locked
            if end < size {
                #expect(response.status == 204, "\(response)")
                guard response.status == 204 else { return }
            } else {
                final = response
            }
            offset = end
        }
        #expect(lockedAnswers > 0, "B met A's lock before it expired")
        let answer = try #require(final)
        #expect(answer.status == 200, "\(answer)")
        #expect(answer.header("Upload-Offset") == String(size))
        let receipt = try TusReceipt(.werkzeug, answer.body)
        #expect(receipt.files == 1)
        #expect(receipt.size == size, "\(receipt)")
        #expect(receipt.sha256 == Digest.hex(data), "byte-exact (seed \(seed))")
        // A retried final PATCH gets the stored answer, no second delivery.
        let again = try TusHTTP.patch(port: b.port, path, offset: size, [])
        #expect(again.status == 200 && again.body == answer.body, "\(again)")
        eventually(within: 10) { rig.postsSeen >= 1 }
        usleep(300_000)
        #expect(rig.postsSeen == 1, "delivered once: \(rig.upstream.stderr)")
        print("TusS3Tests: 256 MiB across a kill in \(Int(Date().timeIntervalSince(started))) s")
    }

    /// Two replicas PATCH one upload at once: the one that has the lock wins (204), the other
    /// is 423, and the stored bytes are the winner's alone.
    @Test func concurrentPatchesOnTwoReplicas() throws {
        let rig = try TusS3Rig(lockTTL: "30s")
        defer { rig.stop() }
        let (a, b) = (rig.replicas[0], rig.replicas[1])
        let half = 6 << 20
        let winner = seededBytes(half, seed: 31_302)
        let loser = seededBytes(half, seed: 31_303)
        let rest = seededBytes(half, seed: 31_304)
        let path = try TusHTTP.create(port: b.port, length: 2 * half, metadata: Self.metadata)
        let id = String(path.split(separator: "/").last ?? "")
        // A's PATCH begins (its first MiB sent: A has opened the upload and holds its lock).
        let client = try RawClient(port: a.port)
        client.send(
            TusHTTP.head(
                port: a.port, "PATCH", path,
                [("Upload-Offset", "0"), ("Content-Type", "application/offset+octet-stream")],
                bodyCount: half))
        client.send(Array(winner[..<(1 << 20)]))
        #expect(eventually(within: 30) { rig.locked(id) }, "A holds the upload's lock")
        // B's PATCH of the same offset meanwhile: 423, none of its bytes stored.
        let refused = try TusHTTP.patch(port: b.port, path, offset: 0, loser)
        #expect(refused.status == 423, "\(refused)")
        client.send(Array(winner[(1 << 20)...]))
        let won = try TusResponse(parsing: client.readAll(timeout: 60))
        #expect(won.status == 204, "\(won)")
        #expect(won.header("Upload-Offset") == String(half))
        let head = try TusHTTP.send(port: b.port, "HEAD", path)
        #expect(head.header("Upload-Offset") == String(half), "\(head)")
        // Completed on B: the upstream gets A's bytes then the rest, nothing of B's refused PATCH.
        let done = try TusHTTP.patch(port: b.port, path, offset: half, rest)
        #expect(done.status == 200, "\(done)")
        let receipt = try TusReceipt(.werkzeug, done.body)
        #expect(receipt.sha256 == Digest.hex(winner + rest), "the winner's bytes only (seeds 31302, 31304)")
    }

    /// `expire_after: 1s`: once the expiry timer ran, the bucket holds nothing of the uploads
    /// (no object, no multipart upload), an unfinished one and a delivered one alike.
    @Test func expiryLeavesNothingInTheBucket() throws {
        let rig = try TusS3Rig(expireAfter: "1s", partSize: "5MiB")
        defer { rig.stop() }
        let a = rig.replicas[0]
        // Created with their bytes (creation-with-upload): a second is their whole life.
        func create(_ length: Int, _ bytes: [UInt8]) throws -> TusResponse {
            try TusHTTP.send(
                port: a.port, "POST", "/files",
                [
                    ("Upload-Length", String(length)), ("Upload-Metadata", Self.metadata),
                    ("Content-Type", "application/offset+octet-stream"),
                ], body: bytes)
        }
        // Unfinished: a part, a tail and a multipart upload in progress.
        let partial = try create(12 << 20, seededBytes(6 << 20, seed: 31_305))
        #expect(partial.status == 201 && partial.header("Upload-Offset") == String(6 << 20), "\(partial)")
        let unfinished = try #require(partial.locationPath)
        // Delivered: its object and its stored answer.
        let done = try create(1000, seededBytes(1000, seed: 31_306))
        #expect(done.status == 201, "\(done)")
        let before = try rig.listing()
        #expect(before.objects.count >= 4 && before.uploads.count == 1, "\(before)")
        #expect(
            eventually(within: 30) { (try? TusHTTP.send(port: a.port, "HEAD", unfinished))?.status == 404 },
            "expired uploads are 404")
        // The timer runs once a minute in each replica.
        let empty = eventually(within: 150) {
            guard let listing = try? rig.listing() else { return false }
            return listing.objects.isEmpty && listing.uploads.isEmpty
        }
        #expect(empty, "left behind: \(String(describing: try? rig.listing()))")
    }
}
