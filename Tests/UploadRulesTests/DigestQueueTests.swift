import HTTPCore
import Testing

@testable import UploadRules

/// The hashing queue with threads that never run: the test hashes each block itself, so every
/// order of submits, hashing and the part's end can be forced; the digests must be those of
/// hashing inline, the queue must back up and drain at its marks, and it must signal.
@Suite struct DigestQueueTests {
    static let block = PartDigests.blockSize
    static let algorithms: [DigestAlgorithm] = [.sha256, .md5, .crc32, .size]

    /// The seed of every part's content (named in the digest checks' failures).
    static let seed: UInt64 = 0xD16E57

    static func content(_ size: Int) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        return (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    static func inline(_ content: [UInt8]) -> [String] {
        let digests = PartDigests(algorithms, queue: nil)
        content.withUnsafeBytes { digests.update($0) }
        #expect(digests.end())
        return digests.results().map(\.1)
    }

    /// A part of `content` fed in 64 KiB pieces; `hashedBeforeEnd` blocks are hashed as soon
    /// as they are queued (interleaved with the submits), the rest after the part's end.
    @Test(arguments: [5 * block, 5 * block + 1000], 0...6)
    func digestsEqualInlineAtEveryInterleaving(size: Int, hashedBeforeEnd: Int) {
        let content = Self.content(size)
        let pool = Hashing.manualPool()
        let signals = QueueSignals()
        let queue = DigestQueue(pool: pool, highMark: 64 * Self.block, signal: signals.signal)
        let digests = PartDigests(Self.algorithms, offloadThreshold: 0, queue: queue)
        var hashed = 0
        for start in stride(from: 0, to: size, by: 65_536) {
            content[start..<min(size, start + 65_536)].withUnsafeBytes { digests.update($0) }
            while hashed < hashedBeforeEnd, pool.hashNextBlock() { hashed += 1 }
        }
        #expect(digests.isOffloaded)
        let blocks = (size + Self.block - 1) / Self.block
        let readyAtEnd = digests.end()
        // Ready at once only when every block was queued and hashed before the end.
        #expect(readyAtEnd == (size % Self.block == 0 && hashed == blocks))
        #expect(signals.count == 0)
        #expect(digests.isComplete == readyAtEnd)
        hashed += Hashing.drain(pool)
        #expect(hashed == blocks)
        // The completion is signalled once, by the block that completed the ended part.
        #expect(signals.count == (readyAtEnd ? 0 : 1))
        #expect(digests.isComplete)
        #expect(queue.queued == 0)
        #expect(digests.results().map(\.1) == Self.inline(content), "content seed \(Self.seed)")
    }

    /// A loop that stops reading while the pipeline wants a pause never queues more than the
    /// high mark plus one read (and one block being filled); the drain below the low mark is
    /// signalled, exactly once per back-up.
    @Test func backsUpAtTheHighMarkAndSignalsBelowTheLowMark() {
        let content = Self.content(40 * Self.block + 123)
        let pool = Hashing.manualPool()
        let signals = QueueSignals()
        let queue = DigestQueue(
            pool: pool, highMark: 8 * Self.block, lowMark: 2 * Self.block, signal: signals.signal)
        let digests = PartDigests(Self.algorithms, offloadThreshold: 0, queue: queue)
        let read = 100_000
        var most = 0
        var backUps = 0
        var start = 0
        while start < content.count {
            content[start..<min(content.count, start + read)].withUnsafeBytes { digests.update($0) }
            start += read
            most = max(most, queue.queued)
            guard queue.isBackedUp else { continue }
            backUps += 1
            let before = signals.count
            // Paused: the hashing threads (here the test) catch up; the queue signals once.
            while queue.isBackedUp {
                #expect(signals.count == before)
                #expect(pool.hashNextBlock())
            }
            #expect(signals.count == before + 1)
            #expect(queue.queued < queue.lowMark)
        }
        #expect(backUps >= 4)
        #expect(most >= queue.highMark)
        #expect(most <= queue.highMark + read + Self.block)
        #expect(!digests.end())
        Hashing.drain(pool)
        #expect(digests.results().map(\.1) == Self.inline(content), "content seed \(Self.seed)")
    }

    /// Past the first part, the pool admits one part per thread, and none while the queue is
    /// backed up: the others are hashed inline (their results are the same).
    @Test func admissionAndAbandonedParts() {
        let pool = Hashing.manualPool(threads: 1)
        let signals = QueueSignals()
        let queue = DigestQueue(
            pool: pool, highMark: 4 * Self.block, lowMark: Self.block, signal: signals.signal)
        let content = Self.content(6 * Self.block)
        var first: PartDigests? = PartDigests(Self.algorithms, offloadThreshold: 0, queue: queue)
        let second = PartDigests(Self.algorithms, offloadThreshold: 0, queue: queue)
        content.withUnsafeBytes { first!.update($0) }
        content.withUnsafeBytes { second.update($0) }
        #expect(first!.isOffloaded)
        #expect(!second.isOffloaded)
        #expect(second.end())
        #expect(second.results().map(\.1) == Self.inline(content), "content seed \(Self.seed)")
        #expect(queue.isBackedUp)
        // The first part is abandoned with blocks in line: they are dropped, and the queue,
        // no longer backed up, signals (another part of the loop may be paused on it).
        first = nil
        #expect(queue.queued == 0)
        #expect(!queue.isBackedUp)
        #expect(signals.count == 1)
        #expect(!pool.hashNextBlock())
        let third = PartDigests(Self.algorithms, offloadThreshold: 0, queue: queue)
        content.withUnsafeBytes { third.update($0) }
        #expect(third.isOffloaded)
        #expect(!third.end())
        Hashing.drain(pool)
        #expect(third.results().map(\.1) == Self.inline(content))
    }
}
