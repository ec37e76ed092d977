/// Computes the configured digests of one part as its bytes stream by, without ever waiting.
///
/// The first `offloadThreshold` bytes are hashed inline. Past that (a large file), when a
/// `DigestQueue` is given and its pool admits the part, the bytes go to the pool's threads, so
/// that hashing overlaps with reading, parsing and forwarding instead of adding to them
/// (SHA-256 runs at about 1.3 GB/s here, as fast as the proxy moves bytes): by reference when
/// the sink forwards them as the input's own chains (`share`), else copied in 256 KiB blocks
/// (`update`). `end()` says whether the results are ready; if not, the queue signals when
/// they are.
final class PartDigests {
    private let state: DigestState
    private let offloadThreshold: Int64
    private var pending: [UInt8] = []
    /// The last block `sharedBlock` made that no sink shared (`sharedBlock`).
    private var spare: DigestBlock?
    /// The part's blocks go to the pool.
    private(set) var isOffloaded = false
    /// The pool was busy (or there is none) when the part grew large: hashed inline to the end.
    private var inline = false
    /// `end()` was called.
    private var ended = false
    /// The pool said the blocks are all hashed: nothing is left to cancel.
    private var complete = false

    static let blockSize = 256 * 1024

    init(_ algorithms: [DigestAlgorithm], offloadThreshold: Int64 = 1 << 20, queue: DigestQueue?) {
        self.state = DigestState(algorithms, queue: queue)
        self.offloadThreshold = offloadThreshold
    }

    deinit {
        // An abandoned part: the pool drops what is still queued for it.
        if isOffloaded, !complete { state.queue?.pool.cancel(state) }
    }

    /// Whether the next `count` bytes go to the pool (the part is offloaded once it grows past
    /// `offloadThreshold` and the pool admits it); if not, `update` hashes them inline.
    func offloads(_ count: Int) -> Bool {
        if isOffloaded { return true }
        if inline || state.size + Int64(count) <= offloadThreshold { return false }
        guard let queue = state.queue, queue.pool.admit(queue) else {
            inline = true
            return false
        }
        isOffloaded = true
        return true
    }

    /// A block for the next `count` offloaded bytes, for a sink to share
    /// (`ByteSink.write(_:sharingWith:)`); `share` queues it if the sink said it would.
    /// A block the sink did not share is kept for the next call (nothing else holds it), so
    /// a sink that copies costs no allocation per write.
    func sharedBlock(_ count: Int) -> DigestBlock {
        if let spare {
            spare.resize(count)
            return spare
        }
        let block = DigestBlock(sharing: count, of: state)
        spare = block
        return block
    }

    /// Queues a block the sink shares, after the bytes copied before it.
    func share(_ block: DigestBlock) {
        precondition(isOffloaded && !ended, "a shared block for a part not offloaded")
        if block === spare { spare = nil }
        guard let queue = state.queue else { return }
        queue.releaseHashed()
        submitPending()
        queue.pool.submit(block)
    }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        guard offloads(bytes.count) else { return state.update(bytes) }
        state.queue?.releaseHashed()
        var rest = bytes
        while !rest.isEmpty {
            if pending.isEmpty { pending.reserveCapacity(Self.blockSize) }
            let take = min(rest.count, Self.blockSize - pending.count)
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest[..<take]))
            rest = UnsafeRawBufferPointer(rebasing: rest[take...])
            if pending.count == Self.blockSize { submitPending() }
        }
    }

    private func submitPending() {
        guard !pending.isEmpty, let pool = state.queue?.pool else { return }
        pool.submit(DigestBlock(copying: pending, of: state))
        pending = []
    }

    /// The part's bytes are all given; returns whether `results()` may be called now. If not,
    /// the queue signals when the last block is hashed (then `isComplete` is true).
    func end() -> Bool {
        precondition(!ended, "a part ends once")
        ended = true
        guard isOffloaded, let pool = state.queue?.pool else { return true }
        state.queue?.releaseHashed()
        submitPending()
        complete = pool.end(state)
        return complete
    }

    /// Whether the part ended and its digests are computed.
    var isComplete: Bool {
        guard ended else { return false }
        if !complete, isOffloaded, let pool = state.queue?.pool {
            state.queue?.releaseHashed()
            complete = pool.isComplete(state)
        }
        return !isOffloaded || complete
    }

    /// The results, in the configured order: hex for hashes, decimal for crc32 and size. Call
    /// once, when `isComplete` (the pool's lock made the threads' hashing visible).
    func results() -> [(DigestAlgorithm, String)] {
        precondition(isComplete, "digests read before they were complete")
        return state.finish()
    }

    /// Makes these digests ready for another part of the same algorithms and queue, when the
    /// part was hashed inline to its end (no pool thread ever held the state); returns whether
    /// it could. A pipeline keeps one for its next file, so a small file's digests allocate no
    /// context.
    func reuse() -> Bool {
        // A part never offloaded has no spare block and nothing pending.
        guard ended, !isOffloaded else { return false }
        state.reset()
        inline = false
        ended = false
        complete = false
        return true
    }
}
