import CCrypto
public import HTTP1
import Synchronization

/// The allowing answers of one route's auth service (`cache_ttl`), shared by every worker of
/// the process: an answer is reused for `ttl` milliseconds for requests carrying the same
/// credential, so that the service is asked once for many requests.
///
/// The key is the SHA-256 of the forwarded headers' values (`forward_headers`, by default
/// `Authorization` and `Cookie`), each with its name and length: the credential itself is
/// never kept. A request with none of those headers is not cached (the service decided on
/// something else: the address, the path). The cache assumes the service's answer depends on
/// the credential only, not on the method or path: where it does not, leave `cache_ttl` at 0.
/// Only `.allowed` answers are stored; a denial or a failure asks again next time.
///
/// Like `ClientLimiter`, the table is sharded (16 shards, each a `Mutex` around a dictionary)
/// so a lookup holds a lock for one hash lookup; the hash is computed before. At most
/// `maxEntries` answers are kept: a full shard forgets an arbitrary entry (a cache may), and
/// an expired entry is removed when it is next looked up.
public final class AuthCache: Sendable {
    /// A credential's digest (SHA-256, as four words).
    public struct Key: Hashable, Sendable {
        let words: (UInt64, UInt64, UInt64, UInt64)

        public static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.words == rhs.words
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(words.0)
            hasher.combine(words.1)
            hasher.combine(words.2)
            hasher.combine(words.3)
        }
    }

    private struct Entry {
        let identity: [AuthServiceVerdict.Header]
        let expires: Int64
    }

    private final class Shard: Sendable {
        let entries = Mutex<[Key: Entry]>([:])
    }

    static let shardCount = 16
    /// The most answers kept by default.
    public static let defaultMaxEntries = 16_384

    /// How long an answer is reused, in milliseconds.
    let ttl: Int64
    private let perShard: Int
    private let shards: [Shard]

    /// A cache keeping answers for `ttl` milliseconds (more than 0), at most `maxEntries`.
    public init(ttl: Int64, maxEntries: Int = AuthCache.defaultMaxEntries) {
        precondition(ttl > 0, "a cache needs a positive TTL")
        self.ttl = ttl
        perShard = max(1, maxEntries / Self.shardCount)
        shards = (0..<Self.shardCount).map { _ in Shard() }
    }

    /// The key of `request`'s credential: its `forwardHeaders` fields (every occurrence, in the
    /// configured order), or `nil` when it carries none of them.
    public static func key(for request: RequestHead, forwardHeaders: [String]) -> Key? {
        var material: [UInt8] = []
        for (index, name) in forwardHeaders.enumerated() {
            for field in request.headers where field.nameString.lowercased() == name.lowercased() {
                // Header index and value length first: values cannot run into each other.
                material.append(UInt8(truncatingIfNeeded: index))
                withUnsafeBytes(of: UInt32(truncatingIfNeeded: field.value.count).bigEndian) {
                    material.append(contentsOf: $0)
                }
                material.append(contentsOf: field.value)
            }
        }
        guard !material.isEmpty else { return nil }
        return Key(words: sha256Words(material))
    }

    /// The identity of a fresh allowing answer for `key`, or `nil`.
    public func lookup(_ key: Key, now: Int64) -> [AuthServiceVerdict.Header]? {
        shard(of: key).entries.withLock { entries in
            guard let entry = entries[key] else { return nil }
            guard now < entry.expires else {
                entries[key] = nil
                return nil
            }
            return entry.identity
        }
    }

    /// Keeps `verdict` for `ttl` from `now` when it allows (a denial or a failure is never
    /// kept: the service is asked again next time).
    public func remember(_ verdict: AuthServiceVerdict, for key: Key, now: Int64) {
        guard case .allowed(let identity) = verdict else { return }
        store(key, identity: identity, now: now)
    }

    /// Keeps an allowing answer for `ttl` from `now`.
    public func store(_ key: Key, identity: [AuthServiceVerdict.Header], now: Int64) {
        let entry = Entry(identity: identity, expires: now + ttl)
        shard(of: key).entries.withLock { entries in
            if entries[key] == nil, entries.count >= perShard { entries.remove(at: entries.startIndex) }
            entries[key] = entry
        }
    }

    /// Answers kept now (every shard's lock in turn: for tests and metrics).
    public var count: Int {
        shards.reduce(0) { total, shard in total + shard.entries.withLock { $0.count } }
    }

    private func shard(of key: Key) -> Shard {
        shards[Int(key.words.0 % UInt64(Self.shardCount))]
    }

    private static func sha256Words(_ bytes: [UInt8]) -> (UInt64, UInt64, UInt64, UInt64) {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBytes { input in
            digest.withUnsafeMutableBytes { output in
                EVP_Digest(
                    input.baseAddress, input.count, output.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    &length, EVP_sha256(), nil)
            }
        }
        // EVP_Digest fails only when OpenSSL cannot allocate: as with any allocation, stop.
        precondition(ok == 1 && length == 32, "EVP_Digest(SHA-256) failed")
        func word(_ at: Int) -> UInt64 {
            digest[at..<(at + 8)].reduce(0) { $0 << 8 | UInt64($1) }
        }
        return (word(0), word(8), word(16), word(24))
    }
}
