import HTTP1
import HTTPCore

extension Exchange {
    /// Asks for a connection to the target; the head goes once it is connected.
    mutating func connectUpstream(now: Int64, actions: inout ActionBuffer) {
        if trace != nil {
            trace!.upstreamStart = now
            trace!.upstreamTarget = target
        }
        upstream.connect(
            to: target, timeout: settings.timeouts.upstreamConnect, now: now, timers: &timers, &actions)
    }

    /// The upstream connection is ready (connected, or taken from the pool): the head goes,
    /// then what was staged or spooled; the rest of the body follows as it is read.
    public mutating func upstreamConnected(levels: BufferLevels, now: Int64, actions: inout ActionBuffer) {
        guard outcome == nil, upstream.phase == .connecting else { return }
        timers.cancel(.upstreamConnect, &actions)
        upstream.activity = now
        if request.pendingLength != nil, !request.inSinks {
            // The head waits for the body's length: reading goes on into the staging buffer.
            upstream.phase = .ready
            if request.phase == .reading { actions.append(.processClientInput) }
            return
        }
        upstream.phase = .sending
        if trace != nil { trace!.upstreamHeadSent = now }
        let framing = request.headFraming(levels: levels)
        sendHead(framing, &actions)
        request.sendStaged(levels: levels, framing: framing, &actions)
        if request.spooled || request.inSinks {
            requestFullySent(now: now, actions: &actions)
        } else if request.phase == .reading {
            actions.append(.processClientInput)
        }
    }

    func sendHead(_ framing: UpstreamRequestHead.Framing, _ actions: inout ActionBuffer) {
        let upstreamHead = UpstreamRequestHead.make(
            head, target: target, route: route, requestID: requestID,
            boundary: request.boundary, client: clientAddress, framing: framing, secure: secure,
            identity: identity, traceParent: trace?.upstream.traceParent,
            reusing: actions.takeSpare(.upstreamRequest))
        actions.sendUpstream { upstreamHead.serialize(into: &$0) }
        actions.keepSpare(.upstreamRequest, upstreamHead.headers)
    }

    /// The whole request is queued upstream: now the response clock runs.
    mutating func requestFullySent(now: Int64, actions: inout ActionBuffer) {
        if trace != nil { trace!.upstreamBodySent = now }
        upstream.fullySent(timeout: settings.timeouts.upstreamResponse, now: now, timers: &timers, &actions)
    }

    /// The upstream drained what was queued for it: read the client's body again.
    public mutating func upstreamWritable(levels: BufferLevels, now: Int64, actions: inout ActionBuffer) {
        guard outcome == nil, upstream.carries else { return }
        upstream.activity = now
        guard request.phase == .reading else { return }
        actions.append(.processClientInput)
    }

    /// Ends the exchange's use of its upstream connection: back to the pool, or closed.
    mutating func endUpstream(reusable: Bool, _ actions: inout ActionBuffer) {
        upstream.end(reusable: reusable, timers: &timers, &actions)
    }

    /// The connection is ready and the length is known (or the body is whole): the head goes
    /// with the staged bytes; the rest of the body follows as it is read.
    mutating func sendWaitingHead(length: Int64, actions: inout ActionBuffer) {
        upstream.phase = .sending
        if trace != nil, trace!.upstreamHeadSent == nil { trace!.upstreamHeadSent = upstream.activity }
        sendHead(.length(length), &actions)
        actions.append(.moveStagingToUpstream)
    }
}
