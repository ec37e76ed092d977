import CEventSupport
import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// Why libevent could not do something: which call failed.
public struct EventLoopError: Error, CustomStringConvertible, Sendable {
    /// The failing call and, where known, the system error.
    public var message: String

    /// Creates an error.
    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

/// One libevent `event_base`: a single-threaded event loop. Every object created on it must
/// be used from the thread that runs it.
public final class EventBase {
    /// The underlying `struct event_base *`.
    public let raw: OpaquePointer
    private var dnsBase: OpaquePointer?

    /// Keeps freed buffer memory in the allocator instead of handing it back to the kernel
    /// after every large free: glibc's default (dynamic) trim threshold makes each worker
    /// arena `madvise` away ~256 KiB whenever a few evbuffer chains drain, and the next reads
    /// fault the pages back in (838 madvise calls in a 512 MiB upload). Blocks of 1 MiB and
    /// more are still mapped and unmapped one by one; RSS stays bounded by the peak in use
    /// plus at most 4 MiB per arena.
    public static let tuneAllocator: Void = {
        fg_set_malloc_thresholds(1 << 20, 4 << 20)
    }()

    /// Makes libevent's locks work across threads (once per process), so `stop()` can be
    /// called from any thread.
    public static let enableThreads: Void = {
        _ = evthread_use_pthreads()
    }()

    /// Creates an event loop.
    public init() throws(EventLoopError) {
        _ = Self.enableThreads
        _ = Self.tuneAllocator
        // The epoll changelist folds the enable/disable pairs of one loop iteration (a
        // bufferevent's write event goes on when output is queued and off when it drains)
        // into at most one epoll_ctl per descriptor.
        guard let config = event_config_new() else { throw EventLoopError("event_config_new failed") }
        defer { event_config_free(config) }
        event_config_set_flag(config, Int32(EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST.rawValue))
        guard let base = event_base_new_with_config(config) else {
            throw EventLoopError("event_base_new failed")
        }
        raw = base
    }

    deinit {
        if let dnsBase { evdns_base_free(dnsBase, 0) }
        event_base_free(raw)
    }

    /// Runs the loop until `stop()` or until no events remain.
    public func run() {
        event_base_dispatch(raw)
    }

    /// Asks the loop to return; safe from any thread.
    public func stop() {
        event_base_loopbreak(raw)
    }

    /// The loop's asynchronous DNS resolver (created on first use from `/etc/resolv.conf`).
    public var dns: OpaquePointer? {
        if dnsBase == nil {
            dnsBase = evdns_base_new(raw, Int32(EVDNS_BASE_INITIALIZE_NAMESERVERS))
        }
        return dnsBase
    }

    /// Plain sockets whose output grew during the current callback; `flushWrites()` writes
    /// them when the callback returns, without waiting for a write event.
    var pendingWrites: [BufferedSocket] = []
    private var flushingWrites = false

    /// Writes the output queued during the callback that is returning straight to the
    /// sockets (what the kernel takes; the rest waits for a write event as before). Saves a
    /// loop turn and two epoll_ctl per response and per request forwarded.
    func flushWrites() {
        guard !flushingWrites, !pendingWrites.isEmpty else { return }
        flushingWrites = true
        defer { flushingWrites = false }
        while let socket = pendingWrites.popLast() { socket.writeNow() }
    }

    /// The loop's cached monotonic time in milliseconds (cheap; updated once per iteration).
    public var nowMilliseconds: Int64 {
        var now = timeval()
        event_base_gettimeofday_cached(raw, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_usec) / 1000
    }
}
