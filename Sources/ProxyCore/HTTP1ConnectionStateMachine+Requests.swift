import HTTP1
import HTTPCore

extension HTTP1ConnectionStateMachine {
    /// Reads the next request head from the input and starts its exchange.
    mutating func readRequest(
        input: some ByteSource, sink: Sink, levels: BufferLevels, settings newest: ProxySettings, now: Int64,
        actions: inout ActionBuffer
    ) {
        guard phase == .open, exchange == nil, input.count > 0 else { return }
        if scanner.scanned == 0 {
            settings = newest
            scanner = HeadScanner(limit: settings.limits.headerBytes, requireCRLF: true)
            timers.start(.header, at: now + settings.timeouts.header, &actions)
        }
        // Read into the buffers of the connection's last request head (kept when its
        // exchange ended): no allocation for the head's bytes or fields once they fit.
        var spare = actions.takeSpare(.request)
        var bytes = spare.takeBuffer()
        do throws(HTTP1Error) {
            guard try input.takeHead(&scanner, into: &bytes) else {
                return actions.keepSpare(.request, HeaderFields(buffer: bytes, reusing: consume spare))
            }
        } catch {
            return refuseEarly(ProxyError(error), levels, now: now, actions: &actions)
        }
        timers.cancel(.header, &actions)
        scanner = HeadScanner(limit: settings.limits.headerBytes, requireCRLF: true)
        var head: RequestHead
        let framing: BodyFraming
        do throws(HTTP1Error) {
            head = try HeadParser.parseRequest(consume bytes, reusing: consume spare)
            head.dropUnderscoreFields(unless: settings.underscoresInHeaders, &actions)
            framing = try MessageFraming.request(head)
        } catch {
            return refuseEarly(ProxyError(error), levels, now: now, actions: &actions)
        }
        // Built in place: a local copy first would retain, then release, every field.
        exchange = Exchange<Sink>(
            head: head, framing: framing, settings: settings, requestID: Hex.random(words: 2, using: &random),
            client: client, secure: secure, now: now)
        exchange!.client.readsPaused = readsPaused
        exchange!.request.spareBuffers = spareBuffers.take()
        exchange!.client.sending = halfClosed ? .finished : .open
        exchange!.client.connectionMayPersist = !draining && !halfClosed
        let date = currentDate(now)
        self.exchange!.start(
            input: input, sink: sink, levels: levels, tools: tools, date: date, now: now,
            actions: &actions)
    }

    /// Answers a request refused before its exchange could start (its head was unreadable)
    /// and closes with a lingering close.
    mutating func refuseEarly(
        _ error: ProxyError, _ levels: BufferLevels, now: Int64, actions: inout ActionBuffer
    ) {
        timers.cancel(.header, &actions)
        let date = currentDate(now)
        actions.sendClient { ErrorResponse.write(error, request: nil, requestID: nil, date: date, into: &$0) }
        actions.finish(AccessRecord(early: error, now: now))
        flushAndClose(linger: true, levels, now: now, actions: &actions)
    }
}
