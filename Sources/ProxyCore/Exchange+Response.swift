public import HTTP1
import HTTPCore

extension Exchange {
    /// The upstream sent bytes (or the exchange is asked to look at its input again): the
    /// response head, then the body, streamed to the client until the client's output holds
    /// more than the high watermark (then upstream reads pause until it drains).
    public mutating func upstreamReadable(
        input: some ByteSource, levels: BufferLevels, date: [UInt8], now: Int64, actions: inout ActionBuffer
    ) {
        guard outcome == nil, upstream.carries else { return }
        upstream.activity = now
        relayResponse(
            input: input, levels: levels, ignoringWatermark: false, date: date, now: now, actions: &actions)
    }

    /// The client drained its output (HTTP/2: the stream's output, taken by DATA frames): read
    /// the upstream's response again.
    public mutating func clientDrained(now: Int64, actions: inout ActionBuffer) {
        guard outcome == nil, upstreamReadsPaused else { return }
        upstreamReadsPaused = false
        actions.append(.resumeUpstreamReads)
        actions.append(.processUpstreamInput)
    }

    mutating func relayResponse(
        input: some ByteSource, levels: BufferLevels, ignoringWatermark: Bool, date: [UInt8], now: Int64,
        actions: inout ActionBuffer
    ) {
        var available = input.count
        while outcome == nil {
            switch response.phase {
            case .done:
                return
            case .awaitingHead:
                var taken: (ResponseHead, BodyFraming)?
                var spare = actions.takeSpare(.response)
                do throws(ProxyError) {
                    taken = try response.takeHead(input, requestMethod: head.method, reusing: &spare)
                } catch {
                    return fail(error, date: date, now: now, actions: &actions)
                }
                // Kept while the head is incomplete; a head taken took the buffers (the client's
                // head made from it gives them back once it is written).
                actions.keepSpare(.response, spare)
                // Taken out of the optional and consumed on the way: the client's head is the
                // upstream's, changed in place, and a second reference made every change copy.
                guard let (upstreamHead, framing) = taken.take() else { return }
                available = input.count
                startResponse(consume upstreamHead, framing, date: date, now: now, actions: &actions)
            case .body:
                if !ignoringWatermark, levels.clientOutput + actions.pendingClientBytes > settings.highWater {
                    if !upstreamReadsPaused {
                        upstreamReadsPaused = true
                        actions.append(.pauseUpstreamReads)
                    }
                    return
                }
                switch response.relay(input, &available, &actions) {
                case .failed(let error):
                    return fail(error, date: date, now: now, actions: &actions)
                case .complete(let payload, let keepAlive):
                    record.bytesOut += payload
                    return completeResponse(
                        reusable: keepAlive && available == 0, now: now, actions: &actions)
                case .relayed(let payload):
                    record.bytesOut += payload
                    if payload == 0 { return }
                }
            }
        }
    }

    /// Queues the client's version of the response head.
    private mutating func startResponse(
        _ upstreamHead: consuming ResponseHead, _ framing: BodyFraming, date: [UInt8], now: Int64,
        actions: inout ActionBuffer
    ) {
        if upstreamHead.status == 101 {
            return fail(
                ProxyError(.upstreamBroken, detail: "upstream switched protocols"), date: date, now: now,
                actions: &actions)
        }
        record.upstreamStatus = upstreamHead.status
        if trace != nil { trace!.upstreamResponseHead = now }
        record.upstreamMilliseconds = now - upstream.startedAt
        let keepClient =
            head.keepAlive && request.phase.bodyRead && client.connectionMayPersist && !client.inputClosed
        record.bytesOut += response.start(
            consume upstreamHead, framing, request: head, http2: clientProtocol.isHTTP2,
            keepClient: keepClient,
            date: date, actions: &actions)
        if !request.phase.bodyRead {
            // An early answer: the rest of the request body will not be forwarded.
            request.phase = .done
            client.pauseReads(&actions)
        }
    }

    /// The response is complete: log, recycle or drop the upstream, and tell the host whether
    /// the connection carries another request.
    mutating func completeResponse(reusable: Bool, now: Int64, actions: inout ActionBuffer) {
        record.bytesOut += response.end(http2: clientProtocol.isHTTP2, actions: &actions)
        let requestSent = upstream.phase == .sent
        let bodyWhole = request.decoder.isComplete
        endUpstream(reusable: reusable && requestSent && bodyWhole, &actions)
        finish(status: record.upstreamStatus ?? 502, now: now, actions: &actions)
        if clientProtocol.isHTTP2 {
            // An early answer to a client still sending: RST_STREAM NO_ERROR after it.
            outcome = .complete(keepAlive: false, linger: !bodyWhole && client.sending == .open)
            return
        }
        let keepAlive =
            head.keepAlive && bodyWhole && requestSent && client.connectionMayPersist && !client.inputClosed
        // An early answer leaves the client still sending its body: linger.
        outcome = .complete(keepAlive: keepAlive, linger: !bodyWhole)
    }

    /// Queues the exchange's one log record.
    mutating func finish(status: Int, now: Int64, actions: inout ActionBuffer) {
        timers.cancelAll(&actions)
        checks.end(route: route, bytes: record.bytesIn, now: now)
        record.status = status
        record.finishedAt = now
        record.multipart = request.multipart?.summary
        record.trace = trace
        if record.tus == nil, let local { record.tus = local.responder.tusLog }
        actions.finish(record)
    }
}
