import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// tus uploads that a request may not reach: another identity's (404, never 403, exactly as
/// for an id that does not exist), an expired one (404), and bytes a full disk cannot take
/// (507, the acknowledged bytes kept). Nothing is delivered upstream and the store stays
/// consistent; the owner can still complete the upload, delivered byte for byte.
@Suite(.serialized) struct TusOwnershipTests {
    @Test func anotherIdentitysUploadIs404ForHeadPatchAndDelete() throws {
        let rig = try TusRig(auth: true)
        let seed: UInt64 = 404
        let data = seededBytes(1000, seed: seed)
        let id = try rig.alice.createID(
            length: 1000, metadata: [("filename", "mine.bin"), ("title", "alice")])
        #expect(try rig.alice.patch(id, offset: 0, Array(data.prefix(400))).offset == 400)

        // What bob gets for alice's upload, next to what anyone gets for an id that does not exist.
        let missing = String(repeating: "0", count: 31) + "1"
        let refused: [(String, TusReply, TusReply)] = [
            ("HEAD", try rig.bob.headOf(id), try rig.bob.headOf(missing)),
            (
                "PATCH with the rest", try rig.bob.patch(id, offset: 400, Array(data.dropFirst(400))),
                try rig.bob.patch(missing, offset: 400, Array(data.dropFirst(400)))
            ),
            (
                "PATCH at a wrong offset", try rig.bob.patch(id, offset: 0, Array(data.prefix(10))),
                try rig.bob.patch(missing, offset: 0, Array(data.prefix(10)))
            ),
            (
                "DELETE", try rig.bob.send("DELETE", "/files/\(id)"),
                try rig.bob.send("DELETE", "/files/\(missing)")
            ),
        ]
        for (label, answer, unknown) in refused {
            #expect(answer.status == 404 && unknown.status == 404, "bob's \(label): \(answer)")
            // Indistinguishable from an upload that does not exist.
            #expect(answer.body == unknown.body, "bob's \(label): \(answer.text) vs \(unknown.text)")
            #expect(answer.header("Upload-Offset") == nil && answer.header("Upload-Length") == nil)
        }
        let anonymous = try rig.client.headOf(id)
        #expect(anonymous.status == 401 || anonymous.status == 404, "no key: \(anonymous)")
        #expect(anonymous.header("Upload-Offset") == nil)
        rig.expectStored(id, offset: 400, as: rig.alice, "alice's upload after bob's requests")
        rig.expectNothingDelivered("another identity")

        let done = try rig.alice.patch(id, offset: 400, Array(data.dropFirst(400)))
        #expect(done.status == 200, "\(done)")
        rig.expectOneDelivery(of: data, filename: "mine.bin", title: "alice", "alice's upload")
        // The delivery carries the uploader's identity.
        let completing = rig.proxy.accessLog.first { tusObject($0)?["event"] as? String == "completed" }
        let delivery = logLines(rig.proxy, path: "/upload").first
        let identity = completing?["identity"] as? String
        #expect(identity?.contains("alice") == true, "\(completing ?? [:])")
        #expect(delivery?["identity"] as? String == identity, "\(delivery ?? [:])")
    }

    /// `expire_after: 1s`: once past, HEAD, PATCH and DELETE are 404 and nothing is delivered.
    @Test func anExpiredUploadIs404() throws {
        let rig = try TusRig(expireAfter: "1s")
        let data = seededBytes(1000, seed: 1)
        let id = try rig.client.createID(length: 1000, metadata: [("filename", "old.bin"), ("title", "t")])
        let patched = try rig.client.patch(id, offset: 0, Array(data.prefix(100)))
        #expect(patched.status == 204 && patched.header("Upload-Expires") != nil, "\(patched)")
        var last: TusReply?
        let expired = eventually(within: 30) {
            last = try? rig.client.headOf(id)
            return last?.status == 404
        }
        #expect(expired, "HEAD never 404: \(last.map { "\($0)" } ?? "no answer")")
        let late = try rig.client.patch(id, offset: 100, Array(data.dropFirst(100)))
        #expect(late.status == 404, "PATCH of an expired upload: \(late)")
        let delete = try rig.client.send("DELETE", "/files/\(id)")
        #expect(delete.status == 404, "DELETE of an expired upload: \(delete)")
        #expect(rig.directory.strayFiles.isEmpty, "\(rig.directory.files)")
        #expect(rig.directory.binSize(id) <= 100, "the late PATCH wrote \(rig.directory.binSize(id)) bytes")
        rig.expectNothingDelivered("expired")
    }

    /// Writes `path` until the filesystem has no byte left.
    static func fill(_ path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0x66, count: 4096)
        while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, 1) }) > 0 {}
    }

    /// The store on a 4 MiB tmpfs: 2 MiB are acknowledged, the next 6 MiB do not fit (507), and
    /// HEAD still answers 2 MiB with the `.bin` truncated back to them. Once the upload is
    /// deleted, a 1 MiB upload fits and is delivered. Needs root to mount the tmpfs (as CI runs).
    @Test func aFullDiskIs507AndKeepsTheAcknowledgedBytes() throws {
        let mount: TinyFilesystem
        do {
            mount = try TinyFilesystem(bytes: 4 << 20)
        } catch {
            Issue.record("a full disk needs a tmpfs (run as root, as CI does): \(error)")
            return
        }
        defer { withExtendedLifetime(mount) {} }
        let store = mount.path + "/store"
        let rig = try TusRig(maxSize: "64MiB", store: store)
        let seed: UInt64 = 507
        let data = seededBytes(8 << 20, seed: seed)
        let id = try rig.client.createID(length: Int64(data.count), metadata: [("filename", "big.bin")])
        let first = try rig.client.patch(id, offset: 0, Array(data.prefix(2 << 20)))
        #expect(first.status == 204 && first.offset == 2 << 20, "\(first)")
        let full = try rig.client.patch(id, offset: 2 << 20, Array(data.dropFirst(2 << 20)), timeout: 60)
        #expect(full.status == 507, "6 MiB more on a 4 MiB disk: \(full) (seed \(seed))")

        let files = ((try? FileManager.default.contentsOfDirectory(atPath: store)) ?? []).sorted()
        #expect(files == ["\(id).bin", "\(id).info"], "the store after the 507: \(files)")
        let head = try rig.client.headOf(id)
        #expect(head.status == 200 && head.offset == 2 << 20, "HEAD after the 507: \(head)")
        let binBytes =
            (try? FileManager.default.attributesOfItem(atPath: "\(store)/\(id).bin"))?[.size] as? NSNumber
        #expect(binBytes?.intValue == 2 << 20, "the .bin after the 507: \(binBytes ?? -1) bytes")
        #expect(
            sha256OfFile("\(store)/\(id).bin", prefix: 2 << 20) == Digest.hex(Array(data.prefix(2 << 20))),
            "the acknowledged bytes changed")
        rig.expectNothingDelivered("507")

        // The disk filled to the last byte: a creation is 507 and leaves no file behind.
        let filler = mount.path + "/filler"
        Self.fill(filler)
        let refused = try rig.client.create(length: 100, metadata: [("filename", "none.bin")])
        #expect(
            refused.status == 507 && refused.header("Location") == nil,
            "a creation on a full disk: \(refused)")
        let afterCreation = ((try? FileManager.default.contentsOfDirectory(atPath: store)) ?? []).sorted()
        #expect(afterCreation == ["\(id).bin", "\(id).info"], "a refused creation left \(afterCreation)")
        try FileManager.default.removeItem(atPath: filler)

        #expect(try rig.client.send("DELETE", "/files/\(id)").status == 204)
        let afterDeletion = (try? FileManager.default.contentsOfDirectory(atPath: store)) ?? []
        #expect(!afterDeletion.contains { $0.hasPrefix(id) }, "the deleted upload's files: \(afterDeletion)")
        let small = Array(data.prefix(1 << 20))
        let next = try rig.client.createID(length: Int64(small.count), metadata: [("filename", "fits.bin")])
        let done = try rig.client.patch(next, offset: 0, small)
        #expect(done.status == 200, "a 1 MiB upload after the deletion: \(done)")
        rig.expectOneDelivery(of: small, filename: "fits.bin", title: nil, "after the 507")
    }
}
