import HTTPCore
public import SharedState

/// A route's `rate_limit:` with `shared: true`: the same limits, decided in Redis for every
/// replica at once by one script per request (`SharedLimitScripts`), keyed by route and client.
///
/// Pure: it builds the script's keys and arguments and reads its reply; the shell sends them
/// (the worker's Redis connection) and reports the outcome as a verdict. When Redis cannot
/// decide, `onError` says what happens: the route's own per-process limiter (`local`), a pass
/// (`allow`) or 503 (`deny`).
///
/// **Keys.** `{prefix}rl:{<route>.<client>}:r|c|b` with the route's name and the client's key
/// hex-encoded (an identity's `:`, `*`, braces or line breaks never reach the key's structure,
/// and an identity named like an address is a different key: `i` and `a` lead them). A client
/// key over 64 bytes is replaced by its SHA-256. The braces are a Redis Cluster hash tag: the
/// three keys of one decision live on one shard.
public struct SharedRateLimit: Sendable, Equatable {
    /// The limits (the same `RateLimit` the local limiter applies).
    public var limit: RateLimit
    /// The route's name, in the keys.
    public var route: String
    public var keyPrefix: String
    public var onError: RedisFailurePolicy
    /// How long a request's concurrency lease lives unless renewed (a replica that dies frees
    /// its slots within this time).
    public var leaseMilliseconds: Int64
    /// The verdict's deadline (Redis's `timeout`, plus a margin: the client fails the command
    /// first).
    public var timeoutMilliseconds: Int64

    public init(
        limit: RateLimit, route: String, keyPrefix: String, onError: RedisFailurePolicy,
        leaseMilliseconds: Int64 = 30_000, timeoutMilliseconds: Int64 = 50
    ) {
        self.limit = limit
        self.route = route
        self.keyPrefix = keyPrefix
        self.onError = onError
        self.leaseMilliseconds = leaseMilliseconds
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    /// The three keys of `client`'s state: the request bucket's theoretical arrival time, the
    /// concurrency leases, the byte budget.
    public func keys(for client: ClientKey) -> [[UInt8]] {
        var tag = Array(keyPrefix.utf8)
        tag += Array("rl:{".utf8)
        tag += Self.component(Array(route.utf8), lead: UInt8(ascii: "r"))
        tag.append(UInt8(ascii: "."))
        switch client {
        case .identity(let name): tag += Self.component(Array(name.utf8), lead: UInt8(ascii: "i"))
        case .address(let bytes): tag += Self.component(bytes, lead: UInt8(ascii: "a"))
        }
        tag += Array("}:".utf8)
        return [tag + [UInt8(ascii: "r")], tag + [UInt8(ascii: "c")], tag + [UInt8(ascii: "b")]]
    }

    /// `EVALSHA` of the decision script: `nonce` comes back in the reply (a reply to another
    /// command is recognised), `lease` names the request's concurrency slot.
    public func decide(
        client: ClientKey, declaredBytes: Int64?, nonce: String, lease: String,
        script: SharedLimitScripts.Script
    ) -> [[UInt8]] {
        let interval = limit.requestsPerSecond.map { 1000 / $0 } ?? 0
        let arguments: [String] = [
            nonce, Self.decimal(interval), String(limit.effectiveBurst), String(limit.concurrent ?? 0), lease,
            String(leaseMilliseconds), String(limit.bytesPerMinute ?? 0), String(declaredBytes ?? -1),
        ]
        return script.evalsha(keys: keys(for: client), arguments: arguments)
    }

    /// `EVALSHA` of the end script: frees `lease` (when `concurrent` is set) and charges the
    /// bytes read in place of the reservation (when `bytes_per_minute` is set). `nil` when the
    /// route has neither (nothing to end).
    public func end(
        client: ClientKey, lease: String, reservedBytes: Int64, readBytes: Int64, nonce: String,
        script: SharedLimitScripts.Script
    ) -> [[UInt8]]? {
        guard limit.concurrent != nil || limit.bytesPerMinute != nil else { return nil }
        let keys = keys(for: client)
        let arguments: [String] = [
            nonce, limit.concurrent == nil ? "" : lease, String(limit.bytesPerMinute ?? 0),
            String(reservedBytes - max(0, readBytes)),
        ]
        return script.evalsha(keys: [keys[1], keys[2]], arguments: arguments)
    }

    /// The lease set key of `client` (renewals name it).
    public func leaseKey(for client: ClientKey) -> [UInt8] { keys(for: client)[1] }

    /// What the decision script answered.
    public enum Outcome: Sendable, Equatable {
        /// Admitted; `reservedBytes` were taken from the byte budget.
        case admitted(reservedBytes: Int64)
        /// Over a limit: 429 with `Retry-After`.
        case limited(LimitKind, retryAfterSeconds: Int)
    }

    /// Reads the decision script's reply: `[nonce, "ok" | limit kind, milliseconds]`. Anything
    /// else (an error reply, another nonce, a wrong shape) is `nil`: Redis did not decide.
    public func outcome(of reply: RESPValue, nonce: String, declaredBytes: Int64?) -> Outcome? {
        guard case .array(let items?) = reply, items.count == 3,
            case .bulk(let echoed?) = items[0], echoed.elementsEqual(nonce.utf8),
            case .bulk(let result?) = items[1], case .integer(let milliseconds) = items[2], milliseconds >= 0
        else { return nil }
        let text = String(decoding: result, as: UTF8.self)
        if text == "ok" {
            return .admitted(reservedBytes: limit.bytesPerMinute == nil ? 0 : max(0, declaredBytes ?? 0))
        }
        guard let kind = LimitKind(rawValue: text) else { return nil }
        let seconds = max(1, Int((milliseconds + 999) / 1000))
        return .limited(kind, retryAfterSeconds: min(seconds, 86_400))
    }

    /// A key component: `lead` and the bytes in lower-case hex, or `lead`, `h` and the SHA-256
    /// of a long one.
    static func component(_ bytes: [UInt8], lead: UInt8) -> [UInt8] {
        guard bytes.count <= 64 else {
            return [lead, UInt8(ascii: "h")]
                + Array(Hex.encode(SharedLimitScripts.digest(bytes, sha1: false)).utf8)
        }
        return [lead] + Array(Hex.encode(bytes).utf8)
    }

    /// `value` with three decimals (Lua reads it with `tonumber`).
    static func decimal(_ value: Double) -> String {
        let thousandths = Int64((value * 1000).rounded())
        let whole = thousandths / 1000
        let fraction = thousandths % 1000
        let digits = String(fraction)
        return "\(whole)." + String(repeating: "0", count: 3 - digits.count) + digits
    }
}

extension Refusal {
    /// A `rate_limit:` refusal: 429, naming the limit, with `Retry-After` (the local limiter's
    /// and the shared one's are the same).
    public static func rateLimited(_ kind: LimitKind, retryAfterSeconds seconds: Int) -> Refusal {
        Refusal(
            status: 429, reason: "rate_limit: over the route's \(kind.configKey) per client",
            fields: [.init("Retry-After", String(seconds))], tally: .rateLimited(limit: kind.rawValue))
    }

    /// `redis.on_error: deny`: Redis did not decide the shared limit.
    public static let sharedLimitUndecided = Refusal(
        status: 503, reason: "rate_limit: the shared limit could not be decided (Redis unavailable)")
}
