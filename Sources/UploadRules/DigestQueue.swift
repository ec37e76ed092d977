/// One loop thread's share of a `DigestPool`: the bytes its parts have queued for hashing, and
/// the signal that wakes the loop when hashing progresses.
///
/// Queuing never blocks. When the queued bytes reach `highMark` the queue is backed up: the
/// pipelines of this loop report `wantsPause` while their current part is offloaded, so the
/// caller stops reading its client (memory stays at most `highMark` plus one read and one
/// block per offloaded part). `signal` is called, from a hashing thread and without any lock
/// held, when the queued bytes drop below `lowMark` after a back-up, and when an ended part's
/// digests are complete; the loop then calls `RulePipeline.resume()` on its pipelines.
public final class DigestQueue: @unchecked Sendable {
    /// The threads that hash this queue's blocks.
    public let pool: DigestPool
    /// Queued bytes at which the queue backs up.
    public let highMark: Int
    /// Queued bytes below which a backed-up queue signals that reading may resume.
    public let lowMark: Int
    /// Wakes the loop (thread-safe; e.g. a libevent `Notifier`'s `notify`).
    let signal: @Sendable () -> Void
    // Under the pool's lock.
    var queuedBytes = 0
    var backedUp = false
    /// Shared blocks hashed, whose pins go back on the loop's thread (`releaseHashed`).
    var hashed: [DigestBlock] = []

    /// Creates the queue of one loop thread.
    ///
    /// - Parameter signal: called from hashing threads; it must only wake the loop (e.g.
    ///   `notifier.notify()`), never call into a pipeline.
    public init(
        pool: DigestPool, highMark: Int = 4 << 20, lowMark: Int = 1 << 20,
        signal: @escaping @Sendable () -> Void
    ) {
        precondition(lowMark <= highMark, "the low mark is above the high mark")
        self.pool = pool
        self.highMark = highMark
        self.lowMark = lowMark
        self.signal = signal
    }

    /// Whether the queue reached its high mark and has not yet drained below its low mark.
    public var isBackedUp: Bool { pool.locked { backedUp } }

    /// The bytes queued and not yet hashed.
    public var queued: Int { pool.locked { queuedBytes } }

    /// Gives back the pins of the shared blocks hashed so far; call on the loop's thread (the
    /// pipelines do, and the loop's progress signal should).
    public func releaseHashed() {
        var done: [DigestBlock] = []
        pool.locked { swap(&done, &hashed) }
        for block in done { block.unpin() }
    }

    /// `count` queued bytes were hashed or dropped (under the pool's lock); returns whether the
    /// queue just stopped being backed up.
    func drained(_ count: Int) -> Bool {
        queuedBytes -= count
        guard backedUp, queuedBytes < lowMark else { return false }
        backedUp = false
        return true
    }
}
