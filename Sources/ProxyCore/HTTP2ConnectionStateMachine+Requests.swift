import HTTP1
public import HTTPCore

extension HTTP2ConnectionStateMachine {
    /// The HTTP/1.1 head and framing of stream `id`'s request, or `nil` when it is refused
    /// (answered or reset, and logged, here). `:path` is normalised (or refused) as an
    /// HTTP/1.1 request line's target is: routes see, and the upstream gets, one spelling
    /// whatever the transport; fields with `_` go as on HTTP/1.1.
    mutating func translate(
        _ id: Int32, _ request: HTTP2Request, now: Int64, _ actions: inout ActionBuffer
    ) -> (RequestHead, BodyFraming)? {
        let target: String
        do throws(HTTP1Error) {
            target = try RequestTarget.forwarded(request.path.utf8, method: request.method)
        } catch {
            answerRefused(id, ProxyError(error), now: now, &actions)
            return nil
        }
        var head = RequestHead(
            method: request.method, target: target, version: .http2, headers: Self.http1Fields(request))
        head.dropUnderscoreFields(unless: settings.underscoresInHeaders, &actions)
        do throws(HTTP1Error) {
            return (head, try MessageFraming.http2Request(head, endsStream: request.endStream))
        } catch {
            actions.append(.resetStream(id, .protocolError, afterAnswer: false))
            logRefused(id, ProxyError(.badRequest, detail: "content-length is invalid"), now: now, &actions)
            actions.append(.closeStream(id))
            return nil
        }
    }

    /// The fields an HTTP/1.1 upstream reads: `Host` from `:authority` (unless a `host`
    /// field came), and the `cookie` crumbs joined with "; " (RFC 9113 §8.2.3). The received
    /// list is changed in place: a copy of every field cost 2 % of an h2 request's instructions.
    public static func http1Fields(_ request: HTTP2Request) -> HeaderFields {
        var fields = request.fields
        if fields.count(of: "cookie") > 1 {
            var cookie: [UInt8] = []
            fields.forEachField { name, value in
                guard name.elementsEqual("cookie".utf8) else { return }
                if !cookie.isEmpty { cookie += "; ".utf8 }
                cookie += value
            }
            fields.removeAll(named: "cookie")
            fields.append(name: "cookie".utf8, value: cookie)
        }
        if let authority = request.authority, !fields.contains("host") {
            fields.prepend(name: "Host".utf8, value: authority.utf8)
        }
        return fields
    }

    /// A request refused before its exchange (a header list too large, a target that cannot be
    /// normalised): its error answer, then RST_STREAM once it went (the client may still be
    /// sending), its log line, and the shell drops the stream.
    mutating func answerRefused(_ id: Int32, _ error: ProxyError, now: Int64, _ actions: inout ActionBuffer) {
        let answer = ErrorResponse.make(error, request: nil, requestID: nil, date: currentDate(now))
        actions.append(.stream(id))
        actions.append(
            .respondClient(
                StreamResponseHead(status: answer.status, headers: answer.headers, endsStream: false)))
        actions.sendClient { $0.write(answer.body) }
        actions.append(.endClientStream)
        actions.append(.resetStream(id, .noError, afterAnswer: true))
        logRefused(id, error, now: now, &actions)
        actions.append(.closeStream(id))
    }

    /// A request refused before its exchange: its log line.
    func logRefused(_ id: Int32, _ error: ProxyError, now: Int64, _ actions: inout ActionBuffer) {
        var record = AccessRecord(early: error, now: now)
        record.clientProtocol = .http2(streamID: id)
        actions.append(.stream(id))
        actions.finish(record)
    }
}
