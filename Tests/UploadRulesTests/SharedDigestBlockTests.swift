import HTTPCore
import Testing

@testable import UploadRules

/// Large parts hashed from bytes a sink shares by reference (`DigestBlock`, what the proxy's
/// input loan hands over instead of a copy), mixed with copied blocks, with threads that never
/// run so that the test orders every attach, hash and end. The digests must be those of
/// hashing inline; nothing is hashed before it is attached, nor out of order; every pin is
/// given back once, on the caller's thread, after its bytes are hashed or the part abandoned.
@Suite struct SharedDigestBlockTests {
    typealias Queues = DigestQueueTests

    /// Pins of test-owned bytes, and how many were given back.
    final class Pins: @unchecked Sendable {
        var released = 0
        func release() -> () -> Void { { [self] in released += 1 } }
    }

    /// A part fed as: inline bytes, shared piece A, copied bytes, shared piece B; attached in
    /// the order `attachOrder` says (0: A, 1: B), before or after the part's end.
    @Test(arguments: [[0, 1], [1, 0]], [false, true])
    func sharedAndCopiedBlocksHashInOrder(attachOrder: [Int], attachAfterEnd: Bool) {
        let content = Queues.content(300_000)
        let pool = Hashing.manualPool()
        let signals = QueueSignals()
        let queue = DigestQueue(pool: pool, signal: signals.signal)
        let digests = PartDigests(Queues.algorithms, offloadThreshold: 10_000, queue: queue)
        let pins = Pins()
        let ranges = [0..<8_000, 8_000..<108_000, 108_000..<110_000, 110_000..<300_000]
        var blocks: [DigestBlock] = []
        content.withUnsafeBytes { bytes in
            for (index, range) in ranges.enumerated() {
                let piece = UnsafeRawBufferPointer(rebasing: bytes[range])
                if index % 2 == 1 {
                    #expect(digests.offloads(piece.count))
                    let block = digests.sharedBlock(piece.count)
                    digests.share(block)
                    blocks.append(block)
                } else {
                    digests.update(piece)
                }
            }
            // Nothing can be hashed before A is attached.
            #expect(!pool.hashNextBlock())
            let attach = { (which: Int) in
                let range = ranges[2 * which + 1]
                blocks[which].attach(
                    [UnsafeRawBufferPointer(rebasing: bytes[range])], release: pins.release())
            }
            if attachAfterEnd { #expect(!digests.end()) }
            attach(attachOrder[0])
            if attachOrder[0] == 1 { #expect(!pool.hashNextBlock()) }
            attach(attachOrder[1])
            if !attachAfterEnd { #expect(!digests.end()) }
            #expect(Hashing.drain(pool) == 3)
            // Hashed, not yet given back: the loop's thread does that.
            #expect(pins.released == 0)
            #expect(digests.isComplete)
        }
        #expect(pins.released == 2)
        #expect(signals.count == 1)
        #expect(queue.queued == 0)
        #expect(digests.results().map(\.1) == Queues.inline(content), "content seed \(Queues.seed)")
    }

    /// A block no sink shared is the next call's (a copying sink costs no allocation per
    /// write); one that was shared is never handed out again.
    @Test func aBlockNoSinkSharedIsReused() {
        let pool = Hashing.manualPool()
        let queue = DigestQueue(pool: pool, signal: QueueSignals().signal)
        let digests = PartDigests(Queues.algorithms, offloadThreshold: 0, queue: queue)
        #expect(digests.offloads(100))
        let unshared = digests.sharedBlock(100)
        let again = digests.sharedBlock(200)
        #expect(unshared === again)
        #expect(again.count == 200)
        digests.share(again)
        #expect(digests.sharedBlock(300) !== again)
    }

    /// An abandoned part: a pin attached but not hashed is given back when the part goes; one
    /// attached after it went is given back at once; one being hashed as it goes is given back
    /// through the queue, whose loop is woken for it.
    @Test func anAbandonedPartGivesBackEveryPin() {
        let content = Queues.content(64_000)
        let pool = Hashing.manualPool()
        let signals = QueueSignals()
        let queue = DigestQueue(pool: pool, signal: signals.signal)
        let pins = Pins()
        content.withUnsafeBytes { bytes in
            let piece = { (range: Range<Int>) in UnsafeRawBufferPointer(rebasing: bytes[range]) }
            var digests: PartDigests? = PartDigests(Queues.algorithms, offloadThreshold: 0, queue: queue)
            #expect(digests!.offloads(20_000))
            let first = digests!.sharedBlock(20_000)
            digests!.share(first)
            let second = digests!.sharedBlock(20_000)
            digests!.share(second)
            first.attach([piece(0..<20_000)], release: pins.release())
            digests = nil
            #expect(pins.released == 1)
            second.attach([piece(20_000..<40_000)], release: pins.release())
            #expect(pins.released == 2)
            #expect(!pool.hashNextBlock())
            #expect(queue.queued == 0)
        }
    }
}
