extension HTTP1ConnectionStateMachine {
    /// After an event: takes over when the exchange has ended (next request, or close), then
    /// keeps the idle timer armed exactly while the client is expected to act.
    mutating func settle(_ levels: BufferLevels, now: Int64, actions: inout ActionBuffer) {
        if let outcome = exchange?.outcome {
            readsPaused = exchange!.client.readsPaused
            // The exchange's buffers serve the next request: its multipart body's (or those it
            // was lent and did not use) and its head's (it held the last copy of them).
            spareBuffers =
                MultipartBody.takeBuffers(&exchange!.request.multipart)
                ?? exchange!.request.spareBuffers.take()
            if let type = exchange!.request.bodyType.take() { spareBuffers?.mediaType = type }
            actions.keepSpare(.request, exchange!.head.headers)
            exchange = nil
            switch outcome {
            case .complete(let keepAlive, let linger):
                if keepAlive, !draining, !halfClosed {
                    resumeReads(&actions)
                    actions.append(.processClientInput)
                } else {
                    flushAndClose(linger: linger, levels, now: now, actions: &actions)
                }
            case .refused:
                flushAndClose(linger: true, levels, now: now, actions: &actions)
            case .closeNow, .malformed:
                // (`malformed` is an HTTP/2 stream's; an HTTP/1 exchange never ends so.)
                close(now: now, actions: &actions)
            }
        }
        updateIdleTimer(levels, now: now, actions: &actions)
    }

    /// Whether the client is expected to send (a head, a body being read) or to drain output.
    func wantsIdleTimer(_ levels: BufferLevels, _ actions: ActionBuffer) -> Bool {
        let outputPending = levels.clientOutput + actions.pendingClientBytes > 0
        switch phase {
        case .closed, .lingering:
            return false
        case .closing:
            return outputPending
        case .open:
            if outputPending { return true }
            // Read through the optional, never bound: `guard let` copied the whole exchange.
            guard exchange != nil else { return !halfClosed }
            return exchange!.readsBody && !exchange!.client.readsPaused && !halfClosed
        }
    }

    mutating func updateIdleTimer(_ levels: BufferLevels, now: Int64, actions: inout ActionBuffer) {
        // Queuing output for the client starts its time to drain it afresh.
        if actions.pendingClientBytes > 0 { lastActivity = now }
        let wanted = wantsIdleTimer(levels, actions)
        if wanted, !timers.contains(.idle) {
            lastActivity = now
            timers.start(.idle, at: now + settings.timeouts.idle, &actions)
        } else if !wanted {
            timers.cancel(.idle, &actions)
        }
    }

    /// A timer fired: the connection's own, or the current exchange's.
    public mutating func timer(_ id: TimerID, levels: BufferLevels, now: Int64, actions: inout ActionBuffer) {
        if exchange?.owns(id) == true {
            let date = currentDate(now)
            self.exchange!.timer(id, date: date, now: now, actions: &actions)
            return settle(levels, now: now, actions: &actions)
        }
        guard timers.fired(id), phase != .closed else { return }
        switch id {
        case .header:
            if exchange == nil, phase == .open {
                refuseEarly(
                    ProxyError(.requestTimeout, detail: "request header not received in time"), levels,
                    now: now,
                    actions: &actions)
            }
        case .idle:
            idleTimedOut(levels, now: now, actions: &actions)
        case .linger:
            close(now: now, actions: &actions)
        case .upstreamConnect, .upstreamResponse, .verdict, .fileVerdict, .bodyTotal, .stall, .streams:
            break
        }
        updateIdleTimer(levels, now: now, actions: &actions)
    }

    /// The idle timer fired: re-armed if there was progress since, else the client was too slow.
    mutating func idleTimedOut(_ levels: BufferLevels, now: Int64, actions: inout ActionBuffer) {
        guard wantsIdleTimer(levels, actions) else { return }
        if actions.pendingClientBytes > 0 { lastActivity = now }
        let due = lastActivity + settings.timeouts.idle
        if now < due { return timers.start(.idle, at: due, &actions) }
        if exchange != nil {
            let date = currentDate(now)
            exchange!.fail(
                ProxyError(.requestTimeout, detail: "client too slow"), date: date, now: now,
                actions: &actions)
            return settle(levels, now: now, actions: &actions)
        }
        if phase == .open, scanner.scanned > 0 {
            return refuseEarly(
                ProxyError(.requestTimeout, detail: "request header not received in time"), levels, now: now,
                actions: &actions)
        }
        close(now: now, actions: &actions)
    }

    mutating func resumeReads(_ actions: inout ActionBuffer) {
        guard readsPaused, !halfClosed else { return }
        readsPaused = false
        actions.append(.resumeClientReads)
    }

    mutating func pauseReads(_ actions: inout ActionBuffer) {
        guard !readsPaused else { return }
        readsPaused = true
        actions.append(.pauseClientReads)
    }

    /// Stops reading, sends what is queued, then closes; with `linger`, the client's unread
    /// bytes are discarded for a while first (nginx's lingering close), so that a client still
    /// sending reads the answer instead of a reset.
    mutating func flushAndClose(linger: Bool, _ levels: BufferLevels, now: Int64, actions: inout ActionBuffer)
    {
        guard phase == .open else { return }
        phase = .closing(linger: linger && !halfClosed)
        timers.cancel(.header, &actions)
        pauseReads(&actions)
        actions.append(.discardClientInput)
        if levels.clientOutput + actions.pendingClientBytes == 0 {
            finishClosing(now: now, actions: &actions)
        }
    }

    /// The output is flushed: close, or half-close and linger.
    mutating func finishClosing(now: Int64, actions: inout ActionBuffer) {
        guard case .closing(let linger) = phase else { return }
        guard linger else { return close(now: now, actions: &actions) }
        phase = .lingering
        timers.cancel(.idle, &actions)
        actions.append(.shutdownClientWrite)
        readsPaused = true
        resumeReads(&actions)
        timers.start(.linger, at: now + settings.lingerMilliseconds, &actions)
    }

    /// Closes the connection: an exchange in flight ends as the client's leaving.
    public mutating func close(now: Int64, actions: inout ActionBuffer) {
        guard phase != .closed else { return }
        if exchange != nil {
            exchange!.clientGone(now: now, actions: &actions)
            exchange = nil
        }
        phase = .closed
        timers.cancelAll(&actions)
        actions.append(.closeClient)
    }
}
