import HTTPCore
import Inspection
import MultipartParsing
import Testing

@testable import UploadRules

/// A stream that records what it was given and decides when the test says (or, with `after`,
/// as soon as it was given that many bytes).
final class RecordingStream: InspectionStream, @unchecked Sendable {
    let after: (Int, HoldDecision, String)?
    var given: [UInt8] = []
    var ended = false
    var wantsPause = false
    var earlyDecision: HoldDecision?
    var logValue: String?
    var waiting: ((HoldDecision?) -> Void)?

    init(after: (Int, HoldDecision, String)? = nil) {
        self.after = after
    }

    func update(_ bytes: UnsafeRawBufferPointer) {
        given += bytes
        if let after, given.count >= after.0 {
            earlyDecision = after.1
            logValue = after.2
        }
    }
    func end() { ended = true }
    func whenDecided(_ body: @escaping (HoldDecision?) -> Void) { waiting = body }
}

/// Opens one `RecordingStream` per file and keeps them.
final class RecordingStreams: InspectionStreams, @unchecked Sendable {
    var opened: [RecordingStream] = []
    /// What the next stream decides as soon as it is given `after` bytes.
    var earlyAfter: (Int, HoldDecision, String)?

    func open(_ inspection: any FileInspection, part: PartLogRecord) -> any InspectionStream {
        let stream = RecordingStream(after: earlyAfter)
        opened.append(stream)
        return stream
    }
}

/// The scan step inside the pipeline: the file's bytes (as forwarded, after stripping) reach
/// the inspection stream, early decisions refuse or release at once, and a verdict's log value
/// lands in the part's record.
@Suite struct InspectionPipelineTests {
    static let scan = ScanRule(scanner: ClamdSettings(name: "default", address: .unix(path: "/x")))
    static let content = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }

    static var body: [UInt8] {
        Array("--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n\r\n".utf8)
            + content
            + Array(
                "\r\n--b\r\nContent-Disposition: form-data; name=\"after\"\r\n\r\nlater\r\n--b--\r\n".utf8)
    }

    static func run(_ streams: RecordingStreams, rules: RuleSet? = nil, split: Int = 4000) throws
        -> RulePipeline<ByteArraySink>
    {
        var set = rules ?? RuleSet()
        if rules == nil { set.inspection = scan }
        var pipeline = RulePipeline(
            rules: set, sink: ByteArraySink(), headers: HeaderFields(), now: 0, inspectors: streams)
        var parser = try MultipartParser(boundary: "b")
        try parser.feed(Array(body[..<split]), into: &pipeline)
        try parser.feed(Array(body[split...]), into: &pipeline)
        try parser.finish(into: &pipeline)
        return pipeline
    }

    @Test func theFileStreamsToItsInspectionAndItsLastByteWaits() throws {
        let streams = RecordingStreams()
        var pipeline = try Self.run(streams)
        let stream = try #require(streams.opened.first)
        #expect(stream.given == Self.content, "the whole file, nothing else")
        #expect(stream.ended)
        let requests = pipeline.takeVerdictRequests()
        #expect(requests.count == 1)
        #expect(requests.first?.stream === stream)
        #expect(pipeline.isHolding)
        #expect(!pipeline.sink.bytes.contains(subsequence: Array("later".utf8)))
        stream.logValue = "clean"
        pipeline.decide(try #require(requests.first).hold, .release)
        #expect(!pipeline.isHolding)
        #expect(pipeline.records.first?.scan == "clean")
        #expect(pipeline.sink.bytes.contains(subsequence: Self.content + Array("\r\n--".utf8)))
    }

    @Test func anEarlyRefusalEndsTheRequestMidFile() throws {
        let streams = RecordingStreams()
        streams.earlyAfter = (1000, .refuse(RuleRefusal(.inspectionFailed, description: "down")), "error")
        let pipeline = try Self.run(streams, split: 2000)
        #expect(pipeline.refusal?.reason == .inspectionFailed)
        #expect(pipeline.records.first?.scan == "error")
        #expect(!pipeline.sink.bytes.contains(subsequence: Self.content), "the file never went whole")
    }

    @Test func anEarlyReleaseLetsTheRestGoUnheld() throws {
        let streams = RecordingStreams()
        streams.earlyAfter = (1000, .release, "skipped")
        var pipeline = try Self.run(streams, split: 2000)
        #expect(pipeline.refusal == nil)
        #expect(!pipeline.isHolding)
        #expect(pipeline.takeVerdictRequests().isEmpty)
        #expect(pipeline.records.first?.scan == "skipped")
        #expect(pipeline.sink.bytes.contains(subsequence: Self.content + Array("\r\n--".utf8)))
        #expect(streams.opened.first?.given.count ?? 0 < Self.content.count, "no more is streamed to it")
    }

    @Test func aLoopWithoutInspectorsAsksAVerdictWithoutAStream() throws {
        var rules = RuleSet()
        rules.inspection = Self.scan
        var pipeline = RulePipeline(rules: rules, sink: ByteArraySink(), headers: HeaderFields(), now: 0)
        var parser = try MultipartParser(boundary: "b")
        try parser.feed(Self.body, into: &pipeline)
        try parser.finish(into: &pipeline)
        let requests = pipeline.takeVerdictRequests()
        #expect(requests.count == 1 && requests.first?.stream == nil, "the shell fails it closed")
    }

    @Test func typesChooseTheScannedFilesBySniffedType() {
        let images = ScanRule(scanner: Self.scan.scanner, types: ["image/*"])
        var part = PartLogRecord(name: "f", contentType: "image/png")
        part.sniffedType = "application/x-executable"
        #expect(!images.inspects(part), "the sniffed type, not the declared one")
        part.sniffedType = "image/jpeg"
        #expect(images.inspects(part))
        #expect(Self.scan.inspects(PartLogRecord(name: "f")))
    }

    @Test func strippedBytesAreWhatIsHashedAndForwarded() throws {
        // A JPEG with a comment segment: stripping blanks it, the length stays.
        let jpeg: [UInt8] =
            [0xFF, 0xD8, 0xFF, 0xFE, 0x00, 0x07] + Array("hello".utf8) + [0xFF, 0xD9]
        var rules = RuleSet()
        rules.strip = StripOptions()
        rules.sniff = RuleSet.SniffRule(bytes: 16, policy: .keep)
        rules.digests = [.sha256]
        let body =
            Array(
                "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n"
                    .utf8) + jpeg + Array("\r\n--b--\r\n".utf8)
        for split in 1..<body.count {
            var pipeline = RulePipeline(
                rules: rules, sink: ByteArraySink(), headers: HeaderFields(), now: 0, sniffer: Sniffer())
            var parser = try MultipartParser(boundary: "b")
            try parser.feed(Array(body[..<split]), into: &pipeline)
            try parser.feed(Array(body[split...]), into: &pipeline)
            try parser.finish(into: &pipeline)
            let stripped = MetadataStripper.strip(jpeg, format: .jpeg, options: StripOptions())
            #expect(stripped.count == jpeg.count && stripped != jpeg)
            #expect(pipeline.sink.bytes.contains(subsequence: stripped), "split \(split)")
            #expect(pipeline.records.first?.stripped == ["comment"], "split \(split)")
            #expect(
                pipeline.records.first?.digests.first?.1 == sha256Hex(stripped), "the digest of what went on")
        }
    }
}

/// The SHA-256 of `bytes` in hex, by the digest code the pipeline uses inline.
func sha256Hex(_ bytes: [UInt8]) -> String {
    let digests = PartDigests([.sha256], queue: nil)
    bytes.withUnsafeBytes { digests.update($0) }
    _ = digests.end()
    return digests.results().first?.1 ?? ""
}

extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool { firstRange(of: subsequence) != nil }
}
