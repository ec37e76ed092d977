extension HTTP2ConnectionStateMachine {
    /// The shell is about to write the session's frames: while the socket holds more unwritten
    /// output than the high watermark (`socketOutput`), they stay in the session and the socket
    /// is not read (`pauseClientReads` on stream 0); returns whether they do. What a client
    /// provokes without reading is then bounded by libnghttp2 (its cap on queued
    /// acknowledgements), by the streams' windows and by the kernel's buffers, not by what the
    /// proxy would write for it; the stall deadline closes a connection held this way.
    public mutating func holdsOutput(socketOutput: Int, actions: inout ActionBuffer) -> Bool {
        let held = socketOutput > settings.highWater
        guard phase != .closed, held != outputHeld else { return held }
        outputHeld = held
        actions.append(.stream(0))
        actions.append(held ? .pauseClientReads : .resumeClientReads)
        return held
    }

    /// The session wrote frames: a stream whose exchange paused its upstream for its queued
    /// response reads on once that is at most the high watermark (the `clientOutput` of its
    /// levels: its bytes still queued in the session).
    public mutating func sessionWrote(
        streams io: some HTTP2Streams<Sink>, now: Int64, actions: inout ActionBuffer
    ) {
        guard phase != .closed else { return }
        let highWater = settings.highWater
        var armed: Int64?
        streams.forEachStream { id, state in
            guard state.phase == .active, state.exchange.upstreamReadsPaused,
                io.levels(id).clientOutput <= highWater
            else { return }
            armed = Self.earliest(armed, state.run(id, &actions) { $0.clientDrained(now: now, actions: &$1) })
            actions.append(.settleStream(id))
        }
        armStreamsTimer(armed, &actions)
    }

    /// The shell wrote what it could. The connection closes when the session is done
    /// (`sessionDone`: it neither reads nor writes) and no stream runs, once the socket's
    /// output is written. A response that cannot go because the client keeps its window
    /// closed (`HTTP2Streams.isStalled`, asked only when the session queues bytes:
    /// `queuedOutbound`), or output it does not read, starts the stall deadline: after
    /// `timeouts.idle` without progress the connection closes.
    public mutating func flushed(
        socketOutput: Int, sessionDone: Bool, queuedOutbound: Int, streams io: some HTTP2Streams<Sink>,
        now: Int64, actions: inout ActionBuffer
    ) {
        guard phase != .closed else { return }
        _ = holdsOutput(socketOutput: socketOutput, actions: &actions)
        if sessionDone, activeCount == 0, !phase.isClosing { phase = .closing(nil) }
        if phase.isClosing, socketOutput == 0 { return close(now: now, actions: &actions) }
        let isStalled =
            outputHeld || (queuedOutbound > 0 && streams.containsID(where: io.isStalled))
        if !isStalled {
            stalledSince = nil
            timers.cancel(.stall, &actions)
        } else if stalledSince == nil {
            stalledSince = now
            timers.start(.stall, at: now + settings.timeouts.idle, &actions)
        }
    }

    /// The socket's output drained: a closing connection closes; held output the client took
    /// is progress (a slow reader of a large response is not stalled; `flushed` starts the
    /// clock again if it still is).
    public mutating func socketDrained(socketOutput: Int, now: Int64, actions: inout ActionBuffer) {
        guard phase != .closed else { return }
        if phase.isClosing, socketOutput == 0 { return close(now: now, actions: &actions) }
        guard outputHeld else { return }
        stalledSince = nil
        timers.cancel(.stall, &actions)
    }
}
