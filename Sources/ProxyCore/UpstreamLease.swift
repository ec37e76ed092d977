/// Who holds one keep-alive upstream connection — an exchange, or the pool while it is idle —
/// and so which deadline runs on it.
///
/// The idle deadline (`timeouts.idle`) runs only while the pool holds the connection; an
/// exchange that takes it brings its own timers (`upstream_connect`, `upstream_response`), and
/// the idle deadline must be gone for all of its request: a deadline left armed from the pool
/// closed an upload that started on a connection idle for `t` once it lasted past `idle - t`.
///
/// Every event returns what the shell must do with the connection's idle timer; the clock
/// (`now`, milliseconds) is passed in, so the type is tested with a fake clock.
public struct UpstreamLease: Sendable, Equatable {
    /// Who holds the connection.
    public enum Holder: Sendable, Equatable {
        /// An exchange: its own timers apply, no idle deadline runs.
        case exchange
        /// The pool, idle since its release: closed at `idleUntil` unless acquired first.
        case pool(idleUntil: Int64)
        /// Closed by its idle deadline; nothing more happens.
        case closed
    }

    /// What the shell does with the connection's idle timer, or the connection.
    public enum Action: Sendable, Equatable {
        /// Arm (or re-arm, replacing any earlier deadline) the idle timer for `deadline`.
        case armIdleTimer(deadline: Int64)
        /// Disarm the idle timer.
        case cancelIdleTimer
        /// Close the connection and forget it: it stayed idle until its deadline.
        case close
        /// Nothing: the firing was stale (the connection is in use, or already closed).
        case none
    }

    /// Who holds the connection now.
    public private(set) var holder = Holder.exchange
    /// How long the pool keeps the connection idle (`timeouts.idle`, milliseconds).
    public let idleTimeout: Int64

    /// The lease of a connection opened for an exchange, which holds it.
    ///
    /// - Parameter idleTimeout: milliseconds, more than 0 (the configuration refuses less).
    public init(idleTimeout: Int64) {
        precondition(idleTimeout > 0, "the idle timeout must be more than 0")
        self.idleTimeout = idleTimeout
    }

    /// The exchange ended cleanly and gave the connection back to the pool at `now`: its idle
    /// deadline starts.
    public mutating func released(now: Int64) -> Action {
        guard holder != .closed else { return .none }
        let deadline = now + idleTimeout
        holder = .pool(idleUntil: deadline)
        return .armIdleTimer(deadline: deadline)
    }

    /// An exchange took the connection from the pool: the idle deadline stops, and only the
    /// exchange's timers run until the connection is released again.
    public mutating func acquired() -> Action {
        guard case .pool = holder else { return .none }
        holder = .exchange
        return .cancelIdleTimer
    }

    /// The idle timer fired at `now`. The connection is closed only if the pool still holds it
    /// and its deadline has come; a timer that fired early is re-armed for the same deadline.
    public mutating func idleTimerFired(now: Int64) -> Action {
        guard case .pool(let deadline) = holder else { return .none }
        guard now >= deadline else { return .armIdleTimer(deadline: deadline) }
        holder = .closed
        return .close
    }
}
