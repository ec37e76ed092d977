import CLibevent

/// A callback run once more on its loop's current iteration, after the events already
/// active in it: however often `schedule()` is called before it runs, it runs once.
///
/// An HTTP/2 connection flushes its session this way, so the answers of many streams that
/// became ready on one loop iteration go out in one pass and one `writev`, instead of one
/// each. The owner keeps it alive; `deinit` removes it from the loop.
public final class DeferredCall {
    private var event: OpaquePointer?
    private unowned let base: EventBase
    private let callback: () -> Void
    /// `schedule()` activated the event and it has not run yet.
    public private(set) var isScheduled = false

    /// Creates a deferred call that runs `callback` on the loop's thread.
    public init(base: EventBase, _ callback: @escaping () -> Void) {
        self.base = base
        self.callback = callback
        event = event_new(base.raw, -1, 0, deferredCallTrampoline, Unmanaged.passUnretained(self).toOpaque())
        // event_new fails only when malloc does; the call then runs at once (`schedule`).
        if event == nil { EventLoopFailures.record("event_new(deferred call) failed") }
    }

    deinit {
        if let event { event_free(event) }
    }

    /// Runs the callback later on this loop iteration (once, however often this is called
    /// before it runs).
    public func schedule() {
        guard !isScheduled else { return }
        guard let event else { return callback() }
        isScheduled = true
        event_active(event, Int32(FG_EV_TIMEOUT), 0)
    }

    /// Withdraws a scheduled call.
    public func cancel() {
        guard isScheduled, let event else { return }
        isScheduled = false
        if event_del(event) != 0 { EventLoopFailures.record("event_del(deferred call) failed") }
    }

    fileprivate func fire() {
        isScheduled = false
        base.dispatch(callback)
    }
}

private func deferredCallTrampoline(_ fd: Int32, _ what: Int16, _ context: UnsafeMutableRawPointer?) {
    Unmanaged<DeferredCall>.fromOpaque(context!).takeUnretainedValue().fire()
}
