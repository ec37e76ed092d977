/// The timers a state machine has armed and not yet seen fire or cancelled: every start and
/// cancel goes through here, so closing can cancel exactly what is armed.
///
/// The ids are kept in the order they were armed (`cancelAll` cancels in that order). The
/// first four live in the value itself (`inline`), so an exchange's timers (connect, response)
/// allocate nothing: an array here was one allocation per request. More (many verdict
/// deadlines at once) go on in `overflow`.
struct TimerSet: Sendable {
    private var inline = InlineArray<4, TimerID>(repeating: .header)
    private var inlineCount = 0
    private var overflow: [TimerID] = []

    /// The armed ids, in arming order.
    private var count: Int { inlineCount + overflow.count }

    private func id(at position: Int) -> TimerID {
        position < inlineCount ? inline[position] : overflow[position - inlineCount]
    }

    private func position(of id: TimerID) -> Int? {
        for position in 0..<count where self.id(at: position) == id { return position }
        return nil
    }

    private mutating func append(_ id: TimerID) {
        if inlineCount < inline.count, overflow.isEmpty {
            inline[inlineCount] = id
            inlineCount += 1
        } else {
            overflow.append(id)
        }
    }

    /// Removes the id at `position`, keeping the order of the others.
    private mutating func remove(at position: Int) {
        guard position < inlineCount else {
            overflow.remove(at: position - inlineCount)
            return
        }
        var index = position
        while index + 1 < inlineCount {
            inline[index] = inline[index + 1]
            index += 1
        }
        if overflow.isEmpty {
            inlineCount -= 1
        } else {
            inline[inlineCount - 1] = overflow.removeFirst()
        }
    }

    /// Arms (or re-arms) `id` for `deadline`.
    mutating func start(_ id: TimerID, at deadline: Int64, _ actions: inout ActionBuffer) {
        if position(of: id) == nil { append(id) }
        actions.append(.startTimer(id, deadline: deadline))
    }

    /// Disarms `id` if it is armed.
    mutating func cancel(_ id: TimerID, _ actions: inout ActionBuffer) {
        guard let position = position(of: id) else { return }
        remove(at: position)
        actions.append(.cancelTimer(id))
    }

    /// Disarms every armed timer.
    mutating func cancelAll(_ actions: inout ActionBuffer) {
        for position in 0..<count { actions.append(.cancelTimer(id(at: position))) }
        inlineCount = 0
        overflow.removeAll()
    }

    /// Records that `id` fired; `false` when it was not armed here (a stale firing).
    mutating func fired(_ id: TimerID) -> Bool {
        guard let position = position(of: id) else { return false }
        remove(at: position)
        return true
    }

    /// Whether `id` is armed.
    func contains(_ id: TimerID) -> Bool { position(of: id) != nil }
}
