import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// The read and write paths, the connect and the handshake, and the events' arming.
extension BufferedSocket {
    /// Binds the descriptor: the transport and the read and write events.
    func attach(_ descriptor: Int32) throws(EventLoopError) {
        fd = descriptor
        try transport.attach(descriptor)
        let context = Unmanaged.passUnretained(self).toOpaque()
        readEvent = event_new(base.raw, descriptor, FG_EV_READ | FG_EV_PERSIST, readTrampoline, context)
        writeEvent = event_new(base.raw, descriptor, FG_EV_WRITE | FG_EV_PERSIST, writeTrampoline, context)
        guard readEvent != nil, writeEvent != nil else { throw EventLoopError("event_new failed") }
    }

    var currentReadTimeout: Int64 { phase == .open && readingWanted ? readTimeoutMilliseconds : 0 }
    var currentWriteTimeout: Int64 { phase == .open && waitingToWrite ? writeTimeoutMilliseconds : 0 }

    /// Whether the input holds the read high watermark or more.
    var inputFull: Bool { readHigh > 0 && evbuffer_get_length(inputBuffer) >= readHigh }

    /// Arms the read event exactly while something should be read: data (reading wanted,
    /// input below the watermark), a TLS write that waits for the peer, or the handshake.
    func updateReadEvent() {
        let paused = phase == .open && readingWanted && inputFull
        if paused != inputWatched, let inputWatch {
            inputWatched = paused
            setWatch(inputWatch, on: inputBuffer, enabled: paused)
        }
        let readsData = phase == .open && readingWanted && !paused
        let wanted: Bool
        switch phase {
        case .open: wanted = readsData || writeWaitsForReadable
        case .handshaking: wanted = handshakeWaits == .readable
        case .resolving, .connecting, .failed, .closed: wanted = false
        }
        if let readEvent, wanted != readArmed {
            readArmed = wanted
            if wanted {
                addEvent(readEvent, timeout: currentReadTimeout, timed: &readEventTimed)
            } else {
                deleteEvent(readEvent)
            }
        }
        // Input the kernel will not signal: records TLS already holds, a deferred end of file.
        if readsData, transport.hasBufferedInput || deferredReport != nil { scheduleDeferred() }
    }

    /// Arms the write event exactly while writability is awaited: the connect, the handshake,
    /// output the kernel did not take, a TLS read that waits to write.
    func updateWriteEvent() {
        let wanted: Bool
        switch phase {
        case .connecting: wanted = true
        case .handshaking: wanted = handshakeWaits == .writable
        case .open: wanted = waitingToWrite || readWaitsForWritable
        case .resolving, .failed, .closed: wanted = false
        }
        if let writeEvent, wanted != writeArmed {
            writeArmed = wanted
            if wanted {
                addEvent(writeEvent, timeout: currentWriteTimeout, timed: &writeEventTimed)
            } else {
                deleteEvent(writeEvent)
            }
        }
        // New output is written after the callback that queued it, unless a write already waits.
        let watch = phase == .open && !waitingToWrite && !queuedForWrite
        if watch != outputWatched, let outputWatch {
            outputWatched = watch
            setWatch(outputWatch, on: outputBuffer, enabled: watch)
        }
    }

    /// Adds `event` with an inactivity timeout of `milliseconds` (0: none). `timed` says
    /// whether libevent may still hold an earlier timeout of the event, and is kept up to date.
    ///
    /// libevent 2.1's `event_add(ev, NULL)` leaves a timeout the event already has in place,
    /// and a persistent event remembers its last timeout (`ev_io_timeout`) even across
    /// `event_del`, re-arming it after each wake-up. Only `event_remove_timer` forgets it, and
    /// only while the timeout is pending; so a timeout is cleared by adding the event with one
    /// and removing it at once (both in the timer heap, no system call). Events that never had
    /// a timeout (every proxied connection's) skip that.
    func addEvent(_ event: OpaquePointer, timeout milliseconds: Int64, timed: inout Bool) {
        let added: Bool
        if milliseconds > 0 {
            var delay = timeval(tv_sec: Int(milliseconds / 1000), tv_usec: Int((milliseconds % 1000) * 1000))
            added = event_add(event, &delay) == 0
            timed = true
        } else if timed {
            var placeholder = timeval(tv_sec: 1, tv_usec: 0)
            added = event_add(event, &placeholder) == 0 && event_remove_timer(event) == 0
            timed = !added
        } else {
            added = event_add(event, nil) == 0
        }
        guard added else { return fail(phase == .open ? [.reading, .error] : [.error], "event_add failed") }
    }

    func deleteEvent(_ event: OpaquePointer) {
        if event_del(event) != 0 { fail([.error], "event_del failed") }
    }

    func setWatch(_ watch: OpaquePointer, on buffer: OpaquePointer, enabled: Bool) {
        let flags = UInt32(EVBUFFER_CB_ENABLED)
        let result =
            enabled
            ? evbuffer_cb_set_flags(buffer, watch, flags) : evbuffer_cb_clear_flags(buffer, watch, flags)
        if result != 0 { EventLoopFailures.record("evbuffer_cb_set_flags failed") }
    }

    /// A C call failed under the socket: count it and report `events` from the loop.
    func fail(_ events: SocketEvents, _ message: String) {
        EventLoopFailures.record(message)
        deferredReport = events
        connectFailure = phase == .open ? nil : EIO
        scheduleDeferred()
    }

    func scheduleDeferred() {
        guard !deferredScheduled, let deferredEvent else { return }
        deferredScheduled = true
        event_active(deferredEvent, Int32(FG_EV_TIMEOUT), 0)
    }

    /// Stops both directions and tells the delegate; before the connection is open, the
    /// socket is then `.failed`.
    func report(_ events: SocketEvents) {
        if phase != .open, phase != .closed { phase = .failed }
        readingWanted = false
        waitingToWrite = false
        updateReadEvent()
        updateWriteEvent()
        delegate?.socket(self, events: events)
    }

    // MARK: events

    func readFired(_ what: Int16) {
        switch phase {
        case .handshaking:
            continueHandshake()
        case .open:
            if what & FG_EV_TIMEOUT != 0, readingWanted {
                readingWanted = false
                updateReadEvent()
                delegate?.socket(self, events: [.reading, .timeout])
                return
            }
            if writeWaitsForReadable {
                writeWaitsForReadable = false
                writeNow()
            }
            readNow()
        case .resolving, .connecting, .failed, .closed:
            break
        }
    }

    func writeFired(_ what: Int16) {
        switch phase {
        case .connecting:
            finishConnecting()
        case .handshaking:
            continueHandshake()
        case .open:
            if what & FG_EV_TIMEOUT != 0, waitingToWrite {
                waitingToWrite = false
                updateWriteEvent()
                delegate?.socket(self, events: [.writing, .timeout])
                return
            }
            if readWaitsForWritable {
                readWaitsForWritable = false
                updateWriteEvent()
                readNow()
            }
            if waitingToWrite, phase == .open {
                waitingToWrite = false
                writeNow()
            }
        case .resolving, .failed, .closed:
            break
        }
    }

    /// The loop's next turn after `scheduleDeferred()`.
    func deferredFired() {
        deferredScheduled = false
        switch phase {
        case .resolving, .connecting, .handshaking:
            if connectFailure != nil {
                connectFailure = nil
                report([.error])
            } else if phase == .handshaking {
                // An accepted TLS socket starts its handshake here (`accepted(base:fd:tls:)`).
                continueHandshake()
            } else if phase == .resolving, let address = resolution?.address {
                resolution = nil
                do throws(EventLoopError) {
                    try startConnecting(to: address)
                } catch {
                    report([.error])
                }
            }
        case .open:
            readNow()
        case .failed, .closed:
            break
        }
    }

    // MARK: reading

    /// Takes what the transport gives (up to the watermark and the per-wake budget), then
    /// tells the delegate. An end of file or error stops reading; after data it waits for the
    /// next turn.
    func readNow() {
        guard phase == .open, readingWanted, !inputFull else { return }
        if let report = deferredReport {
            deferredReport = nil
            return self.report(report)
        }
        var length = evbuffer_get_length(inputBuffer)
        if length == 0 { inputFootprint = 0 }
        var received = 0
        var failure: SocketEvents?
        reading: while (readHigh <= 0 || length < readHigh) && received < Self.maxReadPerWake {
            let want = readHigh > 0 ? min(readSize, readHigh - length) : readSize
            inputFootprint += Self.chainFootprint(want)
            switch transport.read(fd, into: inputBuffer, limit: want) {
            case .moved(let count, let drained):
                length += count
                received += count
                if count >= readSize {
                    readSize = readSize < Self.midSingleRead ? Self.midSingleRead : Self.maxSingleRead
                } else if count < readSize / 8 {
                    readSize = readSize > Self.midSingleRead ? Self.midSingleRead : Self.minSingleRead
                }
                if drained { break reading }
            case .blocked(.readable):
                break reading
            case .blocked(.writable):
                readWaitsForWritable = true
                updateWriteEvent()
                break reading
            case .endOfFile:
                failure = [.reading, .endOfFile]
                break reading
            case .failed:
                failure = [.reading, .error]
                break reading
            }
        }
        if let failure {
            guard received > 0 else { return report(failure) }
            deferredReport = failure
        }
        // The delegate usually takes the input (a pass-through moves it on): deciding about
        // the watermark after it returns keeps the read event armed, where disarming and
        // re-arming within the turn would still cost an epoll_ctl per wake-up.
        if received > 0 { delegate?.socketReadable(self) }
        updateReadEvent()
    }

    /// The most a reservation of `count` bytes allocates: libevent's chain for it, the request
    /// and the chain's header (less than 256 bytes) rounded up to a power of two.
    static func chainFootprint(_ count: Int) -> Int {
        1 << (Int.bitWidth - (max(count, 768) + 255).leadingZeroBitCount)
    }

    /// Input was consumed while reading was paused at the watermark.
    func inputShrank() {
        guard inputWatched, !inputFull else { return }
        updateReadEvent()
    }

    // MARK: writing

    /// Output was added: write it when the running callback returns.
    func outputGrew() {
        guard phase == .open, !queuedForWrite, !waitingToWrite else { return }
        queuedForWrite = true
        updateWriteEvent()
        base.queueWrite(self)
    }

    /// Called by `EventBase.flushWrites()`.
    func writeQueued() {
        queuedForWrite = false
        guard phase == .open else { return }
        writeNow()
    }

    /// Writes what the kernel takes now (at most `maxWritePerWake`); the rest waits for the
    /// write event. A write that leaves the output at or below the low watermark is followed
    /// by `socketWritable`.
    func writeNow() {
        var sent = 0
        var failed = false
        writing: while case let length = evbuffer_get_length(outputBuffer), length > 0,
            sent < Self.maxWritePerWake
        {
            let offered = min(length, Self.maxSingleWrite)
            switch transport.write(fd, from: outputBuffer, limit: offered) {
            case .moved(let count, _):
                sent += count
                // The kernel took less than offered: its buffer is full (plain sockets).
                if !transport.isTLS, count < offered { break writing }
            case .blocked(.writable):
                break writing
            case .blocked(.readable):
                writeWaitsForReadable = true
                break writing
            case .endOfFile, .failed:
                failed = true
                break writing
            }
        }
        if failed { return report([.writing, .error]) }
        let left = evbuffer_get_length(outputBuffer)
        waitingToWrite = left > 0 && !writeWaitsForReadable
        updateWriteEvent()
        if writeWaitsForReadable { updateReadEvent() }
        if sent > 0, left <= writeLow { delegate?.socketWritable(self) }
    }

    // MARK: connecting

    /// Opens a non-blocking socket and starts `connect()`; the result comes from the loop.
    func startConnecting(to address: SocketAddress) throws(EventLoopError) {
        let family = address.withSockAddr { pointer, _ in Int32(pointer.pointee.sa_family) }
        let descriptor = socket(
            family, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw EventLoopError.system("socket", errno) }
        try attach(descriptor)
        phase = .connecting
        let result = address.withSockAddr { Glibc.connect(descriptor, $0, socklen_t($1)) }
        if result != 0, errno != EINPROGRESS {
            connectFailure = errno
            scheduleDeferred()
            return
        }
        updateWriteEvent()
    }

    /// The connect finished (the socket became writable): report it, or start the handshake.
    func finishConnecting() {
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length) != 0 { code = errno }
        guard code == 0 else { return report([.error]) }
        if transport.isTLS {
            phase = .handshaking
            continueHandshake()
        } else {
            becameOpen()
        }
    }

    func continueHandshake() {
        switch transport.handshake(fd) {
        case .moved:
            becameOpen()
        case .blocked(let readiness):
            handshakeWaits = readiness
            updateReadEvent()
            updateWriteEvent()
        case .endOfFile, .failed:
            report([.error])
        }
    }

    /// Connected (and past the handshake): data flows; output queued before is written.
    private func becameOpen() {
        phase = .open
        updateWriteEvent()
        updateReadEvent()
        delegate?.socket(self, events: .connected)
        if phase == .open, evbuffer_get_length(outputBuffer) > 0 { outputGrew() }
    }
}

private func socket(_ context: UnsafeMutableRawPointer?) -> BufferedSocket {
    Unmanaged<BufferedSocket>.fromOpaque(context!).takeUnretainedValue()
}

// The callee may close (and so release) the socket; keep it alive until the call returns.
private func readTrampoline(_ fd: Int32, _ what: Int16, _ context: UnsafeMutableRawPointer?) {
    let target = socket(context)
    target.base.dispatch { withExtendedLifetime(target) { target.readFired(what) } }
}

private func writeTrampoline(_ fd: Int32, _ what: Int16, _ context: UnsafeMutableRawPointer?) {
    let target = socket(context)
    target.base.dispatch { withExtendedLifetime(target) { target.writeFired(what) } }
}

func deferredTrampoline(_ fd: Int32, _ what: Int16, _ context: UnsafeMutableRawPointer?) {
    let target = socket(context)
    target.base.dispatch { withExtendedLifetime(target) { target.deferredFired() } }
}

func inputTrampoline(
    _ buffer: OpaquePointer?, _ info: UnsafePointer<evbuffer_cb_info>?, _ context: UnsafeMutableRawPointer?
) {
    guard let info, info.pointee.n_deleted > 0 else { return }
    socket(context).inputShrank()
}

func outputTrampoline(
    _ buffer: OpaquePointer?, _ info: UnsafePointer<evbuffer_cb_info>?, _ context: UnsafeMutableRawPointer?
) {
    guard let info, info.pointee.n_added > 0 else { return }
    socket(context).outputGrew()
}
