import Synchronization
import Testing

@testable import ProxyCore

/// The per-client limiter: its three limits, clients kept apart, the memory bound and many
/// threads at once, on a fake millisecond clock.
@Suite struct ClientLimiterTests {
    let alice = ClientKey.identity("alice")
    let bob = ClientKey.identity("bob")

    @Test func requestsOverTheRateAreLimitedWithRetryAfter() throws {
        let limiter = ClientLimiter(limit: RateLimit(requestsPerSecond: 2, burst: 3))
        for _ in 0..<3 { try end(limiter.admit(key: alice, declaredBytes: 0, now: 0), limiter, now: 0) }
        #expect(
            limiter.admit(key: alice, declaredBytes: 0, now: 0) == .limited(.requests, retryAfterSeconds: 1))
        #expect(
            limiter.admit(key: alice, declaredBytes: 0, now: 499) == .limited(.requests, retryAfterSeconds: 1)
        )
        try end(limiter.admit(key: alice, declaredBytes: 0, now: 500), limiter, now: 500)
    }

    @Test func aRefusalTakesNothing() throws {
        let limiter = ClientLimiter(limit: RateLimit(requestsPerSecond: 1, burst: 1, concurrent: 1))
        let ticket = try admitted(limiter.admit(key: alice, declaredBytes: nil, now: 0))
        #expect(
            limiter.admit(key: alice, declaredBytes: nil, now: 1_000)
                == .limited(.concurrent, retryAfterSeconds: 1))
        limiter.end(ticket, bytes: 0, now: 1_000)
        // The refused request took no token: the one refilled at 1 s is still there.
        try end(limiter.admit(key: alice, declaredBytes: nil, now: 1_000), limiter, now: 1_000)
    }

    @Test func concurrentRequestsAreCountedAndFreedByEnd() throws {
        let limiter = ClientLimiter(limit: RateLimit(concurrent: 2))
        let first = try admitted(limiter.admit(key: alice, declaredBytes: nil, now: 0))
        let second = try admitted(limiter.admit(key: alice, declaredBytes: nil, now: 0))
        #expect(
            limiter.admit(key: alice, declaredBytes: nil, now: 0)
                == .limited(.concurrent, retryAfterSeconds: 1))
        limiter.end(first, bytes: 0, now: 1)
        let third = try admitted(limiter.admit(key: alice, declaredBytes: nil, now: 1))
        #expect(
            limiter.admit(key: alice, declaredBytes: nil, now: 1)
                == .limited(.concurrent, retryAfterSeconds: 1))
        limiter.end(second, bytes: 0, now: 2)
        limiter.end(third, bytes: 0, now: 2)
        #expect(limiter.trackedClients == 1)
    }

    @Test func bytesAreReservedAtTheHeadAndChargedAtTheEnd() throws {
        let limiter = ClientLimiter(limit: RateLimit(bytesPerMinute: 60_000))
        let upload = try admitted(limiter.admit(key: alice, declaredBytes: 50_000, now: 0))
        #expect(
            limiter.admit(key: alice, declaredBytes: 10_001, now: 0) == .limited(.bytes, retryAfterSeconds: 1)
        )
        #expect(
            limiter.admit(key: alice, declaredBytes: 20_000, now: 0)
                == .limited(.bytes, retryAfterSeconds: 10))
        // The upload read only 20,000 of its 50,000: 30,000 come back at its end.
        limiter.end(upload, bytes: 20_000, now: 0)
        let next = try admitted(limiter.admit(key: alice, declaredBytes: 40_000, now: 0))
        limiter.end(next, bytes: 40_000, now: 0)
        #expect(
            limiter.admit(key: alice, declaredBytes: nil, now: 0) == .limited(.bytes, retryAfterSeconds: 1))
        // A chunked upload overdraws: later requests wait for the refill.
        let chunked = try admitted(limiter.admit(key: bob, declaredBytes: nil, now: 0))
        limiter.end(chunked, bytes: 120_000, now: 0)
        #expect(
            limiter.admit(key: bob, declaredBytes: nil, now: 0) == .limited(.bytes, retryAfterSeconds: 61))
        #expect(
            limiter.admit(key: bob, declaredBytes: nil, now: 60_000) == .limited(.bytes, retryAfterSeconds: 1)
        )
        try end(limiter.admit(key: bob, declaredBytes: nil, now: 60_001), limiter, now: 60_001)
    }

    @Test func aLengthOverTheBudgetIsRefusedEvenForANewClient() {
        let limiter = ClientLimiter(limit: RateLimit(bytesPerMinute: 1_000))
        #expect(
            limiter.admit(key: alice, declaredBytes: 1_001, now: 0) == .limited(.bytes, retryAfterSeconds: 60)
        )
        #expect(limiter.trackedClients == 0)
    }

    @Test func twoClientsAreIndependent() throws {
        let limiter = ClientLimiter(limit: RateLimit(requestsPerSecond: 1, burst: 1))
        try end(limiter.admit(key: alice, declaredBytes: 0, now: 0), limiter, now: 0)
        #expect(
            limiter.admit(key: alice, declaredBytes: 0, now: 0) == .limited(.requests, retryAfterSeconds: 1))
        try end(limiter.admit(key: bob, declaredBytes: 0, now: 0), limiter, now: 0)
        // An identity named like an address is another client than that address.
        let address = ClientKey.address(Array("192.0.2.7".utf8))
        try end(limiter.admit(key: address, declaredBytes: 0, now: 0), limiter, now: 0)
        try end(limiter.admit(key: .identity("192.0.2.7"), declaredBytes: 0, now: 0), limiter, now: 0)
        #expect(
            limiter.admit(key: address, declaredBytes: 0, now: 0) == .limited(.requests, retryAfterSeconds: 1)
        )
        #expect(limiter.trackedClients == 4)
    }

    @Test func theTableNeverTracksMoreThanItsBound() throws {
        let perShard = 4
        let limiter = ClientLimiter(
            limit: RateLimit(requestsPerSecond: 1, burst: 1), clientsPerShard: perShard)
        let bound = perShard * ClientLimiter.shardCount
        // Ten times the bound, all busy (each bucket empty for a second): the newcomers past
        // the bound are admitted without state, and nothing grows past it.
        for index in 0..<(bound * 10) {
            let key = ClientKey.address(Array("10.0.\(index / 256).\(index % 256)".utf8))
            try end(limiter.admit(key: key, declaredBytes: 0, now: 0), limiter, now: 0)
        }
        #expect(limiter.trackedClients <= bound)
        #expect(limiter.trackedClients + limiter.untrackedAdmissions == bound * 10)
        #expect(limiter.untrackedAdmissions >= bound * 9)
        // A tracked client stays limited while the table is full.
        let limitedNow = (0..<(bound * 10)).filter { index in
            let key = ClientKey.address(Array("10.0.\(index / 256).\(index % 256)".utf8))
            return limiter.admit(key: key, declaredBytes: 0, now: 0)
                == .limited(.requests, retryAfterSeconds: 1)
        }
        #expect(limitedNow.count == limiter.trackedClients)
        // A second later every bucket is full again: idle entries make room for new clients.
        let newcomers = (0..<bound).map { ClientKey.identity("user-\($0)") }
        let untrackedBefore = limiter.untrackedAdmissions
        for key in newcomers {
            try end(limiter.admit(key: key, declaredBytes: 0, now: 1_000), limiter, now: 1_000)
        }
        #expect(limiter.trackedClients <= bound)
        #expect(limiter.untrackedAdmissions - untrackedBefore < bound / 2)
    }

    @Test func anEntryWithARequestInProgressIsNeverEvicted() throws {
        let limiter = ClientLimiter(limit: RateLimit(concurrent: 1), clientsPerShard: 1)
        let busy = try admitted(limiter.admit(key: alice, declaredBytes: nil, now: 0))
        let shard = ClientLimiter.shardIndex(of: alice)
        // Find another key in alice's shard: with the shard full of a busy entry, it gets no state.
        let other = try #require(
            (0..<10_000).lazy.map { ClientKey.identity("other-\($0)") }
                .first { ClientLimiter.shardIndex(of: $0) == shard })
        let untracked = try admitted(limiter.admit(key: other, declaredBytes: nil, now: 10_000))
        #expect(!untracked.isTracked)
        // Alice's slot is still counted.
        #expect(
            limiter.admit(key: alice, declaredBytes: nil, now: 10_000)
                == .limited(.concurrent, retryAfterSeconds: 1))
        limiter.end(untracked, bytes: 0, now: 10_000)
        limiter.end(busy, bytes: 0, now: 10_000)
        // Now alice is idle and the next sweep (the last one freed nothing: a second later) evicts her.
        #expect(try admitted(limiter.admit(key: other, declaredBytes: nil, now: 10_500)).isTracked == false)
        #expect(try admitted(limiter.admit(key: other, declaredBytes: nil, now: 11_000)).isTracked)
    }

    @Test func manyThreadsKeepTheCountsConsistent() async throws {
        let limiter = ClientLimiter(
            limit: RateLimit(requestsPerSecond: 1_000, burst: 1_000_000, concurrent: 3))
        let clients = (0..<2).map { ClientKey.identity("client-\($0)") }
        let threads = 8
        let rounds = 5_000
        // Eight threads admit and end requests of two clients, so up to eight of one client
        // race for its 3 slots: whatever the interleaving, each admission either holds one of
        // them or is refused as concurrent.
        let inFlight = (0..<clients.count).map { _ in Counter() }
        let totals = await withTaskGroup(of: (admitted: Int, refused: Int, overLimit: Int).self) { group in
            for thread in 0..<threads {
                group.addTask {
                    var admitted = 0
                    var refused = 0
                    var overLimit = 0
                    for round in 0..<rounds {
                        let index = (thread + round) % clients.count
                        switch limiter.admit(key: clients[index], declaredBytes: nil, now: 0) {
                        case .admitted(let ticket):
                            admitted += 1
                            if inFlight[index].add(1) > 3 { overLimit += 1 }
                            _ = inFlight[index].add(-1)
                            limiter.end(ticket, bytes: 0, now: 0)
                        case .limited(let kind, _):
                            #expect(kind == .concurrent)
                            refused += 1
                        }
                    }
                    return (admitted, refused, overLimit)
                }
            }
            var sum = (admitted: 0, refused: 0, overLimit: 0)
            for await part in group {
                sum.admitted += part.admitted
                sum.refused += part.refused
                sum.overLimit += part.overLimit
            }
            return sum
        }
        #expect(totals.admitted + totals.refused == threads * rounds)
        #expect(totals.overLimit == 0)
        #expect(totals.admitted > 0)
        // Every slot was given back: each client can again hold exactly 3.
        for client in clients {
            let tickets = try (0..<3).map { _ in
                try admitted(limiter.admit(key: client, declaredBytes: nil, now: 0))
            }
            #expect(
                limiter.admit(key: client, declaredBytes: nil, now: 0)
                    == .limited(.concurrent, retryAfterSeconds: 1))
            for ticket in tickets { limiter.end(ticket, bytes: 0, now: 0) }
        }
        #expect(limiter.trackedClients == clients.count)
    }

    @Test func manyThreadsTakeExactlyTheTokensThereAre() async {
        let burst = 700
        let limiter = ClientLimiter(limit: RateLimit(requestsPerSecond: 1, burst: burst))
        let clients = (0..<8).map { ClientKey.address(Array("198.51.100.\($0)".utf8)) }
        let threads = 8
        let rounds = 2_000
        // The clock stands still: no token comes back, so each client gets exactly `burst`.
        let admitted = await withTaskGroup(of: [Int].self) { group in
            for thread in 0..<threads {
                group.addTask {
                    var admitted = [Int](repeating: 0, count: clients.count)
                    for round in 0..<rounds {
                        let index = (thread * 3 + round) % clients.count
                        if case .admitted(let ticket) = limiter.admit(
                            key: clients[index], declaredBytes: 0, now: 0)
                        {
                            admitted[index] += 1
                            limiter.end(ticket, bytes: 0, now: 0)
                        }
                    }
                    return admitted
                }
            }
            var sum = [Int](repeating: 0, count: clients.count)
            for await part in group {
                for index in part.indices { sum[index] += part[index] }
            }
            return sum
        }
        #expect(admitted == [Int](repeating: burst, count: clients.count))
    }

    private func admitted(_ admission: Admission) throws -> ClientLimiter.Ticket {
        guard case .admitted(let ticket) = admission else {
            throw LimiterTestFailure("expected an admission, got \(admission)")
        }
        return ticket
    }

    private func end(_ admission: Admission, _ limiter: ClientLimiter, now: Int64) throws {
        limiter.end(try admitted(admission), bytes: 0, now: now)
    }
}

/// A counter many threads change (the test's own view of requests in progress).
private final class Counter: Sendable {
    private let value = Mutex(0)

    /// Adds `delta` and returns the new value.
    func add(_ delta: Int) -> Int {
        value.withLock { count in
            count += delta
            return count
        }
    }
}

private struct LimiterTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
