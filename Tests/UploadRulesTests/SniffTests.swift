import HTTPCore
import MultipartEncoding
import MultipartParsing
import Testing

@testable import UploadRules

@Suite struct SniffTests {
    static let png: [UInt8] =
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 0x42, count: 5000)
    static let elf: [UInt8] = [0x7F, 0x45, 0x4C, 0x46, 0x02, 0x01, 0x01] + Array(repeating: 0, count: 300)

    func body(_ content: [UInt8], filename: String, type: String) -> [UInt8] {
        Array(
            "--b\r\nContent-Disposition: form-data; name=\"t\"\r\n\r\nx\r\n--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(filename)\"\r\nContent-Type: \(type)\r\n\r\n"
                .utf8) + content + Array("\r\n--b--\r\n".utf8)
    }

    struct Collect: MultipartEventHandler {
        var heads: [PartHead] = []
        var contents: [[UInt8]] = []
        mutating func handle(_ event: MultipartEvent) {
            switch event {
            case .partBegin(let head):
                heads.append(head)
                contents.append([])
            case .body(let bytes): contents[contents.count - 1] += bytes
            case .partEnd, .end: break
            }
        }
    }

    /// Runs `input` through the rules at every 97th split point; returns the re-encoded parts
    /// (nil on refusal) and the refusal.
    func run(_ rules: RuleSet, _ input: [UInt8]) throws -> (Collect?, RulePipeline<ByteArraySink>.Refusal?) {
        var results: [(Collect?, String?)] = []
        var last: RulePipeline<ByteArraySink>.Refusal?
        let sniffer = Sniffer()
        for cut in stride(from: 1, to: input.count, by: 97) {
            var pipeline = RulePipeline(
                rules: rules, sink: ByteArraySink(), headers: HeaderFields(), now: 0, sniffer: sniffer)
            var parser = try MultipartParser(boundary: "b")
            try parser.feed(Array(input[..<cut]), into: &pipeline)
            try parser.feed(Array(input[cut...]), into: &pipeline)
            try parser.finish(into: &pipeline)
            last = pipeline.refusal
            if pipeline.refusal != nil {
                results.append((nil, pipeline.refusal?.description))
                continue
            }
            var back = try MultipartParser(boundary: pipeline.encoder.boundary.bytes)
            var collect = Collect()
            try back.feed(pipeline.sink.bytes, into: &collect)
            try back.finish(into: &collect)
            results.append((collect, nil))
        }
        let first = results[0]
        for result in results {
            #expect(result.1 == first.1)
            #expect(result.0?.contents == first.0?.contents)
            #expect(result.0?.heads.map(\.headers) == first.0?.heads.map(\.headers))
        }
        return (first.0, last)
    }

    @Test func pngSentAsOctetStreamIsForwardedAsPNG() throws {
        var rules = RuleSet()
        rules.sniff = RuleSet.SniffRule(bytes: 4096, policy: .override)
        rules.allowTypes = ["image/*"]
        rules.filename = try Template("upload{ext}")
        let (parts, refusal) = try run(
            rules, body(Self.png, filename: "x.bin", type: "application/octet-stream"))
        #expect(refusal == nil)
        let collect = try #require(parts)
        #expect(collect.heads[1].headers["Content-Type"] == "image/png")
        #expect(collect.heads[1].filenameString == "upload.png")
        #expect(collect.contents[1] == Self.png)
    }

    @Test func elfNamedLikeAPhotoIsRefused() throws {
        var rules = RuleSet()
        rules.sniff = RuleSet.SniffRule(bytes: 512, policy: .override)
        rules.allowTypes = ["image/*"]
        let (_, refusal) = try run(rules, body(Self.elf, filename: "photo.jpg", type: "image/jpeg"))
        #expect(refusal?.reason == .typeNotAllowed)
        #expect(refusal?.description.contains("application/x-executable") == true)
    }

    @Test func rejectMismatchAndKeep() throws {
        var rules = RuleSet()
        rules.sniff = RuleSet.SniffRule(bytes: 64, policy: .rejectMismatch)
        #expect(try run(rules, body(Self.png, filename: "a.png", type: "image/png")).1 == nil)
        #expect(
            try run(rules, body(Self.png, filename: "a.jpg", type: "image/jpeg")).1?.reason == .typeMismatch)
        rules.sniff = RuleSet.SniffRule(bytes: 64, policy: .keep)
        let kept = try #require(try run(rules, body(Self.png, filename: "a.jpg", type: "image/jpeg")).0)
        #expect(kept.heads[1].headers["Content-Type"] == "image/jpeg")
    }

    @Test func shortFilesAreSniffedAtPartEnd() throws {
        var rules = RuleSet()
        rules.sniff = RuleSet.SniffRule(bytes: 4096, policy: .override)
        let tiny: [UInt8] = Array("%PDF-1.4\n".utf8)
        let collect = try #require(try run(rules, body(tiny, filename: "doc", type: "text/plain")).0)
        #expect(collect.heads[1].headers["Content-Type"] == "application/pdf")
        #expect(collect.contents[1] == tiny)
    }

    @Test func libmagicFallback() {
        let sniffer = Sniffer()
        #expect(sniffer.sniff(Array("<!DOCTYPE html><html><body>hi</body></html>\n".utf8)) == "text/html")
        #expect(sniffer.sniff(Array("just some words\n".utf8)) == "text/plain")
        #expect(Sniffer.signature([0xFF, 0xD8, 0xFF, 0xE0]) == "image/jpeg")
        #expect(Sniffer.signature(Array("GIF89a".utf8)) == "image/gif")
    }
}

/// A sniff window borrowed from the bytes being fed (`borrowsInput`, with `inputEnds()` after
/// every feed, as the proxy runs it) gives the upstream the bytes and types the copied window
/// gives, wherever the input splits: a window within one read, across reads, a file shorter
/// than the window, a part that ends in a later read than its window.
@Suite struct BorrowedSniffWindowTests {
    static func body(fileBytes: Int, seed: UInt8) -> [UInt8] {
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        let file = png + (0..<fileBytes).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(seed)) }
        return Array("--b\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHoliday\r\n".utf8)
            + Array("--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.bin\"\r\n\r\n".utf8)
            + file
            + Array("\r\n--b\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nend\r\n--b--\r\n".utf8)
    }

    /// The re-encoded body (under a fixed boundary) of `input` fed in pieces ending at `cuts`.
    static func reencode(_ input: [UInt8], cuts: [Int], borrowing: Bool) throws -> [UInt8] {
        var rules = RuleSet()
        rules.sniff = RuleSet.SniffRule(bytes: 64, policy: .override)
        rules.filename = try Template("upload{ext}")
        var pipeline = RulePipeline(
            rules: rules, sink: ByteArraySink(), headers: HeaderFields(), now: 0, sniffer: Sniffer(),
            boundary: try Boundary(Array("fixed".utf8)))
        pipeline.borrowsInput = borrowing
        var parser = try MultipartParser(boundary: "b")
        var start = 0
        for end in cuts + [input.count] where end > start {
            // A fresh array per read: a window still referring to an earlier one would read freed
            // memory (and, under the tests' address sanitizer builds, fail).
            var piece = Array(input[start..<end])
            try parser.feed(piece, into: &pipeline)
            if borrowing { pipeline.inputEnds() }
            piece.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0xEE) }
            start = end
        }
        try parser.finish(into: &pipeline)
        #expect(pipeline.refusal == nil)
        return pipeline.sink.bytes
    }

    @Test(arguments: [10, 64, 200])
    func everySplitGivesTheCopiedWindowsBody(fileBytes: Int) throws {
        let input = Self.body(fileBytes: fileBytes, seed: UInt8(fileBytes & 0xFF))
        let expected = try Self.reencode(input, cuts: [], borrowing: false)
        #expect(String(decoding: expected, as: UTF8.self).contains("Content-Type: image/png"))
        for cut in 1..<input.count {
            let borrowed = try Self.reencode(input, cuts: [cut], borrowing: true)
            #expect(borrowed == expected, "cut at \(cut)")
            if borrowed != expected { return }
        }
        for cut in stride(from: 1, to: input.count - 7, by: 7) {
            #expect(try Self.reencode(input, cuts: [cut, cut + 3, cut + 7], borrowing: true) == expected)
        }
    }
}
