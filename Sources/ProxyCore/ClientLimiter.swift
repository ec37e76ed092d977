import Synchronization

/// A route's per-client limits, shared by every worker thread of the process: one per route
/// with a `rate_limit:`, built at configuration load and kept for the route's life.
///
/// **Locking.** The table is split into `shardCount` shards, each a `Mutex` around a small
/// dictionary, chosen by the key's hash: workers admitting different clients rarely meet on
/// the same lock, and a worker never waits long when they do, because a critical section is a
/// hash lookup and a few floating-point operations (refill, compare, subtract). Nothing under
/// a lock does I/O, logs or calls out; the key is built by the caller before the lock is
/// taken. The one longer section is a sweep of a full shard (below), bounded by
/// `clientsPerShard` entries and rate-limited.
///
/// **Memory.** At most `maxClients` clients are tracked, `clientsPerShard` per shard, whatever
/// the configuration. A new client arriving at a full shard first sweeps it: entries that are
/// idle (no request in progress, every bucket refilled) are forgotten, since a new entry would
/// decide the same. When the sweep frees fewer than an eighth of the shard, the next sweep
/// waits a second (a shard of active clients is not rescanned for every newcomer).
///
/// **A full table admits newcomers without state.** When no entry can be forgotten, a new
/// client is decided as a new entry would be (its first request passes, unless it declares
/// more bytes than `bytes_per_minute`) and is not remembered; `untrackedAdmissions` counts
/// these. Refusing every new client instead would let whoever fills the table (many addresses,
/// or many identities) lock everyone else out; the clients already tracked, those that have
/// used their limits, stay limited. An attacker who can rotate addresses escapes a per-address
/// limit either way.
///
/// Time is the caller's monotonic clock in milliseconds (`now:`); a reading slightly older
/// than another thread's refills nothing and is otherwise harmless.
public final class ClientLimiter: Sendable {
    /// An admitted request's claim on its client's state, for `end`.
    public struct Ticket: Sendable, Equatable {
        /// The client, or `nil` when it was admitted without state (a full table).
        let key: ClientKey?
        let shard: Int
        /// Bytes reserved from the budget at admission (the declared `Content-Length`).
        let reservedBytes: Int64

        /// Whether the client's state is tracked (false when the table was full).
        public var isTracked: Bool { key != nil }
    }

    /// The shards of the table (a power of two).
    public static let shardCount = 64
    /// The most clients tracked at once, whatever the configuration.
    public static let maxClients = 65_536
    /// The most clients one shard tracks.
    public static let clientsPerShard = maxClients / shardCount

    /// The limits every client gets.
    public let limit: RateLimit
    private let shards: [LimiterShard]
    private let capacity: Int

    /// A limiter applying `limit` to each client.
    ///
    /// - Parameter clientsPerShard: the bound per shard (tests lower it to reach it).
    /// - Precondition: `limit.problem == nil` (the configuration checks it).
    public init(limit: RateLimit, clientsPerShard: Int = ClientLimiter.clientsPerShard) {
        precondition(limit.problem == nil, "invalid rate limit: \(limit.problem ?? "")")
        precondition(clientsPerShard >= 1, "a shard tracks at least one client")
        self.limit = limit
        self.capacity = clientsPerShard
        self.shards = (0..<Self.shardCount).map { _ in LimiterShard() }
    }

    /// Decides a request from its head.
    ///
    /// - Parameters:
    ///   - key: the identity when the request is authenticated, else the client's address.
    ///   - declaredBytes: the request's `Content-Length`, `nil` when it has none (chunked);
    ///     a request without a body declares 0.
    /// - Returns: `.admitted` (call `end` exactly once when the request ends, whatever its
    ///   outcome), or `.limited` with the limit and the `Retry-After` seconds.
    public func admit(key: ClientKey, declaredBytes: Int64?, now: Int64) -> Admission {
        let index = Self.shardIndex(of: key)
        let outcome = shards[index].state.withLock { shard in
            shard.admit(key, declared: declaredBytes, limit: limit, capacity: capacity, now: now)
        }
        switch outcome {
        case .tracked(let reserved):
            return .admitted(Ticket(key: key, shard: index, reservedBytes: reserved))
        case .untracked:
            return .admitted(Ticket(key: nil, shard: index, reservedBytes: 0))
        case .refused(let refusal):
            return .limited(refusal.kind, retryAfterSeconds: refusal.retryAfterSeconds)
        }
    }

    /// Ends an admitted request: frees its concurrent slot and charges `bytes` (the body bytes
    /// actually read) to its client's budget in place of the reservation.
    public func end(_ ticket: Ticket, bytes: Int64, now: Int64) {
        guard let key = ticket.key else { return }
        shards[ticket.shard].state.withLock { shard in
            shard.end(key, reserved: ticket.reservedBytes, read: bytes, now: now)
        }
    }

    /// Ends an admitted request found by its key instead of its ticket (for a `RequestCheck`,
    /// which keeps no ticket): `key` and `declaredBytes` must be those given to `admit`.
    ///
    /// The one difference from `end(_:bytes:now:)`: a request admitted without state (a full
    /// table) whose key has been tracked since is ended against that entry, freeing a slot
    /// another request of the same client holds. That needs a full table and the same client
    /// both untracked and tracked at once; the slot count is never made negative.
    public func end(key: ClientKey, declaredBytes: Int64?, bytes: Int64, now: Int64) {
        let reserved = limit.bytesPerMinute == nil ? 0 : max(0, declaredBytes ?? 0)
        let ticket = Ticket(key: key, shard: Self.shardIndex(of: key), reservedBytes: reserved)
        end(ticket, bytes: bytes, now: now)
    }

    /// The clients tracked now (takes every shard's lock in turn: for tests and metrics).
    public var trackedClients: Int {
        shards.reduce(0) { total, shard in total + shard.state.withLock { $0.entries.count } }
    }

    /// Requests admitted without state because their shard was full (since the start).
    public var untrackedAdmissions: Int {
        shards.reduce(0) { total, shard in total + shard.state.withLock { $0.untracked } }
    }

    /// The shard of `key`, from the top bits of its hash (the dictionary inside uses the
    /// same hash; its low bits pick the bucket).
    static func shardIndex(of key: ClientKey) -> Int {
        var hasher = Hasher()
        hasher.combine(key)
        let hash = UInt64(UInt(bitPattern: hasher.finalize()))
        return Int(hash >> UInt64(64 - shardCount.trailingZeroBitCount))
    }
}
