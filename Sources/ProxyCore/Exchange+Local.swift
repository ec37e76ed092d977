public import HTTP1
import HTTPCore

extension Exchange {
    /// The route is answered inside FormGate: its responder takes the request.
    mutating func startLocal(_ handler: any LocalHandler, now: Int64) {
        local = LocalResponderBox(
            handler.responder(
                for: LocalRequest(head: head, route: route?.name ?? "", identity: identity, now: now)))
    }

    /// Hands the local responder what the client sent of the body, as much as it has room for;
    /// answers as soon as it has an answer.
    mutating func readLocalBody(
        input: some ByteSource, date: [UInt8], now: Int64, actions: inout ActionBuffer
    ) {
        while outcome == nil, requestPhase == .reading {
            if local!.responder.answer != nil {
                return answerLocally(date: date, now: now, actions: &actions)
            }
            if decoder.isComplete {
                if awaitsEndStream { return }
                requestPhase = .done
                local!.responder.end(now: now)
                break
            }
            let room = min(local!.responder.room, readableBodyBytes(input.count))
            guard room > 0 else { break }
            let before = decoder.payloadBytes
            do throws(HTTP1Error) {
                _ = try input.decodeBody(&decoder, limit: room) { local!.responder.body($0, now: now) }
            } catch {
                return fail(ProxyError(error), date: date, now: now, actions: &actions)
            }
            record.bytesIn += decoder.payloadBytes - before
            if decoder.payloadBytes == before, !decoder.isComplete { break }
        }
        guard outcome == nil else { return }
        if local!.responder.answer != nil { return answerLocally(date: date, now: now, actions: &actions) }
        if requestPhase == .reading, local!.responder.room == 0 {
            pauseClientReads(&actions)
        } else {
            resumeClientReads(now: now, &actions)
        }
    }

    /// The shell reports progress of a local responder's work: it may have room, or an answer.
    public mutating func localProgress(
        input: some ByteSource, date: [UInt8], now: Int64, actions: inout ActionBuffer
    ) {
        guard outcome == nil, local != nil else { return }
        if requestPhase == .reading {
            return readLocalBody(input: input, date: date, now: now, actions: &actions)
        }
        if local!.responder.answer != nil { answerLocally(date: date, now: now, actions: &actions) }
    }

    /// Sends the local answer and ends the exchange.
    private mutating func answerLocally(date: [UInt8], now: Int64, actions: inout ActionBuffer) {
        guard let answer = local!.responder.answer else { return }
        let bodyRead = requestPhase.bodyRead
        if !bodyRead {
            requestPhase = .done
            pauseClientReads(&actions)
        }
        var headers = answer.headers
        headers.append(name: "Content-Length", value: String(answer.body.count))
        headers.append(HeaderFields.Field(name: ClientResponseHead.dateName, value: date))
        headers.append(name: "X-Request-Id", value: requestID)
        let body = head.method == "HEAD" ? [] : answer.body
        record.upstreamStatus = nil
        if clientProtocol.isHTTP2 {
            actions.append(
                .respondClient(
                    StreamResponseHead(status: answer.status, headers: headers, endsStream: body.isEmpty)))
            if !body.isEmpty {
                record.bytesOut += Int64(actions.sendClient { out in body.withUnsafeBytes { out.write($0) } })
                actions.append(.endClientStream)
            }
            finish(status: answer.status, now: now, actions: &actions)
            outcome = .complete(keepAlive: false, linger: !bodyRead && clientSending == .open)
            return
        }
        let keepAlive = head.keepAlive && bodyRead && connectionMayPersist && !clientInputClosed
        if !keepAlive { headers.append(name: "Connection", value: "close") }
        let responseHead = ResponseHead(
            status: answer.status, reason: ProxyError.reasonPhrase(answer.status), headers: headers)
        record.bytesOut += Int64(
            actions.sendClient { out in
                responseHead.serialize(into: &out)
                body.withUnsafeBytes { out.write($0) }
            })
        finish(status: answer.status, now: now, actions: &actions)
        outcome = .complete(keepAlive: keepAlive, linger: !bodyRead)
    }
}

/// A local responder held by reference (`Exchange.local`): the responder is a value the
/// exchange drives; the box keeps it out of the exchange's inline storage.
final class LocalResponderBox {
    var responder: any LocalResponder

    init(_ responder: any LocalResponder) {
        self.responder = responder
    }
}
