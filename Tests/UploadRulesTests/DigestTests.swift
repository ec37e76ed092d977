import HTTPCore
import Testing

@testable import UploadRules

/// Large parts are hashed on the pool's threads: the results must be those of hashing inline,
/// whatever the sizes of the pieces, and abandoning a part midway must be safe.
@Suite struct DigestTests {
    static let all: [DigestAlgorithm] = [.sha256, .sha1, .md5, .crc32, .size]

    /// Hashes `content` in `pieces` as a loop would: it stops feeding while the queue is backed
    /// up and waits for the queue's signal, and for the signal of the part's completion.
    func digests(_ content: [UInt8], pieces: [Int], threshold: Int64, pool: DigestPool) -> [String] {
        let signals = QueueSignals()
        let queue = DigestQueue(pool: pool, signal: signals.signal)
        let digests = PartDigests(Self.all, offloadThreshold: threshold, queue: queue)
        func feed(_ slice: ArraySlice<UInt8>) {
            slice.withUnsafeBytes { digests.update($0) }
            while digests.isOffloaded, queue.isBackedUp { signals.wait() }
        }
        var offset = 0
        for piece in pieces where offset < content.count {
            let end = min(content.count, offset + piece)
            feed(content[offset..<end])
            offset = end
        }
        feed(content[offset...])
        if !digests.end() {
            while !digests.isComplete { signals.wait() }
        }
        return digests.results().map(\.1)
    }

    @Test func offloadedDigestsEqualInlineOnes() throws {
        let seed: UInt64 = 0xD16E
        var generator = SplitMix64(seed: seed)
        let pool = DigestPool(threads: 2, startThread: Hashing.startThread)
        for size in [0, 1, 1 << 20, (1 << 20) + 1, 5_000_000] {
            let content = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let pieces = (0..<200).map { _ in Int.random(in: 1...300_000, using: &generator) }
            let inline = digests(content, pieces: pieces, threshold: .max, pool: pool)
            #expect(inline[4] == "\(size)", "seed \(seed)")
            for threshold: Int64 in [0, 1 << 20] {
                #expect(
                    digests(content, pieces: pieces, threshold: threshold, pool: pool) == inline,
                    "size \(size), seed \(seed)")
            }
        }
    }

    @Test func digestsReusedForTheNextPartStartOver() {
        // Known values: "abc" and the empty string (FIPS 180-2, RFC 1321, zlib's crc32).
        let abc: [String] = [
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            "a9993e364706816aba3e25717850c26c9cd0d89d", "900150983cd24fb0d6963f7d28e17f72", "891568578", "3",
        ]
        let empty: [String] = [
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "da39a3ee5e6b4b0d3255bfef95601890afd80709", "d41d8cd98f00b204e9800998ecf8427e", "0", "0",
        ]
        let digests = PartDigests(Self.all, queue: nil)
        for (content, expected) in [("abc", abc), ("", empty), ("abc", abc)] {
            Array(content.utf8).withUnsafeBytes { digests.update($0) }
            #expect(digests.end())
            #expect(digests.results().map(\.1) == expected, "\(content)")
            #expect(digests.reuse())
        }
    }

    @Test func anOffloadedPartIsNeverReused() {
        let pool = DigestPool(threads: 1, startThread: Hashing.startThread)
        let signals = QueueSignals()
        let queue = DigestQueue(pool: pool, signal: signals.signal)
        let digests = PartDigests([.sha256], offloadThreshold: 0, queue: queue)
        [UInt8](repeating: 1, count: 1000).withUnsafeBytes { digests.update($0) }
        #expect(digests.isOffloaded)
        if !digests.end() {
            while !digests.isComplete { signals.wait() }
        }
        _ = digests.results()
        #expect(!digests.reuse())
    }

    @Test func manyPartsAtOnceAndAbandonedOnes() async {
        let pool = DigestPool(threads: 2, startThread: Hashing.startThread)
        let content = [UInt8](repeating: 0x61, count: 3 << 20)
        let expected = digests(content, pieces: [65_536], threshold: .max, pool: pool)
        await withTaskGroup(of: [String].self) { group in
            for _ in 0..<8 {
                group.addTask { digests(content, pieces: [65_536], threshold: 0, pool: pool) }
            }
            for await result in group { #expect(result == expected) }
        }
        let queue = DigestQueue(pool: pool, signal: {})
        for _ in 0..<20 {
            // Queued blocks of a part dropped before its end are discarded.
            let abandoned = PartDigests(Self.all, offloadThreshold: 0, queue: queue)
            content.withUnsafeBytes { abandoned.update($0) }
        }
        #expect(digests(content, pieces: [1 << 20], threshold: 0, pool: pool) == expected)
    }
}
