import CLibevent

/// Delivers a POSIX signal to a callback on the loop's thread (libevent's signal events).
public final class SignalWatcher {
    private var event: OpaquePointer?
    private let callback: () -> Void

    /// Watches `signal` on `base` until deinitialized.
    public init(base: EventBase, signal: Int32, _ callback: @escaping () -> Void) {
        self.callback = callback
        event = event_new(
            base.raw, signal, FG_EV_SIGNAL | FG_EV_PERSIST, signalTrampoline,
            Unmanaged.passUnretained(self).toOpaque())
        if let event { event_add(event, nil) }
    }

    deinit {
        if let event { event_free(event) }
    }

    fileprivate func fire() { callback() }
}

private func signalTrampoline(_ fd: Int32, _ what: Int16, _ context: UnsafeMutableRawPointer?) {
    Unmanaged<SignalWatcher>.fromOpaque(context!).takeUnretainedValue().fire()
}
