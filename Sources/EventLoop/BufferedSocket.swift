import CCrypto
import CEventSupport
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

/// A TCP (optionally TLS) connection around a libevent `bufferevent`: its two buffers, its
/// write event and write timeout. Plain connections read for themselves (`readNow()`: one
/// `recv` per 64 KiB straight into the input) and write what a callback queued as soon as
/// it returns (`writeNow()`); TLS connections go through the bufferevent both ways.
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
    /// system calls and loop turns per byte.
    public static let maxSingleWrite = 256 * 1024
    /// The most one `recv` takes. Plain sockets read for themselves (`readNow()`): libevent
    /// 2.1's bufferevent asks FIONREAD before each read and then reads at most 4 KiB. A little
    /// under 64 KiB, so that with libevent's chain header each chain is one 64 KiB block
    /// (64 KiB of data would take a 128 KiB one).
    static let maxSingleRead = 64 * 1024 - 256

    /// The loop the socket lives on.
    unowned let base: EventBase
    /// Whether queued output is written as soon as the callback that queued it returns
    /// (plain TCP, once connected); TLS goes through libevent's write event.
    private var writesDirectly: Bool
    /// In `base.pendingWrites`.
    private var queuedForWrite = false
    /// Plain sockets: the read event (created once the descriptor exists), whether reading
    /// is wanted, whether it is paused because the input reached `readHigh`, and the read
    /// inactivity timeout. TLS sockets read through the bufferevent.
    private var readEvent: OpaquePointer?
    private var readingWanted = false
    private var pausedAtWatermark = false
    private var readHigh = 0
    private var readTimeoutMilliseconds: Int64 = 0

    private init(raw: OpaquePointer, base: EventBase, isTLS: Bool, connected: Bool) {
        self.raw = raw
        self.base = base
        self.isTLS = isTLS
        self.writesDirectly = connected && !isTLS
        bufferevent_set_max_single_write(raw, Self.maxSingleWrite)
        let context = Unmanaged.passRetained(self).toOpaque()
        bufferevent_setcb(raw, readTrampoline, writeTrampoline, eventTrampoline, context)
        if !isTLS, let output = bufferevent_get_output(raw), let input = bufferevent_get_input(raw) {
            _ = evbuffer_add_cb(output, outputTrampoline, context)
            _ = evbuffer_add_cb(input, inputTrampoline, context)
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
        if isTLS {
            if enabled {
                bufferevent_enable(raw, FG_EV_READ)
            } else {
                bufferevent_disable(raw, FG_EV_READ)
            }
            return
        }
        readingWanted = enabled
        updateReadEvent()
    }

    /// Enables reading and writing.
    public func enable() {
        guard let raw else { return }
        bufferevent_enable(raw, FG_EV_WRITE)
        setReading(true)
    }

    /// Sets the read high watermark (reading pauses while the input holds that much) and the
    /// write low watermark (the write callback fires when output drains to it).
    public func setWatermarks(readHigh: Int, writeLow: Int) {
        self.readHigh = readHigh
        guard let raw else { return }
        if isTLS { bufferevent_setwatermark(raw, FG_EV_READ, 0, readHigh) }
        bufferevent_setwatermark(raw, FG_EV_WRITE, writeLow, 0)
        updateReadEvent()
    }

    /// Sets the read and write inactivity timeouts (0 = none). A pending read restarts its
    /// clock, as with libevent's bufferevents.
    public func setTimeouts(readMilliseconds: Int64, writeMilliseconds: Int64) {
        guard let raw else { return }
        var read = Self.timeval(milliseconds: readMilliseconds)
        var write = Self.timeval(milliseconds: writeMilliseconds)
        if isTLS {
            withUnsafePointer(to: &read) { read in
                withUnsafePointer(to: &write) { write in
                    _ = bufferevent_set_timeouts(
                        raw, readMilliseconds > 0 ? read : nil, writeMilliseconds > 0 ? write : nil)
                }
            }
            return
        }
        withUnsafePointer(to: &write) { write in
            _ = bufferevent_set_timeouts(raw, nil, writeMilliseconds > 0 ? write : nil)
        }
        readTimeoutMilliseconds = readMilliseconds
        if let readEvent, event_pending(readEvent, FG_EV_READ, nil) != 0 {
            addReadEvent(readEvent)
        }
    }

    private static func timeval(milliseconds: Int64) -> Glibc.timeval {
        Glibc.timeval(tv_sec: Int(milliseconds / 1000), tv_usec: Int((milliseconds % 1000) * 1000))
    }

    private func addReadEvent(_ event: OpaquePointer) {
        if readTimeoutMilliseconds > 0 {
            var timeout = Self.timeval(milliseconds: readTimeoutMilliseconds)
            event_add(event, &timeout)
        } else {
            event_add(event, nil)
        }
    }

    /// Arms or disarms the read event of a plain socket: armed while reading is wanted and
    /// the input is below the high watermark.
    private func updateReadEvent() {
        guard let raw, !isTLS else { return }
        if readEvent == nil {
            let fd = bufferevent_getfd(raw)
            guard fd >= 0, readingWanted else { return }
            readEvent = event_new(
                base.raw, fd, FG_EV_READ | FG_EV_PERSIST, readEventTrampoline,
                Unmanaged.passUnretained(self).toOpaque())
        }
        guard let readEvent else { return }
        let length = bufferevent_get_input(raw).map { evbuffer_get_length($0) } ?? 0
        pausedAtWatermark = readHigh > 0 && length >= readHigh
        let armed = event_pending(readEvent, FG_EV_READ, nil) != 0
        if readingWanted && !pausedAtWatermark {
            if !armed { addReadEvent(readEvent) }
        } else if armed {
            event_del(readEvent)
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
        if let readEvent {
            event_free(readEvent)
            self.readEvent = nil
        }
        if isTLS, let ssl = bufferevent_openssl_get_ssl(raw) {
            SSL_set_shutdown(ssl, SSL_RECEIVED_SHUTDOWN)
            bufferevent_openssl_set_allow_dirty_shutdown(raw, 1)
        }
        bufferevent_free(raw)
        Unmanaged.passUnretained(self).release()
    }

    /// A plain socket's read event fired: take what the kernel holds (up to the high
    /// watermark, in `recv`s of up to 64 KiB), then tell the delegate. End of file, errors
    /// and timeouts stop reading and are reported as libevent's bufferevents report them.
    fileprivate func readNow(_ what: Int16) {
        guard let raw, let input = bufferevent_get_input(raw) else { return }
        if what & FG_EV_TIMEOUT != 0 {
            readingWanted = false
            updateReadEvent()
            delegate?.socket(self, events: [.reading, .timeout])
            return
        }
        let fd = bufferevent_getfd(raw)
        var length = evbuffer_get_length(input)
        var received = 0
        var failure: SocketEvents?
        // The end of a bufferevent's input is frozen except while it is filled.
        evbuffer_unfreeze(input, 0)
        while readHigh <= 0 || length < readHigh {
            let want = readHigh > 0 ? min(Self.maxSingleRead, readHigh - length) : Self.maxSingleRead
            var vector = iovec()
            guard evbuffer_reserve_space(input, want, &vector, 1) >= 1, let start = vector.iov_base else {
                break
            }
            let count = recv(fd, start, min(vector.iov_len, want), 0)
            if count <= 0 {
                let error = errno
                vector.iov_len = 0
                evbuffer_commit_space(input, &vector, 1)
                if count == 0 {
                    failure = [.reading, .endOfFile]
                } else if error != EAGAIN && error != EWOULDBLOCK && error != EINTR {
                    failure = [.reading, .error]
                }
                break
            }
            vector.iov_len = count
            evbuffer_commit_space(input, &vector, 1)
            length += count
            received += count
            if count < want { break }
        }
        evbuffer_freeze(input, 0)
        if let failure, received == 0 {
            readingWanted = false
            updateReadEvent()
            delegate?.socket(self, events: failure)
            return
        }
        // An end of file or error after data is seen again on the next wake-up.
        updateReadEvent()
        if received > 0 { delegate?.socketReadable(self) }
    }

    /// Input was consumed: reading resumes below the high watermark.
    fileprivate func inputShrank() {
        guard pausedAtWatermark, raw != nil else { return }
        updateReadEvent()
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

    fileprivate func readable() { delegate?.socketReadable(self) }
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

private func readEventTrampoline(_ fd: Int32, _ what: Int16, _ context: UnsafeMutableRawPointer?) {
    let target = socket(context)
    let base = target.base
    withExtendedLifetime(target) { target.readNow(what) }
    base.flushWrites()
}

private func inputTrampoline(
    _ buffer: OpaquePointer?, _ info: UnsafePointer<evbuffer_cb_info>?, _ context: UnsafeMutableRawPointer?
) {
    guard let info, info.pointee.n_deleted > 0 else { return }
    socket(context).inputShrank()
}

private func outputTrampoline(
    _ buffer: OpaquePointer?, _ info: UnsafePointer<evbuffer_cb_info>?, _ context: UnsafeMutableRawPointer?
) {
    guard let info, info.pointee.n_added > 0 else { return }
    socket(context).outputGrew()
}
