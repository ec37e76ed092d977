import CEventSupport
import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// One libevent `event_base`: a single-threaded event loop. Every object created on it must
/// be used from the thread that runs it.
///
/// Every callback the loop makes into FormGate (sockets, timers, listeners, notifiers,
/// signals) goes through `dispatch(_:)`: when the outermost one returns, the output queued on
/// any socket of the loop is written at once (`flushWrites()`), without waiting for a write
/// event.
public final class EventBase {
    /// The underlying `struct event_base *`.
    public let raw: OpaquePointer
    private var dnsBase: OpaquePointer?
    private var dnsFailed = false

    /// Keeps freed buffer memory in the allocator instead of handing it back to the kernel
    /// after every large free: glibc's default (dynamic) trim threshold makes each worker
    /// arena `madvise` away ~256 KiB whenever a few evbuffer chains drain, and the next reads
    /// fault the pages back in (838 madvise calls in a 512 MiB upload). Blocks of 1 MiB and
    /// more are still mapped and unmapped one by one; RSS stays bounded by the peak in use
    /// plus at most 4 MiB per arena.
    public static let tuneAllocator: Void = {
        if fg_set_malloc_thresholds(1 << 20, 4 << 20) != 0 {
            EventLoopFailures.record("mallopt refused the buffer thresholds (glibc's defaults stay)")
        }
    }()

    /// Makes libevent's locks work across threads (once per process), so `stop()` and
    /// `Notifier.notify()` can be called from any thread.
    static let enableThreads: Result<Void, EventLoopError> = {
        evthread_use_pthreads() == 0 ? .success(()) : .failure(EventLoopError("evthread_use_pthreads failed"))
    }()

    /// Creates an event loop.
    ///
    /// - Throws: `EventLoopError` when libevent cannot set up locking or the loop itself.
    public init() throws(EventLoopError) {
        if case .failure(let error) = Self.enableThreads { throw error }
        _ = EventLoopFailures.captureLibeventLog  // Void: runs once
        _ = Self.tuneAllocator  // Void: runs once
        // The epoll changelist folds the add/delete pairs of one loop iteration (a socket's
        // write event armed when the kernel buffer filled and disarmed when it drained) into
        // at most one epoll_ctl per descriptor.
        guard let config = event_config_new() else { throw EventLoopError("event_config_new failed") }
        defer { event_config_free(config) }
        guard event_config_set_flag(config, Int32(EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST.rawValue)) == 0 else {
            throw EventLoopError("event_config_set_flag(EPOLL_USE_CHANGELIST) failed")
        }
        guard let base = event_base_new_with_config(config) else {
            throw EventLoopError("event_base_new failed")
        }
        raw = base
    }

    deinit {
        if let flushEvent { event_free(flushEvent) }
        if let dnsBase { evdns_base_free(dnsBase, 0) }
        event_base_free(raw)
    }

    /// Runs the loop until `stop()` or until no events remain.
    ///
    /// - Returns: `false` when libevent's dispatch failed (it then logged why).
    @discardableResult
    public func run() -> Bool {
        let result = event_base_dispatch(raw)
        if result < 0 { EventLoopFailures.record("event_base_dispatch failed") }
        return result >= 0
    }

    /// Asks the loop to return; safe from any thread.
    public func stop() {
        if event_base_loopbreak(raw) != 0 { EventLoopFailures.record("event_base_loopbreak failed") }
    }

    /// The loop's asynchronous DNS resolver (created on first use from `/etc/resolv.conf`);
    /// `nil` when it cannot be set up (the failure is recorded once).
    public var dns: OpaquePointer? {
        if dnsBase == nil, !dnsFailed {
            dnsBase = evdns_base_new(raw, Int32(EVDNS_BASE_INITIALIZE_NAMESERVERS))
            if dnsBase == nil {
                dnsFailed = true
                EventLoopFailures.record("evdns_base_new failed (no usable /etc/resolv.conf?)")
            }
        }
        return dnsBase
    }

    /// Sockets whose output grew while a callback ran; written when it returns.
    var pendingWrites: [BufferedSocket] = []
    /// How many callbacks are running (a callback can cause another synchronously).
    private var callbackDepth = 0
    private var flushingWrites = false
    /// The event that writes output queued outside any callback, and whether it is active.
    private var flushEvent: OpaquePointer?
    private var flushScheduled = false

    /// Runs a callback from libevent, then writes what it queued once the outermost returns.
    func dispatch(_ body: () -> Void) {
        callbackDepth += 1
        body()
        callbackDepth -= 1
        if callbackDepth == 0 { flushWrites() }
    }

    /// Queues `socket` to be written after the running callback; outside any callback (set
    /// up before `run()`, a test) on the loop's next turn, so delegates always hear from the
    /// loop and never from inside the call that queued output.
    func queueWrite(_ socket: BufferedSocket) {
        pendingWrites.append(socket)
        guard callbackDepth == 0, !flushScheduled else { return }
        if flushEvent == nil {
            flushEvent = event_new(raw, -1, 0, flushTrampoline, Unmanaged.passUnretained(self).toOpaque())
        }
        guard let flushEvent else {
            // event_new fails only when malloc does; the queue is written after the next callback.
            return EventLoopFailures.record("event_new(flush) failed")
        }
        flushScheduled = true
        event_active(flushEvent, Int32(FG_EV_TIMEOUT), 0)
    }

    /// Writes what was queued outside a callback.
    fileprivate func flushScheduledWrites() {
        flushScheduled = false
        dispatch {}
    }

    /// Writes the output queued during the callback that is returning straight to the
    /// sockets (what the kernel takes; the rest waits for a write event). Saves a loop turn
    /// and two epoll_ctl per response and per request forwarded.
    func flushWrites() {
        guard !flushingWrites, !pendingWrites.isEmpty else { return }
        flushingWrites = true
        defer { flushingWrites = false }
        while let socket = pendingWrites.popLast() { socket.writeQueued() }
    }

    /// Wall-clock time in milliseconds since the Unix epoch, as libevent caches it
    /// (`event_base_gettimeofday_cached`): inside the loop's callbacks, the time taken once
    /// at the start of the loop iteration (libevent's monotonic clock plus an offset to
    /// `gettimeofday` that it refreshes every few seconds), so it does not advance during a
    /// callback; outside them, `gettimeofday` now. Cheap. Not monotonic: a step of the system
    /// clock moves it.
    public var nowMilliseconds: Int64 {
        var now = timeval()
        if event_base_gettimeofday_cached(raw, &now) != 0 {
            EventLoopFailures.record("event_base_gettimeofday_cached failed")
        }
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_usec) / 1000
    }
}

private func flushTrampoline(_ fd: Int32, _ what: Int16, _ context: UnsafeMutableRawPointer?) {
    Unmanaged<EventBase>.fromOpaque(context!).takeUnretainedValue().flushScheduledWrites()
}
