import CCrypto
import CZlib
import HTTPCore

#if canImport(Glibc)
    import Glibc
#endif

/// A digest algorithm of the `digest:` rule.
public enum DigestAlgorithm: String, Sendable, CaseIterable {
    case sha256, sha1, md5, crc32, size
}

/// Computes the configured digests of one part as its bytes stream by.
///
/// The first `offloadThreshold` bytes are hashed inline. Past that (a large file), the bytes
/// are copied in 256 KiB blocks to `DigestPool`'s threads, so that hashing overlaps with
/// reading, parsing and forwarding instead of adding to them (SHA-256 runs at about 1.3 GB/s
/// here, as fast as the proxy moves bytes). `finish()` waits for the blocks still queued.
final class PartDigests {
    private let state: DigestState
    private let offloadThreshold: Int64
    private let pool: DigestPool
    private var pending: [UInt8] = []
    private var offloaded = false
    /// The pool was busy when the part grew large: it is hashed inline to the end.
    private var inline = false

    static let blockSize = 256 * 1024

    init(_ algorithms: [DigestAlgorithm], offloadThreshold: Int64 = 1 << 20, pool: DigestPool = .shared) {
        self.state = DigestState(algorithms)
        self.offloadThreshold = offloadThreshold
        self.pool = pool
    }

    deinit {
        // An abandoned part: the pool drops what is still queued for it.
        if offloaded { pool.cancel(state) }
    }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        if !offloaded {
            if inline || state.size + Int64(bytes.count) <= offloadThreshold {
                return state.update(bytes)
            }
            guard pool.admit() else {
                inline = true
                return state.update(bytes)
            }
            offloaded = true
        }
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
        guard !pending.isEmpty else { return }
        pool.submit(pending, to: state)
        pending = []
    }

    /// The results, in the configured order: hex for hashes, decimal for crc32 and size.
    func finish() -> [(DigestAlgorithm, String)] {
        if offloaded {
            submitPending()
            pool.wait(for: state)
            pool.leave()
            offloaded = false
        }
        return state.finish()
    }
}

/// The running digests of one part. Used by one thread at a time: the worker's while the
/// part is small, then a pool thread per queued block (the pool's lock orders the hand-offs).
final class DigestState: @unchecked Sendable {
    private var contexts: [(DigestAlgorithm, OpaquePointer)] = []
    private var crc: UInt = 0
    private let hasCRC: Bool
    private(set) var size: Int64 = 0
    let algorithms: [DigestAlgorithm]
    // The pool's bookkeeping, under its lock.
    var blocks: [[UInt8]] = []
    var running = false
    var scheduled = false

    init(_ algorithms: [DigestAlgorithm]) {
        self.algorithms = algorithms
        hasCRC = algorithms.contains(.crc32)
        for algorithm in algorithms {
            let method: OpaquePointer?
            switch algorithm {
            case .sha256: method = EVP_sha256()
            case .sha1: method = EVP_sha1()
            case .md5: method = EVP_md5()
            case .crc32, .size: method = nil
            }
            if let method, let context = EVP_MD_CTX_new() {
                EVP_DigestInit_ex(context, method, nil)
                contexts.append((algorithm, context))
            }
        }
        crc = crc32(0, nil, 0)
    }

    deinit {
        for (_, context) in contexts { EVP_MD_CTX_free(context) }
    }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        size += Int64(bytes.count)
        for (_, context) in contexts { EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) }
        if hasCRC {
            crc = crc32(crc, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt32(bytes.count))
        }
    }

    func finish() -> [(DigestAlgorithm, String)] {
        algorithms.map { algorithm in
            switch algorithm {
            case .size:
                return (algorithm, "\(size)")
            case .crc32:
                return (algorithm, "\(crc)")
            default:
                let context = contexts.first { $0.0 == algorithm }!.1
                var digest = [UInt8](repeating: 0, count: 64)
                var length: UInt32 = 0
                EVP_DigestFinal_ex(context, &digest, &length)
                return (algorithm, Hex.encode(digest.prefix(Int(length))))
            }
        }
    }
}

/// Threads that hash the blocks of large parts, one block at a time per part and in order.
/// At most `maxQueuedBytes` wait in all: a worker that gets ahead waits in `submit`, which is
/// the backpressure (memory stays bounded, hashing sets the pace as it would inline). At
/// most one part per thread is admitted at a time: with many large uploads at once the
/// workers are busy anyway, and the rest hash inline rather than pay for copies and hand-offs.
final class DigestPool: @unchecked Sendable {
    static let shared = DigestPool(threads: max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))

    let maxQueuedBytes = 4 << 20
    let threads: Int
    private var admitted = 0
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let workReady = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let progress = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var ready: [DigestState] = []
    private var queuedBytes = 0

    init(threads: Int) {
        self.threads = threads
        pthread_mutex_init(lock, nil)
        pthread_cond_init(workReady, nil)
        pthread_cond_init(progress, nil)
        for _ in 0..<threads {
            var thread = pthread_t()
            let context = Unmanaged.passRetained(self).toOpaque()
            pthread_create(
                &thread, nil,
                { context in
                    Unmanaged<DigestPool>.fromOpaque(context!).takeRetainedValue().run()
                    return nil
                }, context)
            pthread_detach(thread)
        }
    }

    /// Takes a part if fewer than `threads` are offloaded now.
    func admit() -> Bool {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        guard admitted < threads else { return false }
        admitted += 1
        return true
    }

    /// An admitted part is finished or abandoned.
    func leave() {
        pthread_mutex_lock(lock)
        admitted -= 1
        pthread_mutex_unlock(lock)
    }

    /// Queues `block` for `state`, waiting while the pool holds `maxQueuedBytes`.
    func submit(_ block: [UInt8], to state: DigestState) {
        pthread_mutex_lock(lock)
        while queuedBytes >= maxQueuedBytes { pthread_cond_wait(progress, lock) }
        state.blocks.append(block)
        queuedBytes += block.count
        if !state.running, !state.scheduled {
            state.scheduled = true
            ready.append(state)
            pthread_cond_signal(workReady)
        }
        pthread_mutex_unlock(lock)
    }

    /// Waits until every block queued for `state` is hashed.
    func wait(for state: DigestState) {
        pthread_mutex_lock(lock)
        while !state.blocks.isEmpty || state.running { pthread_cond_wait(progress, lock) }
        pthread_mutex_unlock(lock)
    }

    /// Drops what is still queued for `state` (its part was abandoned); the part leaves.
    func cancel(_ state: DigestState) {
        pthread_mutex_lock(lock)
        queuedBytes -= state.blocks.reduce(0) { $0 + $1.count }
        state.blocks.removeAll()
        admitted -= 1
        pthread_cond_broadcast(progress)
        pthread_mutex_unlock(lock)
    }

    private func run() {
        pthread_mutex_lock(lock)
        while true {
            while ready.isEmpty { pthread_cond_wait(workReady, lock) }
            let state = ready.removeFirst()
            state.scheduled = false
            state.running = true
            while !state.blocks.isEmpty {
                let block = state.blocks.removeFirst()
                pthread_mutex_unlock(lock)
                block.withUnsafeBytes { state.update($0) }
                pthread_mutex_lock(lock)
                queuedBytes -= block.count
                pthread_cond_broadcast(progress)
            }
            state.running = false
            pthread_cond_broadcast(progress)
        }
    }
}
