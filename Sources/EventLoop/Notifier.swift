import CLibevent

/// Wakes a loop from another thread: `notify()` (thread-safe, as `EventBase` turned on
/// libevent's locking) runs the callback on the loop's thread.
public final class Notifier: @unchecked Sendable {
    private var event: OpaquePointer?
    private unowned let base: EventBase
    private let callback: () -> Void

    /// Creates a notifier on `base`; create it on the loop's thread.
    public init(base: EventBase, _ callback: @escaping () -> Void) {
        self.base = base
        self.callback = callback
        event = event_new(base.raw, -1, 0, notifierTrampoline, Unmanaged.passUnretained(self).toOpaque())
        // event_new fails only when malloc does; notify() then does nothing, and says so.
        if event == nil { EventLoopFailures.record("event_new(notifier) failed") }
    }

    deinit {
        if let event { event_free(event) }
    }

    /// Runs the callback soon on the loop's thread (several calls may run it once).
    public func notify() {
        if let event { event_active(event, Int32(FG_EV_READ), 0) }
    }

    fileprivate func fire() { base.dispatch(callback) }
}

private func notifierTrampoline(_ fd: Int32, _ what: Int16, _ context: UnsafeMutableRawPointer?) {
    Unmanaged<Notifier>.fromOpaque(context!).takeUnretainedValue().fire()
}
