import Testing

@testable import Resumable

@Suite struct UploadIDTests {
    @Test func randomIDsAre32HexDigitsAndDiffer() {
        var seen: Set<String> = []
        for _ in 0..<1000 {
            let id = UploadID.random()
            #expect(id.hex.utf8.count == 32)
            #expect(UploadID(id.hex) == id)
            seen.insert(id.hex)
        }
        #expect(seen.count == 1000)
    }

    @Test(arguments: [
        "", "../../etc/passwd", "%2e%2e%2f", "0123456789abcdef0123456789abcde\u{0}",
        "0123456789ABCDEF0123456789abcdef", "0123456789abcdef0123456789abcdef0",
        "0123456789abcdef0123456789abcde",
        "0123456789abcdef/123456789abcdef", "0123456789abcdef.123456789abcdef",
        "g123456789abcdef0123456789abcdef",
    ])
    func refusesAnythingButTheForm(_ text: String) {
        #expect(UploadID(text) == nil)
    }
}

@Suite struct UploadMetadataTests {
    @Test func parsesThePairsOfTheProtocolDocument() throws {
        let metadata = try UploadMetadata.parse(
            Array("filename d29ybGRfZG9taW5hdGlvbl9wbGFuLnBkZg==,is_confidential".utf8))
        #expect(metadata["filename"] == Array("world_domination_plan.pdf".utf8))
        #expect(metadata.contains("is_confidential"))
        #expect(metadata["is_confidential"] == nil)
        #expect(metadata.serialized == "filename d29ybGRfZG9taW5hdGlvbl9wbGFuLnBkZg==,is_confidential")
        #expect(try UploadMetadata.parse(Array("".utf8)).pairs.isEmpty)
        #expect(try UploadMetadata.parse(Array(" a YQ== , b ".utf8)).pairs.count == 2)
    }

    @Test func refusesAmbiguousOrHugeHeaders() {
        #expect(throws: UploadMetadata.Failure.duplicateKey("a")) {
            try UploadMetadata.parse(Array("a YQ==,a Yg==".utf8))
        }
        #expect(throws: UploadMetadata.Failure.emptyKey) { try UploadMetadata.parse(Array("a YQ==,,b".utf8)) }
        #expect(throws: UploadMetadata.Failure.invalidBase64("a")) {
            try UploadMetadata.parse(Array("a YQ".utf8))
        }
        #expect(throws: UploadMetadata.Failure.invalidKey) { try UploadMetadata.parse([0x61, 0x01, 0x62]) }
        #expect(throws: UploadMetadata.Failure.tooLarge) {
            try UploadMetadata.parse(Array(repeating: UInt8(ascii: "a"), count: 4097))
        }
        let many = (0..<65).map { "k\($0)" }.joined(separator: ",")
        #expect(throws: UploadMetadata.Failure.tooManyPairs) { try UploadMetadata.parse(Array(many.utf8)) }
    }
}

@Suite struct TusHeaderTests {
    @Test func integersAreStrict() {
        #expect(TusHeaders.nonNegativeInteger("0".utf8) == 0)
        #expect(TusHeaders.nonNegativeInteger("1073741824".utf8) == 1 << 30)
        #expect(TusHeaders.nonNegativeInteger("999999999999999999".utf8) == 999_999_999_999_999_999)
        for bad in ["", "-1", "+1", " 1", "1 ", "1e3", "0x10", "9999999999999999999", "18446744073709551617"]
        {
            #expect(TusHeaders.nonNegativeInteger(bad.utf8) == nil, "\(bad)")
        }
    }

    @Test func concatForms() {
        #expect(TusHeaders.concat("partial") == .partial)
        #expect(TusHeaders.concat("final;/files/a /files/b") == .final(["/files/a", "/files/b"]))
        #expect(TusHeaders.concat("final;") == nil)
        #expect(TusHeaders.concat("Partial") == nil)
        #expect(TusHeaders.concat("final /files/a") == nil)
    }

    @Test func checksums() throws {
        let (algorithm, digest) = try TusHeaders.checksum("sha1 Kq5sNclPz7QV2+lfQIuc6R7oRu0=")
        #expect(algorithm == .sha1)
        #expect(digest.count == 20)
        #expect(throws: TusHeaders.ChecksumFailure.unsupportedAlgorithm("crc32")) {
            try TusHeaders.checksum("crc32 AAAAAA==")
        }
        #expect(throws: TusHeaders.ChecksumFailure.malformed) { try TusHeaders.checksum("sha1 AAAA") }
        #expect(throws: TusHeaders.ChecksumFailure.malformed) { try TusHeaders.checksum("sha1") }
        #expect(throws: TusHeaders.ChecksumFailure.malformed) {
            try TusHeaders.checksum("sha1  Kq5sNclPz7QV2+lfQIuc6R7oRu0=")
        }
    }
}

@Suite struct UploadInfoTests {
    @Test func roundTrips() throws {
        let metadata = try UploadMetadata.parse(Array("filename YS5qcGc=,flag".utf8))
        let infos = [
            UploadInfo(id: UploadID.random(), length: 5, createdAt: 1, expiresAt: 2),
            UploadInfo(
                id: UploadID.random(), length: nil, offset: 7, metadata: metadata, owner: "user\n42",
                createdAt: 1_700_000_000, expiresAt: 1_700_086_400, concatenation: .partial),
            UploadInfo(
                id: UploadID.random(), length: 10, offset: 10, createdAt: 3, expiresAt: 4,
                concatenation: .final([UploadID.random(), UploadID.random()])),
        ]
        for info in infos {
            #expect(try UploadInfo.decode(info.encoded) == info)
        }
        #expect(infos[2].isComplete)
        #expect(!infos[1].isComplete)
    }

    @Test func refusesDamagedRecords() {
        let info = UploadInfo(id: UploadID.random(), length: 5, offset: 5, createdAt: 1, expiresAt: 2)
        let good = info.encoded
        #expect(throws: UploadInfo.DecodingError.self) { try UploadInfo.decode(Array(good.dropLast())) }
        let past = "formgate-tus 1\nid \(info.id)\noffset 6\ncreated 1\nexpires 2\nlength 5\n"
        #expect(throws: UploadInfo.DecodingError.self) { try UploadInfo.decode(Array(past.utf8)) }
        #expect(throws: UploadInfo.DecodingError.self) {
            try UploadInfo.decode(Array("formgate-tus 1\nid ../x\n".utf8))
        }
        #expect(throws: UploadInfo.DecodingError.self) {
            try UploadInfo.decode(good + Array("offset 1\n".utf8))
        }
    }
}

@Suite struct ChecksumHasherTests {
    @Test func knownDigests() throws {
        for (algorithm, header) in [
            (TusHeaders.ChecksumAlgorithm.sha1, "sha1 Kq5sNclPz7QV2+lfQIuc6R7oRu0="),
            (.sha256, "sha256 uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek="),
            (.md5, "md5 XrY7u+Ae7tCTyyK7j1rNww=="),
        ] {
            let hasher = ChecksumHasher(algorithm)
            Array("hello ".utf8).withUnsafeBytes { hasher.update($0) }
            Array("world".utf8).withUnsafeBytes { hasher.update($0) }
            let (expectedAlgorithm, digest) = try TusHeaders.checksum(header)
            #expect(expectedAlgorithm == algorithm)
            #expect(hasher.finish() == digest, "\(algorithm)")
        }
    }
}
