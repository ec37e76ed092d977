/// Upload bytes per minute for one client: a bucket of `bytesPerMinute` bytes refilled
/// continuously (the whole capacity in 60 s). Time is passed in (milliseconds).
///
/// Admission looks at the request's head only. A declared `Content-Length` must fit in what
/// is left and is reserved at once, so that uploads admitted together cannot each spend the
/// same budget; a request without a length (chunked) is admitted while the bucket is not
/// empty and reserves nothing. When the request ends, `settle` charges the bytes actually read
/// in place of the reservation: the level may go below zero (a chunked upload larger than
/// what was left), and later requests then wait until it has refilled.
public struct ByteBudget: Sendable, Equatable {
    /// The bucket's capacity and its refill per minute.
    public let bytesPerMinute: Int64
    /// Bytes left at `updated` (fractional between refills; negative after an overdraft).
    public private(set) var available: Double
    /// When `available` was last brought up to date, in milliseconds.
    public private(set) var updated: Int64

    /// A full budget at `now`.
    ///
    /// - Precondition: `bytesPerMinute >= 1` (the configuration checks it).
    public init(bytesPerMinute: Int64, now: Int64) {
        precondition(bytesPerMinute >= 1, "a byte budget needs a positive capacity")
        self.bytesPerMinute = bytesPerMinute
        self.available = Double(bytesPerMinute)
        self.updated = now
    }

    /// Whether a request declaring `declared` bytes (`nil`: no length) may start now.
    public func admits(declared: Int64?, now: Int64) -> Bool {
        let level = level(now: now)
        guard let declared else { return level > 0 }
        return Double(declared) <= level
    }

    /// Reserves a declared length (call after `admits` said yes; `nil` reserves nothing).
    ///
    /// - Returns: the bytes reserved, to pass to `settle`.
    public mutating func reserve(declared: Int64?, now: Int64) -> Int64 {
        refill(now: now)
        let reserved = max(0, declared ?? 0)
        available -= Double(reserved)
        return reserved
    }

    /// Charges the bytes a request actually read, giving back what it reserved.
    public mutating func settle(reserved: Int64, read: Int64, now: Int64) {
        refill(now: now)
        available += Double(reserved) - Double(max(0, read))
    }

    /// The whole seconds, rounded up and at least 1, until a request declaring `declared`
    /// bytes (`nil`: no length, so one byte) would be admitted. A length over the capacity is
    /// never admitted: its answer is 60 (the budget's whole period), so that such a client is
    /// not told to retry every second.
    public func retryAfterSeconds(declared: Int64?, now: Int64) -> Int {
        if let declared, declared > bytesPerMinute { return 60 }
        let needed = declared.map(Double.init) ?? 1
        let missing = needed - level(now: now)
        guard missing > 0 else { return 1 }
        let milliseconds = missing * 60_000 / Double(bytesPerMinute)
        return max(1, Int((milliseconds / 1000).rounded(.up)))
    }

    /// Whether the budget is full at `now` (its state says nothing a new budget would not).
    public func isFull(now: Int64) -> Bool {
        level(now: now) >= Double(bytesPerMinute)
    }

    /// The bytes left at `now`, without changing the budget.
    public func level(now: Int64) -> Double {
        let elapsed = max(0, now - updated)
        let capacity = Double(bytesPerMinute)
        return min(capacity, available + Double(elapsed) * capacity / 60_000)
    }

    private mutating func refill(now: Int64) {
        available = level(now: now)
        updated = max(updated, now)
    }
}
