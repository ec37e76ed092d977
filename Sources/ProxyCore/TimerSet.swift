/// The timers a state machine has armed and not yet seen fire or cancelled: every start and
/// cancel goes through here, so closing can cancel exactly what is armed.
struct TimerSet: Sendable {
    private var armed: [TimerID] = []

    /// Arms (or re-arms) `id` for `deadline`.
    mutating func start(_ id: TimerID, at deadline: Int64, _ actions: inout ActionBuffer) {
        if !armed.contains(id) { armed.append(id) }
        actions.append(.startTimer(id, deadline: deadline))
    }

    /// Disarms `id` if it is armed.
    mutating func cancel(_ id: TimerID, _ actions: inout ActionBuffer) {
        guard let index = armed.firstIndex(of: id) else { return }
        armed.remove(at: index)
        actions.append(.cancelTimer(id))
    }

    /// Disarms every armed timer.
    mutating func cancelAll(_ actions: inout ActionBuffer) {
        for id in armed { actions.append(.cancelTimer(id)) }
        armed.removeAll()
    }

    /// Records that `id` fired; `false` when it was not armed here (a stale firing).
    mutating func fired(_ id: TimerID) -> Bool {
        guard let index = armed.firstIndex(of: id) else { return false }
        armed.remove(at: index)
        return true
    }

    /// Whether `id` is armed.
    func contains(_ id: TimerID) -> Bool { armed.contains(id) }
}
