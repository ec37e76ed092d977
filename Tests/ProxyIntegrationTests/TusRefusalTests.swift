import Foundation
import Testing

/// tus requests FormGate refuses by protocol: a wrong `Tus-Resumable` (412), an offset that is
/// not the upload's (409), an `Upload-Checksum` that does not match (460), a length over
/// `max_size` (413), and a file whose first bytes sniff to a type outside `allow_types` (415).
/// Each is refused with nothing delivered upstream (the recording upstream got no byte) and
/// the store as it was (HEAD's offset, the `.bin`'s size, nothing but upload files); where the
/// upload can go on, a correct request then completes it, delivered byte for byte.
@Suite(.serialized) struct TusRefusalTests {
    static let patchType = ("Content-Type", "application/offset+octet-stream")

    @Test func aWrongTusResumableIs412AndChangesNothing() throws {
        let rig = try TusRig()
        let seed: UInt64 = 412
        let data = seededBytes(1000, seed: seed)
        let id = try rig.client.createID(length: 1000, metadata: [("filename", "a.bin"), ("title", "t")])
        #expect(try rig.client.patch(id, offset: 0, Array(data.prefix(300))).status == 204)

        let refused: [(String, TusReply)] = [
            (
                "POST without",
                try rig.client.send("POST", "/files", [("Upload-Length", "10")], resumable: nil)
            ),
            (
                "POST 0.2.2",
                try rig.client.send("POST", "/files", [("Upload-Length", "10")], resumable: "0.2.2")
            ),
            ("HEAD 1.0", try rig.client.send("HEAD", "/files/\(id)", resumable: "1.0")),
            (
                "PATCH 1.0.1 with the rest",
                try rig.client.send(
                    "PATCH", "/files/\(id)", [Self.patchType, ("Upload-Offset", "300")],
                    body: Array(data.dropFirst(300)), resumable: "1.0.1")
            ),
            ("DELETE without", try rig.client.send("DELETE", "/files/\(id)", resumable: nil)),
        ]
        for (label, answer) in refused {
            #expect(answer.status == 412, "\(label): \(answer)")
            #expect(answer.header("Tus-Version") == "1.0.0", "\(label): \(answer.head)")
        }
        rig.expectStored(id, offset: 300, "after the 412s")
        #expect(rig.directory.files == ["\(id).bin", "\(id).info"], "the 412 creations created nothing")
        rig.expectNothingDelivered("412")
        #expect(rig.lines(status: 412).count == refused.count, "\(rig.proxy.accessLog)")
    }

    @Test func anOffsetThatIsNotTheUploadsIs409() throws {
        let rig = try TusRig()
        let seed: UInt64 = 409
        let data = seededBytes(1000, seed: seed)
        let id = try rig.client.createID(length: 1000, metadata: [("filename", "b.bin"), ("title", "409")])
        #expect(try rig.client.patch(id, offset: 0, Array(data.prefix(400))).offset == 400)
        for offset: Int64 in [0, 399, 401, 1000] {
            let start = Int(min(offset, 1000))
            let answer = try rig.client.patch(id, offset: offset, Array(data[start...].prefix(100)))
            #expect(answer.status == 409, "Upload-Offset \(offset): \(answer) (seed \(seed))")
        }
        rig.expectStored(id, offset: 400, "after the 409s")
        rig.expectNothingDelivered("409")
        let conflicts = rig.lines(status: 409)
        #expect(conflicts.count == 4)
        #expect(
            conflicts.allSatisfy {
                tusObject($0)?["id"] as? String == id && tusObject($0)?["offset"] as? Int == 400
            }, "each 409 line names the upload at its offset: \(conflicts)")

        let done = try rig.client.patch(id, offset: 400, Array(data.dropFirst(400)))
        #expect(done.status == 200 && done.offset == 1000, "\(done)")
        rig.expectOneDelivery(of: data, filename: "b.bin", title: "409", "after the 409s")
        #expect(rig.directory.files.contains("\(id).answer") && rig.directory.strayFiles.isEmpty)
    }

    /// sha1 and sha256 mismatches (and md5) are 460 and drop the PATCH's bytes; the same bytes
    /// with the right checksum are then taken.
    @Test func aChecksumMismatchIs460AndDropsTheBytes() throws {
        let rig = try TusRig()
        let seed: UInt64 = 460
        let chunk = 64 * 1024
        let data = seededBytes(3 * chunk, seed: seed)
        let pieces = (0..<3).map { Array(data[($0 * chunk)..<(($0 + 1) * chunk)]) }
        let id = try rig.client.createID(
            length: Int64(data.count), metadata: [("filename", "c.bin"), ("title", "460")])
        let options = try rig.client.send("OPTIONS", "/files")
        #expect(options.header("Tus-Checksum-Algorithm")?.contains("sha1") == true, "\(options.head)")

        var offset: Int64 = 0
        for (index, algorithm) in ["sha1", "sha256", "md5"].enumerated() {
            // The checksum of other bytes, and of the same bytes with one bit flipped.
            var flipped = pieces[index]
            flipped[chunk / 2] ^= 0x01
            for wrong in [pieces[(index + 1) % 3], flipped] {
                let answer = try rig.client.patch(
                    id, offset: offset, pieces[index],
                    fields: [("Upload-Checksum", TusClient.checksum(algorithm, wrong))])
                #expect(answer.status == 460, "\(algorithm) mismatch at \(offset): \(answer) (seed \(seed))")
                rig.expectStored(id, offset: offset, "after a \(algorithm) mismatch")
            }
            if index == 2 { rig.expectNothingDelivered("460") }
            let right = try rig.client.patch(
                id, offset: offset, pieces[index],
                fields: [("Upload-Checksum", TusClient.checksum(algorithm, pieces[index]))])
            offset += Int64(chunk)
            #expect(
                right.status == (index == 2 ? 200 : 204) && right.offset == offset, "\(algorithm): \(right)")
        }
        #expect(rig.lines(status: 460).count == 6)
        rig.expectOneDelivery(of: data, filename: "c.bin", title: "460", "after the 460s")

        // An algorithm FormGate does not have, or a digest of the wrong length: 400.
        let other = try rig.client.createID(length: 10)
        for value in ["crc32 AAAAAA==", "sha1 AAAA", "sha256"] {
            let answer = try rig.client.patch(
                other, offset: 0, Array(repeating: 0x61, count: 10), fields: [("Upload-Checksum", value)])
            #expect(answer.status == 400, "Upload-Checksum: \(value): \(answer)")
        }
        rig.expectStored(other, offset: 0, "after the 400s")
    }

    @Test func anUploadOverMaxSizeIs413() throws {
        let rig = try TusRig(maxSize: "1MiB")
        let options = try rig.client.send("OPTIONS", "/files")
        #expect(options.status == 204 && options.header("Tus-Max-Size") == "1048576", "\(options.head)")

        let over = try rig.client.create(length: (1 << 20) + 1)
        #expect(over.status == 413 && over.header("Location") == nil, "\(over)")
        #expect(rig.directory.files.isEmpty, "a refused creation left \(rig.directory.files)")
        let atMax = try rig.client.create(length: 1 << 20)
        #expect(atMax.status == 201, "Upload-Length at max_size: \(atMax)")

        // A deferred length set over max_size by a PATCH.
        let deferred = try rig.client.createID(length: nil)
        let late = try rig.client.patch(
            deferred, offset: 0, Array(repeating: 0x62, count: 100), fields: [("Upload-Length", "1048577")])
        #expect(late.status == 413, "\(late)")
        rig.expectStored(deferred, offset: 0, "the deferred upload after its 413")
        #expect(try rig.client.headOf(deferred).header("Upload-Defer-Length") == "1")

        // More bytes than the upload's length.
        let small = try rig.client.createID(length: 100)
        let past = try rig.client.patch(small, offset: 0, seededBytes(200, seed: 413))
        #expect(past.status == 413, "\(past)")
        rig.expectStored(small, offset: 0, "after bytes past the length")
        rig.expectNothingDelivered("413")
    }

    /// `allow_types: [image/png]` with sniffing: a JPEG or a text file (declared image/png) is
    /// refused at the first PATCH that carries its first bytes, none of them stored; a PNG goes.
    @Test func aSniffedTypeOutsideAllowTypesIs415AtTheFirstPatch() throws {
        let rig = try TusRig(extra: "    multipart: { sniff: { bytes: 512 }, allow_types: [\"image/png\"] }")
        let seed: UInt64 = 415
        let size = 64 * 1024
        let jpeg =
            [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00] as [UInt8]
        let text = Array(String(repeating: "plain text, not an image\n", count: 3000).utf8)
        let files: [(String, [UInt8])] = [
            ("jpeg", Array((jpeg + seededBytes(size, seed: seed)).prefix(size))),
            ("text", Array(text.prefix(size))),
        ]
        for (label, bytes) in files {
            let id = try rig.client.createID(
                length: Int64(size),
                metadata: [("filename", "photo.png"), ("filetype", "image/png"), ("title", label)])
            // The whole head in one PATCH, then fewer bytes than the sniff window.
            for count in [4096, 100] {
                let answer = try rig.client.patch(id, offset: 0, Array(bytes.prefix(count)))
                #expect(answer.status == 415, "\(label), \(count) bytes: \(answer) (seed \(seed))")
                rig.expectStored(id, offset: 0, "\(label) after its 415")
            }
            // Nothing of it was kept: a PATCH past its head has the wrong offset.
            let rest = try rig.client.patch(id, offset: 4096, Array(bytes.dropFirst(4096)))
            #expect(rest.status == 409, "\(label): \(rest)")
            rig.expectStored(id, offset: 0, "\(label) after the rest")
        }
        #expect(rig.lines(status: 415).count == 4, "\(rig.proxy.accessLog)")
        rig.expectNothingDelivered("415")

        let png =
            [
                0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44,
                0x52,
                0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15,
                0xC4,
                0x89, 0x00, 0x00, 0x00, 0x0A, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00,
                0x00,
                0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44,
                0xAE,
                0x42, 0x60, 0x82,
            ] as [UInt8]
        let image = Array((png + seededBytes(size, seed: seed + 1)).prefix(size))
        let id = try rig.client.createID(
            length: Int64(size),
            metadata: [("filename", "real.png"), ("filetype", "image/png"), ("title", "png")])
        #expect(try rig.client.patch(id, offset: 0, Array(image.prefix(4096))).status == 204)
        let done = try rig.client.patch(id, offset: 4096, Array(image.dropFirst(4096)))
        #expect(done.status == 200, "the PNG: \(done)")
        rig.expectOneDelivery(of: image, filename: "real.png", title: "png", "the PNG")
    }
}
