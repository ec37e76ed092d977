#if canImport(Glibc)
    import Glibc
#endif

/// Threads that hash the blocks of large parts for every loop's `DigestQueue`: one block at a
/// time per part, in order, the parts in line taking turns block by block. Nothing here waits
/// for a loop thread, and a loop thread never waits here: its calls take the lock for
/// bookkeeping only (never while a block is hashed), queue a block whatever is queued already,
/// and learn of progress through its queue's signal.
///
/// At most one part per thread is admitted at a time, and none while its queue is backed up:
/// with many large uploads at once the threads are busy anyway, and the rest hash inline rather
/// than pay for copies and hand-offs.
public final class DigestPool: @unchecked Sendable {
    /// The number of hashing threads.
    public let threads: Int
    private let beforeFirstBlock: (@Sendable () -> Void)?
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let workReady = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var ready: [DigestState] = []
    private var admitted = 0

    /// Starts `threads` hashing threads through `startThread`.
    ///
    /// - Parameters:
    ///   - beforeFirstBlock: a test hook each thread calls once, before it hashes its first
    ///     block (it may block that thread; see `FORMGATE_TEST_HASHING_GATE` in the README).
    ///   - startThread: starts a thread named `name` that runs `body` (which never returns);
    ///     `EventLoopThread.start` in the proxy. Its error ends the start-up: the threads
    ///     started before it keep waiting for blocks that never come.
    public init<Failure: Error>(
        threads: Int, beforeFirstBlock: (@Sendable () -> Void)? = nil,
        startThread: (_ name: String, _ body: @escaping @Sendable () -> Void) throws(Failure) -> Void
    ) throws(Failure) {
        precondition(threads > 0, "a digest pool needs a thread")
        self.threads = threads
        self.beforeFirstBlock = beforeFirstBlock
        pthread_mutex_init(lock, nil)
        pthread_cond_init(workReady, nil)
        for index in 0..<threads {
            try startThread("fg-hash-\(index)") { [self] in run() }
        }
    }

    /// Runs `body` under the pool's lock (bookkeeping only: it must not block).
    func locked<Value>(_ body: () -> Value) -> Value {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return body()
    }

    /// Takes a part of `queue` if fewer than `threads` are offloaded and the queue is not backed up.
    func admit(_ queue: DigestQueue) -> Bool {
        locked {
            guard admitted < threads, !queue.backedUp else { return false }
            admitted += 1
            return true
        }
    }

    /// Queues `block` for its part and returns at once; the queue backs up past its high mark.
    /// A shared block waits, and the part's blocks behind it, until it is attached.
    func submit(_ block: DigestBlock) {
        let state = block.state
        guard let queue = state.queue else { return }
        locked {
            state.blocks.append(block)
            queue.queuedBytes += block.count
            if queue.queuedBytes >= queue.highMark { queue.backedUp = true }
            scheduleIfReady(state)
        }
    }

    /// A shared block's bytes are pinned (`DigestBlock.attach`, on the loop's thread); `false`
    /// when its part was abandoned (the caller releases them at once).
    func attach(_ block: DigestBlock, regions: [UnsafeRawBufferPointer], release: @escaping () -> Void)
        -> Bool
    {
        locked {
            guard !block.state.cancelled else { return false }
            block.pin(regions, release: release)
            scheduleIfReady(block.state)
            return true
        }
    }

    /// Puts `state` in line if its next block can be hashed and no thread has it (under the lock).
    private func scheduleIfReady(_ state: DigestState) {
        guard !state.running, !state.scheduled, let next = state.blocks.first, next.isReady else { return }
        state.scheduled = true
        ready.append(state)
        pthread_cond_signal(workReady)
    }

    /// The part's last block is queued; returns whether all its blocks are hashed already
    /// (otherwise the thread that hashes the last one signals the queue).
    func end(_ state: DigestState) -> Bool {
        locked {
            state.ended = true
            admitted -= 1
            return state.isIdle
        }
    }

    /// Whether an ended part's blocks are all hashed.
    func isComplete(_ state: DigestState) -> Bool {
        locked { state.ended && state.isIdle }
    }

    /// Drops what is still queued for `state` (its part was abandoned, ended or not).
    func cancel(_ state: DigestState) {
        guard let queue = state.queue else { return }
        var pinned: [DigestBlock] = []
        let wake = locked {
            let dropped = state.blocks.reduce(0) { $0 + $1.count }
            pinned = state.blocks.filter(\.isShared)
            state.blocks.removeAll()
            state.cancelled = true
            if state.scheduled {
                ready.removeAll { $0 === state }
                state.scheduled = false
            }
            if !state.ended {
                state.ended = true
                admitted -= 1
            }
            return queue.drained(dropped)
        }
        // On the loop's thread (cancel is its call): the pins can go now.
        for block in pinned { block.unpin() }
        if wake { queue.signal() }
    }

    /// Tests: hashes the next queued block on the calling thread, as a pool thread would
    /// (with threads that never run, a test decides every interleaving); false when none is.
    func hashNextBlock() -> Bool {
        pthread_mutex_lock(lock)
        guard !ready.isEmpty else {
            pthread_mutex_unlock(lock)
            return false
        }
        let wake = hashNext()
        pthread_mutex_unlock(lock)
        wake?.signal()
        return true
    }

    private func run() {
        var gated = beforeFirstBlock == nil
        pthread_mutex_lock(lock)
        while true {
            while ready.isEmpty { pthread_cond_wait(workReady, lock) }
            if !gated, let beforeFirstBlock {
                pthread_mutex_unlock(lock)
                beforeFirstBlock()
                gated = true
                pthread_mutex_lock(lock)
                continue
            }
            if let queue = hashNext() {
                // Outside the lock: the signal wakes a loop (libevent takes its own lock).
                pthread_mutex_unlock(lock)
                queue.signal()
                pthread_mutex_lock(lock)
            }
        }
    }

    /// Hashes the next block of the first ready part (the lock is held on entry and on return,
    /// not while hashing); the part goes back in line if it has more. Returns the queue to
    /// signal, if the block drained it below its low mark or was its ended part's last.
    private func hashNext() -> DigestQueue? {
        let state = ready.removeFirst()
        state.scheduled = false
        state.running = true
        let block = state.blocks.removeFirst()
        pthread_mutex_unlock(lock)
        block.hash()
        pthread_mutex_lock(lock)
        state.running = false
        guard let queue = state.queue else { return nil }
        var wake = queue.drained(block.count)
        if block.isShared {
            // Its pin goes back on the loop's thread; an abandoned part's loop may not come
            // back to the queue on its own, so it is woken for it.
            queue.hashed.append(block)
            if state.cancelled { wake = true }
        }
        if !state.blocks.isEmpty {
            scheduleIfReady(state)
        } else if state.ended, !state.cancelled {
            wake = true
        }
        return wake ? queue : nil
    }
}
