import CEventSupport
import Synchronization

/// Fixed-size records that one thread (an event loop) writes and any other thread reads
/// without ever stopping it: each slot is a sequence lock over 64-bit words
/// (`fg_seqlock_write` / `fg_seqlock_read`), so a read that overlapped a write is detected
/// and retried, never torn, and the writer never waits for a reader.
///
/// Slots are allocated in chunks of 256 as they are first needed, up to `capacity`, and never
/// freed before the table (a reader may hold a chunk's address at any time). The chunks'
/// addresses are published with a release store of their count: a reader sees a chunk's
/// address only after it was written. Claiming and releasing slots is the writer's business
/// (`claim`, `release`); a released slot is reused.
public final class SeqlockTable: @unchecked Sendable {
    /// Slots per chunk.
    public static let chunkSlots = 256

    /// Data words per slot (the sequence word comes on top).
    public let words: Int
    /// The most slots the table holds.
    public let capacity: Int
    private let chunks: UnsafeMutablePointer<UnsafeMutablePointer<UInt64>?>
    private let chunkCount: Int
    /// Chunks allocated and published (the readers' bound).
    private let published = Atomic<Int>(0)
    // The writer's own:
    private var freeSlots: [Int] = []
    private var nextSlot = 0

    /// A table of at most `capacity` slots of `words` data words each.
    public init(words: Int, capacity: Int) {
        precondition(words > 0 && capacity > 0)
        self.words = words
        chunkCount = (capacity + Self.chunkSlots - 1) / Self.chunkSlots
        self.capacity = chunkCount * Self.chunkSlots
        chunks = .allocate(capacity: chunkCount)
        chunks.initialize(repeating: nil, count: chunkCount)
    }

    deinit {
        for index in 0..<published.load(ordering: .acquiring) { chunks[index]?.deallocate() }
        chunks.deallocate()
    }

    /// Slots a reader may look at (those of the chunks allocated so far).
    public var readableSlots: Int { published.load(ordering: .acquiring) * Self.chunkSlots }

    private func slotPointer(_ slot: Int) -> UnsafeMutablePointer<UInt64> {
        chunks[slot / Self.chunkSlots]! + (slot % Self.chunkSlots) * (words + 1)
    }

    // MARK: The writer's

    /// A free slot (its data all zero, or as its last `release` left it), or `nil` when all
    /// `capacity` are taken.
    public func claim() -> Int? {
        if let slot = freeSlots.popLast() { return slot }
        guard nextSlot < capacity else { return nil }
        let chunk = nextSlot / Self.chunkSlots
        if chunk == published.load(ordering: .relaxed) {
            let size = Self.chunkSlots * (words + 1)
            let memory = UnsafeMutablePointer<UInt64>.allocate(capacity: size)
            memory.initialize(repeating: 0, count: size)
            // Sequences start at 2: a read returns 0 only when it overlapped a write.
            for index in 0..<Self.chunkSlots { memory[index * (words + 1)] = 2 }
            chunks[chunk] = memory
            published.store(chunk + 1, ordering: .releasing)
        }
        defer { nextSlot += 1 }
        return nextSlot
    }

    /// Gives `slot` back for reuse (write its "free" marker first).
    public func release(_ slot: Int) {
        freeSlots.append(slot)
    }

    /// Writes `source` into `slot`'s data from word `offset`.
    public func write(_ slot: Int, offset: Int = 0, _ source: UnsafeBufferPointer<UInt64>) {
        precondition(offset >= 0 && offset + source.count <= words)
        guard let base = source.baseAddress else { return }
        fg_seqlock_write(slotPointer(slot), offset, base, source.count)
    }

    // MARK: Any thread's

    /// Copies `slot`'s data words into `destination` (at least `words` long); returns the
    /// slot's sequence (it changes with every write), or `nil` when writes kept overlapping
    /// the read (100 tries).
    public func read(_ slot: Int, into destination: UnsafeMutableBufferPointer<UInt64>) -> UInt64? {
        precondition(destination.count >= words && slot < readableSlots)
        let pointer = UnsafePointer(slotPointer(slot))
        for _ in 0..<100 {
            let sequence = fg_seqlock_read(pointer, destination.baseAddress!, words)
            if sequence != 0 { return sequence }
        }
        return nil
    }
}
