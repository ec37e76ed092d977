public import Resumable
public import SharedState
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The lock that keeps two replicas from writing (or deleting) one upload at once: `SET key
/// token NX PX ttl` with a random 128-bit token, renewed while its holder works
/// (compare-and-`PEXPIRE`), released by compare-and-`DEL` (Lua scripts, so a holder never
/// touches a lock another one took after its own expired).
///
/// The key is `{key_prefix}tus-lock:{id}`. Shared by the store's threads; each call borrows
/// one of a few blocking connections.
public final class RedisLock: Sendable {
    /// One holding of the lock.
    public final class Holding: @unchecked Sendable {
        public let id: UploadID
        let token: String
        /// When it was taken or last renewed (monotonic milliseconds).
        var renewedAt: Int64
        private let owner: RedisLock
        /// Renewals come from the holder's thread and from a delivery's keeper.
        private let renewing = Mutex(())

        init(id: UploadID, token: String, owner: RedisLock) {
            self.id = id
            self.token = token
            self.owner = owner
            renewedAt = RedisLock.now()
        }

        /// Renews the lock when a third of its time has passed (every call when `force`);
        /// `StoreError.locked` when it was lost (expired and taken, or deleted): the holder must
        /// write no more.
        public func renew(force: Bool = false) throws(StoreError) {
            try renewing.withLock { _ throws(StoreError) in try renewNow(force: force) }
        }

        private func renewNow(force: Bool) throws(StoreError) {
            let now = RedisLock.now()
            guard force || now - renewedAt >= owner.ttlMilliseconds / 3 else { return }
            // An expired lock may be someone else's already, even if Redis still has ours.
            guard now - renewedAt < owner.ttlMilliseconds else { throw .locked }
            let reply = try owner.run([
                "EVAL", RedisLock.renewScript, "1", owner.key(id), token, String(owner.ttlMilliseconds),
            ])
            guard case .integer(1) = reply else { throw .locked }
            renewedAt = now
        }

        /// Releases the lock if it is still this holding's (failures are left to the TTL).
        public func release() {
            _ = try? owner.run(["EVAL", RedisLock.releaseScript, "1", owner.key(id), token])
        }
    }

    private let current: Mutex<RedisSettings>
    var settings: RedisSettings { current.withLock { $0 } }
    /// How long a holding lasts without renewal.
    public let ttlMilliseconds: Int64
    private let idle = Mutex<[BlockingRedisConnection]>([])

    static let renewScript =
        "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end"
    static let releaseScript =
        "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"

    public init(settings: RedisSettings, ttlMilliseconds: Int64 = 30_000) {
        current = Mutex(settings)
        self.ttlMilliseconds = ttlMilliseconds
    }

    /// Connects with `settings` from now on (a reload: a rotated password); idle connections
    /// made with the old ones are dropped. The key prefix stays (locks held keep their keys).
    func rotate(to settings: RedisSettings) {
        var rotated = settings
        rotated.keyPrefix = self.settings.keyPrefix
        let changed = current.withLock { old in
            defer { old = rotated }
            return old != rotated
        }
        if changed { idle.withLock { $0.removeAll() } }
    }

    func key(_ id: UploadID) -> String { "\(settings.keyPrefix)tus-lock:\(id.hex)" }

    /// Takes the lock of `id`: `StoreError.locked` when someone holds it, `.io` when Redis
    /// cannot say.
    public func acquire(_ id: UploadID) throws(StoreError) -> Holding {
        var generator = SystemRandomNumberGenerator()
        let token = (0..<2).map { _ in hex64(generator.next()) }.joined()
        let reply = try run(["SET", key(id), token, "NX", "PX", String(ttlMilliseconds)])
        switch reply {
        case .simple("OK"): return Holding(id: id, token: token, owner: self)
        case .bulk(nil): throw .locked
        default: throw .io("redis SET NX: unexpected reply", 0)
        }
    }

    private func hex64(_ value: UInt64) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: 16 - text.count) + text
    }

    /// Runs one command on an idle connection (or a new one).
    func run(_ arguments: [String]) throws(StoreError) -> RESPValue {
        let settings = settings
        let connection =
            idle.withLock { $0.popLast() } ?? BlockingRedisConnection(settings: settings)
        let reply: RESPValue
        do throws(RedisFailure) {
            reply = try connection.command(arguments)
        } catch {
            throw .io(error.description, 0)
        }
        idle.withLock { if $0.count < 4 { $0.append(connection) } }
        if case .error(let message) = reply {
            throw .io("redis: \(message.prefix { $0 != " " }) error", 0)
        }
        return reply
    }

    static func now() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
