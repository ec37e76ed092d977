import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// A one-shot or repeating timer on an `EventBase`. It holds its callback; whoever owns the
/// timer keeps it alive, and `deinit` removes it from the loop.
public final class Timer {
    private var event: OpaquePointer?
    private unowned let base: EventBase
    private let callback: () -> Void

    /// Creates a timer that calls `callback` on the loop's thread when it fires.
    public init(base: EventBase, repeating: Bool = false, _ callback: @escaping () -> Void) {
        self.base = base
        self.callback = callback
        let flags = repeating ? FG_EV_PERSIST : 0
        event = event_new(base.raw, -1, flags, timerTrampoline, Unmanaged.passUnretained(self).toOpaque())
        // event_new fails only when malloc does; the timer then never fires, and says so.
        if event == nil { EventLoopFailures.record("event_new(timer) failed") }
    }

    deinit {
        if let event { event_free(event) }
    }

    /// Arms the timer to fire after `milliseconds` (re-arming replaces the previous deadline).
    public func schedule(milliseconds: Int64) {
        guard let event else { return }
        var delay = timeval(tv_sec: Int(milliseconds / 1000), tv_usec: Int((milliseconds % 1000) * 1000))
        if event_add(event, &delay) != 0 { EventLoopFailures.record("event_add(timer) failed") }
    }

    /// Disarms the timer.
    public func cancel() {
        guard let event else { return }
        if event_del(event) != 0 { EventLoopFailures.record("event_del(timer) failed") }
    }

    fileprivate func fire() {
        base.dispatch(callback)
    }
}

private func timerTrampoline(_ fd: Int32, _ what: Int16, _ context: UnsafeMutableRawPointer?) {
    Unmanaged<Timer>.fromOpaque(context!).takeUnretainedValue().fire()
}
