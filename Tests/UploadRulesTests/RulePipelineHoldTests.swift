import HTTPCore
import MultipartEncoding
import MultipartParsing
import Testing

@testable import UploadRules

/// A pipeline whose large file parts are hashed off the loop (by the test, block by block)
/// never waits: a part that ends before its digests are ready holds the digest fields and
/// everything after them, in order, until `resume()`; the result is byte for byte what the
/// inline pipeline writes.
@Suite struct RulePipelineHoldTests {
    static let block = PartDigests.blockSize
    static let boundary = try! Boundary("fixed-boundary-for-comparison")

    /// Two files (`a`, `b`) with digests, then a field, then the end.
    static func body(a: [UInt8], b: [UInt8]) -> [UInt8] {
        func file(_ name: String, _ content: [UInt8]) -> [UInt8] {
            Array(
                "--x\r\nContent-Disposition: form-data; name=\"\(name)\"; filename=\"\(name).bin\"\r\n\r\n"
                    .utf8)
                + content + Array("\r\n".utf8)
        }
        return file("a", a) + file("b", b)
            + Array("--x\r\nContent-Disposition: form-data; name=\"after\"\r\n\r\nlate\r\n--x--\r\n".utf8)
    }

    static func rules() -> RuleSet {
        var rules = RuleSet()
        rules.digests = [.sha256, .size, .crc32]
        return rules
    }

    static func pipeline(_ hashing: DigestQueue?) -> RulePipeline<ByteArraySink> {
        RulePipeline(
            rules: rules(), sink: ByteArraySink(), headers: HeaderFields(), now: 0, hashing: hashing,
            boundary: boundary)
    }

    /// What the inline pipeline writes for `body`.
    static func inline(_ body: [UInt8]) throws -> RulePipeline<ByteArraySink> {
        var pipeline = Self.pipeline(nil)
        var parser = try MultipartParser(boundary: "x")
        try parser.feed(body, into: &pipeline)
        try parser.finish(into: &pipeline)
        #expect(pipeline.refusal == nil)
        #expect(!pipeline.isHolding)
        return pipeline
    }

    static func content(_ size: Int, _ seed: UInt8) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) ^ seed }
    }

    @Test func twoPendingPartsAreReleasedInOrder() throws {
        var released: Bool
        // `a` has more blocks in line than `b` when both have ended: `b`'s digests are
        // complete first, yet nothing after `a`'s digest fields goes before them.
        let a = Self.content(12 * Self.block + 77, 1)
        let b = Self.content(5 * Self.block, 2)
        let body = Self.body(a: a, b: b)
        let expected = try Self.inline(body)
        let pool = Hashing.manualPool(threads: 2)
        let signals = QueueSignals()
        let queue = DigestQueue(pool: pool, highMark: 64 * Self.block, signal: signals.signal)
        var pipeline = Self.pipeline(queue)
        var parser = try MultipartParser(boundary: "x")
        try parser.feed(body, into: &pipeline)
        try parser.finish(into: &pipeline)
        #expect(pipeline.refusal == nil)
        #expect(pipeline.pendingHolds == [HoldID(rawValue: 0), HoldID(rawValue: 1)])
        #expect(pipeline.isHolding)
        // The sink has everything up to the end of `a`'s content, and not one byte more.
        let endOfA = try #require(Self.range(of: a, in: expected.sink.bytes)).upperBound
        Self.expectSame(pipeline.sink.bytes, Array(expected.sink.bytes[..<endOfA]))
        // The held bytes are the rest but the digest values, and are reported as such.
        let values = expected.records.flatMap(\.digests).reduce(0) { $0 + $1.1.utf8.count }
        #expect(pipeline.heldBytes == expected.sink.bytes.count - endOfA - values)
        released = pipeline.resume()
        #expect(!released)
        // Hash until `b` is complete and `a` is not: still nothing is released.
        var steps = 0
        while !Self.isComplete(pipeline, hold: 1) {
            #expect(pool.hashNextBlock())
            steps += 1
            released = pipeline.resume()
            #expect(!released)
            #expect(pipeline.sink.bytes.count == endOfA)
        }
        #expect(!Self.isComplete(pipeline, hold: 0))
        #expect(signals.count == 1)
        #expect(steps >= 5)
        Hashing.drain(pool)
        #expect(signals.count == 2)
        released = pipeline.resume()
        #expect(released)
        #expect(pipeline.pendingHolds.isEmpty)
        #expect(!pipeline.isHolding)
        #expect(pipeline.heldBytes == 0)
        Self.expectSame(pipeline.sink.bytes, expected.sink.bytes)
        #expect(pipeline.records.map { $0.digests.map(\.1) } == expected.records.map { $0.digests.map(\.1) })
        // Writes go straight to the sink again.
        released = pipeline.resume()
        #expect(!released)
    }

    @Test func theFirstReleaseLetsGoUpToTheNextPendingHold() throws {
        var released: Bool
        let a = Self.content(6 * Self.block + 5, 3)
        let b = Self.content(6 * Self.block + 9, 4)
        let body = Self.body(a: a, b: b)
        let expected = try Self.inline(body)
        let pool = Hashing.manualPool(threads: 1)
        let queue = DigestQueue(pool: pool, highMark: 64 * Self.block, signal: {})
        var pipeline = Self.pipeline(queue)
        var parser = try MultipartParser(boundary: "x")
        // One thread: `b` is admitted once `a` has ended. Hash `a` whole before `b` ends.
        let endOfA = try #require(Self.range(of: a, in: body)).upperBound
        try parser.feed(Array(body[..<(endOfA + 1000)]), into: &pipeline)
        #expect(pipeline.pendingHolds == [HoldID(rawValue: 0)])
        #expect(Hashing.drain(pool) > 0)
        released = pipeline.resume()
        #expect(released)
        #expect(!pipeline.isHolding)
        // `a`'s digest fields went out, then `b`'s first bytes.
        Self.expectSame(pipeline.sink.bytes, Array(expected.sink.bytes[..<pipeline.sink.bytes.count]))
        #expect(pipeline.records[0].digests.map(\.1) == expected.records[0].digests.map(\.1))
        try parser.feed(Array(body[(endOfA + 1000)...]), into: &pipeline)
        try parser.finish(into: &pipeline)
        #expect(pipeline.pendingHolds == [HoldID(rawValue: 1)])
        Hashing.drain(pool)
        released = pipeline.resume()
        #expect(released)
        Self.expectSame(pipeline.sink.bytes, expected.sink.bytes)
    }

    /// Seeded random reads, hashing progress and `resume()` calls: at every step the sink holds
    /// a prefix of the inline pipeline's output, and at the end all of it.
    @Test(arguments: 0..<12)
    func randomInterleavingsGiveTheInlineOutput(seed: UInt64) throws {
        // Seeded: the same interleavings on every run.
        var generator = SplitMix64(seed: seed &+ 1)
        func next() -> UInt64 { generator.next() }
        // `b` is offloaded too, and may end while `a` is still held.
        let input = Self.body(
            a: Self.content(10 * Self.block + 3, 12), b: Self.content(6 * Self.block + 7, 13))
        let expected = try Self.inline(input).sink.bytes
        let pool = Hashing.manualPool(threads: 2)
        let queue = DigestQueue(pool: pool, highMark: 64 * Self.block, signal: {})
        var pipeline = Self.pipeline(queue)
        var parser = try MultipartParser(boundary: "x")
        var checked = 0
        func check(_ pipeline: RulePipeline<ByteArraySink>) {
            let sent = pipeline.sink.bytes
            #expect(sent.count <= expected.count)
            Self.expectSame(
                Array(sent[checked...]), Array(expected[checked..<min(sent.count, expected.count)]))
            checked = sent.count
        }
        var start = 0
        while start < input.count {
            let end = min(input.count, start + Int(next() % 200_000) + 1)
            try parser.feed(Array(input[start..<end]), into: &pipeline)
            start = end
            for _ in 0..<(next() % 4) { _ = pool.hashNextBlock() }
            if next() % 2 == 0 { pipeline.resume() }
            check(pipeline)
        }
        try parser.finish(into: &pipeline)
        while pool.hashNextBlock() {
            if next() % 2 == 0 { pipeline.resume() }
            check(pipeline)
        }
        pipeline.resume()
        check(pipeline)
        #expect(!pipeline.isHolding)
        Self.expectSame(pipeline.sink.bytes, expected)
    }

    /// Under the offload threshold (1 MiB), a part is hashed inline and never held, even with
    /// a queue: the digest fields follow the part at once.
    @Test func smallFilesAreNeverHeld() throws {
        let body = Self.body(a: Self.content(1 << 20, 5), b: Self.content(1000, 6))
        let expected = try Self.inline(body)
        let pool = Hashing.manualPool()
        let queue = DigestQueue(pool: pool, signal: {})
        var pipeline = Self.pipeline(queue)
        var parser = try MultipartParser(boundary: "x")
        try parser.feed(body, into: &pipeline)
        try parser.finish(into: &pipeline)
        #expect(!pipeline.isHolding)
        #expect(pipeline.pendingHolds.isEmpty)
        #expect(queue.queued == 0)
        #expect(!pool.hashNextBlock())
        Self.expectSame(pipeline.sink.bytes, expected.sink.bytes)
    }

    /// The loop's side: it stops reading while `wantsPause` (the queue is backed up), and
    /// while more than a watermark is held; each pause ends with the queue's signal.
    @Test func aLoopThatHonoursThePausesStaysBounded() throws {
        let a = Self.content(20 * Self.block, 7)
        let b = Self.content(9 * Self.block + 3, 8)
        let body = Self.body(a: a, b: b)
        let expected = try Self.inline(body)
        let pool = Hashing.manualPool(threads: 1)
        let queue = DigestQueue(
            pool: pool, highMark: 4 * Self.block, lowMark: Self.block, signal: {})
        var pipeline = Self.pipeline(queue)
        var parser = try MultipartParser(boundary: "x")
        let read = 65_536
        let watermark = 2 * Self.block
        var mostQueued = 0
        var mostHeld = 0
        var pauses = 0
        var start = 0
        while start < body.count {
            try parser.feed(Array(body[start..<min(body.count, start + read)]), into: &pipeline)
            start += read
            mostQueued = max(mostQueued, queue.queued)
            mostHeld = max(mostHeld, pipeline.heldBytes)
            if pipeline.wantsPause || pipeline.heldBytes > watermark { pauses += 1 }
            while pipeline.wantsPause || pipeline.heldBytes > watermark {
                // Paused: hashing goes on off the loop; the loop resumes the pipeline.
                #expect(pool.hashNextBlock())
                pipeline.resume()
            }
        }
        try parser.finish(into: &pipeline)
        Hashing.drain(pool)
        pipeline.resume()
        #expect(pauses > 3)
        #expect(mostQueued <= queue.highMark + Self.block)
        // One read past the watermark, and the framing of the parts that read ends.
        #expect(mostHeld <= watermark + read + 512)
        Self.expectSame(pipeline.sink.bytes, expected.sink.bytes)
    }

    /// A verdict on a hold: `refuse` discards what is held and names its reason; `release` of
    /// a digest hold whose digests are not ready lets nothing go.
    @Test func verdictsOnHolds() throws {
        var released: Bool
        let body = Self.body(a: Self.content(5 * Self.block, 9), b: Self.content(10, 10))
        let pool = Hashing.manualPool()
        let signals = QueueSignals()
        let queue = DigestQueue(pool: pool, signal: signals.signal)
        var pipeline = Self.pipeline(queue)
        var parser = try MultipartParser(boundary: "x")
        try parser.feed(body, into: &pipeline)
        try parser.finish(into: &pipeline)
        let hold = try #require(pipeline.pendingHolds.first)
        let sent = pipeline.sink.bytes.count
        released = pipeline.decide(hold, .release)
        #expect(!released)
        #expect(pipeline.sink.bytes.count == sent)
        released = pipeline.decide(HoldID(rawValue: 7), .release)
        #expect(!released)
        pipeline.decide(hold, .refuse(RuleRefusal(.typeNotAllowed, description: "scanner said no")))
        #expect(pipeline.refusal?.reason == .typeNotAllowed)
        #expect(pipeline.pendingHolds.isEmpty)
        #expect(pipeline.heldBytes == 0)
        Hashing.drain(pool)
        released = pipeline.resume()
        #expect(!released)
        #expect(pipeline.sink.bytes.count == sent)
    }

    /// A request abandoned with a hold pending (the client went away): its queued blocks are
    /// dropped with the pipeline.
    @Test func anAbandonedPipelineDropsItsBlocks() throws {
        let pool = Hashing.manualPool()
        let queue = DigestQueue(pool: pool, highMark: 64 * Self.block, signal: {})
        do {
            var pipeline = Self.pipeline(queue)
            var parser = try MultipartParser(boundary: "x")
            let body = Self.body(a: Self.content(8 * Self.block, 11), b: [])
            try parser.feed(body, into: &pipeline)
            #expect(pipeline.isHolding)
            #expect(queue.queued > 4 * Self.block)
        }
        #expect(queue.queued == 0)
        #expect(!pool.hashNextBlock())
    }

    @Test func refusalsNameTheirReason() throws {
        func refusal(_ rules: RuleSet, _ disposition: String, type: String? = nil) throws -> RuleRefusal? {
            let body = Array(
                ("--x\r\nContent-Disposition: form-data; \(disposition)\r\n"
                    + (type.map { "Content-Type: \($0)\r\n" } ?? "") + "\r\nx\r\n--x--\r\n").utf8)
            var pipeline = RulePipeline(rules: rules, sink: ByteArraySink(), headers: HeaderFields(), now: 0)
            var parser = try MultipartParser(boundary: "x")
            try parser.feed(body, into: &pipeline)
            try parser.finish(into: &pipeline)
            return pipeline.refusal
        }
        let file = "name=\"f\"; filename=\"a.txt\""
        #expect(try refusal(RuleSet(), "name=\"f\"; filename=\"..\"")?.reason == .unsafeFilename)
        #expect(try refusal(RuleSet(), file) == nil)
        var rules = RuleSet()
        rules.filename = try Template("CON")
        #expect(try refusal(rules, file)?.reason == .unsafeFilename)
        rules = RuleSet()
        rules.allowTypes = ["image/*"]
        #expect(try refusal(rules, file, type: "text/plain")?.reason == .typeNotAllowed)
        #expect(try refusal(rules, file, type: "image/png") == nil)
        rules.sniff = RuleSet.SniffRule(bytes: 64, policy: .rejectMismatch)
        rules.allowTypes = []
        #expect(try refusal(rules, file, type: "image/png")?.reason == .typeMismatch)
    }

    /// Expects two outputs to be equal; a difference is reported by its offset and the two
    /// lengths (the outputs are megabytes: `#expect` would print them).
    static func expectSame(
        _ output: [UInt8], _ expected: [UInt8], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard output != expected else { return }
        let offset =
            zip(output, expected).enumerated().first { $1.0 != $1.1 }?.offset
            ?? min(output.count, expected.count)
        Issue.record(
            "the output differs at byte \(offset) (\(output.count) bytes, expected \(expected.count))",
            sourceLocation: sourceLocation)
    }

    /// Whether the hold's digests are computed (`resume()` may have read them already).
    static func isComplete(_ pipeline: RulePipeline<ByteArraySink>, hold: Int) -> Bool {
        guard let pending = pipeline.holds.first(where: { $0.id.rawValue == hold }) else { return true }
        return pending.values != nil || pending.digests?.isComplete == true
    }

    static func range(of needle: [UInt8], in haystack: [UInt8]) -> Range<Int>? {
        guard needle.count <= haystack.count else { return nil }
        for start in 0...(haystack.count - needle.count)
        where haystack[start] == needle[0] && haystack[start..<start + needle.count].elementsEqual(needle) {
            return start..<start + needle.count
        }
        return nil
    }
}
