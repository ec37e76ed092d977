import CLibevent

/// Delivers a POSIX signal to a callback on the loop's thread (libevent's signal events).
public final class SignalWatcher {
    private var event: OpaquePointer?
    private unowned let base: EventBase
    private let callback: () -> Void

    /// Watches `signal` on `base` until deinitialized. A watcher that cannot be registered
    /// is recorded in `EventLoopFailures`.
    public init(base: EventBase, signal: Int32, _ callback: @escaping () -> Void) {
        self.base = base
        self.callback = callback
        event = event_new(
            base.raw, signal, FG_EV_SIGNAL | FG_EV_PERSIST, signalTrampoline,
            Unmanaged.passUnretained(self).toOpaque())
        if event.map({ event_add($0, nil) }) != 0 {
            EventLoopFailures.record("cannot watch signal \(signal) (event_new/event_add failed)")
        }
    }

    deinit {
        if let event { event_free(event) }
    }

    fileprivate func fire() { base.dispatch(callback) }
}

private func signalTrampoline(_ fd: Int32, _ what: Int16, _ context: UnsafeMutableRawPointer?) {
    Unmanaged<SignalWatcher>.fromOpaque(context!).takeUnretainedValue().fire()
}
