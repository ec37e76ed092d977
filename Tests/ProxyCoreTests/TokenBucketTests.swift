import Testing

@testable import ProxyCore

/// The request token bucket, on a fake millisecond clock.
@Suite struct TokenBucketTests {
    @Test func aFullBucketLetsTheBurstThroughThenRefuses() {
        var bucket = TokenBucket(ratePerSecond: 5, burst: 20, now: 0)
        for _ in 0..<20 { #expect(take(&bucket, now: 0)) }
        #expect(!take(&bucket, now: 0))
        #expect(!take(&bucket, now: 199))  // 199 ms at 5/s: 0.995 of a token
        #expect(take(&bucket, now: 200))
        #expect(!take(&bucket, now: 200))
    }

    @Test func refillStopsAtTheBurst() {
        var bucket = TokenBucket(ratePerSecond: 10, burst: 3, now: 0)
        for _ in 0..<3 { #expect(take(&bucket, now: 0)) }
        // An hour later the bucket holds 3, not 36,000.
        for _ in 0..<3 { #expect(take(&bucket, now: 3_600_000)) }
        #expect(!take(&bucket, now: 3_600_000))
        #expect(!bucket.isFull(now: 3_600_000))
        #expect(bucket.isFull(now: 3_600_300))
    }

    @Test(arguments: [
        // (rate per second, ms since the bucket emptied, expected Retry-After)
        (5.0, 0, 1),  // 200 ms to the next token: at least 1
        (0.5, 0, 2),  // 2 s per token
        (0.5, 500, 2),  // 1.5 s left: rounded up
        (0.5, 1000, 1),  // exactly 1 s left
        (0.1, 0, 10),
        (0.1, 9_999, 1),
        (1.0 / 3, 0, 3),
    ])
    func retryAfterIsTheWaitForOneTokenRoundedUp(rate: Double, elapsed: Int64, expected: Int) {
        var bucket = TokenBucket(ratePerSecond: rate, burst: 1, now: 0)
        #expect(take(&bucket, now: 0))
        #expect(bucket.retryAfterSeconds(now: elapsed) == expected)
    }

    @Test func retryAfterIsAtLeastOneWhenATokenIsThere() {
        let bucket = TokenBucket(ratePerSecond: 1, burst: 1, now: 0)
        #expect(bucket.retryAfterSeconds(now: 0) == 1)
    }

    @Test func aClockReadingFromThePastRefillsNothing() {
        var bucket = TokenBucket(ratePerSecond: 1, burst: 2, now: 10_000)
        #expect(take(&bucket, now: 10_000))
        #expect(take(&bucket, now: 10_000))
        // Another thread read the clock earlier: no token, and the bucket's time stays.
        #expect(!take(&bucket, now: 9_000))
        #expect(bucket.updated == 10_000)
        #expect(!take(&bucket, now: 10_999))
        #expect(take(&bucket, now: 11_000))
    }

    @Test func theDefaultBurstIsTheRateRoundedUpAndAtLeastOne() {
        #expect(RateLimit(requestsPerSecond: 5).effectiveBurst == 5)
        #expect(RateLimit(requestsPerSecond: 2.5).effectiveBurst == 3)
        #expect(RateLimit(requestsPerSecond: 0.2).effectiveBurst == 1)
        #expect(RateLimit(requestsPerSecond: 5, burst: 20).effectiveBurst == 20)
    }

    @Test func invalidSettingsAreNamed() {
        #expect(RateLimit(requestsPerSecond: 0).problem == "requests_per_second must be a positive number")
        #expect(RateLimit(requestsPerSecond: .infinity).problem != nil)
        #expect(RateLimit(burst: 3).problem == "burst needs requests_per_second")
        #expect(RateLimit(requestsPerSecond: 1, burst: 0).problem == "burst must be at least 1")
        #expect(RateLimit(bytesPerMinute: 0).problem == "bytes_per_minute must be positive")
        #expect(RateLimit(concurrent: 0).problem == "concurrent must be at least 1")
        #expect(
            RateLimit(requestsPerSecond: 5, burst: 20, bytesPerMinute: 1 << 30, concurrent: 4).problem == nil)
        #expect(RateLimit().isUnlimited)
        #expect(!RateLimit(concurrent: 1).isUnlimited)
    }

    /// Takes a token (a mutating call cannot appear inside `#expect`).
    private func take(_ bucket: inout TokenBucket, now: Int64) -> Bool {
        bucket.take(now: now)
    }
}
