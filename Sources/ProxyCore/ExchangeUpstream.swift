/// The upstream part of an exchange: where its connection stands and its clock (when it was
/// asked for, when it last made progress, for the lazily re-armed response timer).
struct ExchangeUpstream {
    /// Where the upstream connection stands.
    enum Phase: Equatable {
        case none
        case connecting
        /// Connected; the head waits for the body's length (`ExchangeRequest.pendingLength`).
        case ready
        /// Connected; the head (and what was staged) is queued.
        case sending
        /// The whole request is queued; the response is awaited (or arriving).
        case sent
        /// Released or aborted.
        case finished
    }

    var phase = Phase.none
    /// When the connection was asked for.
    var startedAt: Int64 = 0
    /// The last upstream progress.
    var activity: Int64 = 0

    /// Whether the connection is up and carries this exchange's request.
    var carries: Bool { phase == .sending || phase == .sent }

    /// Whether the exchange holds a connection (asked for, ready or carrying).
    var held: Bool { phase == .connecting || phase == .ready || carries }

    /// Asks for a connection to `target`; the connect timer (`timeout` milliseconds) runs.
    mutating func connect(
        to target: UpstreamURL, timeout: Int64, now: Int64, timers: inout TimerSet,
        _ actions: inout ActionBuffer
    ) {
        phase = .connecting
        startedAt = now
        // The timer first: a pooled connection reports itself ready while this is executed.
        timers.start(.upstreamConnect, at: now + timeout, &actions)
        actions.append(.connectUpstream(target))
    }

    /// The whole request is queued: now the response clock runs (`timeout` milliseconds of
    /// silence).
    mutating func fullySent(timeout: Int64, now: Int64, timers: inout TimerSet, _ actions: inout ActionBuffer)
    {
        phase = .sent
        activity = now
        timers.start(.upstreamResponse, at: now + timeout, &actions)
    }

    /// Ends the exchange's use of the connection: back to the pool when `reusable`, or closed.
    mutating func end(reusable: Bool, timers: inout TimerSet, _ actions: inout ActionBuffer) {
        timers.cancel(.upstreamConnect, &actions)
        timers.cancel(.upstreamResponse, &actions)
        guard held else { return }
        phase = .finished
        actions.append(reusable ? .releaseUpstream : .abortUpstream)
    }
}
