/// A route's per-client limits (`rate_limit:`); each is off when `nil`.
public struct RateLimit: Sendable, Equatable {
    /// `requests_per_second`: the token bucket's refill rate.
    public var requestsPerSecond: Double?
    /// `burst`: the bucket's size; `nil` takes `defaultBurst`.
    public var burst: Int?
    /// `bytes_per_minute`: upload bytes a client may send per minute.
    public var bytesPerMinute: Int64?
    /// `concurrent`: requests of one client in progress at once.
    public var concurrent: Int?

    public init(
        requestsPerSecond: Double? = nil, burst: Int? = nil, bytesPerMinute: Int64? = nil,
        concurrent: Int? = nil
    ) {
        self.requestsPerSecond = requestsPerSecond
        self.burst = burst
        self.bytesPerMinute = bytesPerMinute
        self.concurrent = concurrent
    }

    /// The bucket size in effect: `burst`, else the rate rounded up, at least 1 (a rate of 5
    /// lets a quiet client send 5 at once; a rate of 0.5 lets it send 1).
    public var effectiveBurst: Int {
        if let burst { return burst }
        guard let requestsPerSecond else { return 1 }
        return max(1, Int(requestsPerSecond.rounded(.up)))
    }

    /// Whether no limit is set (the route needs no limiter).
    public var isUnlimited: Bool {
        requestsPerSecond == nil && bytesPerMinute == nil && concurrent == nil
    }

    /// What is wrong with the values, for the configuration's error (`nil` when they are
    /// usable): every value set must be positive, and `burst` needs `requests_per_second`.
    public var problem: String? {
        if let requestsPerSecond, !(requestsPerSecond > 0 && requestsPerSecond.isFinite) {
            return "requests_per_second must be a positive number"
        }
        if let burst {
            if burst < 1 { return "burst must be at least 1" }
            if requestsPerSecond == nil { return "burst needs requests_per_second" }
        }
        if let bytesPerMinute, bytesPerMinute < 1 { return "bytes_per_minute must be positive" }
        if let concurrent, concurrent < 1 { return "concurrent must be at least 1" }
        return nil
    }
}
