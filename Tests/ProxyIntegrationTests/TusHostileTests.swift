import Foundation
import Testing

/// Hostile tus requests: ids that are paths, oversized metadata, negative and overflowing
/// numbers, a final upload made of another identity's partial uploads, bytes for a final
/// upload. Each is refused with its status, nothing is delivered, and nothing is written
/// outside the store directory (the directory around the store, and the temp directory, are
/// listed before and after). A deferred length set by a later PATCH works.
@Suite(.serialized) struct TusHostileTests {
    static let patchFields = [("Content-Type", "application/offset+octet-stream"), ("Upload-Offset", "0")]

    /// Entries of the temp directory that a path escaping the store could have made.
    static func suspiciousTempEntries() -> Set<String> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())) ?? []
        return Set(
            names.filter { name in
                ["etc", "x", "evil", "passwd"].contains(name)
                    || [".info", ".bin", ".answer", ".tmp"].contains { name.hasSuffix($0) }
            })
    }

    @Test func idsThatArePathsAre404AndWriteNothingOutsideTheStore() throws {
        let rig = try TusRig()
        let id = try rig.client.createID(length: 1000, metadata: [("filename", "a.bin")])
        #expect(try rig.client.patch(id, offset: 0, seededBytes(100, seed: 7)).offset == 100)
        let treeBefore = rig.directory.tree
        let tempBefore = Self.suspiciousTempEntries()

        let dotsOrNotFound = [400, 404]
        let cases: [(String, String, [Int])] = [
            ("HEAD", "/files/../etc", [404]),
            ("PATCH", "/files/../etc/passwd", [404]),
            ("DELETE", "/files/../\(id)", [404]),
            ("POST", "/files/../x", [404]),
            ("HEAD", "/files/%2e%2e/x", [404]),
            ("PATCH", "/files/%2e%2e/%2e%2e/tmp/evil", dotsOrNotFound),
            ("HEAD", "/files/..%2f..%2fetc%2fpasswd", dotsOrNotFound),
            ("PATCH", "/files/\(id)%2f..%2f..%2fx", dotsOrNotFound),
            ("HEAD", "/files/\(id)%00", dotsOrNotFound),
            ("PATCH", "/files/\(id)%00", dotsOrNotFound),
            ("HEAD", "/files/\(id)\u{0}", dotsOrNotFound),
            ("DELETE", "/files/\(id)\u{0}.info", dotsOrNotFound),
            ("HEAD", "/files/\(id.prefix(31))", [404]),
            ("HEAD", "/files/\(id)0", [404]),
            ("PATCH", "/files/\(id.uppercased())", [404]),
            ("HEAD", "/files/\(id).info", [404]),
            ("PATCH", "/files/\(id).bin", [404]),
            ("DELETE", "/files/\(id).answer", [404]),
            ("DELETE", "/files/\(id)/", [404]),
            ("HEAD", "/files/\(id)/x", [404]),
            ("PATCH", "/files/..../..../etc", [404]),
        ]
        for (method, target, statuses) in cases {
            let fields =
                method == "PATCH" ? Self.patchFields : method == "POST" ? [("Upload-Length", "10")] : []
            let body = method == "PATCH" ? Array("0123456789".utf8) : []
            let answer = try rig.client.send(method, target, fields, body: body)
            #expect(statuses.contains(answer.status), "\(method) \(target.debugDescription): \(answer)")
        }
        // The paths that left /files once their dot segments were resolved went to the rest of
        // the site (its 404), resolved: none with a dot segment, none in /files.
        let elsewhere = UpstreamRecord.all(rig.site).map(\.requestLine)
        #expect(elsewhere.count == 5, "\(elsewhere)")
        #expect(
            elsewhere.allSatisfy { !$0.contains("..") && !$0.contains("%2e") && !$0.contains(" /files") },
            "\(elsewhere)")
        rig.expectStored(id, offset: 100, "the upload after the hostile ids")
        #expect(rig.directory.tree == treeBefore, "written beside the store: \(rig.directory.tree)")
        #expect(Self.suspiciousTempEntries().subtracting(tempBefore).isEmpty, "written to the temp directory")
        rig.expectNothingDelivered("hostile ids")
    }

    @Test func oversizedOrMalformedMetadataIsRefused() throws {
        let rig = try TusRig()
        func create(_ metadata: String) throws -> TusReply {
            try rig.client.send("POST", "/files", [("Upload-Length", "10"), ("Upload-Metadata", metadata)])
        }
        let fits = "filename " + Data(repeating: 0x61, count: 2900).base64EncodedString()
        #expect(fits.utf8.count > 3800 && fits.utf8.count <= 4096)
        let created = try create(fits)
        #expect(created.status == 201, "\(fits.utf8.count) bytes of metadata: \(created)")
        let id = try #require(created.id)
        #expect(try rig.client.headOf(id).header("Upload-Metadata") == fits)

        let over = "filename " + Data(repeating: 0x61, count: 3100).base64EncodedString()
        let huge = "filename " + Data(repeating: 0x61, count: 30_000).base64EncodedString()
        let cases: [(String, String, [Int])] = [
            ("\(over.utf8.count) bytes", over, [400]),
            ("\(huge.utf8.count) bytes", huge, [431]),
            ("65 pairs", (0..<65).map { "k\($0)" }.joined(separator: ","), [400]),
            ("invalid Base64", "filename !!!!", [400]),
            ("a duplicate key", "a YQ==,a Yg==", [400]),
        ]
        for (label, metadata, statuses) in cases {
            let answer = try create(metadata)
            #expect(statuses.contains(answer.status), "\(label) of Upload-Metadata: \(answer)")
        }
        #expect(
            rig.directory.files == ["\(id).bin", "\(id).info"],
            "refused creations left \(rig.directory.files)")
        rig.expectNothingDelivered("metadata")
    }

    @Test func negativeAndOverflowingNumbersAre400() throws {
        let rig = try TusRig()
        let id = try rig.client.createID(length: 1000)
        #expect(try rig.client.patch(id, offset: 0, seededBytes(100, seed: 8)).offset == 100)
        let deferred = try rig.client.createID(length: nil)
        let bad = [
            "-1", "99999999999999999999", "9223372036854775808", "18446744073709551616", "+5", "1e3", "0x10",
            "5 5",
        ]
        for value in bad {
            let creation = try rig.client.send("POST", "/files", [("Upload-Length", value)])
            #expect(creation.status == 400, "Upload-Length: \(value): \(creation)")
            let offset = try rig.client.send(
                "PATCH", "/files/\(id)",
                [("Content-Type", "application/offset+octet-stream"), ("Upload-Offset", value)],
                body: Array("abc".utf8))
            #expect(offset.status == 400, "Upload-Offset: \(value): \(offset)")
            let length = try rig.client.patch(
                deferred, offset: 0, Array("abc".utf8), fields: [("Upload-Length", value)])
            #expect(length.status == 400, "a PATCH's Upload-Length: \(value): \(length)")
        }
        let overMax = try rig.client.send("POST", "/files", [("Upload-Length", "999999999999999999")])
        #expect(overMax.status == 413, "\(overMax)")
        rig.expectStored(id, offset: 100, "after the bad numbers")
        rig.expectStored(deferred, offset: 0, "the deferred upload after the bad numbers")
        #expect(try rig.client.headOf(deferred).header("Upload-Defer-Length") == "1")
        #expect(rig.directory.files.count == 4, "refused creations left \(rig.directory.files)")
        rig.expectNothingDelivered("numbers")
    }

    @Test func aDeferredLengthIsSetByALaterPatch() throws {
        let rig = try TusRig()
        let seed: UInt64 = 1_000_001
        let data = seededBytes(10_000, seed: seed)
        let id = try rig.client.createID(
            length: nil, metadata: [("filename", "later.bin"), ("title", "deferred")])
        let head = try rig.client.headOf(id)
        #expect(
            head.header("Upload-Defer-Length") == "1" && head.header("Upload-Length") == nil, "\(head.head)")
        #expect(try rig.client.patch(id, offset: 0, Array(data[0..<3000])).offset == 3000)
        let below = try rig.client.patch(
            id, offset: 3000, Array(data[3000..<3010]), fields: [("Upload-Length", "2999")])
        #expect(below.status == 400, "an Upload-Length below the offset: \(below)")
        rig.expectStored(id, offset: 3000, "after the short length")
        let set = try rig.client.patch(
            id, offset: 3000, Array(data[3000..<6000]), fields: [("Upload-Length", "10000")])
        #expect(set.status == 204 && set.offset == 6000, "\(set)")
        let after = try rig.client.headOf(id)
        #expect(
            after.header("Upload-Length") == "10000" && after.header("Upload-Defer-Length") == nil,
            "\(after.head)")
        let again = try rig.client.patch(
            id, offset: 6000, Array(data[6000..<6010]), fields: [("Upload-Length", "12000")])
        #expect(again.status == 400, "a second Upload-Length: \(again)")
        rig.expectStored(id, offset: 6000, "after the second length")
        rig.expectNothingDelivered("before the last PATCH")
        let done = try rig.client.patch(id, offset: 6000, Array(data[6000...]))
        #expect(done.status == 200 && done.offset == 10_000, "\(done) (seed \(seed))")
        rig.expectOneDelivery(of: data, filename: "later.bin", title: "deferred", "deferred length")
    }

    /// Alice's partial uploads, complete.
    static func partials(_ rig: TusRig, _ contents: [[UInt8]]) throws -> [String] {
        try contents.map { bytes in
            let created = try rig.alice.send(
                "POST", "/files", [("Upload-Length", String(bytes.count)), ("Upload-Concat", "partial")])
            let id = try #require(created.id, "\(created)")
            let patched = try rig.alice.patch(id, offset: 0, bytes)
            #expect(patched.offset == Int64(bytes.count), "\(patched)")
            return id
        }
    }

    /// A partial upload is a piece of the final one: complete, it is answered 204 like any
    /// PATCH that does not complete an upload, and nothing goes upstream until the final.
    @Test func aCompletePartialUploadIsNotDeliveredOnItsOwn() throws {
        let rig = try TusRig(auth: true)
        let created = try rig.alice.send(
            "POST", "/files", [("Upload-Length", "5000"), ("Upload-Concat", "partial")])
        let id = try #require(created.id, "\(created)")
        let patched = try rig.alice.patch(id, offset: 0, seededBytes(5000, seed: 0xC0C0))
        #expect(
            patched.status == 204 && patched.offset == 5000,
            "the PATCH completing a partial upload: \(patched)")
        rig.expectNothingDelivered("a complete partial upload")
    }

    /// Bob's final upload naming Alice's partial uploads is 404 (as if they did not exist) and
    /// delivers nothing; Alice's is delivered as the partials' bytes in order; a final upload
    /// takes no PATCH (403 for its owner, 404 for anyone else).
    @Test func aFinalUploadOfAnotherIdentitysPartialsIs404() throws {
        let rig = try TusRig(auth: true)
        let seed: UInt64 = 0xC0C0
        let first = seededBytes(5000, seed: seed)
        let second = seededBytes(7000, seed: seed + 1)
        let partials = try Self.partials(rig, [first, second])
        let bobsPartial = try rig.bob.send(
            "POST", "/files", [("Upload-Length", "3"), ("Upload-Concat", "partial")])
        let bobs = try #require(bobsPartial.id)
        #expect(try rig.bob.patch(bobs, offset: 0, Array("bob".utf8)).offset == 3)
        let filesBefore = rig.directory.files
        rig.settleLog()
        // (Partial uploads should deliver nothing: aCompletePartialUploadIsNotDeliveredOnItsOwn.)
        let deliveredBefore = deliveries(rig.upstream).count

        let absolute = partials.map { "http://127.0.0.1:\(rig.proxy.port)/files/\($0)" }
        for names in [
            partials.map { "/files/\($0)" }, absolute, ["/files/\(bobs)", "/files/\(partials[0])"],
        ] {
            let final = try rig.bob.send(
                "POST", "/files", [("Upload-Concat", "final;" + names.joined(separator: " "))])
            #expect(
                final.status == 404 && final.header("Location") == nil, "bob's final of \(names): \(final)")
        }
        #expect(rig.directory.files == filesBefore, "bob's refused finals left \(rig.directory.files)")
        rig.settleLog()
        #expect(deliveries(rig.upstream).count == deliveredBefore, "bob's refused finals delivered something")

        let final = try rig.alice.send(
            "POST", "/files",
            [
                ("Upload-Concat", "final;" + partials.map { "/files/\($0)" }.joined(separator: " ")),
                ("Upload-Metadata", TusClient.metadata([("filename", "joined.bin"), ("title", "concat")])),
            ])
        #expect(final.status == 201 && final.offset == 12_000, "alice's final: \(final)")
        let finalID = try #require(final.id)
        rig.expectOneDelivery(
            of: first + second, filename: "joined.bin", title: "concat", "alice's final",
            count: deliveredBefore + 1)

        for offset in [Int64(0), 12_000] {
            let patch = try rig.alice.patch(finalID, offset: offset, Array("more".utf8))
            #expect(patch.status == 403, "alice's PATCH of her final at \(offset): \(patch)")
        }
        let bobsPatch = try rig.bob.patch(finalID, offset: 12_000, Array("more".utf8))
        #expect(bobsPatch.status == 404, "bob's PATCH of alice's final: \(bobsPatch)")
        let head = try rig.alice.headOf(finalID)
        #expect(
            head.offset == 12_000 && head.header("Upload-Concat")?.hasPrefix("final;") == true, "\(head.head)"
        )
        #expect(rig.directory.binSize(finalID) == 12_000 && rig.directory.strayFiles.isEmpty)
        rig.settleLog()
        #expect(
            deliveries(rig.upstream).count == deliveredBefore + 1,
            "the refused PATCHes delivered nothing more")
    }
}
