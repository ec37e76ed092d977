import Testing

@testable import ProxyCore

/// TimerSet keeps its first four ids inline and the rest in an array: arming order, re-arming,
/// cancelling and firing must behave the same on both sides of that line.
@Suite struct TimerSetTests {
    /// The ids of the `cancelTimer` actions queued in `actions`, in order.
    func cancelled(_ actions: inout ActionBuffer) -> [TimerID] {
        var ids: [TimerID] = []
        while let action = actions.next() {
            if case .cancelTimer(let id) = action { ids.append(id) }
        }
        return ids
    }

    @Test func cancelAllCancelsInArmingOrderPastTheInlineIds() {
        var timers = TimerSet()
        var actions = ActionBuffer()
        let armed: [TimerID] = [
            .idle, .verdict(1), .header, .upstreamConnect, .verdict(2), .linger, .verdict(3),
        ]
        for (index, id) in armed.enumerated() { timers.start(id, at: Int64(index), &actions) }
        timers.start(.header, at: 99, &actions)  // re-arming keeps its place
        _ = cancelled(&actions)
        timers.cancel(.verdict(1), &actions)  // an inline id: the first overflowed one moves in
        let firedOnce = timers.fired(.linger)  // an overflowed id
        let firedTwice = timers.fired(.linger)
        #expect(firedOnce && !firedTwice)
        #expect(!timers.contains(.verdict(1)))
        #expect(timers.contains(.verdict(3)))
        #expect(cancelled(&actions) == [.verdict(1)])
        timers.cancelAll(&actions)
        #expect(cancelled(&actions) == [.idle, .header, .upstreamConnect, .verdict(2), .verdict(3)])
        #expect(!timers.contains(.idle))
        timers.start(.upstreamResponse, at: 1, &actions)
        _ = cancelled(&actions)
        timers.cancelAll(&actions)
        #expect(cancelled(&actions) == [.upstreamResponse])
    }
}
