public import HTTP1
import HTTPCore

extension Exchange {
    /// Hands the local responder what the client sent of the body, as much as it has room for;
    /// answers as soon as it has an answer.
    mutating func readLocalBody(
        input: some ByteSource, date: [UInt8], now: Int64, actions: inout ActionBuffer
    ) {
        guard outcome == nil, request.phase == .reading else { return }
        var counted: Int64 = 0
        let step = local!.feed(
            input, decoder: &request.decoder, awaitsEndStream: client.awaitsEndStream, counted: &counted,
            now: now)
        record.bytesIn += counted
        if counted > 0, trace != nil, trace!.bodyFirstByte == nil { trace!.bodyFirstByte = now }
        switch step {
        case .awaitingEndStream: return
        case .failed(let error): return fail(error, date: date, now: now, actions: &actions)
        case .ended:
            request.phase = .done
            timers.cancel(.bodyTotal, &actions)
            if trace != nil { trace!.bodyLastByte = now }
        case .answered, .waiting: break
        }
        if local!.responder.answer != nil { return answerLocally(date: date, now: now, actions: &actions) }
        // HTTP/1.1: a FIN before the body was whole, once everything it sent was handed over,
        // is the client leaving (the responder keeps what it took).
        if request.phase == .reading, client.inputClosed, input.count == 0 {
            return clientGone(now: now, actions: &actions)
        }
        if request.phase == .reading, local!.responder.room == 0 {
            client.pauseReads(&actions)
        } else {
            client.resumeReads(now: now, &actions)
        }
    }

    /// The shell reports progress of a local responder's work: it may have room, or an answer.
    public mutating func localProgress(
        input: some ByteSource, date: [UInt8], now: Int64, actions: inout ActionBuffer
    ) {
        guard outcome == nil, local != nil else { return }
        if request.phase == .reading {
            return readLocalBody(input: input, date: date, now: now, actions: &actions)
        }
        if local!.responder.answer != nil { answerLocally(date: date, now: now, actions: &actions) }
    }

    /// Sends the local answer and ends the exchange.
    private mutating func answerLocally(date: [UInt8], now: Int64, actions: inout ActionBuffer) {
        guard let answer = local!.responder.answer else { return }
        let bodyRead = request.phase.bodyRead
        if !bodyRead {
            request.phase = .done
            client.pauseReads(&actions)
        }
        record.upstreamStatus = nil
        record.tus = answer.tus
        if let error = answer.error { record.error = error }
        let http2 = clientProtocol.isHTTP2
        let keepAlive =
            !http2 && head.keepAlive && bodyRead && client.connectionMayPersist && !client.inputClosed
        record.bytesOut += ExchangeResponse.answerLocally(
            answer, request: head, requestID: requestID, http2: http2, keepAlive: keepAlive, date: date,
            actions: &actions)
        finish(status: answer.status, now: now, actions: &actions)
        let linger = !bodyRead && (!http2 || client.sending == .open)
        outcome = .complete(keepAlive: keepAlive, linger: linger)
    }
}
