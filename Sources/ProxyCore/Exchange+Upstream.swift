import HTTP1
import HTTPCore

extension Exchange {
    /// Asks for a connection to the target; the head goes once it is connected.
    mutating func connectUpstream(now: Int64, actions: inout ActionBuffer) {
        upstream = .connecting
        upstreamStartedAt = now
        // The timer first: a pooled connection reports itself ready while this is executed.
        timers.start(.upstreamConnect, at: now + settings.timeouts.upstreamConnect, &actions)
        actions.append(.connectUpstream(target))
    }

    /// The upstream connection is ready (connected, or taken from the pool): the head goes,
    /// then what was staged or spooled; the rest of the body follows as it is read.
    public mutating func upstreamConnected(levels: BufferLevels, now: Int64, actions: inout ActionBuffer) {
        guard outcome == nil, upstream == .connecting else { return }
        timers.cancel(.upstreamConnect, &actions)
        upstreamActivity = now
        if pendingLength != nil, !bodyInSinks {
            // The head waits for the body's length: reading goes on into the staging buffer.
            upstream = .ready
            if requestPhase == .reading { actions.append(.processClientInput) }
            return
        }
        upstream = .sending
        if spooled {
            // The body is the spool, then (order: fields_first) the file spool, less the
            // encoder's leading CRLF in that case.
            let splits = multipart?.rewriter.deferred != nil
            let skip: Int64 = splits ? 2 : 0
            sendHead(.length(levels.spool + levels.fileSpool - skip), &actions)
            actions.append(.sendSpoolsUpstream(skip: skip))
            return requestFullySent(now: now, actions: &actions)
        }
        let bodyRead = bodyInSinks
        if upstreamFraming == .chunked, bodyRead {
            // The whole body was read before the head goes out (small uploads): an exact
            // Content-Length instead of chunks, which legacy upstreams read more readily.
            sendHead(.length(Int64(levels.staging)), &actions)
            if levels.staging > 0 { actions.append(.moveStagingToUpstream) }
        } else if upstreamFraming == .chunked {
            sendHead(.chunked, &actions)
            if levels.staging > 0 {
                actions.sendUpstream { $0.write(ChunkedEncoder.chunkHeader(levels.staging)) }
                actions.append(.moveStagingToUpstream)
                actions.sendUpstream { $0.write("\r\n") }
            }
        } else {
            if case .length(let length) = upstreamFraming {
                sendHead(.length(length), &actions)
            } else {
                sendHead(.none, &actions)
            }
            if levels.staging > 0 { actions.append(.moveStagingToUpstream) }
        }
        if bodyRead {
            requestFullySent(now: now, actions: &actions)
        } else if requestPhase == .reading {
            actions.append(.processClientInput)
        }
    }

    func sendHead(_ framing: UpstreamRequestHead.Framing, _ actions: inout ActionBuffer) {
        let upstreamHead = UpstreamRequestHead.make(
            head, target: target, route: route, requestID: requestID,
            boundary: multipartBoundary, client: client, framing: framing, secure: secure, identity: identity)
        actions.sendUpstream { upstreamHead.serialize(into: &$0) }
    }

    /// The whole request is queued upstream: now the response clock runs.
    mutating func requestFullySent(now: Int64, actions: inout ActionBuffer) {
        upstream = .sent
        upstreamActivity = now
        timers.start(.upstreamResponse, at: now + settings.timeouts.upstreamResponse, &actions)
    }

    /// The upstream drained what was queued for it: read the client's body again.
    public mutating func upstreamWritable(levels: BufferLevels, now: Int64, actions: inout ActionBuffer) {
        guard outcome == nil, upstreamCarries else { return }
        upstreamActivity = now
        guard requestPhase == .reading else { return }
        actions.append(.processClientInput)
    }

    /// Ends the exchange's use of its upstream connection: back to the pool, or closed.
    mutating func endUpstream(reusable: Bool, _ actions: inout ActionBuffer) {
        timers.cancel(.upstreamConnect, &actions)
        timers.cancel(.upstreamResponse, &actions)
        guard upstream == .connecting || upstream == .ready || upstreamCarries else { return }
        upstream = .finished
        actions.append(reusable ? .releaseUpstream : .abortUpstream)
    }
}
