import EventLoop
import ProxyCore

/// A connection's timers on one libevent `Timer`, re-armed to the earliest deadline the state
/// machine asked for. When it fires, every timer that is due is reported, earliest first.
final class ConnectionTimers {
    private let base: EventBase
    private var timer: Timer?
    private var deadlines = Deadlines()
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
        deadlines.start(id, at: deadline)
        rearm()
    }

    /// Disarms `id`.
    func cancel(_ id: TimerID) {
        deadlines.cancel(id)
        rearm()
    }

    /// Disarms everything (the connection closed).
    func stop() {
        deadlines.removeAll()
        timer?.cancel()
        timer = nil
    }

    private func rearm() {
        guard let earliest = deadlines.earliest else {
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
        while let id = deadlines.takeDue(now: now) {
            fired(id)
            guard timer != nil else { return }
        }
        rearm()
    }
}
