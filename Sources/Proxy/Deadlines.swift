import ProxyCore

/// The deadlines of a state machine's armed timers, as its shell keeps them: a start replaces
/// the id's earlier deadline, and what is due comes out earliest first. `ConnectionTimers` arms
/// one libevent timer for them; an HTTP/2 stream's go on its connection's timer.
struct Deadlines {
    private var entries: [(id: TimerID, deadline: Int64)] = []

    /// Arms `id` for `deadline`, replacing an earlier deadline of the same id.
    mutating func start(_ id: TimerID, at deadline: Int64) {
        entries.removeAll { $0.id == id }
        entries.append((id, deadline))
    }

    /// Disarms `id`.
    mutating func cancel(_ id: TimerID) {
        entries.removeAll { $0.id == id }
    }

    /// Disarms everything.
    mutating func removeAll() {
        entries.removeAll()
    }

    /// The earliest armed deadline, if any.
    var earliest: Int64? { entries.lazy.map(\.deadline).min() }

    /// Disarms and returns the timer with the earliest deadline when it is due at `now`.
    mutating func takeDue(now: Int64) -> TimerID? {
        guard let index = entries.indices.min(by: { entries[$0].deadline < entries[$1].deadline }),
            entries[index].deadline <= now
        else { return nil }
        return entries.remove(at: index).id
    }
}
