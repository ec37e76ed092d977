import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

extension BufferedSocket {
    /// Resolves `host` with the loop's evdns; the first address is connected to from the
    /// loop's next turn.
    ///
    /// - Throws: `EventLoopError` when there is no resolver or the name fails at once (a
    ///   malformed name, one `/etc/hosts` does not know where no DNS is configured).
    func resolve(host: String, port: Int) throws(EventLoopError) {
        guard let dns = base.dns else { throw EventLoopError("cannot resolve \(host): no DNS resolver") }
        let pending = PendingResolution(socket: self, host: host)
        resolution = pending
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = EVUTIL_AI_ADDRCONFIG
        let context = Unmanaged.passRetained(pending).toOpaque()  // released by the callback
        let request = evdns_getaddrinfo(dns, host, String(port), &hints, resolvedTrampoline, context)
        // NULL: answered at once (a literal or /etc/hosts), the callback has already run.
        pending.request = request
        if let failure = pending.failure { throw EventLoopError("cannot resolve \(host): \(failure)") }
    }

    /// The resolver answered (from the loop, or at once inside `resolve`).
    func resolved(_ pending: PendingResolution) {
        guard resolution === pending, phase == .resolving else { return }
        pending.request = nil
        if pending.address != nil {
            scheduleDeferred()
        } else if pending.answeredLater {
            resolution = nil
            report([.error])
        }
    }
}

/// One name being resolved for a socket. The C callback holds a retain until it runs, which
/// it does exactly once, also after `cancel()` (with EVUTIL_EAI_CANCEL), so it may outlive the
/// socket.
final class PendingResolution {
    weak var socket: BufferedSocket?
    let host: String
    var request: OpaquePointer?
    var address: SocketAddress?
    var failure: String?
    /// Whether the answer came from the loop rather than inside `evdns_getaddrinfo`.
    var answeredLater = false
    private var inFlight = true

    init(socket: BufferedSocket, host: String) {
        self.socket = socket
        self.host = host
    }

    /// Stops the lookup; the callback still runs once, later, and finds no socket.
    func cancel() {
        socket = nil
        if inFlight, let request { evdns_getaddrinfo_cancel(request) }
        request = nil
    }

    fileprivate func answered(_ code: Int32, _ list: UnsafeMutablePointer<addrinfo>?) {
        inFlight = false
        answeredLater = request != nil
        if code == 0, let first = list, let pointer = first.pointee.ai_addr {
            address = SocketAddress(pointer: pointer, length: socklen_t(first.pointee.ai_addrlen))
        } else {
            failure = String(cString: evutil_gai_strerror(code))
        }
        if let list { evutil_freeaddrinfo(list) }
        guard let socket else { return }
        socket.base.dispatch { socket.resolved(self) }
    }
}

private func resolvedTrampoline(
    _ code: Int32, _ list: UnsafeMutablePointer<addrinfo>?, _ context: UnsafeMutableRawPointer?
) {
    Unmanaged<PendingResolution>.fromOpaque(context!).takeRetainedValue().answered(code, list)
}
