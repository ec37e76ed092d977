import ProxyCore
import Testing

/// A pooled connection's idle timer on a fake clock, executing `UpstreamLease`'s actions the
/// way `UpstreamPool` does: one timer, re-armed to the last deadline asked for.
private struct PooledConnectionModel {
    var lease: UpstreamLease
    /// The fake clock, in milliseconds.
    var now: Int64 = 1_000_000
    /// The deadline the idle timer is armed for.
    var armedFor: Int64?
    /// When the pool closed the connection.
    var closedAt: Int64?

    init(idleTimeout: Int64) {
        lease = UpstreamLease(idleTimeout: idleTimeout)
    }

    mutating func perform(_ action: UpstreamLease.Action) {
        switch action {
        case .armIdleTimer(let deadline): armedFor = deadline
        case .cancelIdleTimer: armedFor = nil
        case .close:
            armedFor = nil
            closedAt = now
        case .none: break
        }
    }

    mutating func release() { perform(lease.released(now: now)) }
    mutating func acquire() { perform(lease.acquired()) }

    /// Moves the clock on by `milliseconds`, firing the idle timer when its deadline comes.
    mutating func advance(by milliseconds: Int64) {
        let end = now + milliseconds
        while let deadline = armedFor, deadline <= end {
            armedFor = nil
            now = max(now, deadline)
            perform(lease.idleTimerFired(now: now))
        }
        now = end
    }
}

/// `UpstreamLease`: the idle deadline runs only while the pool holds a connection.
@Suite struct UpstreamLeaseTests {
    /// Issue 26: a connection idle in the pool for `idleAge` ms carries an upload that lasts
    /// `uploadLength` ms, past what was left of its idle deadline (2 s). The deadline must not
    /// close it mid-request; it starts again, whole, when the connection is back in the pool.
    @Test(arguments: [(1_000, 1_500), (0, 2_500), (1_999, 60_000)])
    func aReusedConnectionIsNotClosedByItsEarlierIdleDeadline(idleAge: Int64, uploadLength: Int64) {
        var connection = PooledConnectionModel(idleTimeout: 2_000)
        connection.release()
        connection.advance(by: idleAge)
        connection.acquire()
        #expect(connection.armedFor == nil)
        connection.advance(by: uploadLength)
        #expect(connection.closedAt == nil)
        #expect(connection.lease.holder == .exchange)
        connection.release()
        let releasedAt = connection.now
        #expect(connection.armedFor == releasedAt + 2_000)
        connection.advance(by: 1_999)
        #expect(connection.closedAt == nil)
        connection.advance(by: 1)
        #expect(connection.closedAt == releasedAt + 2_000)
        #expect(connection.lease.holder == .closed)
    }

    @Test func anIdleConnectionClosesAtItsDeadlineAndNotBefore() {
        var connection = PooledConnectionModel(idleTimeout: 60_000)
        connection.release()
        #expect(connection.lease.holder == .pool(idleUntil: 1_060_000))
        connection.advance(by: 59_999)
        #expect(connection.closedAt == nil)
        connection.advance(by: 1)
        #expect(connection.closedAt == 1_060_000)
    }

    @Test func aNewConnectionIsHeldByItsExchangeWithoutAnIdleDeadline() {
        var lease = UpstreamLease(idleTimeout: 2_000)
        #expect(lease.holder == .exchange)
        #expect(lease.acquired() == .none)
        #expect(lease.idleTimerFired(now: 5_000) == .none)
        #expect(lease.holder == .exchange)
    }

    @Test func acquiringCancelsTheIdleTimerAndAStaleFiringIsIgnored() {
        var lease = UpstreamLease(idleTimeout: 2_000)
        #expect(lease.released(now: 100) == .armIdleTimer(deadline: 2_100))
        #expect(lease.acquired() == .cancelIdleTimer)
        // A firing already under way when the exchange took the connection.
        #expect(lease.idleTimerFired(now: 2_100) == .none)
        #expect(lease.holder == .exchange)
    }

    @Test func eachReleaseStartsAFreshDeadline() {
        var lease = UpstreamLease(idleTimeout: 2_000)
        #expect(lease.released(now: 0) == .armIdleTimer(deadline: 2_000))
        #expect(lease.acquired() == .cancelIdleTimer)
        #expect(lease.released(now: 1_500) == .armIdleTimer(deadline: 3_500))
        // The first deadline's time: the connection has been idle 500 ms only.
        #expect(lease.idleTimerFired(now: 2_000) == .armIdleTimer(deadline: 3_500))
        #expect(lease.holder == .pool(idleUntil: 3_500))
        #expect(lease.idleTimerFired(now: 3_500) == .close)
    }

    @Test func aClosedLeaseDoesNothingMore() {
        var lease = UpstreamLease(idleTimeout: 2_000)
        _ = lease.released(now: 0)
        #expect(lease.idleTimerFired(now: 2_001) == .close)
        #expect(lease.idleTimerFired(now: 2_002) == .none)
        #expect(lease.acquired() == .none)
        #expect(lease.released(now: 3_000) == .none)
        #expect(lease.holder == .closed)
    }
}
