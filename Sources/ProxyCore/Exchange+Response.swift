public import HTTP1
import HTTPCore

extension Exchange {
    /// The upstream sent bytes (or the exchange is asked to look at its input again): the
    /// response head, then the body, streamed to the client until the client's output holds
    /// more than the high watermark (then upstream reads pause until it drains).
    public mutating func upstreamReadable(
        input: some ByteSource, levels: BufferLevels, date: [UInt8], now: Int64, actions: inout ActionBuffer
    ) {
        guard outcome == nil, upstreamCarries else { return }
        upstreamActivity = now
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
            switch response {
            case .done:
                return
            case .awaitingHead(var reader):
                guard
                    let (upstreamHead, framing) = takeResponseHead(
                        input, &reader, date: date, now: now, actions: &actions)
                else {
                    return
                }
                available = input.count
                startResponse(upstreamHead, framing, date: date, now: now, actions: &actions)
            case .body(let keepAlive, var decoder, let framing):
                if !ignoringWatermark, levels.clientOutput + actions.pendingClientBytes > settings.highWater {
                    if !upstreamReadsPaused {
                        upstreamReadsPaused = true
                        actions.append(.pauseUpstreamReads)
                    }
                    return
                }
                let before = decoder.payloadBytes
                guard
                    ResponseRelay.forward(input, &available, &decoder, chunked: framing == .chunked, &actions)
                else {
                    return fail(
                        ProxyError(.upstreamBroken, detail: "upstream sent a malformed body"), date: date,
                        now: now, actions: &actions)
                }
                record.bytesOut += decoder.payloadBytes - before
                response = .body(keepAlive: keepAlive, decoder: decoder, framing: framing)
                if decoder.isComplete {
                    return completeResponse(
                        reusable: keepAlive && available == 0, now: now, actions: &actions)
                }
                if decoder.payloadBytes == before { return }
            }
        }
    }

    /// The final response head and its body's framing, once complete (1xx heads skipped).
    private mutating func takeResponseHead(
        _ input: some ByteSource, _ reader: inout ResponseHeadReader, date: [UInt8], now: Int64,
        actions: inout ActionBuffer
    ) -> (ResponseHead, BodyFraming)? {
        do throws(HTTP1Error) {
            guard let answer = try reader.read(from: input, requestMethod: head.method) else {
                response = .awaitingHead(reader)
                return nil
            }
            return answer
        } catch {
            fail(
                ProxyError(
                    .upstreamBroken, detail: "upstream sent a malformed response: \(error.reason.rawValue)"),
                date: date, now: now, actions: &actions)
            return nil
        }
    }

    /// Queues the client's version of the response head.
    private mutating func startResponse(
        _ upstreamHead: ResponseHead, _ framing: BodyFraming, date: [UInt8], now: Int64,
        actions: inout ActionBuffer
    ) {
        if upstreamHead.status == 101 {
            return fail(
                ProxyError(.upstreamBroken, detail: "upstream switched protocols"), date: date, now: now,
                actions: &actions)
        }
        record.upstreamStatus = upstreamHead.status
        record.upstreamMilliseconds = now - upstreamStartedAt
        var clientFraming = ClientBodyFraming.plain
        if clientProtocol.isHTTP2 {
            // HEADERS; the body follows de-framed (never chunked), trailers dropped.
            let streamHead = ClientResponseHead.stream(upstreamHead, framing: framing, date: date)
            if streamHead.endsStream { clientFraming = .endedWithHead }
            actions.append(.respondClient(streamHead))
        } else {
            let chunkToClient = (framing == .chunked || framing == .untilClose) && head.version == .http11
            if chunkToClient { clientFraming = .chunked }
            let keepClient =
                head.keepAlive && requestPhase.bodyRead && connectionMayPersist && !clientInputClosed
            let clientHead = ClientResponseHead.make(
                upstreamHead, framing: framing, chunked: chunkToClient, keepAlive: keepClient, date: date)
            record.bytesOut += Int64(actions.sendClient { clientHead.serialize(into: &$0) })
        }
        if !requestPhase.bodyRead {
            // An early answer: the rest of the request body will not be forwarded.
            requestPhase = .done
            pauseClientReads(&actions)
        }
        response = .body(
            keepAlive: upstreamHead.keepAlive, decoder: BodyDecoder(framing), framing: clientFraming)
    }

    /// The response is complete: log, recycle or drop the upstream, and tell the host whether
    /// the connection carries another request.
    mutating func completeResponse(reusable: Bool, now: Int64, actions: inout ActionBuffer) {
        if case .body(_, _, let framing) = response {
            if framing == .chunked {
                record.bytesOut += Int64(actions.sendClient { ChunkedEncoder.writeEnd(into: &$0) })
            }
            if clientProtocol.isHTTP2, framing != .endedWithHead { actions.append(.endClientStream) }
        }
        response = .done
        let requestSent = requestSent
        endUpstream(reusable: reusable && requestSent && decoder.isComplete, &actions)
        finish(status: record.upstreamStatus ?? 502, now: now, actions: &actions)
        if clientProtocol.isHTTP2 {
            // An early answer to a client still sending: RST_STREAM NO_ERROR after it.
            outcome = .complete(keepAlive: false, linger: !decoder.isComplete && clientSending == .open)
            return
        }
        let keepAlive =
            head.keepAlive && decoder.isComplete && requestSent && connectionMayPersist && !clientInputClosed
        // An early answer leaves the client still sending its body: linger.
        outcome = .complete(keepAlive: keepAlive, linger: !decoder.isComplete)
    }

    /// Queues the exchange's one log record.
    mutating func finish(status: Int, now: Int64, actions: inout ActionBuffer) {
        timers.cancelAll(&actions)
        endChecks(now: now)
        record.status = status
        record.finishedAt = now
        record.multipart = multipart?.summary
        actions.append(.finish(record))
    }
}
