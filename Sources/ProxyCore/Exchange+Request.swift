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
        if awaitsEndStream {
            // HTTP/2: the stream's own idle timer, as an HTTP/1.1 connection's (`Exchange+HTTP2`).
            clientActivity = now
            timers.start(.idle, at: now + settings.timeouts.idle, &actions)
        }
        switch HeadChecks.check(head, route: route, framing: upstreamFraming, limits: settings.limits) {
        case .success(let type): bodyType = type
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
        requestPhase = .reading
        if let handler = route?.local {
            startLocal(handler, now: now)
        } else if let error = setUp(sink: sink, tools: tools, now: now) {
            return fail(error, date: date, now: now, actions: &actions)
        }
        if spooled {
            var spools = sink
            guard spools.openSpools(files: multipart?.rewriter.splitsFiles ?? false) else {
                return fail(
                    ProxyError(.spoolFailed, detail: "cannot create a temp file for the request body"),
                    date: date, now: now, actions: &actions)
            }
        }
        if head.expectsContinue, decoder.isComplete == false {
            if clientProtocol.isHTTP2 {
                // RFC 9113 §8.1: an interim HEADERS frame.
                actions.append(.respondClient(.continue))
            } else if head.version == .http11 {
                // Never to HTTP/1.0 (RFC 9110 §15.2: no 1xx to a 1.0 client; §10.1.1: ignore it).
                actions.sendClient { ErrorResponse.writeContinue(into: &$0) }
            }
        }
        readBody(input: input, sink: sink, levels: levels, date: date, now: now, actions: &actions)
    }

    /// The multipart pipeline, when the body is rewritten.
    mutating func setUp(sink: Sink, tools: RuleTools, now: Int64) -> ProxyError? {
        if let bodyType {
            switch MultipartBody.make(
                bodyType, route: route, head: head, limits: settings.limits, identity: identity, sink: sink,
                tools: tools, now: now)
            {
            case .success(let body):
                multipart = body
                multipartBoundary = body.rewriter.encoder.boundary.bytes
                prepareDeclaredLength(clientFraming: upstreamFraming)
                upstreamFraming = .chunked
            case .failure(let error):
                return error
            }
        }
        // A store that needs a length never gets chunks: a stream body whose length cannot be
        // declared when its file begins (sent chunked, or fields follow the file) is spooled.
        let spoolsForLength =
            route?.requestBody == .stream && route?.rules.needsContentLength == true && pendingLength == nil
        let spools = (route?.requestBody == .buffer || spoolsForLength) && upstreamFraming == .chunked
        bodyStore = spools ? .spool : .none
        return nil
    }

    /// The client sent body bytes (or the exchange is asked to look at its input again).
    /// HTTP/2: DATA beyond the body's `content-length` makes the request malformed.
    public mutating func clientReadable(
        input: some ByteSource, sink: Sink, levels: BufferLevels, date: [UInt8], now: Int64,
        actions: inout ActionBuffer
    ) {
        if outcome == nil, inputOverflowsBody(input) {
            return refuseMalformed("more DATA than the request's content-length", now: now, actions: &actions)
        }
        clientActivity = now
        if requestPhase == .held { return holdInput(input, &actions) }
        readBody(input: input, sink: sink, levels: levels, date: date, now: now, actions: &actions)
    }

    /// While verdicts are pending the body stays in the client's input; reading pauses once
    /// more than the high watermark waits there.
    mutating func holdInput(_ input: some ByteSource, _ actions: inout ActionBuffer) {
        if input.count > settings.highWater { pauseClientReads(&actions) }
    }

    /// Moves body bytes from the client towards the upstream until the client has nothing
    /// more or the upstream side holds more than the high watermark (then client reads pause:
    /// backpressure). The upstream connection is opened after the first bytes were read and
    /// found well-formed, so a body malformed from its start never reaches it.
    mutating func readBody(
        input: some ByteSource, sink: Sink, levels: BufferLevels, date: [UInt8], now: Int64,
        actions: inout ActionBuffer
    ) {
        guard outcome == nil, requestPhase == .reading else { return }
        if local != nil { return readLocalBody(input: input, date: date, now: now, actions: &actions) }
        if decoder.isComplete {
            // HTTP/2: a `content-length: 0` body is whole only with its END_STREAM.
            if awaitsEndStream { return }
            return finishBody(sink: sink, levels: levels, date: date, now: now, actions: &actions)
        }
        var available = readableBodyBytes(input.count)
        var blocked = false
        while available > 0 {
            if let error = stagedTooMuch(sink, actions) {
                return fail(error, date: date, now: now, actions: &actions)
            }
            if mustWait(sink, actions) {
                blocked = true
                break
            }
            let before = decoder.payloadBytes
            if let error = forwardBody(input: input, available: &available, sink: sink, actions: &actions) {
                return fail(error, date: date, now: now, actions: &actions)
            }
            consultFileInspections(now: now, actions: &actions)
            record.bytesIn += decoder.payloadBytes - before
            if let error = bodyLimitError(sink) {
                return fail(error, date: date, now: now, actions: &actions)
            }
            let headCanGo = pendingLength != nil && declareLengthIfKnown()
            if decoder.isComplete {
                return finishBody(sink: sink, levels: levels, date: date, now: now, actions: &actions)
            }
            if headCanGo, case .length(let length) = upstreamFraming {
                // The rest streams straight upstream once the head and the staged bytes went.
                sendWaitingHead(length: length, actions: &actions)
                actions.append(.processClientInput)
                return
            }
            // A backed-up hashing queue also pauses; its signal brings `hashingProgressed`.
            if rulesWantPause { break }
            if decoder.payloadBytes == before { break }
        }
        readSoFar(blocked: blocked, sink: sink, now: now, actions: &actions)
    }

    /// What the client sent so far has been forwarded (or waits, `blocked`): a FIN before the
    /// body was whole is the client leaving; else the upstream is connected once, and client
    /// reads follow the backpressure.
    mutating func readSoFar(blocked: Bool, sink: Sink, now: Int64, actions: inout ActionBuffer) {
        if clientInputClosed, !blocked { return clientGone(now: now, actions: &actions) }
        if upstream == .none, !spooled { connectUpstream(now: now, actions: &actions) }
        adjustClientReads(
            waiting: buffered(sink, actions), spoolBacklogged: spooled && sink.spoolBacklogged,
            now: now, &actions)
    }

    /// A stream body whose length waits for its file's head has staged more than it may.
    func stagedTooMuch(_ sink: Sink, _ actions: ActionBuffer) -> ProxyError? {
        pendingLength != nil && buffered(sink, actions) > Self.maxStagedBeforeFile ? stagedTooMuch : nil
    }

    /// Whether forwarding waits: more than the high watermark waits for the upstream, or a
    /// spool's writes lag behind (its signal brings `hashingProgressed`, as a backed-up hashing
    /// queue's does).
    func mustWait(_ sink: Sink, _ actions: ActionBuffer) -> Bool {
        if destination != .spool, pendingLength == nil, buffered(sink, actions) > settings.highWater {
            return true
        }
        return spooled && sink.spoolBacklogged
    }

    /// Client reads are paused exactly while more than the high watermark waits for the
    /// upstream, the hashing queue is backed up, or the spool's writes lag behind.
    mutating func adjustClientReads(
        waiting: Int, spoolBacklogged: Bool, now: Int64, _ actions: inout ActionBuffer
    ) {
        if rulesWantPause || spoolBacklogged
            || (!spooled && pendingLength == nil && waiting > settings.highWater)
        {
            pauseClientReads(&actions)
        } else {
            resumeClientReads(now: now, &actions)
        }
    }

    /// A spool that failed, or a body past `limits.body_bytes`.
    func bodyLimitError(_ sink: Sink) -> ProxyError? {
        if sink.spoolFailed { return Self.spoolWriteFailed }
        if decoder.payloadBytes > settings.limits.bodyBytes {
            return ProxyError(
                .payloadTooLarge, detail: "body larger than limits.body_bytes", limit: "body_bytes")
        }
        return nil
    }

    /// A spool write failed (e.g. ENOSPC): 507.
    static var spoolWriteFailed: ProxyError {
        ProxyError(.insufficientStorage, detail: "cannot spool the request body to disk")
    }

    /// `sink` pointed at the current destination.
    func routed(_ sink: Sink) -> Sink {
        var routed = sink
        routed.destination = destination
        return routed
    }

    /// Bytes waiting on the way to the upstream: its output (or the staging buffer) as the
    /// sink reads it now, what queued actions will add, and what the rules hold behind a
    /// pending digest or verdict.
    func buffered(_ sink: Sink, _ actions: ActionBuffer) -> Int {
        let held = multipart?.rewriter.heldBytes ?? 0
        return held + routed(sink).queued + actions.pendingUpstreamBytes
    }

    /// One step of forwarding: a zero-copy move under a Content-Length, else de-framing (and
    /// the rules) into the sink. `available` is what the input holds once queued moves ran.
    private mutating func forwardBody(
        input: some ByteSource, available: inout Int, sink: Sink, actions: inout ActionBuffer
    ) -> ProxyError? {
        let limit = available
        if multipart == nil, let remaining = decoder.remainingLength, !chunksDestination {
            let count = Int(min(Int64(available), remaining))
            actions.append(.moveRequestBody(count, to: destination))
            decoder.skip(count)
            available -= count
            return nil
        }
        var failure: ProxyError?
        // The decoder is taken out while the rules run (they live beside it in `self`).
        var decoder = self.decoder
        do throws(HTTP1Error) {
            if multipart != nil {
                multipart!.direct(to: routed(sink), chunked: chunksDestination)
                _ = try input.decodeBody(&decoder, limit: limit) { bytes in
                    guard failure == nil else { return }
                    do throws(ProxyError) {
                        try multipart!.feed(bytes)
                    } catch {
                        failure = error
                    }
                }
            } else {
                var framed = FramedSink(routed(sink), chunked: chunksDestination)
                _ = try input.decodeBody(&decoder, limit: limit) { framed.write($0) }
            }
        } catch {
            failure = failure ?? ProxyError(error)
        }
        self.decoder = decoder
        available = readableBodyBytes(input.count)
        return failure
    }

    /// The client's body is complete: close the multipart body (which may hold its end
    /// behind a digest) and the framing; then the request goes (or has gone) upstream.
    mutating func finishBody(
        sink: Sink, levels: BufferLevels, date: [UInt8], now: Int64, actions: inout ActionBuffer
    ) {
        requestPhase = .done
        // Reading stays on (no epoll_ctl pair per request): what arrives now is a pipelined
        // request or a FIN, kept in the input (bounded by the watermark) until the answer.
        if multipart != nil {
            multipart!.direct(to: routed(sink), chunked: chunksDestination)
            do throws(ProxyError) {
                try multipart!.finish()
            } catch {
                return fail(error, date: date, now: now, actions: &actions)
            }
            consultFileInspections(now: now, actions: &actions)
            if multipart!.rewriter.isHolding {
                // The end waits for a digest; the upstream can be readied meanwhile.
                requestPhase = .ending(.rules)
                if upstream == .none, !spooled { connectUpstream(now: now, actions: &actions) }
                return
            }
        }
        completeBody(sink: sink, date: date, now: now, actions: &actions)
    }

    /// The whole body is in the sinks: flush the spools, or end the chunks, and send. The
    /// spools go once every write landed: while some are in flight, the exchange waits for
    /// the shell's progress signal (`hashingProgressed`) and flushes again.
    mutating func completeBody(sink: Sink, date: [UInt8], now: Int64, actions: inout ActionBuffer) {
        if spooled {
            var spools = sink
            switch spools.flushSpools() {
            case .done:
                requestPhase = .done
                return connectUpstream(now: now, actions: &actions)
            case .pending:
                requestPhase = .ending(.spoolWrites)
                return
            case .failed:
                requestPhase = .done
                return fail(Self.spoolWriteFailed, date: date, now: now, actions: &actions)
            }
        }
        if upstreamFraming == .chunked, upstreamCarries {
            var end = sink
            end.destination = .upstream
            ChunkedEncoder.writeEnd(into: &end)
        }
        pendingLength = nil
        if upstream == .ready {
            // The head waited for a length; the body is whole (the staging holds it all).
            let length: Int64
            if case .length(let declared) = upstreamFraming {
                length = declared
            } else {
                length = multipart?.rewriter.writtenBytes ?? 0
            }
            sendWaitingHead(length: length, actions: &actions)
            requestFullySent(now: now, actions: &actions)
        } else if upstreamCarries {
            requestFullySent(now: now, actions: &actions)
        } else if upstream == .none {
            connectUpstream(now: now, actions: &actions)
        }
    }
}

extension Exchange {
    /// The loop's hashing queue or spool writer reported progress: held output whose digests
    /// are ready goes into the sinks, a body whose end was held (or whose spool writes were in
    /// flight) completes, and reading resumes when neither is backed up any more.
    public mutating func hashingProgressed(
        sink: Sink, levels: BufferLevels, date: [UInt8], now: Int64, actions: inout ActionBuffer
    ) {
        guard outcome == nil else { return }
        // A write that failed off the loop ends the exchange now, read or not.
        if spooled, sink.spoolFailed {
            if requestPhase == .ending(.spoolWrites) { requestPhase = .done }
            return fail(Self.spoolWriteFailed, date: date, now: now, actions: &actions)
        }
        if multipart != nil {
            multipart!.direct(to: routed(sink), chunked: chunksDestination)
            multipart!.rewriter.resume()
            if requestPhase == .ending(.rules), !multipart!.rewriter.isHolding {
                requestPhase = .done
                return completeBody(sink: sink, date: date, now: now, actions: &actions)
            }
        }
        if requestPhase == .ending(.spoolWrites) {
            return completeBody(sink: sink, date: date, now: now, actions: &actions)
        }
        if requestPhase == .reading, clientReadsPaused, multipart != nil || spooled {
            actions.append(.processClientInput)
        }
    }
}
