/// A token bucket: `burst` tokens at most, refilled continuously at `ratePerSecond`; each
/// request takes one. Time is passed in (milliseconds of a monotonic clock), so a test drives
/// it with a fake clock.
///
/// A clock reading older than the last one (two worker threads read the clock, then take the
/// shard lock in the other order) refills nothing and does not move the bucket's time back.
public struct TokenBucket: Sendable, Equatable {
    /// Tokens added per second.
    public let ratePerSecond: Double
    /// The most tokens the bucket holds (the requests a quiet client may send at once).
    public let burst: Int
    /// Tokens held at `updated` (fractional between refills).
    public private(set) var tokens: Double
    /// When `tokens` was last brought up to date, in milliseconds.
    public private(set) var updated: Int64

    /// A full bucket at `now`.
    ///
    /// - Precondition: `ratePerSecond > 0` and `burst >= 1` (the configuration checks both).
    public init(ratePerSecond: Double, burst: Int, now: Int64) {
        precondition(ratePerSecond > 0 && ratePerSecond.isFinite, "a token bucket needs a positive rate")
        precondition(burst >= 1, "a token bucket holds at least one token")
        self.ratePerSecond = ratePerSecond
        self.burst = burst
        self.tokens = Double(burst)
        self.updated = now
    }

    /// Takes a token if one is there.
    ///
    /// - Returns: whether the request may go (`false` takes nothing).
    public mutating func take(now: Int64) -> Bool {
        refill(now: now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// The whole seconds, rounded up and at least 1, until a token is there: a refused
    /// request's `Retry-After`.
    public func retryAfterSeconds(now: Int64) -> Int {
        let missing = 1 - level(now: now)
        guard missing > 0 else { return 1 }
        return max(1, Int((missing / ratePerSecond).rounded(.up)))
    }

    /// Whether the bucket is full at `now` (its state says nothing a new bucket would not).
    public func isFull(now: Int64) -> Bool {
        level(now: now) >= Double(burst)
    }

    /// The tokens the bucket holds at `now`, without changing it.
    public func level(now: Int64) -> Double {
        let elapsed = max(0, now - updated)
        return min(Double(burst), tokens + Double(elapsed) * ratePerSecond / 1000)
    }

    private mutating func refill(now: Int64) {
        tokens = level(now: now)
        updated = max(updated, now)
    }
}
