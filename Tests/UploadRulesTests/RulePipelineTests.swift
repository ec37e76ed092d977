import HTTPCore
import MultipartEncoding
import MultipartParsing
import Testing

@testable import UploadRules

/// Rules applied to parser events; the result is parsed back to check what an upstream gets.
@Suite struct RulePipelineTests {
    struct Part: Equatable {
        var name: String
        var filename: String?
        var content: String
    }

    struct Collect: MultipartEventHandler {
        var parts: [Part] = []
        mutating func handle(_ event: MultipartEvent) {
            switch event {
            case .partBegin(let head):
                parts.append(Part(name: head.nameString, filename: head.filenameString, content: ""))
            case .body(let bytes): parts[parts.count - 1].content += String(decoding: bytes, as: UTF8.self)
            case .partEnd, .end: break
            }
        }
    }

    static let input = Array(
        ("--b\r\nContent-Disposition: form-data; name=\"token\"\r\n\r\nclient-token\r\n"
            + "--b\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHoliday\r\n"
            + "--b\r\nContent-Disposition: form-data; name=\"userfile[]\"; filename=\"C:\\\\Users\\\\me\\\\Photo 1.JPG\"\r\n"
            + "Content-Type: image/jpeg\r\n\r\nJPEGDATA\r\n--b--\r\n").utf8)

    func apply(_ rules: RuleSet, headers: HeaderFields = HeaderFields()) throws -> (
        parts: [Part], pipeline: RulePipeline<ByteArraySink>
    ) {
        var pipeline = RulePipeline(rules: rules, sink: ByteArraySink(), headers: headers, now: 1_700_000_000)
        var parser = try MultipartParser(boundary: "b")
        try parser.feed(Self.input, into: &pipeline)
        try parser.finish(into: &pipeline)
        #expect(pipeline.refusal == nil)
        var back = try MultipartParser(boundary: pipeline.encoder.boundary.bytes)
        var collect = Collect()
        try back.feed(pipeline.sink.bytes, into: &collect)
        try back.finish(into: &collect)
        #expect(back.anomalies == [])
        return (collect.parts, pipeline)
    }

    @Test func noRulesReencodesEverything() throws {
        let parts = try apply(RuleSet()).parts
        #expect(parts.map(\.name) == ["token", "title", "userfile[]"])
        #expect(parts[2].filename == "Photo 1.JPG")
        #expect(parts[2].content == "JPEGDATA")
    }

    @Test func dropRenameFilenameInjectDigest() throws {
        var rules = RuleSet()
        rules.dropFields = ["token", "key"]
        rules.renameFields = ["userfile[]": "file"]
        rules.filename = try Template("{date}-{basename}{ext}")
        rules.inject = [
            Injection(
                name: "token", position: .before("file"), value: .template(try Template("t:{filename}"))),
            Injection(name: "key", position: .before("file"), value: .template(try Template("{filename}"))),
            Injection(
                name: "uploader", position: .first, value: .template(try Template("{header:X-User-Id}"))),
            Injection(name: "done", position: .last, value: .template(try Template("{time}"))),
        ]
        rules.digests = [.sha256, .crc32, .size, .md5, .sha1]
        let (parts, pipeline) = try apply(rules, headers: HeaderFields([("X-User-Id", "42")]))
        #expect(
            parts.map(\.name) == [
                "uploader", "title", "token", "key", "file", "file.sha256", "file.crc32", "file.size",
                "file.md5",
                "file.sha1", "done",
            ])
        #expect(parts[0].content == "42")
        #expect(parts[2].content == "t:20231114-Photo 1.jpg")
        #expect(parts[3].content == "20231114-Photo 1.jpg")
        #expect(parts[4].filename == "20231114-Photo 1.jpg")
        #expect(parts[4].content == "JPEGDATA")
        #expect(parts[5].content == "bd90ecf41be00fdfb100ba6a932e5831523d122326953d3f2e5b8aec6b608f83")
        #expect(parts[7].content == "8")
        #expect(parts[10].content == "1700000000")
        #expect(!parts.contains { $0.content == "client-token" })
        #expect(pipeline.injected == ["uploader", "token", "key", "done"])
        #expect(pipeline.records.first?.dropped == true)
    }

    @Test func digestValuesAreRight() throws {
        var rules = RuleSet()
        rules.digests = [.sha256, .md5, .sha1, .crc32]
        let parts = try apply(rules).parts
        let values = Dictionary(uniqueKeysWithValues: parts.map { ($0.name, $0.content) })
        // Reference values of "JPEGDATA" (Python's hashlib and zlib.crc32).
        #expect(
            values["userfile[].sha256"] == "bd90ecf41be00fdfb100ba6a932e5831523d122326953d3f2e5b8aec6b608f83")
        #expect(values["userfile[].md5"] == "bf23ea50d77ee96ece2b71f7d905bfe8")
        #expect(values["userfile[].sha1"] == "f730ca5b2432cec8c7ace3a41bb17ea21e34f2c8")
        #expect(values["userfile[].crc32"] == "4056823478")
    }

    @Test func clientFieldsNamedLikeDigestFieldsAreDropped() throws {
        var rules = RuleSet()
        rules.digests = [.sha256]
        rules.renameFields = ["title": "userfile[].sha256", "token": "userfile[].md5"]
        let (parts, pipeline) = try apply(rules)
        // The forged sha256 goes; a name with an algorithm the route does not compute stays.
        #expect(parts.map(\.name) == ["userfile[].md5", "userfile[]", "userfile[].sha256"])
        #expect(
            parts[2].content == "bd90ecf41be00fdfb100ba6a932e5831523d122326953d3f2e5b8aec6b608f83")
        #expect(pipeline.records.map(\.dropped) == [false, true, false])
    }

    @Test func qiniuTokenIsMintedWithTheFinalFilename() throws {
        var rules = RuleSet()
        rules.dropFields = ["token"]
        rules.renameFields = ["userfile[]": "file"]
        rules.filename = try Template("photo{ext}")
        rules.inject = [
            Injection(
                name: "token", position: .before("file"),
                value: .provider(
                    QiniuProvider(
                        fieldName: "token",
                        policy:
                            QiniuPolicy(
                                accessKey: "AK", secretKey: "SK", scope: try Template("bucket:{filename}"),
                                ttlSeconds: 3600,
                                extra: [("insertOnly", .literal("1"))]))))
        ]
        let parts = try apply(rules).parts
        let token = try #require(parts.first { $0.name == "token" }?.content)
        let policy = QiniuToken.policyJSON(
            scope: "bucket:photo.jpg", deadline: 1_700_003_600, extra: [("insertOnly", "1")])
        #expect(token == QiniuToken.token(accessKey: "AK", secretKey: "SK", policyJSON: policy))
        #expect(parts.map(\.name) == ["title", "token", "file"])
    }

    /// The ASCII fast path gives what the general path gives, for every name it takes.
    @Test func sanitizerFastPathAgreesWithTheGeneralPath() {
        let seed: UInt64 = 0x5A17
        var generator = SplitMix64(seed: seed)
        let alphabet = Array(" .aAcCoOnNlLpPtTuUxX1-_~$".utf8) + Array(0x20...0x7E).map(UInt8.init)
        var names = [
            "CON", "con.txt", " Com1 .log", "LPT9", "nul", "CONIN$", "a b", "x.", "ab ", "Aux.tar.gz",
        ].map {
            Array($0.utf8)
        }
        for _ in 0..<20_000 {
            names.append(
                (0..<Int.random(in: 1...12, using: &generator)).map { _ in
                    alphabet.randomElement(using: &generator)!
                })
        }
        var fast = 0
        for name in names {
            let general = Result { () throws(FilenameSanitizer.Refusal) in
                try FilenameSanitizer.sanitizeText(name)
            }
            let plain = Result { () throws(FilenameSanitizer.Refusal) in
                try FilenameSanitizer.sanitizePlainASCII(name)
            }
            switch (plain, general) {
            case (.success(nil), _): continue
            case (.success(let value?), .success(let expected)):
                #expect(value == expected, "\(name), seed \(seed)")
            case (.failure(let a), .failure(let b)): #expect(a == b, "\(name), seed \(seed)")
            default:
                Issue.record(
                    "paths disagree on \(String(decoding: name, as: UTF8.self)): \(plain) vs \(general), seed \(seed)"
                )
            }
            fast += 1
        }
        #expect(fast > 10_000, "seed \(seed)")
    }

    @Test func sanitizer() throws {
        #expect(try FilenameSanitizer.sanitize(Array("../../etc/passwd".utf8)) == "passwd")
        #expect(try FilenameSanitizer.sanitize(Array("C:\\Users\\a\\b.txt".utf8)) == "b.txt")
        #expect(try FilenameSanitizer.sanitize(Array("\\\\server\\share\\x.doc".utf8)) == "x.doc")
        #expect(try FilenameSanitizer.sanitize(Array("a\u{202E}gpj.exe".utf8)) == "agpj.exe")
        #expect(try FilenameSanitizer.sanitize(Array("a\u{0}b\r\n.txt".utf8)) == "ab.txt")
        #expect(try FilenameSanitizer.sanitize(Array("report.pdf. . .".utf8)) == "report.pdf")
        #expect(try FilenameSanitizer.sanitize([]) == "")
        #expect(throws: FilenameSanitizer.Refusal.dotName) {
            try FilenameSanitizer.sanitize(Array("..".utf8))
        }
        #expect(throws: FilenameSanitizer.Refusal.deviceName) {
            try FilenameSanitizer.sanitize(Array("CON".utf8))
        }
        #expect(throws: FilenameSanitizer.Refusal.deviceName) {
            try FilenameSanitizer.sanitize(Array("lpt1.txt".utf8))
        }
        let long = String(repeating: "é", count: 300) + ".png"
        let capped = try FilenameSanitizer.sanitize(Array(long.utf8))
        #expect(capped.utf8.count <= 255)
        #expect(capped.hasSuffix(".png"))
        #expect(String(validating: Array(capped.utf8), as: UTF8.self) != nil)
    }

    @Test func unsafeFilenamesAreRefused() throws {
        let body = Array(
            "--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"..\"\r\n\r\nx\r\n--b--\r\n".utf8)
        var pipeline = RulePipeline(rules: RuleSet(), sink: ByteArraySink(), headers: HeaderFields(), now: 0)
        var parser = try MultipartParser(boundary: "b")
        try parser.feed(body, into: &pipeline)
        #expect(pipeline.refusal != nil)
    }

    @Test func templates() throws {
        #expect(throws: Template.CompileError.self) { try Template("{nope}") }
        #expect(throws: Template.CompileError.self) { try Template("{uuid") }
        var random = SplitMix64(seed: 4)
        let uuid = try Template("{uuid}").render(TemplateValues(), random: &random)
        #expect(uuid.count == 36)
        #expect(Array(uuid)[14] == "4")
        #expect(try Template("{{x}}").render(TemplateValues(), random: &random) == "{x}")
        #expect(RulePipeline<ByteArraySink>.date(0) == "19700101")
        #expect(RulePipeline<ByteArraySink>.date(951_782_400) == "20000229")
    }

    @Test func fieldsFirstMovesFilePartsAfterTheFields() throws {
        var rules = RuleSet()
        rules.fieldsFirst = true
        rules.digests = [.size]
        rules.inject = [
            Injection(name: "token", position: .before("userfile[]"), value: .template(try Template("t")))
        ]
        let input = Array(
            ("--b\r\nContent-Disposition: form-data; name=\"a\"; filename=\"a.txt\"\r\n\r\nAAA\r\n"
                + "--b\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHoliday\r\n"
                + "--b\r\nContent-Disposition: form-data; name=\"userfile[]\"; filename=\"b.bin\"\r\n\r\nBBBB\r\n"
                + "--b\r\nContent-Disposition: form-data; name=\"after\"\r\n\r\nlate\r\n--b--\r\n").utf8)
        var pipeline = RulePipeline(rules: rules, sink: ByteArraySink(), headers: HeaderFields(), now: 0)
        pipeline.deferred = ByteArraySink()
        var parser = try MultipartParser(boundary: "b")
        try parser.feed(input, into: &pipeline)
        try parser.finish(into: &pipeline)
        #expect(pipeline.refusal == nil)
        let body = Array((pipeline.sink.bytes + pipeline.deferred!.bytes).dropFirst(2))
        var back = try MultipartParser(boundary: pipeline.encoder.boundary.bytes)
        var collect = Collect()
        try back.feed(body, into: &collect)
        try back.finish(into: &collect)
        #expect(back.anomalies == [])
        #expect(
            collect.parts.map(\.name) == [
                "a.size", "title", "token", "userfile[].size", "after", "a", "userfile[]",
            ])
        #expect(collect.parts.map(\.content) == ["3", "Holiday", "t", "4", "late", "AAA", "BBBB"])
    }
}

/// A route injecting an object-store credential: the file must be the last part.
@Suite struct FileLastTests {
    static func rules(fieldsFirst: Bool = false) throws -> RuleSet {
        var rules = RuleSet()
        rules.fieldsFirst = fieldsFirst
        rules.inject = [
            Injection(
                name: "token", position: .before("file"),
                value: .provider(
                    QiniuProvider(
                        fieldName: "token",
                        policy: QiniuPolicy(
                            accessKey: "AK", secretKey: "SK", scope: try Template("b:{filename}"),
                            ttlSeconds: 60,
                            extra: []))))
        ]
        return rules
    }

    static func run(_ rules: RuleSet, _ body: String) throws -> RulePipeline<ByteArraySink> {
        var pipeline = RulePipeline(
            rules: rules, sink: ByteArraySink(), headers: HeaderFields(), now: 1_700_000_000)
        var parser = try MultipartParser(boundary: "b")
        try parser.feed(Array(body.utf8), into: &pipeline)
        try parser.finish(into: &pipeline)
        return pipeline
    }

    static let fieldAfterFile =
        "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\nx\r\n--b\r\nContent-Disposition: form-data; name=\"x:album\"\r\n\r\nsummer\r\n--b--\r\n"

    @Test func aPartAfterTheFileIsRefusedByName() throws {
        let pipeline = try Self.run(try Self.rules(), Self.fieldAfterFile)
        #expect(pipeline.refusal?.reason == .partAfterFile)
        #expect(pipeline.refusal?.description.hasPrefix("part x:album follows the file") == true)
    }

    @Test func fieldsFirstMovesThemInsteadAndAClientTokenIsDropped() throws {
        #expect(try Self.run(try Self.rules(fieldsFirst: true), Self.fieldAfterFile).refusal == nil)
        let forged =
            "--b\r\nContent-Disposition: form-data; name=\"token\"\r\n\r\nforged\r\n--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\nx\r\n--b--\r\n"
        let pipeline = try Self.run(try Self.rules(), forged)
        #expect(pipeline.refusal == nil)
        #expect(pipeline.records.first?.dropped == true, "the client's token is dropped")
        #expect(!String(decoding: pipeline.sink.bytes, as: UTF8.self).contains("forged"))
    }

    @Test func withoutACredentialFieldsMayFollowTheFile() throws {
        #expect(try Self.run(RuleSet(), Self.fieldAfterFile).refusal == nil)
    }
}
