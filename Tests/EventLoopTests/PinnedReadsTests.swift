import Testing

@testable import EventLoop

/// `PinnedReads`: what is handed on by reference into a read stays intact after the read's
/// buffer was emptied and reused, wherever the references move; read memory stays alive only
/// while references hold it, and only up to the limit; small pieces and bytes outside the
/// chunk being fed are copied.
@Suite struct PinnedReadsTests {
    struct Stop: Error {}

    /// `count` bytes that differ from one position to the next and from seed to seed.
    static func pattern(_ count: Int, seed: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8 &+ seed) }
    }

    /// A socket's input holding `reads`, one chain each.
    static func input(_ reads: [UInt8]...) -> OwnedEvBuffer {
        let input = OwnedEvBuffer()
        for bytes in reads {
            let chain = OwnedEvBuffer()
            chain.buffer.add(bytes)
            chain.buffer.moveAll(to: input.buffer)
            withExtendedLifetime(chain) {}
        }
        return input
    }

    /// Feeds `input` (kept alive meanwhile: its `buffer` does not), appending every chunk to
    /// `target`, if any, in pieces of `piece` bytes.
    static func feed(
        _ reads: PinnedReads, _ input: OwnedEvBuffer, footprint: Int, into target: EvBuffer?, piece: Int
    ) {
        _ = reads.feed(input.buffer, footprint: footprint) { chunk in
            guard let target else { return }
            var rest = chunk
            while !rest.isEmpty {
                let count = min(piece, rest.count)
                reads.append(UnsafeRawBufferPointer(rebasing: rest.prefix(count)), to: target)
                rest = UnsafeRawBufferPointer(rebasing: rest.dropFirst(count))
            }
        }
    }

    /// What `owned` holds (removed from it), as a count and a checksum by position: a failure
    /// then prints two numbers, not tens of kilobytes.
    static func contents(_ owned: OwnedEvBuffer) -> Contents {
        Contents(owned.buffer.remove(owned.buffer.count))
    }

    struct Contents: Equatable {
        let count: Int
        let sum: UInt64

        init(_ bytes: [UInt8]) {
            count = bytes.count
            sum = bytes.reduce(0) { $0 &* 1_000_003 &+ UInt64($1) }
        }
    }

    @Test(arguments: [2048, 5000, 16_384, 40_000])
    func referencedBytesOutliveTheirRead(piece: Int) {
        let reads = PinnedReads(limit: 1 << 20)
        let first = Self.pattern(40_000, seed: 1)
        let second = Self.pattern(25_000, seed: 2)
        let input = Self.input(first, second)
        let target = OwnedEvBuffer()
        Self.feed(reads, input, footprint: 131_072, into: target.buffer, piece: piece)
        #expect(input.buffer.count == 0)
        #expect(reads.pinned == 131_072)
        // The next read reuses nothing the references hold.
        Self.feed(reads, Self.input(Self.pattern(65_000, seed: 3)), footprint: 65_536, into: nil, piece: 1)
        #expect(Self.contents(target) == Contents(first + second))
        #expect(reads.pinned == 0)
    }

    @Test func referencesMovedOnPartlyStayIntact() {
        let reads = PinnedReads(limit: 1 << 20)
        let bytes = Self.pattern(30_000, seed: 4)
        let stream = OwnedEvBuffer()
        Self.feed(reads, Self.input(bytes), footprint: 32_768, into: stream.buffer, piece: 10_000)
        // As a stream's input goes to an upstream's output: whole references move, a part of
        // one is copied.
        let upstream = OwnedEvBuffer()
        stream.buffer.move(14_000, to: upstream.buffer)
        withExtendedLifetime((stream, upstream)) {}
        #expect(reads.pinned == 32_768)
        #expect(Self.contents(upstream) == Contents(Array(bytes.prefix(14_000))))
        #expect(reads.pinned == 32_768)
        #expect(Self.contents(stream) == Contents(Array(bytes.dropFirst(14_000))))
        #expect(reads.pinned == 0)
    }

    @Test func smallPiecesAreCopied() {
        let reads = PinnedReads(limit: 1 << 20)
        let bytes = Self.pattern(20_000, seed: 5)
        let target = OwnedEvBuffer()
        Self.feed(reads, Self.input(bytes), footprint: 32_768, into: target.buffer, piece: 2047)
        #expect(reads.pinned == 0)
        #expect(Self.contents(target) == Contents(bytes))
    }

    @Test func pastTheLimitReadsAreCopied() {
        let reads = PinnedReads(limit: 100_000)
        let sent = (0..<4).map { Self.pattern(40_000, seed: 10 + $0) }
        let targets = sent.map { _ in OwnedEvBuffer() }
        for (bytes, target) in zip(sent, targets) {
            Self.feed(reads, Self.input(bytes), footprint: 65_536, into: target.buffer, piece: 8192)
            // One read fits under the limit, a second would not: it and the later ones are copied.
            #expect(reads.pinned == 65_536)
        }
        for (bytes, target) in zip(sent, targets).reversed() {
            #expect(Self.contents(target) == Contents(bytes))
        }
        #expect(reads.pinned == 0)
        // Room again: the next read is referred to.
        let target = OwnedEvBuffer()
        Self.feed(reads, Self.input(sent[0]), footprint: 65_536, into: target.buffer, piece: 8192)
        #expect(reads.pinned == 65_536)
    }

    @Test func bytesOutsideTheChunkBeingFedAreCopied() {
        let reads = PinnedReads(limit: 1 << 20)
        let bytes = Self.pattern(10_000, seed: 6)
        let target = OwnedEvBuffer()
        bytes.withUnsafeBytes { reads.append($0, to: target.buffer) }
        let input = Self.input(Self.pattern(10_000, seed: 7))
        var chunks = 0
        _ = reads.feed(input.buffer, footprint: 16_384) { _ in
            chunks += 1
            bytes.withUnsafeBytes { reads.append($0, to: target.buffer) }
        }
        withExtendedLifetime(input) {}
        #expect(chunks == 1)
        #expect(reads.pinned == 0)
        #expect(Self.contents(target) == Contents(bytes + bytes))
    }

    @Test func aFailureStopsTheFeedAndDropsTheRest() {
        let reads = PinnedReads(limit: 1 << 20)
        let input = Self.input(Self.pattern(5000, seed: 8), Self.pattern(5000, seed: 9))
        var seen = 0
        let failure = reads.feed(input.buffer, footprint: 16_384) { (chunk) throws(Stop) in
            seen += chunk.count
            throw Stop()
        }
        #expect(failure != nil)
        #expect(seen == 5000)
        #expect(input.buffer.count == 0)
        #expect(reads.pinned == 0)
    }
}
