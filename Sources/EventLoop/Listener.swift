import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// A listening TCP socket (`evconnlistener`) that hands accepted sockets to a callback.
///
/// With `reusePort`, several loops can each listen on the same address (SO_REUSEPORT) and
/// the kernel spreads connections across them.
///
/// When `accept()` fails for a reason other than a retriable one (out of descriptors:
/// EMFILE, ENFILE; out of memory: ENOBUFS, ENOMEM), the listener stops accepting for
/// `errorPauseMilliseconds` and then resumes by itself, as nginx does: the connection stays
/// in the kernel's backlog, and the loop does not spin on a readable listener it cannot
/// serve. libevent then calls the error callback instead of logging each failure.
public final class Listener {
    /// How long accepting stops after `accept()` failed (nginx's `accept_mutex_delay`).
    public static let errorPauseMilliseconds: Int64 = 500

    private var listener: OpaquePointer?
    private let onAccept: (Int32, SocketAddress) -> Void
    private let onAcceptError: (Int32) -> Void
    /// Whether the owner wants connections (`enable()`, `disable()`).
    private var wanted = true
    /// Whether a pause after a failed `accept()` is running.
    private var pausedAfterError = false
    /// Whether the libevent listener is enabled now.
    private var accepting = true
    private var resumeTimer: Timer?
    private unowned let base: EventBase

    /// Binds and listens on `address`.
    ///
    /// `onAcceptError` receives the `errno` of each failed `accept()` (after the pause began).
    ///
    /// - Throws: `EventLoopError` when the address is malformed or cannot be bound.
    public init(
        base: EventBase, address: SocketAddress, reusePort: Bool, backlog: Int32 = 1024,
        onAcceptError: @escaping (Int32) -> Void = { _ in },
        onAccept: @escaping (Int32, SocketAddress) -> Void
    ) throws(EventLoopError) {
        self.base = base
        self.onAccept = onAccept
        self.onAcceptError = onAcceptError
        var flags = LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC
        if reusePort { flags |= LEV_OPT_REUSEABLE_PORT }
        let created = address.withSockAddr { pointer, length in
            evconnlistener_new_bind(
                base.raw, listenerTrampoline, Unmanaged.passUnretained(self).toOpaque(), UInt32(flags),
                backlog,
                pointer, length)
        }
        guard let created else {
            throw EventLoopError("cannot listen on \(address): \(String(cString: fg_socket_error_string()))")
        }
        listener = created
        evconnlistener_set_error_cb(created, listenerErrorTrampoline)
        resumeTimer = Timer(base: base) { [unowned self] in
            self.pausedAfterError = false
            self.apply()
        }
    }

    deinit {
        if let listener { evconnlistener_free(listener) }
    }

    /// Fails when something already listens on `address`. SO_REUSEPORT listeners (FormGate's
    /// workers) would otherwise share the port with another process bound the same way, e.g.
    /// an old FormGate that did not exit, and silently split the traffic with it. A probe
    /// bound without SO_REUSEPORT finds any such listener.
    public static func checkAvailable(_ address: SocketAddress) throws(EventLoopError) {
        let fd = address.withSockAddr { pointer, _ in
            socket(Int32(pointer.pointee.sa_family), Int32(SOCK_STREAM.rawValue), 0)
        }
        guard fd >= 0 else { throw EventLoopError.system("socket for the address probe", errno) }
        defer { Glibc.close(fd) }
        var one: Int32 = 1
        guard setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw EventLoopError.system("setsockopt(SO_REUSEADDR) for the address probe", errno)
        }
        let result = address.withSockAddr { pointer, length in bind(fd, pointer, socklen_t(length)) }
        if result != 0, errno == EADDRINUSE {
            throw EventLoopError(
                "cannot listen on \(address): address already in use (another process listens there)")
        }
    }

    /// The address actually bound (its port when asked for port 0).
    public var boundAddress: SocketAddress? {
        guard let listener else { return nil }
        return SocketAddress.local(of: evconnlistener_get_fd(listener))
    }

    /// Stops accepting (the socket stays bound).
    public func disable() {
        wanted = false
        apply()
    }

    /// Resumes accepting (once a pause after a failed `accept()` is over).
    public func enable() {
        wanted = true
        apply()
    }

    /// Enables or disables the libevent listener when the wanted state changed.
    private func apply() {
        guard let listener else { return }
        let next = wanted && !pausedAfterError
        guard next != accepting else { return }
        accepting = next
        if (next ? evconnlistener_enable(listener) : evconnlistener_disable(listener)) != 0 {
            EventLoopFailures.record("evconnlistener_\(next ? "enable" : "disable") failed")
        }
    }

    fileprivate func accept(_ fd: Int32, _ address: SocketAddress) {
        base.dispatch { onAccept(fd, address) }
    }

    fileprivate func acceptFailed(_ error: Int32) {
        base.dispatch {
            pausedAfterError = true
            apply()
            resumeTimer?.schedule(milliseconds: Self.errorPauseMilliseconds)
            onAcceptError(error)
        }
    }
}

private func listenerTrampoline(
    _ listener: OpaquePointer?, _ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: Int32,
    _ context: UnsafeMutableRawPointer?
) {
    let peer = address.map { SocketAddress(pointer: $0, length: socklen_t(length)) } ?? SocketAddress.unknown
    Unmanaged<Listener>.fromOpaque(context!).takeUnretainedValue().accept(fd, peer)
}

/// libevent calls this right after `accept()` failed with a non-retriable error (it retries
/// EINTR, EAGAIN and ECONNABORTED itself), with `errno` still that failure's.
private func listenerErrorTrampoline(_ listener: OpaquePointer?, _ context: UnsafeMutableRawPointer?) {
    let error = errno
    Unmanaged<Listener>.fromOpaque(context!).takeUnretainedValue().acceptFailed(error)
}
