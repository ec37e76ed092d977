public import HTTP1
import HTTPCore
import MultipartParsing
import UploadRules

extension Exchange {
    /// Starts the exchange: refuses what the route does not allow, runs the route's checks
    /// (which may hold the request), then `proceed`s.
    ///
    /// - Parameters:
    ///   - sink: the shell's request body sink (the pipeline writes there).
    ///   - tools: the loop thread's sniffer and hashing queue.
    public mutating func start(
        input: some ByteSource, sink: Sink, levels: BufferLevels, tools: RuleTools, date: [UInt8],
        now: Int64,
        actions: inout ActionBuffer
    ) {
        actions.append(.exchangeStarted)
        if client.awaitsEndStream {
            // HTTP/2: the stream's own idle timer, as an HTTP/1.1 connection's (`Exchange+HTTP2`).
            client.activity = now
            timers.start(.idle, at: now + settings.timeouts.idle, &actions)
        }
        if settings.timeouts.bodyTotal > 0, client.awaitsEndStream || !request.decoder.isComplete {
            timers.start(.bodyTotal, at: now + settings.timeouts.bodyTotal, &actions)
        }
        let spareType = request.spareBuffers?.mediaType.take()
        switch HeadChecks.check(
            head, route: route, framing: request.upstreamFraming, limits: settings.limits, reusing: spareType)
        {
        case .success(let type): request.bodyType = type
        case .failure(let error): return fail(error, date: date, now: now, actions: &actions)
        }
        guard runChecks(from: 0, date: date, now: now, actions: &actions) else {
            return holdInput(input, &actions)
        }
        proceed(
            input: input, sink: sink, levels: levels, tools: tools, date: date, now: now, actions: &actions)
    }

    /// The checks admitted the request: builds the multipart pipeline (with the identity
    /// they established), opens the spools, answers `Expect: 100-continue`, then reads what
    /// the client has already sent of the body.
    mutating func proceed(
        input: some ByteSource, sink: Sink, levels: BufferLevels, tools: RuleTools, date: [UInt8],
        now: Int64, actions: inout ActionBuffer
    ) {
        guard outcome == nil else { return }
        request.phase = .reading
        if let handler = route?.local {
            // The route is answered inside FormGate: its responder takes the request.
            let asked = LocalRequest(
                head: head, route: route?.name ?? "", identity: identity, client: clientAddress,
                secure: secure,
                requestID: requestID, now: now)
            local = LocalResponderBox(handler.responder(for: asked))
        } else if let error = request.setUp(
            route: route, head: head, limits: settings.limits, identity: identity, sink: sink, tools: tools,
            now: now)
        {
            return fail(error, date: date, now: now, actions: &actions)
        }
        if let error = request.openSpools(sink) {
            return fail(error, date: date, now: now, actions: &actions)
        }
        if head.expectsContinue, request.decoder.isComplete == false {
            ExchangeResponse.answerContinue(request: head, http2: clientProtocol.isHTTP2, &actions)
        }
        readBody(input: input, sink: sink, levels: levels, date: date, now: now, actions: &actions)
    }

    /// The client sent body bytes (or the exchange is asked to look at its input again).
    /// HTTP/2: DATA beyond the body's `content-length` makes the request malformed.
    public mutating func clientReadable(
        input: some ByteSource, sink: Sink, levels: BufferLevels, date: [UInt8], now: Int64,
        actions: inout ActionBuffer
    ) {
        if outcome == nil, clientProtocol.isHTTP2, request.overflows(input.count) {
            return clientStreamMalformed(
                "more DATA than the request's content-length", now: now, actions: &actions)
        }
        client.activity = now
        if request.phase == .held { return holdInput(input, &actions) }
        readBody(input: input, sink: sink, levels: levels, date: date, now: now, actions: &actions)
    }

    /// While verdicts are pending the body stays in the client's input; reading pauses once
    /// more than the high watermark waits there.
    mutating func holdInput(_ input: some ByteSource, _ actions: inout ActionBuffer) {
        if input.count > settings.highWater { client.pauseReads(&actions) }
    }

    /// Moves body bytes from the client towards the upstream until the client has nothing
    /// more or the upstream side holds more than the high watermark (then client reads pause:
    /// backpressure). The upstream connection is opened after the first bytes were read and
    /// found well-formed, so a body malformed from its start never reaches it.
    mutating func readBody(
        input: some ByteSource, sink: Sink, levels: BufferLevels, date: [UInt8], now: Int64,
        actions: inout ActionBuffer
    ) {
        guard outcome == nil, request.phase == .reading else { return }
        if local != nil { return readLocalBody(input: input, date: date, now: now, actions: &actions) }
        if request.decoder.isComplete {
            // HTTP/2: a `content-length: 0` body is whole only with its END_STREAM.
            if client.awaitsEndStream { return }
            return finishBody(sink: sink, levels: levels, date: date, now: now, actions: &actions)
        }
        var counted: Int64 = 0
        let step = request.read(
            input: input, sink: routed(sink), chunked: chunksDestination,
            awaitsEndStream: client.awaitsEndStream,
            upstreamReady: upstream.phase == .ready, limits: settings.limits, highWater: settings.highWater,
            counted: &counted, actions: &actions)
        record.bytesIn += counted
        if counted > 0, trace != nil, trace!.bodyFirstByte == nil { trace!.bodyFirstByte = now }
        if case .failed(let error) = step { return fail(error, date: date, now: now, actions: &actions) }
        consultFileInspections(now: now, actions: &actions)
        switch step {
        case .failed:
            return
        case .complete:
            finishBody(sink: sink, levels: levels, date: date, now: now, actions: &actions)
        case .headCanGo(let length):
            // The rest streams straight upstream once the head and the staged bytes went.
            sendWaitingHead(length: length, actions: &actions)
            actions.append(.processClientInput)
        case .stopped(let blocked):
            readSoFar(blocked: blocked, sink: sink, now: now, actions: &actions)
        }
    }

    /// What the client sent so far has been forwarded (or waits, `blocked`): a FIN before the
    /// body was whole is the client leaving; else the upstream is connected once, and client
    /// reads follow the backpressure.
    mutating func readSoFar(blocked: Bool, sink: Sink, now: Int64, actions: inout ActionBuffer) {
        if client.inputClosed, !blocked { return clientGone(now: now, actions: &actions) }
        if upstream.phase == .none, !request.spooled { connectUpstream(now: now, actions: &actions) }
        // Client reads are paused exactly while more than the high watermark waits for the
        // upstream, the hashing queue is backed up, or the spool's writes lag behind.
        let pause = request.wantsClientPaused(
            waiting: request.buffered(routed(sink), actions),
            spoolBacklogged: request.spooled && sink.spoolBacklogged,
            highWater: settings.highWater)
        if pause { client.pauseReads(&actions) } else { client.resumeReads(now: now, &actions) }
    }

    /// `sink` pointed at the current destination.
    func routed(_ sink: Sink) -> Sink {
        var routed = sink
        routed.destination = destination
        return routed
    }

    /// The client's body is complete: close the multipart body (which may hold its end
    /// behind a digest) and the framing; then the request goes (or has gone) upstream.
    mutating func finishBody(
        sink: Sink, levels: BufferLevels, date: [UInt8], now: Int64, actions: inout ActionBuffer
    ) {
        request.phase = .done
        timers.cancel(.bodyTotal, &actions)
        if trace != nil { trace!.bodyLastByte = now }
        // Reading stays on (no epoll_ctl pair per request): what arrives now is a pipelined
        // request or a FIN, kept in the input (bounded by the watermark) until the answer.
        let holding: Bool
        do throws(ProxyError) {
            holding = try request.finishRules(into: routed(sink), chunked: chunksDestination)
        } catch {
            return fail(error, date: date, now: now, actions: &actions)
        }
        consultFileInspections(now: now, actions: &actions)
        if holding {
            // The end waits for a digest or a verdict; the upstream can be readied meanwhile.
            request.phase = .ending(.rules)
            if upstream.phase == .none, !request.spooled { connectUpstream(now: now, actions: &actions) }
            return
        }
        completeBody(sink: sink, date: date, now: now, actions: &actions)
    }

    /// The whole body is in the sinks: flush the spools, or end the chunks, and send. The
    /// spools go once every write landed: while some are in flight, the exchange waits for
    /// the shell's progress signal (`hashingProgressed`) and flushes again.
    mutating func completeBody(sink: Sink, date: [UInt8], now: Int64, actions: inout ActionBuffer) {
        if request.spooled {
            switch request.flushSpools(sink) {
            case .done: return connectUpstream(now: now, actions: &actions)
            case .pending: return
            case .failed:
                return fail(ExchangeRequest<Sink>.spoolWriteFailed, date: date, now: now, actions: &actions)
            }
        }
        if request.upstreamFraming == .chunked, upstream.carries {
            var end = sink
            end.destination = .upstream
            ChunkedEncoder.writeEnd(into: &end)
        }
        request.pendingLength = nil
        if upstream.phase == .ready {
            // The head waited for a length; the body is whole (the staging holds it all).
            sendWaitingHead(length: request.wholeLength, actions: &actions)
            requestFullySent(now: now, actions: &actions)
        } else if upstream.carries {
            requestFullySent(now: now, actions: &actions)
        } else if upstream.phase == .none {
            connectUpstream(now: now, actions: &actions)
        }
    }

    /// The loop's hashing queue or spool writer reported progress: held output whose digests
    /// are ready goes into the sinks, a body whose end was held (or whose spool writes were in
    /// flight) completes, and reading resumes when neither is backed up any more.
    public mutating func hashingProgressed(
        sink: Sink, levels: BufferLevels, date: [UInt8], now: Int64, actions: inout ActionBuffer
    ) {
        guard outcome == nil else { return }
        // A write that failed off the loop ends the exchange now, read or not.
        if request.spooled, sink.spoolFailed {
            if request.phase == .ending(.spoolWrites) { request.phase = .done }
            return fail(ExchangeRequest<Sink>.spoolWriteFailed, date: date, now: now, actions: &actions)
        }
        if request.resumeRules(into: routed(sink), chunked: chunksDestination) {
            return completeBody(sink: sink, date: date, now: now, actions: &actions)
        }
        // An inspection that failed while its file streamed (the rules refused on resuming).
        if let refusal = request.multipart?.rewriter.refusal {
            return fail(ProxyError(refusal), date: date, now: now, actions: &actions)
        }
        if request.phase == .ending(.spoolWrites) {
            return completeBody(sink: sink, date: date, now: now, actions: &actions)
        }
        if request.phase == .reading, client.readsPaused, request.multipart != nil || request.spooled {
            actions.append(.processClientInput)
        }
    }
}
