/// One client's state under a `RateLimit`: its token bucket, its byte budget and its requests
/// in progress (each limit only when set).
struct ClientLimits: Sendable {
    var requests: TokenBucket?
    var bytes: ByteBudget?
    /// Admitted requests not yet ended (counted whether or not `concurrent` is set, so that
    /// an entry with a reservation outstanding is never evicted).
    var active = 0

    /// A new client's state at `now`: every bucket full.
    init(_ limit: RateLimit, now: Int64) {
        if let rate = limit.requestsPerSecond {
            requests = TokenBucket(ratePerSecond: rate, burst: limit.effectiveBurst, now: now)
        }
        if let bytesPerMinute = limit.bytesPerMinute {
            bytes = ByteBudget(bytesPerMinute: bytesPerMinute, now: now)
        }
    }

    /// Decides a request, then takes its token, its slot and its reservation; a refusal takes
    /// nothing. The checks run in a fixed order (requests, concurrent, bytes), and the first
    /// that fails names the limit.
    ///
    /// - Returns: the bytes reserved, or the limit and its `Retry-After`.
    mutating func admit(declared: Int64?, concurrent: Int?, now: Int64)
        -> Result<Int64, Refusal>
    {
        if let requests, requests.level(now: now) < 1 {
            return .failure(Refusal(kind: .requests, retryAfterSeconds: requests.retryAfterSeconds(now: now)))
        }
        if let concurrent, active >= concurrent {
            // Nothing says when a slot frees: the client may try again in a second.
            return .failure(Refusal(kind: .concurrent, retryAfterSeconds: 1))
        }
        if let bytes, !bytes.admits(declared: declared, now: now) {
            let wait = bytes.retryAfterSeconds(declared: declared, now: now)
            return .failure(Refusal(kind: .bytes, retryAfterSeconds: wait))
        }
        _ = requests?.take(now: now)  // true: the level was checked above
        active += 1
        return .success(bytes?.reserve(declared: declared, now: now) ?? 0)
    }

    /// Ends a request: frees its slot and charges the bytes it read.
    mutating func end(reserved: Int64, read: Int64, now: Int64) {
        active = max(0, active - 1)
        bytes?.settle(reserved: reserved, read: read, now: now)
    }

    /// Whether forgetting this client changes nothing: no request in progress and every
    /// bucket full, so a new entry would decide the same.
    func isIdle(now: Int64) -> Bool {
        active == 0 && (requests?.isFull(now: now) ?? true) && (bytes?.isFull(now: now) ?? true)
    }

    /// A refused request's limit and wait.
    struct Refusal: Error, Equatable {
        let kind: LimitKind
        let retryAfterSeconds: Int
    }
}
