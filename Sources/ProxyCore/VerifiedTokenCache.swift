import Synchronization
import UploadRules

/// Tokens a route's `jwt:` verified recently, so that a client uploading many files with one
/// token pays for its signature once (Envoy's `jwt_authn` keeps such a cache too). Shared by
/// every worker; a reload builds a new one with the new keys.
///
/// An entry is the token's exact bytes and the identity it established, kept until the token
/// expires (`exp` + leeway): `nbf` and `iat` only grow truer as time passes, so expiry is the
/// one claim to check again. A different token, by one byte, misses. At most `capacity`
/// tokens of at most `maxTokenBytes` each are kept (16 shards, each a `Mutex` around a small
/// dictionary: a lookup holds one lock for a hash probe and a compare); a full shard forgets
/// an arbitrary entry.
final class VerifiedTokenCache: Sendable {
    struct Entry {
        let token: [UInt8]
        let identity: Identity
        /// Unix seconds from which the token is expired (`exp` + leeway); `nil`: never.
        let expiresAt: Int64?
    }

    static let shardCount = 16
    /// Tokens kept per route (all shards).
    static let capacity = 1_024
    /// Longer tokens are verified every time (bounds the memory: at most 2 MiB per route).
    static let maxTokenBytes = 2_048

    private final class Shard: Sendable {
        let entries = Mutex<[Int: Entry]>([:])
    }

    private let shards = (0..<VerifiedTokenCache.shardCount).map { _ in Shard() }

    /// The identity of a cached, unexpired token equal to `token`.
    func identity(for token: ArraySlice<UInt8>, now: Int64) -> Identity? {
        guard token.count <= Self.maxTokenBytes else { return nil }
        let key = Self.key(token)
        return shard(key).entries.withLock { entries in
            guard let entry = entries[key], entry.token.elementsEqual(token) else { return nil }
            if let expiresAt = entry.expiresAt, now >= expiresAt {
                entries[key] = nil
                return nil
            }
            return entry.identity
        }
    }

    /// Remembers a token that just verified.
    func store(_ token: ArraySlice<UInt8>, identity: Identity, expiresAt: Int64?) {
        guard token.count <= Self.maxTokenBytes else { return }
        let key = Self.key(token)
        let entry = Entry(token: Array(token), identity: identity, expiresAt: expiresAt)
        shard(key).entries.withLock { entries in
            if entries[key] == nil, entries.count >= Self.capacity / Self.shardCount {
                entries.remove(at: entries.startIndex)
            }
            entries[key] = entry
        }
    }

    /// Tokens kept now (for tests).
    var count: Int { shards.reduce(0) { $0 + $1.entries.withLock { $0.count } } }

    private static func key(_ token: ArraySlice<UInt8>) -> Int {
        var hasher = Hasher()
        token.withUnsafeBytes { hasher.combine(bytes: $0) }
        return hasher.finalize()
    }

    private func shard(_ key: Int) -> Shard {
        shards[Int(UInt(bitPattern: key) >> 60) & (Self.shardCount - 1)]
    }
}
