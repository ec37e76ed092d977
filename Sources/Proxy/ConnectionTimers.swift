import EventLoop
import ProxyCore

/// A connection's timers on one libevent `Timer`, re-armed to the earliest deadline the state
/// machine asked for. When it fires, every timer that is due is reported, earliest first.
final class ConnectionTimers {
    private let base: EventBase
    private var timer: Timer?
    private var deadlines: [(id: TimerID, deadline: Int64)] = []
    private let fired: (TimerID) -> Void
    /// The deadline the libevent timer is armed for.
    private var armedFor: Int64?

    init(base: EventBase, fired: @escaping (TimerID) -> Void) {
        self.base = base
        self.fired = fired
        timer = Timer(base: base) { [unowned self] in self.expire() }
    }

    /// Arms `id` for `deadline`, replacing an earlier deadline of the same id.
    func start(_ id: TimerID, deadline: Int64) {
        deadlines.removeAll { $0.id == id }
        deadlines.append((id, deadline))
        rearm()
    }

    /// Disarms `id`.
    func cancel(_ id: TimerID) {
        deadlines.removeAll { $0.id == id }
        rearm()
    }

    /// Disarms everything (the connection closed).
    func stop() {
        deadlines.removeAll()
        timer?.cancel()
        timer = nil
    }

    private func rearm() {
        guard let earliest = deadlines.lazy.map(\.deadline).min() else {
            if armedFor != nil { timer?.cancel() }
            armedFor = nil
            return
        }
        guard earliest != armedFor else { return }
        armedFor = earliest
        timer?.schedule(milliseconds: max(0, earliest - base.nowMilliseconds))
    }

    private func expire() {
        armedFor = nil
        let now = base.nowMilliseconds
        while let index = deadlines.indices.lazy.filter({ self.deadlines[$0].deadline <= now }).min(by: {
            self.deadlines[$0].deadline < self.deadlines[$1].deadline
        }) {
            let id = deadlines.remove(at: index).id
            fired(id)
            guard timer != nil else { return }
        }
        rearm()
    }
}
