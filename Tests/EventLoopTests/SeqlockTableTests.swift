import EventLoop
import Foundation
import Testing

/// `SeqlockTable`: what a reader gets is always one whole write, never a mix of two, while
/// the writer never waits; slots are claimed, released and reused; chunks are published as
/// they are first needed.
@Suite struct SeqlockTableTests {
    @Test func claimsGrowByChunksAndReuseReleasedSlots() {
        let table = SeqlockTable(words: 4, capacity: 300)
        #expect(table.capacity == 512)
        #expect(table.readableSlots == 0)
        let first = table.claim()
        #expect(first == 0 && table.readableSlots == 256)
        for _ in 1..<256 { _ = table.claim() }
        #expect(table.readableSlots == 256)
        #expect(table.claim() == 256 && table.readableSlots == 512)
        table.release(7)
        #expect(table.claim() == 7)
        for _ in 257..<512 { _ = table.claim() }
        #expect(table.claim() == nil)
    }

    @Test func aReadIsOneWholeWriteWhileTheWriterRuns() {
        let words = 61
        let table = SeqlockTable(words: words, capacity: 4)
        let slot = table.claim()!
        let done = Atomicish()
        // The writer fills every word with one number, the number rising: a torn read would
        // hold two different numbers.
        let writer = Thread {
            var value: UInt64 = 1
            var buffer = [UInt64](repeating: 0, count: words)
            while !done.isSet {
                for index in 0..<words { buffer[index] = value }
                buffer.withUnsafeBufferPointer { table.write(slot, $0) }
                value += 1
            }
        }
        writer.start()
        var destination = [UInt64](repeating: 0, count: words)
        var reads = 0
        var torn = 0
        var lastSeen: UInt64 = 0
        var backwards = 0
        while reads < 200_000 {
            let sequence = destination.withUnsafeMutableBufferPointer { table.read(slot, into: $0) }
            guard sequence != nil else { continue }
            reads += 1
            if destination.contains(where: { $0 != destination[0] }) { torn += 1 }
            if destination[0] < lastSeen { backwards += 1 }
            lastSeen = destination[0]
        }
        done.set()
        while !writer.isFinished { Thread.sleep(forTimeInterval: 0.001) }
        #expect(torn == 0, "\(torn) torn reads of \(reads)")
        #expect(backwards == 0)
        #expect(lastSeen > 0, "the writer never wrote")
    }

    @Test func aPartialWriteKeepsTheOtherWords() {
        let table = SeqlockTable(words: 3, capacity: 1)
        let slot = table.claim()!
        [UInt64(1), 2, 3].withUnsafeBufferPointer { table.write(slot, $0) }
        [UInt64(9)].withUnsafeBufferPointer { table.write(slot, offset: 2, $0) }
        var out = [UInt64](repeating: 0, count: 3)
        let sequence = out.withUnsafeMutableBufferPointer { table.read(slot, into: $0) }
        #expect(sequence == 6)
        #expect(out == [1, 2, 9])
    }
}

/// A flag one thread sets and another reads.
private final class Atomicish: @unchecked Sendable {
    private let lock = NSLock()
    private var flag = false
    var isSet: Bool { lock.withLock { flag } }
    func set() { lock.withLock { flag = true } }
}
