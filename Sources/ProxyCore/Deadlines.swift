/// The deadlines of armed timers: a start replaces the id's earlier deadline, and what is due
/// comes out earliest first. A shell's `ConnectionTimers` arms one libevent timer for its
/// machine's; `HTTP2ConnectionStateMachine` keeps each stream's here and arms one connection
/// timer (`TimerID.streams`) for the earliest of them.
public struct Deadlines: Sendable {
    private var entries: [(id: TimerID, deadline: Int64)] = []

    /// Creates an empty set.
    public init() {}

    /// Arms `id` for `deadline`, replacing an earlier deadline of the same id.
    public mutating func start(_ id: TimerID, at deadline: Int64) {
        entries.removeAll { $0.id == id }
        entries.append((id, deadline))
    }

    /// Disarms `id`.
    public mutating func cancel(_ id: TimerID) {
        entries.removeAll { $0.id == id }
    }

    /// Disarms everything.
    public mutating func removeAll() {
        entries.removeAll()
    }

    /// The earliest armed deadline, if any.
    public var earliest: Int64? { entries.lazy.map(\.deadline).min() }

    /// Disarms and returns the timer with the earliest deadline when it is due at `now`.
    public mutating func takeDue(now: Int64) -> TimerID? {
        guard let index = entries.indices.min(by: { entries[$0].deadline < entries[$1].deadline }),
            entries[index].deadline <= now
        else { return nil }
        return entries.remove(at: index).id
    }
}
