import CCrypto
import CEventWrite
import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// What a bufferevent reports besides data: connected, end of file, error, timeout.
public struct SocketEvents: OptionSet, Sendable {
    public let rawValue: Int16
    public init(rawValue: Int16) { self.rawValue = rawValue }

    public static let reading = SocketEvents(rawValue: FG_BEV_EVENT_READING)
    public static let writing = SocketEvents(rawValue: FG_BEV_EVENT_WRITING)
    public static let endOfFile = SocketEvents(rawValue: FG_BEV_EVENT_EOF)
    public static let error = SocketEvents(rawValue: FG_BEV_EVENT_ERROR)
    public static let timeout = SocketEvents(rawValue: FG_BEV_EVENT_TIMEOUT)
    public static let connected = SocketEvents(rawValue: FG_BEV_EVENT_CONNECTED)
}

/// Receives a socket's callbacks on the loop thread.
public protocol BufferedSocketDelegate: AnyObject {
    /// Input arrived (above the read low watermark).
    func socketReadable(_ socket: BufferedSocket)
    /// Output drained to the write low watermark.
    func socketWritable(_ socket: BufferedSocket)
    /// Connected, end of file, error or timeout.
    func socket(_ socket: BufferedSocket, events: SocketEvents)
}

/// A TCP (optionally TLS) connection as a libevent `bufferevent`.
///
/// The C side holds one retain of this object from creation until `close()`, which frees the
/// bufferevent (closing the socket) and releases it: exactly once.
public final class BufferedSocket {
    /// The underlying `struct bufferevent *`; `nil` after `close()`.
    public private(set) var raw: OpaquePointer?
    /// Receives callbacks; cleared by `close()`.
    public weak var delegate: (any BufferedSocketDelegate)?
    /// Whether the connection runs TLS.
    public let isTLS: Bool

    /// The most one write moves (libevent's default is 16 KiB): with more queued, fewer
    /// system calls and loop turns per byte. (Reads: see `readAhead()`.)
    public static let maxSingleWrite = 256 * 1024
    /// What libevent 2.1 reads at most per wake-up (`evbuffer_read` caps each read at
    /// EVBUFFER_MAX_READ, whatever the bufferevent's max single read says).
    static let libeventReadCap = 4096

    /// The loop the socket lives on.
    unowned let base: EventBase
    /// Whether queued output is written as soon as the callback that queued it returns
    /// (plain TCP, once connected); TLS goes through libevent's write event.
    private var writesDirectly: Bool
    /// In `base.pendingWrites`.
    private var queuedForWrite = false

    private init(raw: OpaquePointer, base: EventBase, isTLS: Bool, connected: Bool) {
        self.raw = raw
        self.base = base
        self.isTLS = isTLS
        self.writesDirectly = connected && !isTLS
        bufferevent_set_max_single_write(raw, Self.maxSingleWrite)
        let context = Unmanaged.passRetained(self).toOpaque()
        bufferevent_setcb(raw, readTrampoline, writeTrampoline, eventTrampoline, context)
        if !isTLS, let output = bufferevent_get_output(raw) {
            _ = evbuffer_add_cb(output, outputTrampoline, context)
        }
    }

    /// Wraps an accepted socket (non-blocking, closed with the bufferevent).
    public static func accepted(base: EventBase, fd: Int32) throws(EventLoopError) -> BufferedSocket {
        evutil_make_socket_nonblocking(fd)
        _ = fg_set_nodelay(fd)
        guard let raw = bufferevent_socket_new(base.raw, fd, Int32(BEV_OPT_CLOSE_ON_FREE.rawValue)) else {
            Glibc.close(fd)
            throw EventLoopError("bufferevent_socket_new failed")
        }
        return BufferedSocket(raw: raw, base: base, isTLS: false, connected: true)
    }

    /// Starts connecting to `host:port`; host names are resolved with the loop's evdns.
    /// Completion is reported as `.connected` or `.error` to the delegate.
    ///
    /// - Parameter tls: a client TLS context; the connection verifies the certificate against
    ///   `host` and sends it as SNI.
    public static func connect(
        base: EventBase, host: String, port: Int, tls: TLSClientContext?, delegate: any BufferedSocketDelegate
    ) throws(EventLoopError) -> BufferedSocket {
        let options = Int32(BEV_OPT_CLOSE_ON_FREE.rawValue)
        let raw: OpaquePointer?
        if let tls {
            let ssl = try tls.makeSSL(host: host)
            raw = bufferevent_openssl_socket_new(base.raw, -1, ssl, BUFFEREVENT_SSL_CONNECTING, options)
        } else {
            raw = bufferevent_socket_new(base.raw, -1, options)
        }
        guard let raw else { throw EventLoopError("bufferevent_socket_new failed") }
        let socket = BufferedSocket(raw: raw, base: base, isTLS: tls != nil, connected: false)
        socket.delegate = delegate
        let result: Int32
        if let literal = try? SocketAddress(
            parsing: host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)")
        {
            result = literal.withSockAddr { bufferevent_socket_connect(raw, $0, $1) }
        } else {
            result = bufferevent_socket_connect_hostname(raw, base.dns, AF_UNSPEC, host, Int32(port))
        }
        guard result == 0 else {
            socket.close()
            throw EventLoopError("connect to \(host):\(port) failed")
        }
        return socket
    }

    /// Bytes received and not yet consumed.
    public var input: EvBuffer { EvBuffer(bufferevent_get_input(raw!)) }
    /// Bytes queued for sending.
    public var output: EvBuffer { EvBuffer(bufferevent_get_output(raw!)) }

    /// Starts or stops reading (backpressure).
    public func setReading(_ enabled: Bool) {
        guard let raw else { return }
        if enabled {
            if let input = bufferevent_get_input(raw) { inputAfterDelegate = evbuffer_get_length(input) }
            bufferevent_enable(raw, FG_EV_READ)
        } else {
            bufferevent_disable(raw, FG_EV_READ)
        }
    }

    /// Enables reading and writing.
    public func enable() {
        guard let raw else { return }
        bufferevent_enable(raw, FG_EV_READ | FG_EV_WRITE)
    }

    /// Sets the read high watermark (libevent stops reading above it) and the write low
    /// watermark (the write callback fires when output drains to it).
    public func setWatermarks(readHigh: Int, writeLow: Int) {
        readAheadLimit = readHigh
        guard let raw else { return }
        bufferevent_setwatermark(raw, FG_EV_READ, 0, readHigh)
        bufferevent_setwatermark(raw, FG_EV_WRITE, writeLow, 0)
    }

    /// Sets the read and write inactivity timeouts (0 = none).
    public func setTimeouts(readMilliseconds: Int64, writeMilliseconds: Int64) {
        guard let raw else { return }
        var read = timeval(
            tv_sec: Int(readMilliseconds / 1000), tv_usec: Int((readMilliseconds % 1000) * 1000))
        var write = timeval(
            tv_sec: Int(writeMilliseconds / 1000), tv_usec: Int((writeMilliseconds % 1000) * 1000))
        withUnsafePointer(to: &read) { read in
            withUnsafePointer(to: &write) { write in
                _ = bufferevent_set_timeouts(
                    raw, readMilliseconds > 0 ? read : nil, writeMilliseconds > 0 ? write : nil)
            }
        }
    }

    /// The socket's file descriptor (-1 after `close()` or before connecting).
    public var fd: Int32 {
        guard let raw else { return -1 }
        return bufferevent_getfd(raw)
    }

    /// Sends a FIN after what is queued has been written (`shutdown(SHUT_WR)`); reading goes on.
    /// Call once the output buffer is empty.
    public func shutdownWrite() {
        let descriptor = fd
        if descriptor >= 0 { _ = Glibc.shutdown(descriptor, Int32(SHUT_WR)) }
    }

    /// Turns off Nagle's algorithm (small heads and chunk trailers go out at once).
    public func setNoDelay() {
        let descriptor = fd
        if descriptor >= 0 { _ = fg_set_nodelay(descriptor) }
    }

    /// The OpenSSL error of a failed TLS connection, if any.
    public var tlsError: String? {
        guard let raw, isTLS else { return nil }
        let code = bufferevent_get_openssl_error(raw)
        guard code != 0 else { return nil }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Frees the bufferevent (closing the socket) and drops the C side's reference. Safe to
    /// call more than once.
    public func close() {
        guard let raw else { return }
        self.raw = nil
        delegate = nil
        if isTLS, let ssl = bufferevent_openssl_get_ssl(raw) {
            SSL_set_shutdown(ssl, SSL_RECEIVED_SHUTDOWN)
            bufferevent_openssl_set_allow_dirty_shutdown(raw, 1)
        }
        bufferevent_free(raw)
        Unmanaged.passUnretained(self).release()
    }

    /// How many input bytes `readAhead()` may buffer (the read high watermark).
    private var readAheadLimit = 0
    /// The input's length when the delegate last returned: what libevent read since is the
    /// difference, and less than `libeventReadCap` means the kernel had no more.
    private var inputAfterDelegate = 0

    /// libevent 2.1 reads at most `libeventReadCap` bytes per wake-up, which costs an
    /// epoll_wait, an ioctl and a readv per 4 KiB. After its
    /// read, this takes what the kernel already holds, in reads of up to 64 KiB, until the
    /// input holds `readAheadLimit` bytes. EOF and errors are left for libevent's next read.
    private func readAhead() {
        guard let raw, !isTLS, readAheadLimit > 0 else { return }
        let fd = bufferevent_getfd(raw)
        guard fd >= 0, let input = bufferevent_get_input(raw) else { return }
        guard evbuffer_get_length(input) >= inputAfterDelegate + Self.libeventReadCap else { return }
        // libevent freezes the end of a bufferevent's input except while it reads itself.
        evbuffer_unfreeze(input, 0)
        defer { evbuffer_freeze(input, 0) }
        var length = evbuffer_get_length(input)
        while length < readAheadLimit {
            let want = min(64 * 1024, readAheadLimit - length)
            var vector = iovec()
            guard evbuffer_reserve_space(input, want, &vector, 1) >= 1, let base = vector.iov_base else {
                return
            }
            let received = recv(fd, base, min(vector.iov_len, want), 0)
            guard received > 0 else {
                vector.iov_len = 0
                evbuffer_commit_space(input, &vector, 1)
                return
            }
            vector.iov_len = received
            evbuffer_commit_space(input, &vector, 1)
            length += received
            if received < want { return }
        }
    }

    /// Output was added: write it when the current callback returns.
    fileprivate func outputGrew() {
        guard writesDirectly, !queuedForWrite, raw != nil else { return }
        queuedForWrite = true
        base.pendingWrites.append(self)
    }

    /// Writes what the kernel takes now. When the output drains, the write event libevent
    /// armed is cancelled and the delegate hears `socketWritable`, as after libevent's own
    /// write; otherwise (a full socket buffer, an error) libevent's write event carries on.
    func writeNow() {
        queuedForWrite = false
        guard let raw, writesDirectly, let output = bufferevent_get_output(raw) else { return }
        let fd = bufferevent_getfd(raw)
        guard fd >= 0, evbuffer_get_length(output) > 0 else { return }
        // As libevent's own write callback does: the start of a bufferevent's output is frozen
        // except while it is written.
        evbuffer_unfreeze(output, 1)
        let written = evbuffer_write_atmost(output, fd, Self.maxSingleWrite)
        evbuffer_freeze(output, 1)
        guard written > 0, evbuffer_get_length(output) == 0 else { return }
        fg_bufferevent_stop_writing(UnsafeMutableRawPointer(raw))
        delegate?.socketWritable(self)
    }

    fileprivate func readable() {
        readAhead()
        delegate?.socketReadable(self)
        if let raw, let input = bufferevent_get_input(raw) { inputAfterDelegate = evbuffer_get_length(input) }
    }
    fileprivate func writable() { delegate?.socketWritable(self) }
    fileprivate func event(_ events: Int16) {
        if SocketEvents(rawValue: events).contains(.connected) { writesDirectly = !isTLS }
        delegate?.socket(self, events: SocketEvents(rawValue: events))
    }
}

private func socket(_ context: UnsafeMutableRawPointer?) -> BufferedSocket {
    Unmanaged<BufferedSocket>.fromOpaque(context!).takeUnretainedValue()
}

// The callee may close (and so release) the socket; keep it alive until the call returns.
// After each callback, the output it queued on any socket of the loop is written directly.
private func readTrampoline(_ raw: OpaquePointer?, _ context: UnsafeMutableRawPointer?) {
    let target = socket(context)
    let base = target.base
    withExtendedLifetime(target) { target.readable() }
    base.flushWrites()
}

private func writeTrampoline(_ raw: OpaquePointer?, _ context: UnsafeMutableRawPointer?) {
    let target = socket(context)
    let base = target.base
    withExtendedLifetime(target) { target.writable() }
    base.flushWrites()
}

private func eventTrampoline(_ raw: OpaquePointer?, _ events: Int16, _ context: UnsafeMutableRawPointer?) {
    let target = socket(context)
    let base = target.base
    withExtendedLifetime(target) { target.event(events) }
    base.flushWrites()
}

private func outputTrampoline(
    _ buffer: OpaquePointer?, _ info: UnsafePointer<evbuffer_cb_info>?, _ context: UnsafeMutableRawPointer?
) {
    guard let info, info.pointee.n_added > 0 else { return }
    socket(context).outputGrew()
}
