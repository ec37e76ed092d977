import Testing

@testable import ProxyCore

/// The upload-bytes-per-minute budget, on a fake millisecond clock.
@Suite struct ByteBudgetTests {
    @Test func aDeclaredLengthMustFitInWhatIsLeftAndIsReserved() {
        var budget = ByteBudget(bytesPerMinute: 60_000, now: 0)
        #expect(budget.admits(declared: 60_000, now: 0))
        #expect(!budget.admits(declared: 60_001, now: 0))
        #expect(budget.reserve(declared: 40_000, now: 0) == 40_000)
        // A second upload admitted at the same time cannot spend the same bytes.
        #expect(budget.admits(declared: 20_000, now: 0))
        #expect(!budget.admits(declared: 20_001, now: 0))
        // 1,000 bytes per second come back: one second later 21,000 fit.
        #expect(budget.admits(declared: 21_000, now: 1_000))
        #expect(!budget.admits(declared: 21_001, now: 1_000))
    }

    @Test func settlingChargesWhatWasReadInPlaceOfTheReservation() {
        var budget = ByteBudget(bytesPerMinute: 60_000, now: 0)
        let reserved = budget.reserve(declared: 50_000, now: 0)
        // The client broke off after 10,000 bytes: 40,000 come back.
        budget.settle(reserved: reserved, read: 10_000, now: 0)
        #expect(budget.level(now: 0) == 50_000)
    }

    @Test func aChunkedUploadOverdrawsAndLaterRequestsWait() {
        var budget = ByteBudget(bytesPerMinute: 60_000, now: 0)
        #expect(budget.admits(declared: nil, now: 0))
        #expect(budget.reserve(declared: nil, now: 0) == 0)
        budget.settle(reserved: 0, read: 90_000, now: 0)  // 30,000 over
        #expect(budget.level(now: 0) == -30_000)
        #expect(!budget.admits(declared: nil, now: 0))
        #expect(!budget.admits(declared: 0, now: 0))
        #expect(budget.retryAfterSeconds(declared: nil, now: 0) == 31)  // 30,001 bytes at 1,000/s
        #expect(!budget.admits(declared: nil, now: 30_000))  // exactly empty: still refused
        #expect(budget.admits(declared: nil, now: 30_001))
        #expect(budget.retryAfterSeconds(declared: 10_000, now: 30_000) == 10)
    }

    @Test func retryAfterIsTheTimeToRefillEnoughRoundedUp() {
        var budget = ByteBudget(bytesPerMinute: 6_000, now: 0)  // 100 bytes per second
        _ = budget.reserve(declared: 6_000, now: 0)
        #expect(budget.retryAfterSeconds(declared: 100, now: 0) == 1)
        #expect(budget.retryAfterSeconds(declared: 101, now: 0) == 2)
        #expect(budget.retryAfterSeconds(declared: 6_000, now: 0) == 60)
        #expect(budget.retryAfterSeconds(declared: 6_000, now: 59_001) == 1)
        #expect(budget.retryAfterSeconds(declared: 1, now: 59_001) == 1)
    }

    @Test func aLengthOverTheCapacityIsNeverAdmittedAndWaitsAMinute() {
        let budget = ByteBudget(bytesPerMinute: 1_000, now: 0)
        #expect(!budget.admits(declared: 1_001, now: 0))
        #expect(!budget.admits(declared: 1_001, now: 1_000_000))
        #expect(budget.retryAfterSeconds(declared: 1_001, now: 0) == 60)
    }

    @Test func fullnessFollowsTheRefill() {
        var budget = ByteBudget(bytesPerMinute: 60_000, now: 0)
        #expect(budget.isFull(now: 0))
        _ = budget.reserve(declared: 1, now: 0)
        #expect(!budget.isFull(now: 0))
        #expect(budget.isFull(now: 1))
    }
}
