import CLibevent
import Synchronization

/// Failures of C calls that have no caller to throw to: a timer that cannot be armed, a
/// warning libevent logs while dispatching (with the epoll changelist, an `epoll_ctl` that
/// fails is only seen there). Each is counted and handed to the reporter, if one is set.
public enum EventLoopFailures {
    private static let total = Atomic<Int>(0)
    private static let reporter = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// Routes libevent's own warnings and errors here (once per process; `EventBase` does it).
    static let captureLibeventLog: Void = {
        event_set_log_callback(libeventLogTrampoline)
    }()

    /// Failures recorded since the process started.
    public static var count: Int { total.load(ordering: .relaxed) }

    /// Sets who hears of each failure (e.g. the error log); it is called on the thread that
    /// failed, so it must not block.
    public static func setReporter(_ report: @escaping @Sendable (String) -> Void) {
        reporter.withLock { $0 = report }
    }

    /// Counts a failure and reports `message`.
    static func record(_ message: String) {
        total.add(1, ordering: .relaxed)
        let report = reporter.withLock { $0 }
        report?(message)
    }
}

/// libevent's log callback: warnings and errors are failures; debug and informational
/// messages are not kept.
private func libeventLogTrampoline(_ severity: Int32, _ message: UnsafePointer<CChar>?) {
    guard severity >= EVENT_LOG_WARN, let message else { return }
    EventLoopFailures.record("libevent: " + String(cString: message))
}
