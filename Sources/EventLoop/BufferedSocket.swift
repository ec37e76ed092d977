import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// What a socket reports besides data: connected, end of file, error, timeout (the bits of
/// libevent's `BEV_EVENT_*`, whose meaning they keep).
public struct SocketEvents: OptionSet, Sendable {
    public let rawValue: Int16
    public init(rawValue: Int16) { self.rawValue = rawValue }

    public static let reading = SocketEvents(rawValue: 0x01)
    public static let writing = SocketEvents(rawValue: 0x02)
    public static let endOfFile = SocketEvents(rawValue: 0x10)
    public static let error = SocketEvents(rawValue: 0x20)
    public static let timeout = SocketEvents(rawValue: 0x40)
    public static let connected = SocketEvents(rawValue: 0x80)
}

/// Receives a socket's callbacks on the loop thread.
public protocol BufferedSocketDelegate: AnyObject {
    /// Input arrived.
    func socketReadable(_ socket: BufferedSocket)
    /// Output drained to the write low watermark.
    func socketWritable(_ socket: BufferedSocket)
    /// Connected, end of file, error or timeout.
    func socket(_ socket: BufferedSocket, events: SocketEvents)
}

/// A TCP connection, plain or TLS, with an input and an output `evbuffer`, a read event, a
/// write event and read/write inactivity timeouts. One model for both: the socket owns the
/// buffers and the events, and a `SocketTransport` moves bytes (`recv`/`writev` for plain
/// TCP, `SSL_read`/`SSL_write` for TLS). No libevent structure is touched but through its API.
///
/// Reading: while reading is enabled and the input holds less than the read high watermark,
/// a read event takes what the kernel holds (in reads of up to `maxSingleRead`, at most
/// `maxReadPerWake` per wake-up) and then calls `socketReadable`. At the watermark the read
/// event is disarmed; it is armed again when the input drains below it. An end of file or an
/// error after data is reported on the next turn, after the data.
///
/// Writing: what a callback queues is written as soon as the outermost callback of the loop
/// returns (`EventBase.dispatch`); only what the kernel does not take waits for a write event.
/// `socketWritable` follows a write that leaves the output at or below the write low watermark.
///
/// The C side holds one retain of this object from creation until `close()`, which closes
/// the descriptor and releases it: exactly once.
public final class BufferedSocket {
    /// The most one write moves (one `writev` of up to 128 chains): with more queued, fewer
    /// system calls and loop turns per byte.
    public static let maxSingleWrite = 256 * 1024
    /// The most one read takes: one `readv` into up to `PlainTransport.readVectors` chains
    /// (TLS reads a record at a time). With the proxy's 256 KiB watermark, one system call
    /// per wake-up instead of five `recv`s of 64 KiB. A little under 256 KiB: libevent sizes a
    /// new chain as the request plus its chain header rounded up to a power of two, so 256 KiB
    /// exactly would take a 512 KiB chain (1 MB allocated per 4 KiB request, seen in the bench
    /// profile).
    static let maxSingleRead = 256 * 1024 - 256
    /// The first read of a socket, and the least a read asks for: 16 KiB chains (less the
    /// chain header, as above). A small request's head or an upstream's small answer then
    /// takes a 16 KiB chain, not a 256 KiB one whose free makes glibc consolidate its fast
    /// bins (seen in the h2 4 KiB profile); `readSize` grows to `maxSingleRead` as reads fill.
    static let minSingleRead = 16 * 1024 - 256
    static let midSingleRead = 64 * 1024 - 256
    /// The most read in one wake-up when no high watermark bounds it, so one busy
    /// connection cannot hold the loop.
    static let maxReadPerWake = 1024 * 1024
    /// The most written in one wake-up.
    static let maxWritePerWake = 4 * maxSingleWrite

    /// Where the connection is in its life.
    enum Phase {
        /// Waiting for the resolver (no descriptor yet).
        case resolving
        /// `connect()` is under way.
        case connecting
        /// The TLS handshake is under way.
        case handshaking
        /// Connected: data flows.
        case open
        /// The connect or the handshake failed (reported): nothing more happens until `close()`.
        case failed
        /// `close()` was called.
        case closed
    }

    /// Receives callbacks; held until `close()` clears it (an open socket keeps itself alive
    /// for the C side, and its delegate with it). Not weak: a weak reference gives the object
    /// a side table, and every retain and release of it (a connection, per event) then took
    /// the runtime's slow path, 5% of the proxy's CPU under h2 4 KiB uploads (`perf`).
    public var delegate: (any BufferedSocketDelegate)?
    /// Whether the connection runs TLS.
    public var isTLS: Bool { transport.isTLS }
    /// Whether `close()` has not been called yet.
    public var isOpen: Bool { phase != .closed }
    /// The socket's file descriptor (-1 after `close()` or before connecting).
    public internal(set) var fd: Int32 = -1

    /// The loop the socket lives on.
    unowned let base: EventBase
    let transport: any SocketTransport
    let inputBuffer: OpaquePointer
    let outputBuffer: OpaquePointer
    // The state below belongs to BufferedSocket+IO.swift as much as to this file.
    var phase: Phase
    var readEvent: OpaquePointer?
    var writeEvent: OpaquePointer?
    /// Runs work on the loop's next turn: a resolved address, a connect that failed at once,
    /// input TLS already holds, an end of file seen after data.
    var deferredEvent: OpaquePointer?
    var deferredScheduled = false
    /// Calls on the input (while paused at the watermark) and output (while nothing is
    /// queued or waiting) buffers, so that a drain resumes reading and new output is written.
    var inputWatch: OpaquePointer?
    var outputWatch: OpaquePointer?
    var inputWatched = false
    var outputWatched = false
    var readingWanted = false
    var readArmed = false
    var writeArmed = false
    /// Whether libevent may still hold a timeout of the read (write) event, armed or
    /// remembered: clearing it then takes more than `event_add(ev, NULL)` (`addEvent`).
    var readEventTimed = false
    var writeEventTimed = false
    var queuedForWrite = false
    /// Output is left that the kernel did not take: wait for the write event.
    var waitingToWrite = false
    /// TLS needs the other direction's readiness to go on.
    var readWaitsForWritable = false
    var writeWaitsForReadable = false
    /// What the handshake waits for.
    var handshakeWaits = SocketReadiness.readable
    /// An end of file or error seen after data, reported on the next read turn.
    var deferredReport: SocketEvents?
    /// A connect that failed before the loop could report it.
    var connectFailure: Int32?
    var readHigh = 0
    /// What the next read asks for: one step up (`minSingleRead`, `midSingleRead`,
    /// `maxSingleRead`) after a read that filled what it asked, one down after one that took
    /// less than an eighth of it.
    var readSize = minSingleRead
    var writeLow = 0
    var readTimeoutMilliseconds: Int64 = 0
    var writeTimeoutMilliseconds: Int64 = 0
    var resolution: PendingResolution?

    init(base: EventBase, transport: any SocketTransport, phase: Phase) throws(EventLoopError) {
        guard let input = evbuffer_new() else { throw EventLoopError("evbuffer_new failed") }
        guard let output = evbuffer_new() else {
            evbuffer_free(input)
            throw EventLoopError("evbuffer_new failed")
        }
        self.base = base
        self.transport = transport
        self.phase = phase
        inputBuffer = input
        outputBuffer = output
        // Plain sockets write file segments (`evbuffer_add_file`) with sendfile; TLS must see
        // their bytes, so there they are mapped instead.
        if !transport.isTLS, evbuffer_set_flags(output, UInt64(EVBUFFER_FLAG_DRAINS_TO_FD)) != 0 {
            throw EventLoopError("evbuffer_set_flags failed")
        }
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard let deferred = event_new(base.raw, -1, 0, deferredTrampoline, context),
            let inputWatch = evbuffer_add_cb(input, inputTrampoline, context),
            let outputWatch = evbuffer_add_cb(output, outputTrampoline, context)
        else {
            throw EventLoopError("event_new/evbuffer_add_cb failed")
        }
        deferredEvent = deferred
        self.inputWatch = inputWatch
        self.outputWatch = outputWatch
        setWatch(inputWatch, on: input, enabled: false)
        setWatch(outputWatch, on: output, enabled: false)
        _ = Unmanaged.passRetained(self)  // the C side's reference, released by close()
    }

    deinit {
        if let deferredEvent { event_free(deferredEvent) }
        evbuffer_free(inputBuffer)
        evbuffer_free(outputBuffer)
    }

    /// Wraps an accepted socket (made non-blocking; closed with the socket).
    ///
    /// - Parameter tls: a server TLS context: the handshake starts on the loop's next turn
    ///   (after the caller has set the delegate) and `.connected` is reported when it is done,
    ///   `.error` when it fails. The socket keeps `tls` alive.
    /// - Throws: `EventLoopError` when `fd` is not an open descriptor or the buffers and
    ///   events cannot be made; `fd` is closed then.
    public static func accepted(base: EventBase, fd: Int32, tls: TLSServerContext? = nil)
        throws(EventLoopError)
        -> BufferedSocket
    {
        let socket: BufferedSocket
        do throws(EventLoopError) {
            guard evutil_make_socket_nonblocking(fd) == 0 else {
                throw EventLoopError.system("fcntl(O_NONBLOCK)", errno)
            }
            var transport: any SocketTransport = PlainTransport()
            if let tls { transport = TLSTransport(ssl: try tls.makeSSL(), settings: tls) }
            socket = try BufferedSocket(
                base: base, transport: transport, phase: tls == nil ? .open : .handshaking)
        } catch {
            Glibc.close(fd)
            throw error
        }
        do throws(EventLoopError) {
            try socket.attach(fd)
        } catch {
            socket.close()
            throw error
        }
        socket.disableNagle()
        if tls != nil { socket.scheduleDeferred() } else { socket.updateWriteEvent() }
        return socket
    }

    /// Starts connecting to `host:port`; host names are resolved with the loop's evdns.
    /// Completion is reported as `.connected` or `.error` to the delegate, from the loop.
    ///
    /// - Parameter tls: a client TLS context; the connection verifies the certificate against
    ///   `host` and sends it as SNI; `.connected` follows the handshake.
    /// - Throws: `EventLoopError` when no socket can be made (out of descriptors) or the name
    ///   cannot be resolved at once.
    public static func connect(
        base: EventBase, host: String, port: Int, tls: TLSClientContext?, delegate: any BufferedSocketDelegate
    ) throws(EventLoopError) -> BufferedSocket {
        var transport: any SocketTransport = PlainTransport()
        if let tls { transport = TLSTransport(ssl: try tls.makeSSL(host: host)) }
        let socket = try BufferedSocket(base: base, transport: transport, phase: .resolving)
        socket.delegate = delegate
        do throws(EventLoopError) {
            if let literal = try? SocketAddress(
                parsing: host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)")
            {
                try socket.startConnecting(to: literal)
            } else {
                try socket.resolve(host: host, port: port)
            }
        } catch {
            socket.close()
            throw error
        }
        return socket
    }

    /// Starts connecting to `address` (a numeric IP address and port, or a Unix socket),
    /// without TLS. Completion is reported as `.connected` or `.error` to the delegate.
    ///
    /// - Throws: `EventLoopError` when no socket can be made (out of descriptors).
    public static func connect(
        base: EventBase, address: SocketAddress, delegate: any BufferedSocketDelegate
    ) throws(EventLoopError) -> BufferedSocket {
        let socket = try BufferedSocket(base: base, transport: PlainTransport(), phase: .resolving)
        socket.delegate = delegate
        do throws(EventLoopError) {
            try socket.startConnecting(to: address)
        } catch {
            socket.close()
            throw error
        }
        return socket
    }

    /// Bytes received and not yet consumed (empty after `close()`).
    public var input: EvBuffer { EvBuffer(inputBuffer) }
    /// At most the memory the input's chains take: what the reads since the input was last
    /// found empty reserved, each rounded up as libevent sizes a new chain (the request and
    /// its header, to a power of two). A read that ended short leaves its chain partly empty.
    public internal(set) var inputFootprint = 0
    /// Bytes queued for sending.
    public var output: EvBuffer { EvBuffer(outputBuffer) }

    /// Starts or stops reading (backpressure).
    public func setReading(_ enabled: Bool) {
        guard phase != .closed else { return }
        readingWanted = enabled
        updateReadEvent()
    }

    /// Enables reading (writing is always on once connected).
    public func enable() {
        setReading(true)
    }

    /// Sets the read high watermark (reading pauses while the input holds that much; 0 = no
    /// limit) and the write low watermark (the write callback fires when output drains to it).
    public func setWatermarks(readHigh: Int, writeLow: Int) {
        self.readHigh = readHigh
        self.writeLow = writeLow
        updateReadEvent()
    }

    /// Sets the read and write inactivity timeouts (0 = none). A pending read or write
    /// restarts its clock; 0 removes a running timeout for good.
    public func setTimeouts(readMilliseconds: Int64, writeMilliseconds: Int64) {
        readTimeoutMilliseconds = readMilliseconds
        writeTimeoutMilliseconds = writeMilliseconds
        if readArmed, let readEvent {
            addEvent(readEvent, timeout: currentReadTimeout, timed: &readEventTimed)
        }
        if writeArmed, let writeEvent {
            addEvent(writeEvent, timeout: currentWriteTimeout, timed: &writeEventTimed)
        }
    }

    /// Sends a FIN after what is queued has been written (TLS: close_notify first); reading
    /// goes on. Call once the output buffer is empty.
    public func shutdownWrite() {
        guard phase == .open, fd >= 0 else { return }
        transport.finishSending(fd)
        if Glibc.shutdown(fd, Int32(SHUT_WR)) != 0, errno != ENOTCONN {
            // ENOTCONN: the peer is already gone, there is nothing to end.
            EventLoopFailures.record(EventLoopError.system("shutdown(SHUT_WR)", errno).message)
        }
    }

    /// Turns off Nagle's algorithm (small heads and chunk trailers go out at once).
    public func setNoDelay() {
        disableNagle()
    }

    /// The protocol agreed in TLS's ALPN (`http/1.1`), once the handshake is done.
    public var applicationProtocol: String? { transport.applicationProtocol }

    /// Whether the TLS handshake resumed an earlier session.
    public var resumedSession: Bool { transport.resumedSession }

    /// Why the TLS handshake failed (after `.error` was reported during it).
    public var tlsHandshakeError: TLSHandshakeError? {
        guard phase == .failed else { return nil }
        return (transport as? TLSTransport)?.handshakeError ?? .closed
    }

    /// The OpenSSL error of a failed TLS connection, if any.
    public var tlsError: String? {
        isTLS ? transport.failureDescription : nil
    }

    /// Closes the connection (TLS: a close_notify is attempted first), empties the buffers
    /// and drops the C side's reference. Safe to call more than once.
    public func close() {
        guard phase != .closed else { return }
        let wasOpen = phase == .open
        phase = .closed
        delegate = nil
        resolution?.cancel()
        resolution = nil
        if let inputWatch { _ = evbuffer_remove_cb_entry(inputBuffer, inputWatch) }  // 0: it is registered
        if let outputWatch { _ = evbuffer_remove_cb_entry(outputBuffer, outputWatch) }  // likewise
        inputWatch = nil
        outputWatch = nil
        for event in [readEvent, writeEvent] { if let event { event_free(event) } }
        readEvent = nil
        writeEvent = nil
        if let deferredEvent { event_free(deferredEvent) }
        deferredEvent = nil
        if fd >= 0 {
            if wasOpen { transport.finishSending(fd) }
            Glibc.close(fd)
            fd = -1
        }
        drain(inputBuffer)
        drain(outputBuffer)
        Unmanaged.passUnretained(self).release()
    }

    private func drain(_ buffer: OpaquePointer) {
        if evbuffer_drain(buffer, evbuffer_get_length(buffer)) != 0 {
            EventLoopFailures.record("evbuffer_drain failed on close")
        }
    }

    /// Sets TCP_NODELAY. It fails only on sockets that are not TCP (a Unix socket pair in
    /// tests), where there is no Nagle to turn off.
    private func disableNagle() {
        guard fd >= 0, fg_set_nodelay(fd) != 0 else { return }
        let code = errno
        if code != EOPNOTSUPP, code != ENOTSUP, code != EPROTONOSUPPORT {
            EventLoopFailures.record(EventLoopError.system("setsockopt(TCP_NODELAY)", code).message)
        }
    }
}
